"""The simulated phone line: the caller's channel, the interviewer's line, framing.

Two stages, in the order a call runs them:

* :func:`apply_caller_channel` (and :func:`apply_caller_channel_report`, which also says what
  it did) - what the caller's side adds: the profile's ``channel``, an ordered chain of typed
  steps (:mod:`rig.channel.steps`): band limiting, G.711, AMR-NB, Opus, packet loss (random or
  Gilbert-Elliott) with concealment, jitter with a fixed jitter buffer, gain, clipping. Each step
  is a pure function of the audio and the seed. No steps: the clean wideband channel.
* :func:`telephony_path` - the interviewer's PSTN line: anti-aliased resampling to the line
  rate (soxr), G.711 encode and decode (:mod:`rig.channel.g711`, bit-exact with ``audioop``).

Framing for the next stage: :func:`frames` (G.711 bytes, 160 per 20 ms at 8 kHz) and
:func:`vad_frames` (int16 PCM frames of the sizes webrtcvad and Silero accept).

Codecs are one registry (:mod:`rig.channel.codecs`: :data:`CODECS`, a :class:`Codec` per
name) that the line, the steps, the chain, the call transports and the docs read.

Modules: ``codecs`` (the registry), ``g711`` (companding), ``line`` (telephony path,
framing), ``steps`` (the chain's schema), ``transport`` (codec packets, PyAV), ``network``
(loss and jitter patterns), ``chain`` (running a chain, :class:`ChannelReport`).
"""

from rig.channel.chain import (
    ChannelReport,
    StepReport,
    apply_caller_channel,
    apply_caller_channel_report,
    step_rng,
)
from rig.channel.codecs import CODECS, Codec, decode, encode, get_codec
from rig.channel.g711 import (
    FRAME_MS,
    LINE_RATE_HZ,
    alaw_decode,
    alaw_encode,
    mulaw_decode,
    mulaw_encode,
)
from rig.channel.line import (
    SILERO_WINDOW_SAMPLES,
    WEBRTC_VAD_FRAME_MS,
    WEBRTC_VAD_RATES_HZ,
    frames,
    telephony_path,
    vad_frames,
)
from rig.channel.steps import Channel, ChannelStep

__all__ = [
    "CODECS",
    "FRAME_MS",
    "LINE_RATE_HZ",
    "SILERO_WINDOW_SAMPLES",
    "WEBRTC_VAD_FRAME_MS",
    "WEBRTC_VAD_RATES_HZ",
    "Channel",
    "ChannelReport",
    "ChannelStep",
    "Codec",
    "StepReport",
    "alaw_decode",
    "alaw_encode",
    "apply_caller_channel",
    "apply_caller_channel_report",
    "decode",
    "encode",
    "frames",
    "get_codec",
    "mulaw_decode",
    "mulaw_encode",
    "step_rng",
    "telephony_path",
    "vad_frames",
]
