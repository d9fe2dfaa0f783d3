"""Pace: words per minute measured on a render, a target met on the output, and time-stretching.

Measured pace: every spoken token (script words, fillers, repetitions) over the speech span -
the first word's start to the last word's end, both found by energy on the synthesized audio -
less the deliberate silences inside it (the script's ``[pause]`` marks and the profile's
pauses, which belong to the pauses dimension). The short gaps the renderer leaves between
sentences and phrases count as speaking time, as they would in a person's words per minute.

Meeting a ``wpm`` target (:func:`fit_wpm`): first the engine's own rate, the natural way to
speak faster or slower, within the range where the engine stays intelligible
(``Engine.rate_range``, default 0.5-2.0; hibari's is 0.5-1.3: above about 1.33 its duration
model collapses, the same sentence suddenly takes a quarter less time and words slur - "tested"
came back from Whisper as "tacit"); then, when the rate alone cannot get within
``WPM_SETTLE`` (the edge of that range, or a jump in the engine's response), each chunk is
time-stretched by WSOLA (:func:`time_stretch`, pitch kept) by the remaining factor, at most
``STRETCH_RANGE``. A target still more than ``WPM_TOLERANCE`` off raises :class:`PaceError`.

Pace apart from pauses (:func:`keep_pauses`): an engine slowed to rate r stretches every
duration by 1/r, its own pauses too (hibari at 0.56 turned a comma into a second of
non-speech - a fricative tail, a breath, silence - and an 800 ms endpointing timer closed the
turn there). So after the rate and the stretch, every quiet run inside a chunk is given back
the length it has at the engine's natural rate: a run of L s becomes L * rate / stretch. The
gaps between chunks (sentences) are the renderer's own (``SENTENCE_GAP_S``), whatever the
pace. :func:`speech_gaps` measures both on the output.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

#: Stop adjusting within 3% of a target; fail beyond 10%.
WPM_SETTLE = 0.03
WPM_TOLERANCE = 0.10
#: Renders tried with the engine's rate, then with time-stretching.
RATE_TRIES = 4
STRETCH_TRIES = 3
#: Duration factors time-stretching may apply (output duration / input duration).
STRETCH_RANGE = (0.7, 1.4)
#: Rate multipliers an engine takes when it declares none.
DEFAULT_RATE_RANGE = (0.5, 2.0)


#: A 10 ms frame more than this far below the loudest frame of a chunk is part of a pause
#: (fricative tails and breaths included: a VAD hears them as non-speech).
PAUSE_FLOOR_DB = 25.0
#: Quiet runs shorter than this are closures inside words, not pauses (s).
MIN_PAUSE_S = 0.12
#: Crossfade where the middle of a run is cut out or silence is inserted (s).
_FADE_S = 0.005


class PaceError(ValueError):
    """A words-per-minute target that could not be met within ``WPM_TOLERANCE``."""


def inner_pauses_s(plan: list) -> float:
    """The deliberate silences between the first and the last spoken chunk of a plan (s)."""
    from rig.synth.plan import Chunk, Silence

    idx = [i for i, st in enumerate(plan) if isinstance(st, Chunk)]
    if not idx:
        return 0.0
    return float(sum(st.duration_s for st in plan[idx[0]:idx[-1]] if isinstance(st, Silence)))


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


def measure_wpm(words, pauses_s: float) -> float | None:
    """Words per minute of a render: every spoken token over the speech span (first start to
    last end) less ``pauses_s`` of deliberate silence inside it; None for an empty span."""
    spoken = [w for w in words if w.end_s > w.start_s]
    if not spoken:
        return None
    talk_s = spoken[-1].end_s - spoken[0].start_s - pauses_s
    return 60.0 * len(spoken) / talk_s if talk_s > 0 else None


def time_stretch(x: np.ndarray, sample_rate_hz: int, factor: float) -> np.ndarray:
    """Change the duration of ``x`` by ``factor`` (output length ``round(len(x) * factor)``)
    without changing its pitch: WSOLA (waveform-similarity overlap-add; Verhelst and Roelands,
    ICASSP 1993) with 30 ms periodic Hann windows at 50% overlap and a +-10 ms search for the
    input frame most similar to the natural continuation of the previous one.

    Args:
        x: float32 mono samples.
        sample_rate_hz: their rate.
        factor: output duration / input duration (> 0; 1.0 returns ``x``).

    Returns:
        float32, shape ``(round(len(x) * factor),)``.
    """
    if factor <= 0:
        raise ValueError(f"time_stretch factor must be positive, got {factor}")
    x = np.asarray(x, np.float32)
    out_len = round(len(x) * factor)
    if abs(factor - 1.0) < 1e-9 or len(x) == 0:
        return x.copy()
    n = 2 * (int(0.03 * sample_rate_hz) // 2)
    hs = n // 2
    tol = int(0.01 * sample_rate_hz)
    ha = hs / factor
    win = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)).astype(np.float64)  # periodic
    lead = hs + tol
    xp = np.concatenate([np.zeros(lead), x.astype(np.float64), np.zeros(n + 2 * tol + hs)])
    frames = out_len // hs + 2
    y = np.zeros(frames * hs + n)
    prev = None
    for k in range(frames):
        nominal = round(k * ha) + tol
        if prev is None:
            pos = nominal
        else:
            natural = xp[prev + hs:prev + hs + n]
            lo = max(0, nominal - tol)
            hi = min(len(xp) - n, nominal + tol)
            if hi < lo:
                break
            corr = np.correlate(xp[lo:hi + n], natural, mode="valid")
            pos = lo + int(np.argmax(corr))
        if pos + n > len(xp):
            break
        y[k * hs:k * hs + n] += xp[pos:pos + n] * win
        prev = pos
    return y[hs:hs + out_len].astype(np.float32)


@dataclass
class _Try:
    err: float
    rate: float
    stretch: float
    wpm: float
    result: Any


def fit_wpm(render: Callable[[float, float], tuple[Any, float | None]], target_wpm: float,
            rate_range: tuple[float, float] = DEFAULT_RATE_RANGE, label: str = "the engine"
            ) -> tuple[Any, float, float, float]:
    """Find the (rate, stretch) whose render measures ``target_wpm`` (see the module docstring).

    Args:
        render: ``render(rate, stretch) -> (result, measured wpm)``; called once per try
            (cache the renders: the same arguments come back).
        target_wpm: the target.
        rate_range: the engine's usable rate multipliers.
        label: names the engine in the error.

    Returns:
        ``(result, rate, stretch, measured wpm)`` of the best try.

    Raises:
        PaceError: no try came within ``WPM_TOLERANCE`` of the target, or a render had no
            speech to measure.
    """
    lo, hi = rate_range
    tries: list[_Try] = []

    def attempt(rate: float, stretch: float) -> _Try:
        result, wpm = render(rate, stretch)
        if not wpm:
            raise PaceError("the render has no spoken words to measure a pace on")
        t = _Try(abs(wpm / target_wpm - 1.0), rate, stretch, wpm, result)
        tries.append(t)
        return t

    rate = round(min(hi, max(lo, 1.0)), 3)
    for _ in range(RATE_TRIES):
        t = attempt(rate, 1.0)
        if t.err <= WPM_SETTLE:
            return t.result, t.rate, t.stretch, t.wpm
        new = round(min(hi, max(lo, rate * target_wpm / t.wpm)), 3)
        if new == rate:
            break
        rate = new
    best = min(tries, key=lambda t: t.err)
    stretch = 1.0
    wpm = best.wpm
    for _ in range(STRETCH_TRIES):
        new = round(min(STRETCH_RANGE[1], max(STRETCH_RANGE[0], stretch * wpm / target_wpm)), 3)
        if new == stretch:
            break
        stretch = new
        t = attempt(best.rate, stretch)
        wpm = t.wpm
        if t.err <= WPM_SETTLE:
            break
    final = min(tries, key=lambda t: t.err)
    if final.err > WPM_TOLERANCE:
        raise PaceError(f"pace target {target_wpm:g} wpm not reached by {label}: best "
                        f"{final.wpm:.0f} wpm at rate {final.rate:g}, stretch {final.stretch:g} "
                        f"(usable rates {lo:g}-{hi:g}, stretch {STRETCH_RANGE[0]:g}-"
                        f"{STRETCH_RANGE[1]:g})")
    return final.result, final.rate, final.stretch, final.wpm
