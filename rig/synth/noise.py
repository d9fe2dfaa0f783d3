"""Background noise: white, pink, babble, street-like or a recording, mixed at an SNR measured
on active speech.

SNR definition used throughout rig: the mean power of the speech over its active-speech
frames (:func:`rig.audio.active_speech_mask`, 20 ms frames within 40 dB of the loudest), over
the mean power of the noise over the same frames, in dB. For stationary noise this equals the
ratio of active speech level to noise level; for a recording it is the noise actually under the
speech. The active-speech mask is a simplification of ITU-T P.56's active speech level, adequate
for clean synthesized or studio speech.

Every generator is seeded: ``numpy.random.default_rng([seed, 2])`` (stream 2 of the call's
seed; fillers use stream 1), so a repeat's noise is reproducible and different repeats differ.

Kinds: ``white`` (Gaussian), ``pink`` (1/f power), ``babble`` (several synthesized talkers,
:mod:`rig.synth.babble`), ``street`` (synthetic street-like noise: a low traffic rumble, a
band-limited hiss, and vehicles passing at random times; :func:`street_noise`), ``file`` (a
recording, looped from a seeded offset).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

import numpy as np

from rig.audio import Audio, active_speech_mask, read_wav
from rig.profiles.settings import Noise

NoiseKind = Literal["white", "pink", "babble", "street", "file"]
_NOISE_STREAM = 2


def noise_rng(seed: int) -> np.random.Generator:
    """The generator every noise draw of a call uses (``seed`` >= 0)."""
    return np.random.default_rng([seed, _NOISE_STREAM])


def _unit_power(x: np.ndarray) -> np.ndarray:
    p = float(np.mean(np.square(x, dtype=np.float64))) if len(x) else 0.0
    return (x / np.sqrt(p)).astype(np.float32) if p > 0 else x.astype(np.float32)


def white_noise(n: int, rng: np.random.Generator) -> np.ndarray:
    """Gaussian white noise, float32, shape ``(n,)``, unit mean power."""
    return _unit_power(rng.standard_normal(n))


def pink_noise(n: int, rng: np.random.Generator) -> np.ndarray:
    """Pink (1/f power spectrum) noise, float32, shape ``(n,)``, unit mean power, no DC.

    White Gaussian noise shaped in the frequency domain by ``1/sqrt(f)`` (-3 dB per octave).
    """
    if n == 0:
        return np.zeros(0, np.float32)
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n)
    scale = np.zeros_like(f)
    scale[1:] = 1.0 / np.sqrt(f[1:])
    return _unit_power(np.fft.irfft(spectrum * scale, n))


#: The shortest noise recording ``file_noise`` loops, in seconds.
MIN_NOISE_FILE_S = 1.0


def file_noise(path: str | Path, n: int, sample_rate_hz: int,
               rng: np.random.Generator) -> np.ndarray:
    """A noise recording, resampled to ``sample_rate_hz``, read from a seeded offset and looped
    to ``n`` samples; float32, shape ``(n,)``, unit mean power.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: it cannot be decoded, is silent, or is shorter than ``MIN_NOISE_FILE_S``
            (the message names the file).
    """
    rec = read_wav(path, sample_rate_hz).samples
    if len(rec) == 0 or not np.any(rec):
        raise ValueError(f"{path}: the noise file is silent")
    if len(rec) < MIN_NOISE_FILE_S * sample_rate_hz:
        raise ValueError(f"{path}: the noise file is {len(rec) / sample_rate_hz:.2f} s long; "
                         f"give at least {MIN_NOISE_FILE_S:g} s (looping a shorter one makes a "
                         "periodic buzz, not background noise)")
    start = int(rng.integers(len(rec)))
    return _unit_power(np.take(rec, (start + np.arange(n)) % len(rec)))


def _shaped(n: int, rng: np.random.Generator, sample_rate_hz: int, gain) -> np.ndarray:
    """White Gaussian noise shaped in the frequency domain by ``gain(f_hz)``."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    return np.fft.irfft(spectrum * gain(np.fft.rfftfreq(n, 1.0 / sample_rate_hz)), n)


