"""Transports: a codec's 20 ms packets, lost or late on the way, decoded with concealment.

A transport encodes audio into one packet per 20 ms frame, lets the caller mark packets
missing, and decodes them in order, replacing each missing packet as the receiver would
(``silence``, ``repeat`` of the last frame played, or the ``codec``'s own concealment).

* linear PCM (no codec step): packets are 20 ms frames of the audio at its own rate;
* G.711: 160-byte frames at 8 kHz (numpy tables, :mod:`rig.channel.g711`);
* AMR-NB and Opus: PyAV (FFmpeg in-process; ``libopencore_amrnb``, ``libopus``), one packet
  per 20 ms. A missing AMR-NB packet under ``codec`` concealment is fed to the decoder as a
  NO_DATA frame (frame type 15), which runs AMR's error concealment unit; a missing Opus
  packet is fed as a packet of its TOC byte alone, a zero-length frame that libopus decodes
  with its packet loss concealment (RFC 6716, section 3.2.1; libopus treats ``len <= 1`` as a
  lost packet). Under ``silence`` and ``repeat`` the decoder does not see the missing packet,
  as with a receiver that has no concealment of its own.

Time alignment: each packet's decoded samples go to that packet's 20 ms slot (right-aligned,
so a decoder that skips Opus's pre-skip on its first output still lands in place); the
codec's own delay is then removed - AMR-NB's 5 ms look-ahead (40 samples at 8 kHz, measured:
see ``tests/test_channel_unit.py``) and Opus's pre-skip (read from its header) - and the output is
cut to the input's length at the codec rate, so durations and word timings survive.
"""

from __future__ import annotations

import fractions
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from rig.audio import Audio, float_to_pcm16, pcm16_to_float
from rig.channel.g711 import FRAME_MS, LINE_RATE_HZ
from rig.errors import EngineUnavailable

#: The receiver's concealment of a missing packet (a network step's ``concealment``).
Concealment = Literal["silence", "repeat", "codec"]

#: libopencore_amrnb's encoder + decoder delay at 8 kHz (5 ms look-ahead), samples.
AMR_NB_DELAY_SAMPLES = 40
#: AMR-NB storage-format header of a NO_DATA frame (FT = 15, Q = 1): "this frame is missing".
AMR_NB_NO_DATA = bytes([0x7C])
#: libopus (as wrapped by FFmpeg) always decodes at 48 kHz.
OPUS_DECODE_RATE_HZ = 48000


def _av() -> Any:
    try:
        import av
    except ImportError as exc:  # pragma: no cover - PyAV comes with faster-whisper
        raise EngineUnavailable("the amr_nb and opus channel steps need PyAV: pip install av "
                                "(it comes with faster-whisper: pip install -e '.[pipeline]')"
                                ) from exc
    return av


def _context(av: Any, codec: str, mode: str) -> Any:
    """PyAV's codec context for ``codec`` (``"w"``: encoder, ``"r"``: decoder).

    Raises:
        EngineUnavailable: this PyAV's FFmpeg has no such codec (PyAV's wheels from 18.1.1 on
            have no ``libopencore_amrnb``).
    """
    try:
        return av.CodecContext.create(codec, mode)
    except av.codec.codec.UnknownCodecError as exc:
        role = "encoder" if mode == "w" else "decoder"
        raise EngineUnavailable(
            f"PyAV {av.__version__} has no {codec} {role}: the "
            f"{'amr_nb' if 'amr' in codec else 'opus'} channel step needs it. PyAV's wheels "
            f"from 18.1.1 on are built without opencore-amr; install rig's pin: "
            f"pip install 'av>=14,<18.1.1'") from exc


@dataclass
class Encoded:
    """One transport's packets.

    Attributes:
        packets: one entry per 20 ms frame, in order (bytes for codecs, float32 frames for
            linear PCM).
        n_out: samples of the decoded output (the input's length at ``rate_hz``).
        rate_hz: the rate the decoded audio comes back at.
        state: what the decoder needs (codec extradata, pre-skip).
    """
    packets: list[Any]
    n_out: int
    rate_hz: int
    state: dict[str, Any]


