"""The interviewer's line and the frames handed to the next stage.

* :func:`telephony_path` - the interviewer's PSTN line: anti-aliased resampling to the line
  rate (soxr), G.711 encode and decode, audio back at the line rate.
* :func:`frames` - a G.711 byte stream cut into telephony frames (8 kHz, 20 ms: 160 bytes).
* :func:`vad_frames` - int16 PCM frames of the exact sizes a VAD accepts (rig's turn detection
  runs Silero; no stage runs webrtcvad yet, the frames are checked for it): webrtcvad takes
  10, 20 or 30 ms at 8, 16, 32 or 48 kHz; Silero takes windows of 256 samples at 8 kHz and
  512 at 16 kHz. Anything else is refused here, before the VAD sees it.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from rig.audio import Audio
from rig.channel.codecs import get_codec
from rig.channel.g711 import FRAME_MS, LINE_RATE_HZ, as_codes

__all__ = ["SILERO_WINDOW_SAMPLES", "WEBRTC_VAD_FRAME_MS", "WEBRTC_VAD_RATES_HZ",
           "frames", "telephony_path", "vad_frames"]

#: Sample rates webrtcvad accepts (Hz) and its frame lengths (ms).
WEBRTC_VAD_RATES_HZ: tuple[int, ...] = (8000, 16000, 32000, 48000)
WEBRTC_VAD_FRAME_MS: tuple[int, ...] = (10, 20, 30)
#: Silero VAD window, samples per rate.
SILERO_WINDOW_SAMPLES: dict[int, int] = {8000: 256, 16000: 512}


def telephony_path(audio: Audio, sample_rate_hz: int = LINE_RATE_HZ,
                   codec: str = "mulaw") -> Audio:
    """The interviewer's phone line: resample to the line rate, G.711 encode and decode.

    Resampling is soxr 'HQ' (anti-aliased: content above the line's Nyquist frequency is
    removed, not folded into the band). The output length is the input duration times the line
    rate, rounded (a duration survives to within one sample of the line rate).

    Args:
        audio: float32 mono at any rate.
        sample_rate_hz: the line rate (8000 for G.711 narrowband).
        codec: a codec the line carries (:data:`rig.channel.codecs.CODECS`): ``mulaw``
            (North America, Japan), ``alaw`` (elsewhere) or ``none`` (linear: resampling
            only, no companding and no clipping).

    Returns:
        Audio at ``sample_rate_hz``, float32, shape ``(m,)``; the ASR stage resamples it to its
        own rate with :meth:`Audio.resample`.

    Raises:
        ValueError: unknown codec, or one the line does not carry; the message lists those
            it does.
    """
    c = get_codec(codec, carrier="line")
    return c.roundtrip(audio.resample(sample_rate_hz))


def frames(codes: np.ndarray | bytes, frame_ms: int = FRAME_MS,
           sample_rate_hz: int = LINE_RATE_HZ, codec: str = "mulaw",
           pad: bool = True) -> list[bytes]:
    """Cut a G.711 byte stream into telephony frames (8 kHz, 20 ms: 160 bytes each).

    Args:
        codes: uint8 codes (one byte per sample) or bytes.
        frame_ms: frame length in ms (RTP ptime; 20 for Twilio media streams).
        sample_rate_hz: the line rate.
        codec: a G.711 law; its silence code pads the last frame (0xFF mu-law, 0xD5 A-law).
        pad: pad a short last frame with silence; when False, a short last frame is dropped.

    Returns:
        A list of ``bytes``, each exactly ``sample_rate_hz * frame_ms / 1000`` long.

    Raises:
        ValueError: the frame length is not a whole number of samples; a codec that is
            not a G.711 law.
    """
    silence = get_codec(codec, step_kind="g711").silence_code
    per_frame = sample_rate_hz * frame_ms / 1000
    if per_frame != int(per_frame) or per_frame <= 0:
        raise ValueError(f"{frame_ms} ms at {sample_rate_hz} Hz is not a whole number of samples")
    n = int(per_frame)
    data = as_codes(codes).reshape(-1)
    rest = len(data) % n
    if rest:
        data = (np.concatenate([data, np.full(n - rest, silence, np.uint8)])
                if pad else data[: len(data) - rest])
    return [data[i:i + n].tobytes() for i in range(0, len(data), n)]




def vad_frames(audio: Audio, vad: Literal["webrtc", "silero"] = "webrtc",
               frame_ms: int = FRAME_MS, pad: bool = False) -> list[bytes]:
    """Cut float audio into 16-bit little-endian PCM frames a VAD accepts.

    Args:
        audio: float32 mono at a rate the VAD takes (resample first; no silent resampling
            happens here, so a wrong rate is an error, not a surprise).
        vad: ``webrtc`` (frames of ``frame_ms`` = 10, 20 or 30 ms at 8/16/32/48 kHz) or
            ``silero`` (256 samples at 8 kHz, 512 at 16 kHz; ``frame_ms`` is ignored).
        frame_ms: webrtc frame length.
        pad: pad a short last frame with zeros; when False it is dropped.

    Returns:
        ``bytes`` frames, each ``2 * samples_per_frame`` long.

    Raises:
        ValueError: a rate or frame length the VAD does not accept.
        TypeError: the samples are not float32.
    """
    if audio.samples.dtype != np.float32:  # Audio enforces it; guard against subclasses
        raise TypeError(f"vad_frames takes float32 audio, got {audio.samples.dtype}")
    sr = audio.sample_rate_hz
    if vad == "webrtc":
        if sr not in WEBRTC_VAD_RATES_HZ:
            raise ValueError(f"webrtcvad takes {WEBRTC_VAD_RATES_HZ} Hz, got {sr} Hz")
        if frame_ms not in WEBRTC_VAD_FRAME_MS:
            raise ValueError(f"webrtcvad takes frames of {WEBRTC_VAD_FRAME_MS} ms, got {frame_ms}")
        n = sr * frame_ms // 1000
    elif vad == "silero":
        if sr not in SILERO_WINDOW_SAMPLES:
            raise ValueError(f"Silero VAD takes {tuple(SILERO_WINDOW_SAMPLES)} Hz, got {sr} Hz")
        n = SILERO_WINDOW_SAMPLES[sr]
    else:
        raise ValueError(f"unknown VAD {vad!r}; use 'webrtc' or 'silero'")
    pcm = audio.to_pcm16()
    rest = len(pcm) % n
    if rest:
        pcm = np.concatenate([pcm, np.zeros(n - rest, np.int16)]) if pad else pcm[:len(pcm) - rest]
    data = pcm.astype("<i2").tobytes()
    return [data[i:i + 2 * n] for i in range(0, len(data), 2 * n)]