def street_noise(n: int, sample_rate_hz: int, rng: np.random.Generator) -> np.ndarray:
    """Synthetic street-like noise, float32, shape ``(n,)``, unit mean power.

    Three layers: a traffic rumble (noise falling 6 dB per octave above 40 Hz, cut above
    500 Hz), a steady band-limited hiss (pink below 4 kHz, 10 dB down), and passing vehicles:
    events at random times (on average one every 4 s), each a swell of low-passed noise
    (cut-off drawn in 800-2500 Hz) under a Gaussian envelope 1-3 s wide, 0.5-1.5 times the
    rumble's amplitude. Not a recording: a stand-in with the spectrum and slow level changes
    of a street; mix a real recording with ``kind: file`` when that matters.
    """
    if n == 0:
        return np.zeros(0, np.float32)
    sr = sample_rate_hz

    def rumble_gain(f):
        return np.where(f > 0, 1.0 / np.maximum(f, 40.0), 0.0) / (1.0 + (f / 500.0) ** 4)

    def hiss_gain(f):
        return np.where(f > 0, 1.0 / np.sqrt(np.maximum(f, 100.0)), 0.0) / (1 + (f / 4000) ** 4)

    rumble = _unit_power(_shaped(n, rng, sr, rumble_gain)).astype(np.float64)
    hiss = _unit_power(_shaped(n, rng, sr, hiss_gain)).astype(np.float64)
    t = np.arange(n) / sr
    duration_s = n / sr
    k = int(rng.poisson(duration_s / 4.0)) + 1
    cars = np.zeros(n)
    for _ in range(k):
        centre_s = rng.uniform(-1.0, duration_s + 1.0)
        width_s = rng.uniform(1.0, 3.0)
        amp = rng.uniform(0.5, 1.5)
        cutoff = rng.uniform(800.0, 2500.0)
        a = max(0, int((centre_s - 3 * width_s) * sr))
        b = min(n, int((centre_s + 3 * width_s) * sr))
        if b <= a:
            continue
        m = b - a
        swell = _unit_power(_shaped(m, rng, sr, lambda f, c=cutoff: np.where(
            f > 0, 1.0 / np.sqrt(np.maximum(f, 50.0)), 0.0) / (1.0 + (f / c) ** 4)))
        shape = amp * np.exp(-0.5 * ((t[a:b] - centre_s) / (width_s / 2)) ** 2)
        cars[a:b] += swell * shape
    return _unit_power(rumble + 0.3 * hiss + cars)


def make_noise(kind: NoiseKind, n: int, sample_rate_hz: int, seed: int,
               path: str | Path | None = None, *, talkers: int = 6,
               voices: tuple[str, ...] | None = None, cache_dir: Path | None = None
               ) -> np.ndarray:
    """``n`` samples of unit-power noise of ``kind`` for the call's ``seed``.

    ``talkers`` and ``voices`` shape ``babble`` (its talker tracks are cached in
    ``cache_dir``); ``path`` is the recording of ``file``.

    Raises:
        ValueError: unknown kind, or ``file`` without a path.
        EngineUnavailable: a babble voice's engine is not installed.
    """
    rng = noise_rng(seed)
    if kind == "white":
        return white_noise(n, rng)
    if kind == "pink":
        return pink_noise(n, rng)
    if kind == "street":
        return street_noise(n, sample_rate_hz, rng)
    if kind == "babble":
        from rig.profiles.settings import DEFAULT_BABBLE_VOICES
        from rig.synth.babble import babble_noise

        return babble_noise(n, sample_rate_hz, rng, talkers, voices or DEFAULT_BABBLE_VOICES,
                            cache_dir)
    if kind == "file":
        if path is None:
            raise ValueError("file noise needs a path")
        return file_noise(path, n, sample_rate_hz, rng)
    raise ValueError(f"unknown noise kind {kind!r}; use white, pink, babble, street or file")


