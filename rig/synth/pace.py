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

Pace apart from pauses: :mod:`rig.synth.pauses`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
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
#: Fewest spoken tokens a words-per-minute target is held to. Over one or two words the
#: "rate" is the duration of a word or two ("Absolutely." at 240 wpm would have to last
#: 0.25 s), which no intelligible rate reaches: such a render takes the closest try and is
#: never a :class:`PaceError` (its measured wpm is still recorded).
MIN_PACE_WORDS = 3


class PaceError(ValueError):
    """A words-per-minute target that could not be met within ``WPM_TOLERANCE``."""


def inner_pauses_s(plan: list) -> float:
    """The deliberate silences between the first and the last spoken chunk of a plan (s)."""
    from rig.synth.plan import Chunk, Silence

    idx = [i for i, st in enumerate(plan) if isinstance(st, Chunk)]
    if not idx:
        return 0.0
    return float(sum(st.duration_s for st in plan[idx[0]:idx[-1]] if isinstance(st, Silence)))


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
            rate_range: tuple[float, float] = DEFAULT_RATE_RANGE, label: str = "the engine",
            n_words: int | None = None) -> tuple[Any, float, float, float]:
    """Find the (rate, stretch) whose render measures ``target_wpm`` (see the module docstring).

    Args:
        render: ``render(rate, stretch) -> (result, measured wpm)``; called once per try
            (cache the renders: the same arguments come back).
        target_wpm: the target.
        rate_range: the engine's usable rate multipliers.
        label: names the engine in the error.
        n_words: spoken tokens of the script; under :data:`MIN_PACE_WORDS` the best try is
            returned however far off (no error).

    Returns:
        ``(result, rate, stretch, measured wpm)`` of the best try.

    Raises:
        PaceError: no try came within ``WPM_TOLERANCE`` of the target (a script of at least
            :data:`MIN_PACE_WORDS` tokens), or a render had no speech to measure.
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
    if final.err > WPM_TOLERANCE and (n_words is None or n_words >= MIN_PACE_WORDS):
        raise PaceError(f"pace target {target_wpm:g} wpm not reached by {label}: best "
                        f"{final.wpm:.0f} wpm at rate {final.rate:g}, stretch {final.stretch:g} "
                        f"(usable rates {lo:g}-{hi:g}, stretch {STRETCH_RANGE[0]:g}-"
                        f"{STRETCH_RANGE[1]:g})")
    return final.result, final.rate, final.stretch, final.wpm