def _frames(x: np.ndarray, n: int, dtype: Any) -> list[np.ndarray]:
    k = -(-len(x) // n) if len(x) else 0
    padded = np.zeros(k * n, dtype)
    padded[:len(x)] = x
    return [padded[i * n:(i + 1) * n] for i in range(k)]


def _conceal(frames: list[np.ndarray | None], missing: np.ndarray, n: int,
             concealment: Concealment) -> list[np.ndarray]:
    """Replace the frames marked ``missing`` by silence or by the last frame played."""
    out: list[np.ndarray] = []
    last = np.zeros(n, np.float32)
    for frame, gone in zip(frames, missing, strict=True):
        if gone:
            frame = last.copy() if concealment == "repeat" else np.zeros(n, np.float32)
        out.append(frame)
        last = frame
    return out


# --- linear PCM and G.711 ------------------------------------------------------------------

def encode_pcm(audio: Audio) -> Encoded:
    n = audio.sample_rate_hz * FRAME_MS // 1000
    return Encoded(_frames(audio.samples, n, np.float32), len(audio.samples),
                   audio.sample_rate_hz, {"frame": n})


def decode_pcm(enc: Encoded, missing: np.ndarray, concealment: Concealment) -> Audio:
    if concealment == "codec":
        raise ValueError("linear PCM frames have no concealment of their own")
    frames = _conceal(list(enc.packets), missing, enc.state["frame"], concealment)
    return _assemble(frames, enc.n_out, enc.rate_hz)


def encode_g711(audio: Audio, step: Any, codec: Any) -> Encoded:
    """A ``g711`` step (:class:`rig.channel.steps.G711`) with its law's registry entry
    (:class:`rig.channel.codecs.Codec`: ``encode_pcm16``, ``silence_code``)."""
    line = audio.resample(LINE_RATE_HZ)
    codes = codec.encode_pcm16(float_to_pcm16(line.samples))
    n = LINE_RATE_HZ * FRAME_MS // 1000
    silence = np.uint8(codec.silence_code)
    packets = [f.tobytes() for f in _frames(codes, n, np.uint8)]
    if packets and len(codes) % n:  # pad the last frame with the silence code, not 0x00
        last = np.frombuffer(packets[-1], np.uint8).copy()
        last[len(codes) % n:] = silence
        packets[-1] = last.tobytes()
    return Encoded(packets, len(line.samples), LINE_RATE_HZ, {"frame": n, "codec": codec})


def decode_g711(enc: Encoded, missing: np.ndarray, concealment: Concealment) -> Audio:
    if concealment == "codec":
        raise ValueError("G.711 has no concealment of its own")
    dec = enc.state["codec"].decode_pcm16
    frames = [pcm16_to_float(dec(p)) for p in enc.packets]
    return _assemble(_conceal(frames, missing, enc.state["frame"], concealment), enc.n_out,
                     LINE_RATE_HZ)


def _assemble(frames: list[np.ndarray], n_out: int, rate_hz: int, skip: int = 0) -> Audio:
    joined = np.concatenate(frames) if frames else np.zeros(0, np.float32)
    out = np.zeros(n_out, np.float32)
    part = joined[skip:skip + n_out]
    out[:len(part)] = part
    return Audio(out, rate_hz)


# --- AMR-NB and Opus through PyAV ------------------------------------------------------------

def _encode_av(codec: str, pcm: np.ndarray, rate_hz: int, bitrate_bps: int,
               options: dict[str, str] | None = None) -> tuple[list[bytes], bytes | None, int]:
    av = _av()
    ctx = _context(av, codec, "w")
    ctx.sample_rate = rate_hz
    ctx.layout = "mono"
    ctx.format = "s16"
    ctx.bit_rate = bitrate_bps
    ctx.time_base = fractions.Fraction(1, rate_hz)
    if options:
        ctx.options = options
    ctx.open()
    n = ctx.frame_size
    if n != rate_hz * FRAME_MS // 1000:
        raise RuntimeError(f"{codec} uses frames of {n} samples, expected 20 ms")
    packets: list[bytes] = []
    for i, frame in enumerate(_frames(pcm, n, np.int16)):
        f = av.AudioFrame.from_ndarray(frame.reshape(1, -1), format="s16", layout="mono")
        f.sample_rate = rate_hz
        f.pts = i * n
        packets += [bytes(p) for p in ctx.encode(f)]
    packets += [bytes(p) for p in ctx.encode(None)]
    return packets, (bytes(ctx.extradata) if ctx.extradata else None), n


def _decode_av(codec: str, packets: list[bytes], missing: np.ndarray, concealment: Concealment,
               plc_packet, slot: int, rate_hz: int, extradata: bytes | None
               ) -> list[np.ndarray]:
    """Decode packet by packet into ``slot``-sample frames (right-aligned in their slot)."""
    av = _av()
    ctx = _context(av, codec, "r")
    ctx.sample_rate = rate_hz
    ctx.layout = "mono"
    if extradata:
        ctx.extradata = extradata
    out: list[np.ndarray] = []
    last = np.zeros(slot, np.float32)
    previous: bytes | None = None
    for pkt, gone in zip(packets, missing, strict=True):
        if gone and concealment != "codec":
            frame = last.copy() if concealment == "repeat" else np.zeros(slot, np.float32)
        else:
            data = plc_packet(previous or pkt) if gone else pkt
            pcm = [f.to_ndarray().reshape(-1) for f in ctx.decode(av.Packet(data))]
            got = np.concatenate(pcm) if pcm else np.zeros(0, np.float32)
            got = (pcm16_to_float(got) if got.dtype == np.int16
                   else got.astype(np.float32, copy=False))
            if len(got) > slot:
                raise RuntimeError(f"{codec} decoded {len(got)} samples from one 20 ms packet")
            frame = np.zeros(slot, np.float32)
            frame[slot - len(got):] = got
        if not gone:
            previous = pkt
        out.append(frame)
        last = frame
    return out


def encode_amr_nb(audio: Audio, step: Any, codec: Any = None) -> Encoded:
    """An ``amr_nb`` step (:class:`rig.channel.steps.AmrNb`); ``codec``, its registry entry,
    is not needed."""
    line = audio.resample(LINE_RATE_HZ)
    packets, _, n = _encode_av("libopencore_amrnb", float_to_pcm16(line.samples), LINE_RATE_HZ,
                               step.bitrate_bps)
    return Encoded(packets, len(line.samples), LINE_RATE_HZ, {"frame": n})


def decode_amr_nb(enc: Encoded, missing: np.ndarray, concealment: Concealment) -> Audio:
    frames = _decode_av("libopencore_amrnb", enc.packets, missing, concealment,
                        lambda _prev: AMR_NB_NO_DATA, enc.state["frame"], LINE_RATE_HZ, None)
    return _assemble(frames, enc.n_out, LINE_RATE_HZ, skip=AMR_NB_DELAY_SAMPLES)


def _opus_pre_skip(extradata: bytes | None) -> int:
    """Pre-skip in 48 kHz samples from the OpusHead (RFC 7845, bytes 10-11), else 312."""
    if extradata and len(extradata) >= 12 and extradata[:8] == b"OpusHead":
        return int.from_bytes(extradata[10:12], "little")
    return 312


def encode_opus(audio: Audio, step: Any, codec: Any = None) -> Encoded:
    """An ``opus`` step (:class:`rig.channel.steps.Opus`); ``codec``, its registry entry,
    is not needed."""
    x = audio.resample(step.sample_rate_hz)
    packets, extradata, _ = _encode_av("libopus", float_to_pcm16(x.samples), step.sample_rate_hz,
                                       step.bitrate_bps, {"application": step.application})
    n_48k = round(len(x.samples) * OPUS_DECODE_RATE_HZ / step.sample_rate_hz)
    return Encoded(packets, len(x.samples), step.sample_rate_hz,
                   {"extradata": extradata, "n_48k": n_48k})


def decode_opus(enc: Encoded, missing: np.ndarray, concealment: Concealment) -> Audio:
    slot = OPUS_DECODE_RATE_HZ * FRAME_MS // 1000
    extradata = enc.state["extradata"]
    frames = _decode_av("libopus", enc.packets, missing, concealment, lambda prev: prev[:1],
                        slot, OPUS_DECODE_RATE_HZ, extradata)
    full = _assemble(frames, enc.state["n_48k"], OPUS_DECODE_RATE_HZ,
                     skip=_opus_pre_skip(extradata))
    out = full.resample(enc.rate_hz)
    samples = np.zeros(enc.n_out, np.float32)
    samples[:min(enc.n_out, len(out.samples))] = out.samples[:enc.n_out]
    return Audio(samples, enc.rate_hz)
