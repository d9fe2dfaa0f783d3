"""The audio value passed between pipeline stages, and its I/O.

Contract: every stage takes and returns :class:`Audio`, whose ``samples`` are float32 mono,
shape ``(n,)``, nominal range [-1, 1], at ``sample_rate_hz``. Conversions to int16 PCM or
mu-law bytes happen only at the edges (codecs, VAD, files).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from rig.errors import RigError


@dataclass(frozen=True, eq=False)
class Audio:
    """Mono audio.

    Attributes:
        samples: float32, mono, shape ``(n,)``, range [-1, 1].
        sample_rate_hz: samples per second.
    """

    samples: np.ndarray
    sample_rate_hz: int

    def __post_init__(self) -> None:
        s = self.samples
        if not isinstance(s, np.ndarray) or s.ndim != 1:
            raise ValueError(f"Audio.samples must be a 1-D numpy array, got {type(s).__name__}"
                             f" with shape {getattr(s, 'shape', None)}")
        if s.dtype != np.float32:
            raise ValueError(f"Audio.samples must be float32, got {s.dtype}")
        if self.sample_rate_hz <= 0:
            raise ValueError(f"Audio.sample_rate_hz must be positive, got {self.sample_rate_hz}")

    @property
    def duration_s(self) -> float:
        return len(self.samples) / self.sample_rate_hz

    def resample(self, sample_rate_hz: int) -> Audio:
        """Anti-aliased resampling (soxr, 'HQ' quality). Returns a new Audio."""
        if sample_rate_hz == self.sample_rate_hz:
            return self
        out = soxr.resample(self.samples, self.sample_rate_hz, sample_rate_hz, quality="HQ")
        return Audio(np.ascontiguousarray(out, dtype=np.float32), sample_rate_hz)

    def head(self, end_s: float) -> Audio:
        """The audio up to ``end_s`` seconds."""
        n = max(0, min(len(self.samples), round(end_s * self.sample_rate_hz)))
        return Audio(self.samples[:n].copy(), self.sample_rate_hz)

    def to_pcm16(self) -> np.ndarray:
        """int16 PCM, shape (n,), with clipping at full scale."""
        return float_to_pcm16(self.samples)

    @staticmethod
    def silence(duration_s: float, sample_rate_hz: int) -> Audio:
        return Audio(np.zeros(round(duration_s * sample_rate_hz), np.float32), sample_rate_hz)

    @staticmethod
    def concat(parts: list[Audio]) -> Audio:
        if not parts:
            raise ValueError("Audio.concat needs at least one part")
        rates = {p.sample_rate_hz for p in parts}
        if len(rates) != 1:
            raise ValueError(f"Audio.concat: parts have different sample rates {sorted(rates)}")
        return Audio(np.concatenate([p.samples for p in parts]).astype(np.float32),
                     parts[0].sample_rate_hz)


def float_to_pcm16(samples: np.ndarray) -> np.ndarray:
    """float32 in [-1, 1] to int16, clipped (no wrap-around at full scale). Clipped before
    scaling too, so a finite sample of any size (1e38) gives full scale without an overflow
    warning (``tests/test_properties_codec_wer.py``)."""
    x = np.clip(samples, -32768.0 / 32767.0, 1.0)
    return np.clip(np.round(x * 32767.0), -32768, 32767).astype(np.int16)


def pcm16_to_float(pcm: np.ndarray) -> np.ndarray:
    """int16 to float32 in [-1, 1)."""
    return (np.asarray(pcm, dtype=np.int16).astype(np.float32) / 32768.0).astype(np.float32)


def read_wav(path: str | Path, sample_rate_hz: int | None = None) -> Audio:
    """Read any file soundfile reads (WAV, FLAC, OGG), mix to mono, optionally resample.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: the file cannot be decoded (the message names the file).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: audio file not found")
    try:
        data, sr = sf.read(str(path), dtype="float32", always_2d=True)
    except Exception as exc:  # soundfile raises its own LibsndfileError
        raise ValueError(f"{path}: cannot decode audio ({exc})") from exc
    audio = Audio(np.ascontiguousarray(data.mean(axis=1), dtype=np.float32), int(sr))
    return audio.resample(sample_rate_hz) if sample_rate_hz else audio


def write_wav(path: str | Path, audio: Audio) -> Path:
    """Write 16-bit PCM WAV; creates parent folders.

    Raises:
        RigError: ``path`` does not end in ``.wav``, is a folder, or cannot be written (the
            message names the path and the reason).
    """
    path = Path(path)
    if path.suffix.lower() != ".wav" or path.is_dir():
        raise RigError(f"{path}: the output must be a .wav file path")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        sf.write(str(path), audio.samples, audio.sample_rate_hz, subtype="PCM_16")
    except OSError as exc:
        raise RigError(f"{path}: cannot write ({exc.strerror or exc})") from None
    return path


def active_speech_mask(samples: np.ndarray, sample_rate_hz: int, frame_ms: int = 20,
                       floor_db: float = 40.0) -> np.ndarray:
    """Per-sample boolean mask of active speech by frame energy.

    A 20 ms frame is active when its energy is within ``floor_db`` of the loudest frame and
    above -70 dBFS. This is a simplification of ITU-T P.56's active speech level, adequate for
    clean synthesized or studio speech (which is what noise is mixed onto); it is documented as
    such wherever an SNR is reported.
    """
    n = int(sample_rate_hz * frame_ms / 1000)
    if n <= 0 or len(samples) < n:
        return np.ones(len(samples), bool)
    k = len(samples) // n
    frames = samples[: k * n].astype(np.float64).reshape(k, n)
    e = 10 * np.log10(np.mean(frames**2, axis=1) + 1e-20)
    active = (e > e.max() - floor_db) & (e > -70.0)
    mask = np.zeros(len(samples), bool)
    mask[: k * n] = np.repeat(active, n)
    return mask


def active_speech_power(samples: np.ndarray, sample_rate_hz: int) -> float:
    """Mean power (float32 scale) over the active-speech frames of ``samples``."""
    mask = active_speech_mask(samples, sample_rate_hz)
    if not mask.any():
        return 0.0
    return float(np.mean(np.square(samples[mask], dtype=np.float64)))
