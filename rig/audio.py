"""The audio value passed between pipeline stages, and its I/O.

Contract: every stage takes and returns :class:`Audio`, whose ``samples`` are float32 mono,
shape ``(n,)``, nominal range [-1, 1], at ``sample_rate_hz``. Conversions to int16 PCM or
mu-law bytes happen only at the edges (codecs, VAD, files).
"""

from __future__ import annotations

import io
import re
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

    def slice(self, start_s: float, end_s: float | None = None) -> Audio:
        """The audio from ``start_s`` to ``end_s`` seconds (None: to the end), clipped to the
        audio's span. Returns a new Audio (a copy)."""
        n = len(self.samples)
        a = max(0, min(n, round(start_s * self.sample_rate_hz)))
        b = n if end_s is None else max(a, min(n, round(end_s * self.sample_rate_hz)))
        return Audio(self.samples[a:b].copy(), self.sample_rate_hz)

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
    warning (``tests/test_properties_codec_wer_unit.py``)."""
    x = np.clip(samples, -32768.0 / 32767.0, 1.0)
    return np.clip(np.round(x * 32767.0), -32768, 32767).astype(np.int16)


def pcm16_to_float(pcm: np.ndarray) -> np.ndarray:
    """int16 to float32 in [-1, 1)."""
    return (np.asarray(pcm, dtype=np.int16).astype(np.float32) / 32768.0).astype(np.float32)


class AudioFileError(RigError, ValueError):
    """An audio file rig will not use: ``str(err)`` reads ``FILE: problem``; ``problem`` is
    kept for callers that name the file in their own message (a profile's ``noise.path``)."""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path, self.problem = str(path), problem
        super().__init__(f"{self.path}: {problem}")


#: The first bytes of containers that libsndfile would decode whatever the file is named.
_NOT_WAV_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"ID3", "an MP3 file (ID3 tag)"), (b"fLaC", "a FLAC file"), (b"OggS", "an Ogg file"),
    (b"FORM", "an AIFF file"), (b"caff", "a CAF file"), (b"RF64", "an RF64 file"),
)


