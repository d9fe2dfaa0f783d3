"""The caller-side channel as data: an ordered chain of typed, validated steps.

A profile's ``channel`` is ``{steps: [...]}``; each step has a ``kind`` and its settings, in
units named by their suffix. The chain runs in order (:func:`rig.channel.apply_caller_channel`);
an empty chain is the clean wideband channel (the render's 16 kHz audio, unchanged).

Kinds:

* ``bandlimit`` - resample to ``sample_rate_hz`` and band-pass ``low_hz``-``high_hz``
  (PSTN narrowband: 8000 Hz, 300-3400 Hz).
* ``g711`` - G.711 mu-law or A-law at 8 kHz (20 ms packets of 160 bytes).
* ``amr_nb`` - AMR-NB (3GPP TS 26.071) at one of its eight bitrates, 8 kHz, 20 ms frames.
* ``opus`` - Opus (RFC 6716) at ``bitrate_bps``, encoded at ``sample_rate_hz``, 20 ms frames.
* ``packet_loss`` - 20 ms packets lost at random or in bursts (Gilbert-Elliott).
* ``jitter`` - per-packet network delay against a fixed jitter buffer that drops late packets.
* ``gain`` - level change in dB; samples past full scale clip, as in a device's converter.
* ``clip`` - hard clipping at ``ceiling_dbfs``.

Packets: a network step (``packet_loss``, ``jitter``) acts on the packets of the codec step
right before it (``g711``, ``amr_nb``, ``opus``; further network steps may follow), or on 20 ms
frames of linear PCM when there is none. A codec step with the network steps after it is one
*transport*: encode, lose or delay packets, decode with the receiver's ``concealment``:

* ``silence`` - a missing packet plays as silence;
* ``repeat`` - it plays the last decoded frame again (silence when none came yet);
* ``codec`` - the decoder's own concealment (AMR-NB's error concealment unit, Opus's PLC).
  G.711 and linear PCM have none, so ``codec`` needs ``amr_nb`` or ``opus``.

All the network steps of one transport must name the same concealment (it is the receiver's).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rig.channel.codecs import CODECS, codec_step_kinds, get_codec, step_codec
from rig.channel.transport import Concealment

#: AMR-NB's eight codec modes, bits per second (3GPP TS 26.071).
AMR_NB_BITRATES_BPS: tuple[int, ...] = (4750, 5150, 5900, 6700, 7400, 7950, 10200, 12200)
NETWORK_KINDS: tuple[str, ...] = ("packet_loss", "jitter")
#: Packet (frame) length of every transport, ms.
PACKET_MS = 20


class _Step(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def describe(self) -> str:  # pragma: no cover - every step overrides it
        raise NotImplementedError


class Bandlimit(_Step):
    """Anti-aliased resampling (soxr) to ``sample_rate_hz``, then a band-pass from ``low_hz``
    to ``high_hz`` (Butterworth, order 4 per edge, run forward and backward: zero phase, so
    nothing moves in time). ``low_hz: 0`` skips the high-pass."""
    kind: Literal["bandlimit"] = "bandlimit"
    sample_rate_hz: int = Field(8000, ge=8000, le=48000)
    low_hz: float = Field(300.0, ge=0.0)
    high_hz: float = Field(3400.0, gt=0.0)

    @model_validator(mode="after")
    def _band(self) -> Bandlimit:
        if not self.low_hz < self.high_hz < self.sample_rate_hz / 2:
            raise ValueError(f"bandlimit needs low_hz < high_hz < sample_rate_hz / 2 "
                             f"(got {self.low_hz}, {self.high_hz}, {self.sample_rate_hz})")
        return self

    def describe(self) -> str:
        return f"bandlimit {self.sample_rate_hz} Hz {self.low_hz:g}-{self.high_hz:g} Hz"


class G711(_Step):
    """G.711 at 8 kHz (the step resamples to 8 kHz first when needed). ``law``: a codec of
    the registry applied by ``g711`` steps (:data:`rig.channel.codecs.CODECS`: ``mulaw``,
    ``alaw``)."""
    kind: Literal["g711"] = "g711"
    law: str = "mulaw"

    @field_validator("law")
    @classmethod
    def _law(cls, v: str) -> str:
        return get_codec(v, carrier="channel", step_kind="g711").name

    def describe(self) -> str:
        return f"g711 {self.law}"


class AmrNb(_Step):
    """AMR-NB through PyAV (``libopencore_amrnb``), 8 kHz, 20 ms frames."""
    kind: Literal["amr_nb"] = "amr_nb"
    bitrate_bps: int = 12200

    @model_validator(mode="after")
    def _mode(self) -> AmrNb:
        if self.bitrate_bps not in AMR_NB_BITRATES_BPS:
            raise ValueError(f"amr_nb.bitrate_bps must be one of AMR-NB's modes "
                             f"{list(AMR_NB_BITRATES_BPS)} (got {self.bitrate_bps})")
        return self

    def describe(self) -> str:
        return f"amr_nb {self.bitrate_bps / 1000:g} kbit/s"


class Opus(_Step):
    """Opus through PyAV (``libopus``), 20 ms frames, encoded at ``sample_rate_hz`` (WebRTC
    runs Opus at 48 kHz)."""
    kind: Literal["opus"] = "opus"
    bitrate_bps: int = Field(24000, ge=6000, le=510000)
    sample_rate_hz: Literal[8000, 12000, 16000, 24000, 48000] = 48000
    application: Literal["voip", "audio", "lowdelay"] = "voip"

    def describe(self) -> str:
        return f"opus {self.bitrate_bps / 1000:g} kbit/s @{self.sample_rate_hz // 1000} kHz"


class PacketLoss(_Step):
    """Loss of 20 ms packets.

    ``random``: each packet is lost with probability ``loss_pct`` / 100, independently.
    ``gilbert_elliott``: a two-state Markov chain over packets; the bad state loses
    ``bad_loss_pct`` of its packets and the good state ``good_loss_pct``; the chain stays in
    the bad state ``mean_burst_frames`` packets on average, and the share of time it spends
    there is set so that the long-run loss is ``loss_pct`` (with the defaults, 100% and 0%, the
    Gilbert model: every bad-state packet is lost and ``mean_burst_frames`` is the mean length
    of a loss burst).
    """
    kind: Literal["packet_loss"] = "packet_loss"
    model: Literal["random", "gilbert_elliott"] = "random"
    loss_pct: float = Field(ge=0.0, le=50.0)
    mean_burst_frames: float | None = Field(None, ge=1.0, le=100.0)
    good_loss_pct: float = Field(0.0, ge=0.0, le=100.0)
    bad_loss_pct: float = Field(100.0, ge=0.0, le=100.0)
    concealment: Concealment = "repeat"

    @model_validator(mode="after")
    def _model_fields(self) -> PacketLoss:
        if self.model == "random":
            if self.mean_burst_frames is not None:
                raise ValueError("packet_loss.mean_burst_frames is for model gilbert_elliott")
            if (self.good_loss_pct, self.bad_loss_pct) != (0.0, 100.0):
                raise ValueError("good_loss_pct and bad_loss_pct are for model gilbert_elliott")
            return self
        if self.mean_burst_frames is None:
            raise ValueError("model gilbert_elliott needs mean_burst_frames")
        if not self.good_loss_pct <= self.loss_pct <= self.bad_loss_pct \
                or self.good_loss_pct == self.bad_loss_pct:
            raise ValueError(f"gilbert_elliott needs good_loss_pct <= loss_pct <= bad_loss_pct "
                             f"with good < bad (got {self.good_loss_pct}, {self.loss_pct}, "
                             f"{self.bad_loss_pct})")
        p, _ = self.transition_probabilities()
        if p > 1.0:
            raise ValueError(f"loss_pct {self.loss_pct} with mean_burst_frames "
                             f"{self.mean_burst_frames} needs P(good->bad) = {p:.2f} > 1; "
                             "lengthen the bursts or lower the loss")
        return self

    def transition_probabilities(self) -> tuple[float, float]:
        """``(p, r)``: P(good -> bad) and P(bad -> good) per packet (gilbert_elliott)."""
        burst = self.mean_burst_frames or 1.0
        r = 1.0 / burst
        g, b, loss = self.good_loss_pct / 100, self.bad_loss_pct / 100, self.loss_pct / 100
        pi_bad = (loss - g) / (b - g) if b > g else 0.0
        if pi_bad >= 1.0:
            return 1.0, 0.0
        return r * pi_bad / (1.0 - pi_bad), r

    def describe(self) -> str:
        if self.model == "random":
            return f"loss random {self.loss_pct:g}% ({self.concealment})"
        return (f"loss gilbert-elliott {self.loss_pct:g}% burst {self.mean_burst_frames:g} "
                f"frames ({self.concealment})")


class Jitter(_Step):
    """Network delay variation against a fixed jitter buffer.

    Each packet's extra one-way delay (over the fastest packet) is drawn independently from an
    exponential distribution with mean ``jitter_ms``. The receiver plays packet k at a fixed
    time ``buffer_ms`` after packet k would have arrived with no extra delay: a packet delayed
    by more than ``buffer_ms`` misses its slot and is dropped (late share
    ``exp(-buffer_ms / jitter_ms)``). Packets are played in sequence order, so reordering is
    absorbed. The buffer's constant playout delay is not added to the audio: offline, audio has
    no clock to be late against, and word timings stay aligned.
    """
    kind: Literal["jitter"] = "jitter"
    jitter_ms: float = Field(ge=0.0, le=1000.0)
    buffer_ms: float = Field(ge=0.0, le=2000.0)
    concealment: Concealment = "repeat"

    def describe(self) -> str:
        return (f"jitter {self.jitter_ms:g} ms, buffer {self.buffer_ms:g} ms "
                f"({self.concealment})")


class Gain(_Step):
    """Multiply by ``gain_db``; samples past full scale clip at +-1."""
    kind: Literal["gain"] = "gain"
    gain_db: float = Field(ge=-60.0, le=40.0)

    def describe(self) -> str:
        return f"gain {self.gain_db:+g} dB"


class Clip(_Step):
    """Hard clipping at ``ceiling_dbfs`` (0 dBFS = full scale)."""
    kind: Literal["clip"] = "clip"
    ceiling_dbfs: float = Field(-6.0, ge=-40.0, le=0.0)

    def describe(self) -> str:
        return f"clip at {self.ceiling_dbfs:g} dBFS"


ChannelStep = Annotated[Bandlimit | G711 | AmrNb | Opus | PacketLoss | Jitter | Gain | Clip,
                        Field(discriminator="kind")]


class Channel(BaseModel):
    """The caller-side channel: ``steps`` applied in order. No steps: clean wideband (16 kHz).

    The older form ``{kind: clean}`` is read as no steps.
    """
    model_config = ConfigDict(frozen=True, extra="forbid")
    steps: tuple[ChannelStep, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _legacy_kind(cls, data: Any) -> Any:
        if isinstance(data, dict) and "kind" in data:
            data = dict(data)
            kind = data.pop("kind")
            if kind != "clean":
                raise ValueError(f"channel.kind {kind!r} is not a channel; write the chain as "
                                 "channel.steps (kinds: bandlimit, g711, amr_nb, opus, "
                                 "packet_loss, jitter, gain, clip)")
            if data.get("steps"):
                raise ValueError("channel.kind 'clean' cannot have steps")
        return data

    @model_validator(mode="after")
    def _transports(self) -> Channel:
        for i, codec, net in transports(self.steps):
            concealments = {s.concealment for _, s in net}
            if len(concealments) > 1:
                raise ValueError(f"steps[{net[0][0]}..{net[-1][0]}]: the network steps after "
                                 f"steps[{i}] must share one concealment (the receiver's), "
                                 f"got {sorted(concealments)}")
            for j, s in net:
                if s.concealment == "codec" and (codec is None
                                                 or not step_codec(codec).concealment):
                    what = f"a {codec.kind} transport" if codec else "linear PCM frames"
                    plc = " or ".join(dict.fromkeys(c.step_kind for c in CODECS.values()
                                                    if c.concealment and c.step_kind))
                    raise ValueError(f"steps[{j}].concealment: 'codec' needs an {plc} "
                                     f"step before it; {what} has no concealment of its own "
                                     "(use silence or repeat)")
        return self

    @property
    def is_clean(self) -> bool:
        return not self.steps

    def describe(self) -> str:
        """One line: ``clean wideband`` or the steps joined by `` > ``."""
        return " > ".join(s.describe() for s in self.steps) if self.steps else "clean wideband"


def transports(steps: tuple[_Step, ...]) -> list[tuple[int, _Step | None, list[tuple[int, Any]]]]:
    """The chain's transports: ``(index of the codec step or of the first network step,
    codec step or None for linear PCM, [(index, network step), ...])``. A codec step with no
    network step after it is a transport with an empty list."""
    out: list[tuple[int, _Step | None, list[tuple[int, Any]]]] = []
    current: tuple[int, _Step | None, list[tuple[int, Any]]] | None = None
    for i, s in enumerate(steps):
        if s.kind in codec_step_kinds():
            current = (i, s, [])
            out.append(current)
        elif s.kind in NETWORK_KINDS:
            if current is None:
                current = (i, None, [])
                out.append(current)
            current[2].append((i, s))
        else:
            current = None
    return out