def measure_snr_db(speech: np.ndarray, noise: np.ndarray, sample_rate_hz: int) -> float:
    """SNR in dB of ``speech`` over ``noise`` (same shape) on the speech's active frames.

    Raises:
        ValueError: the speech has no active frames, or the noise is silent under them.
    """
    mask = active_speech_mask(speech, sample_rate_hz)
    p_s = float(np.mean(np.square(speech[mask], dtype=np.float64))) if mask.any() else 0.0
    if p_s <= 0:
        raise ValueError("no active speech to measure an SNR on")
    p_n = float(np.mean(np.square(noise[mask], dtype=np.float64)))
    if p_n <= 0:
        raise ValueError("the noise is silent under the active speech; SNR undefined")
    return 10.0 * np.log10(p_s / p_n)


def mix_at_snr(speech: Audio, noise: np.ndarray, snr_db: float) -> tuple[Audio, float]:
    """Add ``noise`` to ``speech`` scaled to ``snr_db`` on active speech.

    Args:
        speech: the clean render (float32, shape ``(n,)``).
        noise: float, shape ``(n,)``, any level.
        snr_db: target SNR in dB.

    Returns:
        The mix (float32; scaled down as a whole if it would exceed full scale, which keeps the
        SNR) and the SNR in dB measured on it: (mix - scaled speech) against the scaled speech
        on the speech's active frames, float32 rounding included.

    Raises:
        ValueError: shapes differ, no active speech, or silent noise under it.
    """
    s = speech.samples.astype(np.float64)
    if noise.shape != s.shape:
        raise ValueError(f"noise shape {noise.shape} differs from speech shape {s.shape}")
    mask = active_speech_mask(speech.samples, speech.sample_rate_hz)
    if not mask.any() or not np.any(s[mask]):
        raise ValueError("no active speech to mix noise against")
    nz = noise.astype(np.float64)
    p_s, p_n = np.mean(s[mask] ** 2), np.mean(nz[mask] ** 2)
    if p_n <= 0:
        raise ValueError("the noise is silent under the active speech; SNR undefined")
    mix = s + nz * np.sqrt(p_s / (p_n * 10.0 ** (snr_db / 10.0)))
    peak = float(np.max(np.abs(mix)))
    scale = 0.99 / peak if peak > 0.99 else 1.0
    mix32 = (mix * scale).astype(np.float32)
    s_scaled = (s * scale).astype(np.float32)
    measured = measure_snr_db(s_scaled, mix32.astype(np.float64) - s_scaled,
                              speech.sample_rate_hz)
    return Audio(mix32, speech.sample_rate_hz), measured


def add_noise(speech: Audio, noise: Noise, seed: int,
              resolve_path: Callable[[str], Path] | None = None, *,
              cache_dir: Path | None = None) -> tuple[Audio, float | None]:
    """Apply a profile's ``noise`` to a clean render, over the whole clip (pauses and tail too).

    Returns:
        ``(audio, measured SNR in dB)``; ``(speech, None)`` for ``kind: none``.

    Raises:
        FileNotFoundError, ValueError: a missing or unusable noise file (named), no speech.
    """
    if noise.kind == "none":
        return speech, None
    if noise.snr_db is None or (noise.kind == "file" and not noise.path):
        raise ValueError(f"noise {noise.kind!r} needs snr_db (and a path for 'file')")
    path = (resolve_path or Path)(noise.path) if noise.kind == "file" and noise.path else None
    n = make_noise(noise.kind, len(speech.samples), speech.sample_rate_hz, seed, path,
                   talkers=noise.talkers, voices=noise.voices, cache_dir=cache_dir)
    return mix_at_snr(speech, n, noise.snr_db)
