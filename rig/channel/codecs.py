"""The codec registry: one :class:`Codec` per codec, in :data:`CODECS`, keyed by name.

Everything that names a codec reads it here: the interviewer's line (``telephony.codec`` of
a pipeline, :func:`rig.channel.line.telephony_path`), the caller-channel steps and their
validation (:mod:`rig.channel.steps`: a ``g711`` step's ``law``, the codecs with their own
concealment), the chain that runs them (:mod:`rig.channel.chain`), the real-call transports
(SIP and Twilio carry ``mulaw``, WebRTC ``opus``), the monitor's G.711 detection and the docs
(``docs/profiles.md``, checked by ``tests/test_codec_registry_unit.py``). Adding a codec is
adding an entry; an unknown name is a ValueError that lists the names there are.

Where a codec can be carried (:data:`CARRIERS`): ``line`` (the pipeline's telephony path),
``channel`` (a caller-channel step), ``sip``, ``twilio``, ``webrtc`` (the real-call
transports of :mod:`rig.calls.transports`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import rig.channel.transport as tp
from rig.audio import Audio, float_to_pcm16, pcm16_to_float
from rig.channel.g711 import (
    LINE_RATE_HZ,
    alaw_decode,
    alaw_encode,
    mulaw_decode,
    mulaw_encode,
)

#: What can carry a codec: the pipeline's line, a caller-channel step, the call transports.
CARRIERS: tuple[str, ...] = ("line", "channel", "sip", "twilio", "webrtc")


@dataclass(frozen=True)
class Codec:
    """One codec and how rig applies it.

    Attributes:
        name: the name configs and rows use (``telephony.codec``, a ``g711`` step's ``law``).
        sample_rate_hz: the rate it codes at; None: the audio's own rate (linear).
        description: one line, for docs and errors.
        carried_by: the :data:`CARRIERS` that can carry it.
        step_kind: the caller-channel step kind that applies it (``g711``, ``amr_nb``,
            ``opus``); None: no step does.
        encode_pcm16: sample-wise encoder, int16 PCM (any shape) -> uint8 codes, for codecs
            with one code per sample (G.711); None otherwise.
        decode_pcm16: its decoder, uint8 codes or bytes -> int16 PCM.
        silence_code: the code of a zero sample (what pads a last frame).
        packet_encode: ``(audio, step, codec) -> Encoded``: 20 ms packets for a channel step
            (:mod:`rig.channel.transport`).
        packet_decode: ``(Encoded, missing, concealment) -> Audio``.
        concealment: whether the decoder has a concealment of its own (``concealment:
            codec`` of a network step needs it).
        wire_name: the RTP/SDP name and clock (``PCMU/8000``), for a call transport.
    """
    name: str
    sample_rate_hz: int | None
    description: str
    carried_by: tuple[str, ...]
    step_kind: str | None = None
    encode_pcm16: Callable[[np.ndarray], np.ndarray] | None = None
    decode_pcm16: Callable[[np.ndarray | bytes], np.ndarray] | None = None
    silence_code: int | None = None
    packet_encode: Callable[..., Any] | None = None
    packet_decode: Callable[..., Any] | None = None
    concealment: bool = False
    wire_name: str | None = None

    def roundtrip(self, audio: Audio) -> Audio:
        """Encode and decode at the audio's own rate (the interviewer's line; resample
        first): float32, shape ``(n,)``, samples beyond [-1, 1] clip. A linear codec (no
        sample-wise coder: ``none``) returns ``audio`` itself."""
        if self.encode_pcm16 is None or self.decode_pcm16 is None:
            return audio
        codes = self.encode_pcm16(float_to_pcm16(audio.samples))
        return Audio(pcm16_to_float(self.decode_pcm16(codes)), audio.sample_rate_hz)


CODECS: dict[str, Codec] = {c.name: c for c in (
    Codec("mulaw", LINE_RATE_HZ, "G.711 mu-law (North America, Japan): 8-bit companded PCM",
          ("line", "channel", "sip", "twilio"), "g711", mulaw_encode, mulaw_decode, 0xFF,
          tp.encode_g711, tp.decode_g711, wire_name="PCMU/8000"),
    Codec("alaw", LINE_RATE_HZ, "G.711 A-law (elsewhere): 8-bit companded PCM",
          ("line", "channel"), "g711", alaw_encode, alaw_decode, 0xD5,
          tp.encode_g711, tp.decode_g711, wire_name="PCMA/8000"),
    Codec("amr_nb", LINE_RATE_HZ, "AMR-NB (3GPP TS 26.071) through PyAV, 4.75-12.2 kbit/s",
          ("channel",), "amr_nb", packet_encode=tp.encode_amr_nb,
          packet_decode=tp.decode_amr_nb, concealment=True),
    Codec("opus", tp.OPUS_DECODE_RATE_HZ, "Opus (RFC 6716) through PyAV, 6-510 kbit/s",
          ("channel", "webrtc"), "opus", packet_encode=tp.encode_opus,
          packet_decode=tp.decode_opus, concealment=True, wire_name="opus/48000"),
    Codec("none", None, "linear PCM: resampling only, no companding and no clipping",
          ("line",)),
)}


def codec_names(carrier: str | None = None, step_kind: str | None = None) -> list[str]:
    """The registry's names (carried by ``carrier``, applied by ``step_kind``), in order."""
    return [c.name for c in CODECS.values() if (carrier is None or carrier in c.carried_by)
            and (step_kind is None or c.step_kind == step_kind)]