def _data_chunk(data: bytes) -> tuple[int, int] | None:
    """``(offset of its header, declared size in bytes)`` of a RIFF/WAVE file's ``data``
    chunk, walking the chunks from the start (RIFF WAVE format, Microsoft/IBM 1991); None for
    other bytes or when no ``data`` chunk header is found."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return None
    pos = 12
    while pos + 8 <= len(data):
        cid, size = data[pos:pos + 4], int.from_bytes(data[pos + 4:pos + 8], "little")
        if cid == b"data":
            return pos, size
        pos += 8 + size + (size & 1)
    return None


def wav_truncation(data: bytes) -> str | None:
    """Why a RIFF/WAVE file is cut short, or None: its ``data`` chunk declares more bytes than
    the file holds (a partial upload or copy; libsndfile would read what is there without a
    word). Sizes 0 and 0xFFFFFFFF (what streaming writers leave) are not checked."""
    found = _data_chunk(data)
    if found is None:
        return None
    pos, size = found
    have = len(data) - (pos + 8)
    if size not in (0, 0xFFFFFFFF) and size > have:
        return (f"truncated: the data chunk declares {size} bytes of audio, the file "
                f"holds {have}")
    return None


def _chunks_fill(data: bytes, pos: int) -> bool:
    """Whether ``data[pos:]`` reads as whole RIFF chunks (four ASCII id bytes, a size, the
    body and its pad byte) ending exactly at the end of the file."""
    while pos < len(data):
        if pos + 8 > len(data):
            return False
        cid = data[pos:pos + 4]
        if not all(0x20 <= c <= 0x7E for c in cid):
            return False
        size = int.from_bytes(data[pos + 4:pos + 8], "little")
        pos += 8 + size + (size & 1)
    return pos == len(data)


def fill_streaming_sizes(data: bytes) -> bytes:
    """The WAV bytes with a streaming writer's zero sizes filled in, else ``data`` unchanged.

    A writer that cannot seek back (a live recorder, a pipe) leaves the RIFF and ``data``
    chunk sizes at 0 or 0xFFFFFFFF. libsndfile reads 0xFFFFFFFF to the end of the file but
    takes a ``data`` size of 0 at its word (no samples). When the ``data`` chunk says 0 and
    bytes follow it that are not whole RIFF chunks (a genuinely empty ``data`` chunk followed
    by, say, a ``LIST`` chunk), those bytes are the samples: the ``data`` size becomes their
    count (bytes) and a RIFF size of 0 becomes the file's size less 8. A ``data`` chunk of 0
    with nothing after it stays empty (refused by :func:`samples_problem`)."""
    found = _data_chunk(data)
    if found is None:
        return data
    pos, size = found
    start = pos + 8
    if size != 0 or start >= len(data) or _chunks_fill(data, start):
        return data
    out = bytearray(data)
    out[pos + 4:pos + 8] = min(len(data) - start, 0xFFFFFFFF).to_bytes(4, "little")
    if int.from_bytes(data[4:8], "little") == 0:
        out[4:8] = min(len(data) - 8, 0xFFFFFFFF).to_bytes(4, "little")
    return bytes(out)


def container_problem(data: bytes, name: str) -> str | None:
    """Why the bytes of a file called ``name`` are not audio rig reads as such, or None.

    Refused: an empty file; a file named ``.wav`` whose bytes are another container (an MP3,
    FLAC, Ogg... renamed: libsndfile would decode it silently, hiding a lossy codec in the
    chain); a WAV cut short (:func:`wav_truncation`). Streaming WAVs whose size fields say
    0 or 0xFFFFFFFF are accepted (read to the end of the file: the caller passes the bytes
    through :func:`fill_streaming_sizes` before decoding)."""
    if not data:
        return "empty file (0 bytes)"
    if name.lower().endswith(".wav"):
        for magic, what in _NOT_WAV_MAGIC:
            if data.startswith(magic):
                return f"not a WAV file: the bytes are {what}; convert it to WAV (PCM)"
        if data[0] == 0xFF and len(data) > 1 and data[1] & 0xE0 == 0xE0:
            return "not a WAV file: the bytes are MPEG audio (an MP3); convert it to WAV (PCM)"
        # other bytes: libsndfile's decoder says what it makes of them ("cannot decode")
    return wav_truncation(data)


#: The longest recording rig reads (seconds). A recording is decoded whole (float32, and a
#: resampled copy or two beside it: about 12 bytes per sample per channel at the file's
#: rate), so a 2-hour stereo 44.1 kHz file would take about 7.6 GB; rig refuses longer ones
#: before reading them, with this limit in the message.
MAX_RECORDING_S = 3 * 3600.0
#: Bytes of memory per sample and channel while a recording is decoded and resampled.
_BYTES_PER_SAMPLE = 12


#: The most memory rig lets one recording take while it is read whole (bytes, by
#: :data:`_BYTES_PER_SAMPLE`): a recording under :data:`MAX_RECORDING_S` at a high rate and
#: several channels (2.9 h of 48 kHz stereo: about 12 GB) is refused by this bound instead.
MAX_RECORDING_BYTES = 4e9
#: Bytes a sample of each WAV subtype takes on disk (to bound a streaming WAV, whose header
#: gives no length, by its file size).
_DISK_BYTES = {"PCM_S8": 1, "PCM_U8": 1, "ULAW": 1, "ALAW": 1, "PCM_16": 2, "PCM_24": 3,
               "PCM_32": 4, "FLOAT": 4, "DOUBLE": 8}


def recording_too_long(path: str | Path, max_s: float | None = None) -> str | None:
    """Why ``path`` is too long to read whole, or None; from its header only (raw G.711
    ``.ulaw``/``.mulaw``: its size at 8000 bytes a second; a streaming WAV whose data size is
    0 or 0xFFFFFFFF, which gives no length: its file size over the bytes a frame takes). A
    file whose header cannot be read is left to the decoder (None).

    Refused: more than ``max_s`` seconds (default :data:`MAX_RECORDING_S`, read at call time)
    or more than :data:`MAX_RECORDING_BYTES` of memory to decode (a long recording at a high
    rate with several channels)."""
    max_s = MAX_RECORDING_S if max_s is None else max_s
    path = Path(path)
    try:
        if path.suffix.lower() in (".ulaw", ".mulaw"):
            frames, rate, channels = path.stat().st_size, 8000, 1
        else:
            info = sf.info(str(path))
            frames, rate, channels = info.frames, info.samplerate, info.channels
            per = _DISK_BYTES.get(info.subtype)
            if info.format in ("WAV", "WAVEX", "RF64") and per and channels > 0:
                # a streaming writer's size field reads as 0 (or the file's end) frames: the
                # file's size bounds what a decoder reading to its end would take
                frames = max(frames, path.stat().st_size // (per * channels))
    except (OSError, RuntimeError, sf.LibsndfileError):
        return None
    if rate <= 0:
        return None
    gb = frames * channels * _BYTES_PER_SAMPLE / 1e9
    if frames / rate > max_s:
        return (f"{frames / rate / 3600:.1f} h of audio; rig reads a recording whole (about "
                f"{gb:.1f} GB of memory for this one) and refuses recordings over "
                f"{max_s / 3600:g} h: split it into shorter files")
    if gb * 1e9 > MAX_RECORDING_BYTES:
        return (f"{frames / rate / 3600:.1f} h of audio at {rate} Hz, {channels} channel(s): "
                f"reading it whole would take about {gb:.1f} GB of memory, over rig's limit "
                f"of {MAX_RECORDING_BYTES / 1e9:g} GB; split it, or resample it to mono "
                "16 kHz")
    return None


#: The lowest sample rate read as speech (Hz): telephone audio is 8000; a rate under 4000 is
#: a wrong header (or not speech), and resampling it would invent a signal.
MIN_SAMPLE_RATE_HZ = 4000


def samples_problem(samples: np.ndarray, float_file: bool = False,
                    sample_rate_hz: int | None = None) -> str | None:
    """Why decoded samples (shape ``(n,)`` or ``(n, channels)``, float) are unusable, or None:
    no samples, NaN or infinite values (a float file from a broken export), or, for a float
    file (``float_file``), values beyond full scale (peak over 1.001): they would clip, not
    convert, at the 16-bit and G.711 edges; with ``sample_rate_hz``, a rate under
    :data:`MIN_SAMPLE_RATE_HZ`."""
    if sample_rate_hz is not None and sample_rate_hz < MIN_SAMPLE_RATE_HZ:
        return (f"sample rate {sample_rate_hz} Hz: speech needs at least "
                f"{MIN_SAMPLE_RATE_HZ} Hz (telephone audio is 8000 Hz); the header is wrong")
    if samples.shape[0] == 0:
        return "no samples (the data chunk is empty)"
    finite = np.isfinite(samples)
    if not finite.all():
        bad = int(np.size(finite) - np.count_nonzero(finite))
        first = int(np.argwhere(~finite)[0][0])
        return (f"{bad} samples are NaN or infinite (the first at sample {first}); the file "
                "is corrupt")
    peak = float(np.max(np.abs(samples)))
    if float_file and peak > 1.001:
        return (f"float samples beyond full scale (peak {peak:.3g}, 1.0 is full scale); "
                "normalise the file")
    return None


def read_wav(path: str | Path, sample_rate_hz: int | None = None) -> Audio:
    """Read any file soundfile reads (WAV, FLAC, OGG), mix to mono, optionally resample.

    8-, 16-, 24- and 32-bit PCM, float, G.711 WAVs, WAVE_FORMAT_EXTENSIBLE and streaming
    WAVs (size fields 0 or 0xFFFFFFFF: :func:`fill_streaming_sizes`) are accepted and
    converted to float32; stereo is mixed down. Refused (:class:`AudioFileError`): see
    :func:`container_problem` and :func:`samples_problem`; one longer than
    :data:`MAX_RECORDING_S` (:func:`recording_too_long`), before it is read.

    Raises:
        FileNotFoundError: the file does not exist.
        AudioFileError (a ValueError): the file cannot be decoded or is refused (the message
            names the file).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: audio file not found")
    too_long = recording_too_long(path)
    if too_long:
        raise AudioFileError(path, too_long)
    try:
        data_bytes = path.read_bytes()
    except OSError as exc:
        raise AudioFileError(path, f"cannot read ({exc.strerror or exc})") from None
    why = container_problem(data_bytes, path.name)
    if why:
        raise AudioFileError(path, why)
    data_bytes = fill_streaming_sizes(data_bytes)
    try:
        info = sf.info(io.BytesIO(data_bytes))
        data, sr = sf.read(io.BytesIO(data_bytes), dtype="float32", always_2d=True)
    except Exception as exc:  # soundfile raises its own LibsndfileError
        why = re.sub(r"\s*<_io\.BytesIO object at 0x[0-9a-f]+>", "", str(exc)).strip()
        why = re.sub(r"^Error opening\s*:?\s*", "", why)
        raise AudioFileError(path, f"cannot decode audio ({why or type(exc).__name__})"
                             ) from None
    why = samples_problem(data, info.subtype in ("FLOAT", "DOUBLE"), int(sr))
    if why:
        raise AudioFileError(path, why)
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
