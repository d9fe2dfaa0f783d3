"""The blind SNR estimate of :mod:`rig.monitor.signals` (``snr_db``), and when it cannot be
made.

The VAD-segmented energy ratio (Vondrasek and Pollak, "Methods for speech SNR estimation:
evaluation tool and analysis of VAD dependency", Radioengineering 14(1), 2005): the noise
power is the mean power of the 20 ms frames outside every turn, the speech power the mean
power of the frames inside the turns minus that noise power; SNR = 10 log10(speech / noise),
clipped to :data:`SNR_RANGE_DB`.

**Which frames are noise** (rig issue 19, item 6). A frame counts as noise only when it is at
least ``guard_ms`` (100 ms) after a turn's last speech and at least ``onset_guard_ms``
(:data:`ONSET_GUARD_MS`, 600 ms) before a turn's start. The onset guard is the VAD's
confirmation delay: pipecat's analyzer starts with its smoothed volume at zero and Silero
with an empty state, so on a recording whose speech begins at the first frame it confirms
speech 0.7-1.0 s in and dates the onset back by ``start_ms`` only (19 studio recordings of
CMU ARCTIC, LJ Speech and LibriVox trimmed to their speech, 8 kHz mu-law: first turn at
0.52-0.84 s): with a 100 ms guard, up to 0.7 s of speech was taken as noise, and the estimate
sat at or near the -10 dB clip on clean and noisy (5 dB white) copies alike. Now such a
recording has no noise frames and its SNR is not measurable (None, with the reason); so is
one whose speech frames are no louder than its noise frames (the split failed: a clipped
-10 dB would be a wrong value, not a measurement).

**Speech without pauses.** :func:`snr_estimate` falls back to WADA-SNR
(:func:`rig.monitor.wada.wada_snr_db`, which needs no noise-only frames) where this estimate
is not measurable; the monitor's stored ``snr_db`` stays this estimate alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from rig.audio import Audio
from rig.monitor.wada import wada_snr_db
from rig.vad import Turn

__all__ = ["SNR_RANGE_DB", "estimate_snr_db", "frame_powers", "snr_estimate", "wada_snr_db"]

SNR_RANGE_DB = (-10.0, 60.0)
FRAME_MS = 20
GUARD_MS = 100
ONSET_GUARD_MS = 600
FIRST_ONSET_GUARD_MS = 1000
MIN_NOISE_S = 0.2


def frame_powers(samples: np.ndarray, sample_rate_hz: int, frame_ms: int = FRAME_MS
                 ) -> np.ndarray:
    """Mean power of consecutive frames (float64, shape ``(len // frame,)``; float32 scale)."""
    n = sample_rate_hz * frame_ms // 1000
    k = len(samples) // n
    return np.mean(np.square(samples[: k * n].astype(np.float64).reshape(k, n)), axis=1)


def estimate_snr_db(audio: Audio, turns: Sequence[Turn], guard_ms: int = GUARD_MS,
                    onset_guard_ms: int = ONSET_GUARD_MS) -> tuple[float | None, str | None]:
    """Blind SNR estimate of a recording from its VAD turns (method in the module docstring).

    Args:
        audio: float32 mono, the audio the turns were found on.
        turns: the VAD's turns (seconds from the start of ``audio``).
        guard_ms: frames this close after a turn's speech count neither as speech nor as
            noise.
        onset_guard_ms: the same before a turn's start (the VAD's confirmation delay).

    Returns:
        ``(snr_db, None)`` with snr_db clipped to [-10, 60] dB, or ``(None, reason)`` when
        the audio cannot support an estimate (no speech, too little audio outside speech,
        speech frames no louder than the noise frames).
    """
    p = frame_powers(audio.samples, audio.sample_rate_hz)
    if not len(p):
        return None, "audio shorter than one frame"
    if not turns:
        return None, "no speech detected"
    t = (np.arange(len(p)) + 0.5) * FRAME_MS / 1000
    speech = np.zeros(len(p), bool)
    near = np.zeros(len(p), bool)
    g, g_on = guard_ms / 1000, onset_guard_ms / 1000
    for i, tr in enumerate(turns):
        on = max(g_on, FIRST_ONSET_GUARD_MS / 1000) if i == 0 else g_on
        speech |= (t >= tr.start_s) & (t < tr.speech_end_s)
        near |= (t >= tr.start_s - on) & (t < tr.speech_end_s + g)
    noise = p[~near]
    if len(noise) * FRAME_MS / 1000 < MIN_NOISE_S:
        return None, f"under {MIN_NOISE_S:g} s of audio outside speech to measure noise on"
    if not speech.any():
        return None, "no speech frames"
    p_n = float(noise.mean())
    p_s = float(p[speech].mean()) - p_n
    lo, hi = SNR_RANGE_DB
    if p_n <= 0:
        return hi, None
    if p_s <= 0:
        return None, ("the speech frames are no louder than the frames outside speech: the "
                      "VAD's split cannot support an estimate")
    return float(min(hi, max(lo, 10.0 * math.log10(p_s / p_n)))), None


def snr_estimate(audio: Audio, turns: Sequence[Turn]) -> tuple[float | None, str, str | None]:
    """The VAD-segmented estimate where it is measurable, else WADA-SNR.

    Args:
        audio: float32 mono, the audio the turns were found on.
        turns: the VAD's turns (seconds from the start of ``audio``).

    Returns:
        ``(snr_db, method, reason)``: ``(snr, "vad_energy", None)`` from
        :func:`estimate_snr_db`; else, when the VAD found speech (WADA assumes the audio is
        speech: noise alone would read as its -20 dB floor), ``(snr, "wada", None)`` from
        :func:`rig.monitor.wada.wada_snr_db`; else ``(None, "none", reason)`` with both
        methods' reasons. Either value is in dB, clipped to :data:`SNR_RANGE_DB` ([-10, 60]).
    """
    snr, why = estimate_snr_db(audio, turns)
    if snr is not None:
        return snr, "vad_energy", None
    if not turns:
        return None, "none", f"vad_energy: {why}; wada: not tried (no speech detected)"
    w, why_w = wada_snr_db(audio)
    if w is None:
        return None, "none", f"vad_energy: {why}; wada: {why_w}"
    lo, hi = SNR_RANGE_DB
    return min(hi, max(lo, w)), "wada", None