def get_codec(name: str, carrier: str | None = None, step_kind: str | None = None) -> Codec:
    """The entry ``name``, checked to be carried by ``carrier`` and applied by ``step_kind``.

    Raises:
        ValueError: ``unknown codec 'x'; use one of [...]``, the names that fit.
    """
    codec = CODECS.get(name) if isinstance(name, str) else None
    fits = codec_names(carrier, step_kind)
    if codec is None or codec.name not in fits:
        raise ValueError(f"unknown codec {name!r}; use one of {fits}")
    return codec


def codec_step_kinds() -> tuple[str, ...]:
    """The caller-channel step kinds that apply a codec (``g711``, ``amr_nb``, ``opus``)."""
    return tuple(dict.fromkeys(c.step_kind for c in CODECS.values() if c.step_kind))


def step_codec(step: Any) -> Codec:
    """The codec a caller-channel codec step applies: its ``law`` (``g711``), else the one
    codec of its kind."""
    names = codec_names(step_kind=step.kind)
    return get_codec(getattr(step, "law", names[0] if len(names) == 1 else ""),
                     step_kind=step.kind)


def encode(audio: Audio, codec: str = "mulaw") -> np.ndarray:
    """Float audio to a sample-wise codec's codes (G.711) at the audio's own rate (resample
    first).

    Returns:
        uint8 codes, shape ``(n,)``, one byte per sample. Samples beyond [-1, 1] clip.

    Raises:
        ValueError: unknown codec, or one without codes per sample (``none``).
    """
    c = CODECS.get(codec)
    if c is None or c.encode_pcm16 is None:
        raise ValueError(f"encode: codec must be one of {_sample_wise()}, got {codec!r}")
    return c.encode_pcm16(float_to_pcm16(audio.samples))


def decode(codes: np.ndarray | bytes, codec: str = "mulaw",
           sample_rate_hz: int = LINE_RATE_HZ) -> Audio:
    """A sample-wise codec's codes to float audio (float32, shape ``(n,)``, range [-1, 1))
    at ``sample_rate_hz``.

    Raises:
        ValueError: unknown codec, or one without codes per sample.
    """
    c = CODECS.get(codec)
    if c is None or c.decode_pcm16 is None:
        raise ValueError(f"decode: codec must be one of {_sample_wise()}, got {codec!r}")
    return Audio(pcm16_to_float(c.decode_pcm16(codes)), sample_rate_hz)


def _sample_wise() -> list[str]:
    return [c.name for c in CODECS.values() if c.encode_pcm16 is not None]
