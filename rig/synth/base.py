"""The values synthesis returns, the narrow interface every TTS engine implements, and the
silence trimming shared by the engines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from rig.audio import Audio


@dataclass(frozen=True)
class WordTiming:
    """One spoken word in a rendered answer.

    Attributes:
        word: the word as it appears in the clean reference (punctuation kept), or the filler.
        start_s: start in seconds from the beginning of the rendered clip.
        end_s: end in seconds (``end_s >= start_s``).
        is_filler: True for a disfluency token - an inserted or scripted filler ("um", "uh")
            or the first saying of a repeated word - which is not part of the clean WER
            reference (it is part of the verbatim one).
        kind: ``word``, ``filler`` or ``repetition`` (default: ``filler`` when ``is_filler``).
    """

    word: str
    start_s: float
    end_s: float
    is_filler: bool = False
    kind: Literal["word", "filler", "repetition"] | None = None

    def __post_init__(self) -> None:
        if self.kind is None:
            object.__setattr__(self, "kind", "filler" if self.is_filler else "word")


@dataclass(frozen=True, eq=False)
class RenderedAnswer:
    """A scripted answer rendered under a caller profile.

    Attributes:
        audio: float32 mono, shape ``(n,)``, range [-1, 1], at the requested rate: response
            delay, speech, pauses, trailing silence, and noise mixed over all of it.
        words: every clean reference word in order, plus fillers (``is_filler=True``), with
            times in seconds from the start of ``audio``.
        speech_start_s: start of the first spoken word (s).
        speech_end_s: end of the last spoken word (s).
        snr_db_measured: the speech-to-noise ratio of ``audio`` in dB, measured on active
            speech frames (``None`` when no noise was mixed).
        engine: the engine that spoke (``hibari``, ``piper``, ``espeak-ng``, ``recorded``).
        voice_id: the engine's voice.
        render_key: sha256 of everything that shapes the speech render (the cache key; noise
            is mixed after the cache and is not part of it).
        engine_version: the engine's version string (package, model, settings; ``recording``
            for a recorded voice).
        rate: the rate multiplier the engine spoke at (for a ``wpm`` target, the one the
            renderer settled on); None for a recorded voice.
        stretch: the time-stretch applied to the spoken chunks to meet a ``wpm`` target
            (output duration / engine duration; 1.0: none).
        wpm_measured: words per minute of the output: every spoken word (fillers and
            repetitions included) over the speech span (first word's start to last word's
            end) less the deliberate silences inside it.
        pauses_total_s: the deliberate silences inside the speech span (script ``[pause]``
            marks and the profile's pauses), seconds.
        noise_kind: the background noise mixed in (``none`` when none).

    ``engine_version``, ``rate``, ``wpm_measured`` and ``pauses_total_s`` have no default:
    every render states them (a campaign row records them, :mod:`rig.campaign.row`).

    Raises:
        TypeError: ``audio`` is not an :class:`~rig.audio.Audio` or a word is not a
            :class:`WordTiming`.
    """

    audio: Audio
    words: tuple[WordTiming, ...]
    speech_start_s: float
    speech_end_s: float
    snr_db_measured: float | None
    engine: str
    voice_id: str
    render_key: str
    engine_version: str
    rate: float | None
    wpm_measured: float | None
    pauses_total_s: float
    stretch: float = 1.0
    noise_kind: str = "none"

    def __post_init__(self) -> None:
        if not isinstance(self.audio, Audio):
            raise TypeError(f"RenderedAnswer.audio: an Audio, got {type(self.audio).__name__}")
        bad = [w for w in self.words if not isinstance(w, WordTiming)]
        if bad:
            raise TypeError(f"RenderedAnswer.words: WordTiming items, got "
                            f"{type(bad[0]).__name__} ({bad[0]!r})")

    @property
    def script_words(self) -> tuple[WordTiming, ...]:
        """The clean reference words only (fillers and repetitions left out)."""
        return tuple(w for w in self.words if not w.is_filler)

    def reference(self, policy: Literal["clean", "verbatim"] = "clean") -> str:
        """The WER reference of what was spoken: ``clean`` (the script's words) or
        ``verbatim`` (every word as spoken, fillers and repetitions included)."""
        if policy not in ("clean", "verbatim"):
            raise ValueError(f"reference policy must be 'clean' or 'verbatim', got {policy!r}")
        words = self.script_words if policy == "clean" else self.words
        return " ".join(w.word for w in words)

    def count(self, kind: Literal["word", "filler", "repetition"]) -> int:
        """How many spoken tokens of ``kind`` the render holds."""
        return sum(w.kind == kind for w in self.words)


@runtime_checkable
class Engine(Protocol):
    """A text-to-speech engine with one voice loaded.

    ``synthesize`` speaks one chunk of text (a sentence or a phrase) and returns it at the
    engine's native rate. It may leave leading and trailing silence (the renderer trims it), but
    must not leave silences inside the chunk longer than a natural phrase break: the renderer
    places every deliberate pause itself. ``version`` names everything about the engine that
    changes its output (package and model version, synthesis settings), for the cache key.
    (Silences inside a chunk are also capped by the renderer, at 0.5 s.)

    An engine whose output depends on call history (piper's in-graph noise) may also define
    ``synthesize_all(texts, rate) -> list[Audio]``; the renderer then speaks one answer's
    chunks in one call, so the engine can reset its state per answer.
    """

    name: str
    voice_id: str
    version: str
    # optional: rate_range: tuple[float, float], the rate multipliers the engine stays
    # intelligible at (default 0.5-2.0); a wpm target never drives it outside them

    def synthesize(self, text: str, rate: float) -> Audio:
        """Speak ``text`` at ``rate`` times the voice's natural pace (1.0 natural, 0.5 slow)."""
        ...


def speech_bounds(samples: np.ndarray, sample_rate_hz: int, floor_db: float = 40.0,
                  abs_floor_db: float = -60.0, margin_s: float = 0.02) -> tuple[int, int]:
    """The sample range ``[start, end)`` holding speech, by 10 ms frame energy.

    A frame is speech when its RMS is within ``floor_db`` of the loudest frame and above
    ``abs_floor_db`` dBFS; ``margin_s`` is kept on both sides so that soft onsets and releases
    are not clipped. Returns ``(0, 0)`` for a silent input.
    """
    hop = max(1, sample_rate_hz // 100)
    k = len(samples) // hop + (1 if len(samples) % hop else 0)
    if k == 0:
        return 0, 0
    padded = np.zeros(k * hop, np.float64)
    padded[: len(samples)] = samples
    db = 10 * np.log10(np.mean(padded.reshape(k, hop) ** 2, axis=1) + 1e-20)
    active = np.flatnonzero((db > db.max() - floor_db) & (db > abs_floor_db))
    if len(active) == 0:
        return 0, 0
    margin = round(margin_s * sample_rate_hz)
    start = max(0, int(active[0]) * hop - margin)
    end = min(len(samples), (int(active[-1]) + 1) * hop + margin)
    return start, end


def trim(audio: Audio, **kwargs: float) -> Audio:
    """``audio`` without its leading and trailing silence (see :func:`speech_bounds`)."""
    start, end = speech_bounds(audio.samples, audio.sample_rate_hz, **kwargs)
    return Audio(np.ascontiguousarray(audio.samples[start:end]), audio.sample_rate_hz)


def join_trimmed(parts: list[np.ndarray], sample_rate_hz: int, gap_s: float) -> Audio:
    """Trim each part and join them with ``gap_s`` of silence (for engines that split a chunk
    into sentences of their own: their per-sentence padding must not become a long pause)."""
    gap = np.zeros(round(gap_s * sample_rate_hz), np.float32)
    out: list[np.ndarray] = []
    for p in parts:
        a, b = speech_bounds(p, sample_rate_hz)
        if b > a:
            if out:
                out.append(gap)
            out.append(np.asarray(p[a:b], np.float32))
    samples = np.concatenate(out) if out else np.zeros(0, np.float32)
    return Audio(samples.astype(np.float32, copy=False), sample_rate_hz)


def cap_silences(samples: np.ndarray, sample_rate_hz: int, max_s: float,
                 floor_db: float = 40.0) -> np.ndarray:
    """Shorten every silence inside ``samples`` to at most ``max_s`` seconds.

    Silence is a run of 10 ms frames more than ``floor_db`` below the loudest frame; a run
    longer than ``max_s`` loses its middle (its first and last ``max_s / 2`` are kept, so the
    edges of the neighbouring words are untouched). Leading and trailing silence are left
    alone (trim them first). Returns float32, shape ``(m,)``, ``m <= len(samples)``.
    """
    from rig.synth.pauses import quiet_runs

    keep_half = round(max_s * sample_rate_hz / 2)
    cuts = [(a + keep_half, b - keep_half)
            for a, b in quiet_runs(samples, sample_rate_hz, floor_db, min_run_s=0.0)
            if b - a > 2 * keep_half]
    if not cuts:
        return samples.astype(np.float32, copy=False)
    keep = np.ones(len(samples), bool)
    for a, b in cuts:
        keep[a:b] = False
    return samples[keep].astype(np.float32, copy=False)
