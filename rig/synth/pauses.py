"""Pace apart from pauses: the pauses inside a render given back their natural-pace length
(:func:`keep_pauses`), and the silences of a render measured on its audio
(:func:`measure_gaps`).

An engine slowed to rate r stretches every duration by 1/r, its own pauses too (hibari at
0.56 turned a comma into a second of non-speech - a fricative tail, a breath, silence - and an
800 ms endpointing timer closed the turn there). So after the rate and the stretch, every
quiet run inside a chunk is given back the length it has at the engine's natural rate: a run
of L s becomes L * rate / stretch. The gaps between chunks (sentences) are the renderer's own
(``SENTENCE_GAP_S``), whatever the pace. :func:`measure_gaps` measures both on the output.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np

#: A 10 ms frame more than this far below the loudest frame of a chunk is part of a pause
#: (fricative tails and breaths included: a VAD hears them as non-speech).
PAUSE_FLOOR_DB = 25.0
#: Quiet runs shorter than this are closures inside words, not pauses (s).
MIN_PAUSE_S = 0.12
#: Crossfade where the middle of a run is cut out or silence is inserted (s).
_FADE_S = 0.005


def quiet_runs(samples: np.ndarray, sample_rate_hz: int, floor_db: float = PAUSE_FLOOR_DB,
               min_run_s: float = MIN_PAUSE_S) -> list[tuple[int, int]]:
    """The pauses inside ``samples``: sample ranges ``[a, b)`` of 10 ms frames more than
    ``floor_db`` below the loudest frame, at least ``min_run_s`` long, that neither start nor
    end the clip (trim leading and trailing silence first)."""
    hop = max(1, sample_rate_hz // 100)
    k = len(samples) // hop
    if k < 3:
        return []
    power = np.mean(np.asarray(samples[: k * hop], np.float64).reshape(k, hop) ** 2, axis=1)
    db = 10 * np.log10(power + 1e-20)
    quiet = db < db.max() - floor_db
    runs, i, min_frames = [], 0, max(1, round(min_run_s * 100))
    while i < k:
        if not quiet[i]:
            i += 1
            continue
        j = i
        while j < k and quiet[j]:
            j += 1
        if i > 0 and j < k and j - i >= min_frames:
            runs.append((i * hop, j * hop))
        i = j
    return runs


def keep_pauses(samples: np.ndarray, sample_rate_hz: int, slowdown: float,
                floor_db: float = PAUSE_FLOOR_DB, min_run_s: float = MIN_PAUSE_S
                ) -> np.ndarray:
    """Give every pause inside a chunk rendered ``slowdown`` times slower than the engine's
    natural pace (``stretch / rate``) the length it has at that pace: a quiet run
    (:func:`quiet_runs`) of L s becomes L / slowdown s, its middle cut out (slowdown > 1) or
    silence inserted in its middle (slowdown < 1), with a 5 ms crossfade at each cut.

    Args:
        samples: float32 mono, one chunk, trimmed.
        sample_rate_hz: their rate.
        slowdown: output duration / natural duration of the speech (> 0; 1.0 returns a copy).

    Returns:
        float32, shape ``(m,)``.
    """
    if slowdown <= 0:
        raise ValueError(f"keep_pauses slowdown must be positive, got {slowdown}")
    x = np.asarray(samples, np.float32)
    if abs(slowdown - 1.0) < 1e-9:
        return x.copy()
    fade = max(1, round(_FADE_S * sample_rate_hz))
    out, pos = [], 0
    for a, b in quiet_runs(x, sample_rate_hz, floor_db, min_run_s):
        length = b - a
        target = round(length / slowdown)
        mid = (a + b) // 2
        if target < length:  # cut the middle: keep target/2 on each side, crossfaded
            left_end = a + target // 2
            right_start = b - (target - target // 2)
            f = min(fade, left_end - a, b - right_start)
            out.append(x[pos:left_end - f])
            if f > 0:
                ramp = np.linspace(0.0, 1.0, f, dtype=np.float32)
                out.append(x[left_end - f:left_end] * (1 - ramp) + x[right_start:right_start + f]
                           * ramp)
            pos = right_start + f
        elif target > length:  # insert silence at the quietest point near the middle
            out.append(x[pos:mid])
            out.append(np.zeros(target - length, np.float32))
            pos = mid
    out.append(x[pos:])
    return np.concatenate(out).astype(np.float32, copy=False)


def speech_gaps(samples: np.ndarray, sample_rate_hz: int, boundaries_s: list[float],
                floor_db: float = PAUSE_FLOOR_DB) -> list[float]:
    """The silence the listener hears at each of ``boundaries_s`` (s): the length of the run
    of 10 ms frames more than ``floor_db`` below the render's loudest frame that holds the
    boundary (0.0 when the boundary falls on a louder frame). For a render's sentence ends,
    the boundary is the midpoint between a sentence's last word and the next one's first."""
    hop = max(1, sample_rate_hz // 100)
    k = len(samples) // hop
    if k == 0:
        return [0.0 for _ in boundaries_s]
    power = np.mean(np.asarray(samples[: k * hop], np.float64).reshape(k, hop) ** 2, axis=1)
    db = 10 * np.log10(power + 1e-20)
    quiet = db < db.max() - floor_db
    gaps = []
    for t in boundaries_s:
        i = min(k - 1, max(0, int(t * 100)))
        if not quiet[i]:
            gaps.append(0.0)
            continue
        a, b = i, i
        while a > 0 and quiet[a - 1]:
            a -= 1
        while b < k and quiet[b]:
            b += 1
        gaps.append((b - a) * hop / sample_rate_hz)
    return gaps


@dataclass(frozen=True)
class GapMeasure:
    """The silences of a render as measured on its audio (:func:`measure_gaps`), seconds.

    Attributes:
        sentence_gap_median_s: median silence at the sentence ends inside the answer (None
            for a one-sentence answer).
        sentence_gap_max_s: the longest of them (None likewise).
        longest_gap_s: the longest quiet run between the first word's start and the last
            word's end, wherever it falls (commas, sentence ends, deliberate pauses).
    """
    sentence_gap_median_s: float | None
    sentence_gap_max_s: float | None
    longest_gap_s: float


def measure_gaps(samples: np.ndarray, sample_rate_hz: int, words) -> GapMeasure:
    """Measure a render's silences (:class:`GapMeasure`) on float32 mono ``samples`` with the
    word timings ``words`` (:class:`rig.synth.base.WordTiming`); a quiet frame is one more
    than ``PAUSE_FLOOR_DB`` below the loudest (:func:`speech_gaps`)."""
    from rig.synth.plan import _ends_sentence

    spoken = [w for w in words if w.end_s > w.start_s]
    ends = [(a.end_s + b.start_s) / 2 for a, b in pairwise(spoken)
            if _ends_sentence(a.word, b.word)]
    gaps = speech_gaps(samples, sample_rate_hz, ends)
    longest = 0.0
    if spoken:
        a, b = round(spoken[0].start_s * sample_rate_hz), round(spoken[-1].end_s * sample_rate_hz)
        runs = quiet_runs(np.asarray(samples[a:b]), sample_rate_hz, min_run_s=0.01)
        longest = max(((e - s) / sample_rate_hz for s, e in runs), default=0.0)
    return GapMeasure(float(np.median(gaps)) if gaps else None,
                      float(max(gaps)) if gaps else None, float(longest))
