"""Running a profile's caller-side channel and reporting what it did.

:func:`apply_caller_channel_report` runs the steps of a :class:`~rig.channel.steps.Channel` in
order. Level and band steps (``bandlimit``, ``gain``, ``clip``) are functions of the audio;
a codec step and the network steps after it run as one transport
(:mod:`rig.channel.transport`): encode into 20 ms packets, mark the packets each network step
removes (:mod:`rig.channel.network`), decode in order with the receiver's concealment.

Every step is a pure function of the audio, its settings and the seed: step ``i`` draws only
from ``numpy.random.default_rng([seed, 10, i])`` (stream 10 of the call's seed; fillers use 1,
noise 2, word repetitions 4). After every step the audio is checked: float32, mono, finite,
at the rate the step declares; a step that breaks the contract raises instead of passing it on.

The report counts what happened on this call: packets sent, lost, dropped late, the share
concealed, samples clipped; ``ChannelReport.to_row()`` is what a call records.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import rig.channel.transport as tp
from rig.audio import Audio
from rig.channel.codecs import codec_step_kinds, step_codec
from rig.channel.network import expected_missing_pct, late_mask, loss_mask
from rig.channel.steps import (
    NETWORK_KINDS,
    Bandlimit,
    Channel,
    Clip,
    Gain,
    Jitter,
    PacketLoss,
)

_CHANNEL_STREAM = 10


def step_rng(seed: int, index: int) -> np.random.Generator:
    """The generator of step ``index`` of a chain for the call's ``seed`` (>= 0)."""
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    return np.random.default_rng([seed, _CHANNEL_STREAM, index])


@dataclass(frozen=True)
class StepReport:
    """What one step did.

    Attributes:
        index: position in the chain.
        kind: the step kind.
        description: the step in words (:meth:`describe`).
        output_rate_hz: rate of the audio after the step (for a network step, of its
            transport's decoded audio).
        packets: packets the step saw (transport and network steps), else None.
        packets_missing: packets it removed (lost, or late for ``jitter``), else None.
        expected_missing_pct: the long-run share it is set to remove, percent, else None.
        clipped_samples: samples it clipped (``gain``, ``clip``), else None.
    """
    index: int
    kind: str
    description: str
    output_rate_hz: int
    packets: int | None = None
    packets_missing: int | None = None
    expected_missing_pct: float | None = None
    clipped_samples: int | None = None


@dataclass(frozen=True)
class ChannelReport:
    """What a caller channel did to one call's audio.

    Attributes:
        chain: the chain in words (``clean wideband`` when empty).
        steps_json: the steps as JSON (kinds and settings), for the call's row.
        steps: one :class:`StepReport` per step.
        input_rate_hz, output_rate_hz: rates before and after the chain.
        input_duration_s, output_duration_s: durations before and after (equal to within one
            20 ms frame; to within one sample of the output rate in practice).
        packets: packets that crossed a network step (0 when the chain has none).
        packets_lost: of those, removed by ``packet_loss`` steps.
        packets_late: removed by a jitter buffer (and not already lost).
        clipped_samples: samples clipped by ``gain`` and ``clip`` steps.
    """
    chain: str
    steps_json: str
    steps: tuple[StepReport, ...]
    input_rate_hz: int
    output_rate_hz: int
    input_duration_s: float
    output_duration_s: float
    packets: int = 0
    packets_lost: int = 0
    packets_late: int = 0
    clipped_samples: int = 0
    output_samples: int = field(default=0, repr=False)

    @property
    def packets_missing(self) -> int:
        """Packets concealed at the receiver: lost or late."""
        return self.packets_lost + self.packets_late

    @property
    def loss_pct(self) -> float | None:
        """Measured share of packets lost, percent; None when no packet crossed a network."""
        return 100.0 * self.packets_lost / self.packets if self.packets else None

    @property
    def late_pct(self) -> float | None:
        return 100.0 * self.packets_late / self.packets if self.packets else None

    @property
    def missing_pct(self) -> float | None:
        """Measured share of packets concealed (lost or late), percent."""
        return 100.0 * self.packets_missing / self.packets if self.packets else None

    @property
    def expected_missing_pct(self) -> float | None:
        """The share the chain's network steps are set to remove in the long run, percent
        (independent steps combined); None without network steps."""
        claims = [s.expected_missing_pct for s in self.steps if s.expected_missing_pct is not None]
        if not claims:
            return None
        keep = float(np.prod([1.0 - c / 100.0 for c in claims]))
        return 100.0 * (1.0 - keep)

    @property
    def clipped_pct(self) -> float:
        n = self.output_samples
        return 100.0 * self.clipped_samples / n if n else 0.0

    def to_row(self) -> dict[str, Any]:
        """The columns a call records (``channel_*``)."""
        return {
            "channel_chain": self.chain, "channel_steps": self.steps_json,
            "channel_output_rate_hz": self.output_rate_hz,
            "channel_packets": self.packets, "channel_packets_lost": self.packets_lost,
            "channel_packets_late": self.packets_late,
            "channel_loss_pct": self.loss_pct, "channel_late_pct": self.late_pct,
            "channel_missing_pct": self.missing_pct,
            "channel_missing_pct_expected": self.expected_missing_pct,
            "channel_clipped_pct": self.clipped_pct,
        }


def _checked(audio: Audio, rate_hz: int, where: str) -> Audio:
    s = audio.samples
    if not isinstance(audio, Audio) or s.dtype != np.float32 or s.ndim != 1:
        raise TypeError(f"{where}: produced {getattr(s, 'dtype', None)} with shape "
                        f"{getattr(s, 'shape', None)}; the contract is float32 mono")
    if audio.sample_rate_hz != rate_hz:
        raise ValueError(f"{where}: produced {audio.sample_rate_hz} Hz, declared {rate_hz} Hz")
    if not np.all(np.isfinite(s)):
        raise ValueError(f"{where}: produced non-finite samples")
    return audio


# --- level and band steps -------------------------------------------------------------------

def bandlimit(audio: Audio, step: Bandlimit) -> Audio:
    """Anti-aliased resampling to ``step.sample_rate_hz``, then a zero-phase band-pass."""
    from scipy.signal import butter, sosfiltfilt

    x = audio.resample(step.sample_rate_hz)
    sr = step.sample_rate_hz
    if step.low_hz > 0:
        sos = butter(4, [step.low_hz, step.high_hz], btype="bandpass", fs=sr, output="sos")
    else:
        sos = butter(4, step.high_hz, btype="lowpass", fs=sr, output="sos")
    if len(x.samples) <= 3 * (2 * len(sos) + 1):  # too short for filtfilt's edge padding
        return x
    y = sosfiltfilt(sos, x.samples.astype(np.float64))
    return Audio(np.clip(y, -1.0, 1.0).astype(np.float32), sr)


def gain(audio: Audio, step: Gain) -> tuple[Audio, int]:
    """``audio`` times ``10^(gain_db / 20)``, clipped at full scale; and the clipped count."""
    y = audio.samples.astype(np.float64) * 10.0 ** (step.gain_db / 20.0)
    clipped = int(np.count_nonzero(np.abs(y) > 1.0))
    return Audio(np.clip(y, -1.0, 1.0).astype(np.float32), audio.sample_rate_hz), clipped


def clip(audio: Audio, step: Clip) -> tuple[Audio, int]:
    """Hard clipping at ``ceiling_dbfs``; and the clipped count."""
    c = 10.0 ** (step.ceiling_dbfs / 20.0)
    clipped = int(np.count_nonzero(np.abs(audio.samples) > c))
    return Audio(np.clip(audio.samples, -c, c).astype(np.float32), audio.sample_rate_hz), clipped


def _transport(audio: Audio, codec, net: list[tuple[int, Any]], seed: int,
               ) -> tuple[Audio, list[StepReport], int, int, int]:
    """Encode, remove packets, decode. Returns the audio, the network steps' reports, and
    the packets sent, lost and late (late: dropped by a jitter buffer and not already lost)."""
    entry = step_codec(codec) if codec is not None else None  # its registry entry
    enc = entry.packet_encode(audio, codec, entry) if entry is not None else tp.encode_pcm(audio)
    n = len(enc.packets)
    lost, late = np.zeros(n, bool), np.zeros(n, bool)
    reports: list[StepReport] = []
    for i, s in net:
        if isinstance(s, PacketLoss):
            mask = loss_mask(n, s, step_rng(seed, i))
            lost |= mask
        elif isinstance(s, Jitter):
            mask = late_mask(n, s, step_rng(seed, i))
            late |= mask
        else:  # pragma: no cover - the schema admits no other network kind
            raise ValueError(f"channel step kind {s.kind!r} is not implemented")
        reports.append(StepReport(i, s.kind, s.describe(), enc.rate_hz, n,
                                  int(np.count_nonzero(mask)), expected_missing_pct(s)))
    concealment = net[0][1].concealment if net else "silence"
    out = (entry.packet_decode if entry is not None else tp.decode_pcm)(enc, lost | late,
                                                                        concealment)
    return out, reports, n, int(np.count_nonzero(lost)), int(np.count_nonzero(late & ~lost))


def apply_caller_channel_report(audio: Audio, channel: Channel, seed: int
                                ) -> tuple[Audio, ChannelReport]:
    """Apply the profile's caller-side channel and report what it did.

    Args:
        audio: float32 mono at any rate (the render: 16 kHz).
        channel: the profile's channel (``steps`` in order; none: clean, returned unchanged).
        seed: the call's repeat seed (>= 0); the loss and jitter patterns are drawn from it.

    Returns:
        The audio after the chain (float32 mono, at the rate of the last step that sets one,
        the same duration to within one 20 ms frame) and its :class:`ChannelReport`.

    Raises:
        ValueError: a negative seed, or a step kind with no implementation.
        EngineUnavailable: PyAV is missing for an ``amr_nb`` or ``opus`` step.
    """
    _checked(audio, audio.sample_rate_hz, "caller channel input")
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    steps = tuple(channel.steps)
    reports: list[StepReport] = []
    packets = lost = late = clipped = 0
    out = audio
    i = 0
    while i < len(steps):
        s = steps[i]
        if s.kind in codec_step_kinds() or s.kind in NETWORK_KINDS:
            codec = s if s.kind in codec_step_kinds() else None
            j = i + 1 if codec is not None else i
            net = []
            while j < len(steps) and steps[j].kind in NETWORK_KINDS:
                net.append((j, steps[j]))
                j += 1
            out, net_reports, n, n_lost, n_late = _transport(out, codec, net, seed)
            _checked(out, out.sample_rate_hz, f"channel step {i} ({s.kind})")
            if codec is not None:
                reports.append(StepReport(i, s.kind, s.describe(), out.sample_rate_hz, n))
            reports += net_reports
            if net:
                packets, lost, late = packets + n, lost + n_lost, late + n_late
            i = j
            continue
        if isinstance(s, Bandlimit):
            out = _checked(bandlimit(out, s), s.sample_rate_hz, f"channel step {i} (bandlimit)")
            reports.append(StepReport(i, s.kind, s.describe(), out.sample_rate_hz))
        elif isinstance(s, Gain | Clip):
            out, k = gain(out, s) if isinstance(s, Gain) else clip(out, s)
            _checked(out, out.sample_rate_hz, f"channel step {i} ({s.kind})")
            clipped += k
            reports.append(StepReport(i, s.kind, s.describe(), out.sample_rate_hz,
                                      clipped_samples=k))
        else:
            raise ValueError(f"channel step kind {getattr(s, 'kind', s)!r} is not implemented")
        i += 1
    steps_json = json.dumps([st.model_dump(mode="json") for st in steps], sort_keys=True,
                            separators=(",", ":"))
    report = ChannelReport(
        chain=channel.describe(), steps_json=steps_json, steps=tuple(reports),
        input_rate_hz=audio.sample_rate_hz, output_rate_hz=out.sample_rate_hz,
        input_duration_s=audio.duration_s, output_duration_s=out.duration_s, packets=packets,
        packets_lost=lost, packets_late=late, clipped_samples=clipped,
        output_samples=len(out.samples))
    return out, report


def apply_caller_channel(audio: Audio, channel: Channel, seed: int) -> Audio:
    """Apply the profile's caller-side channel (before the interviewer's telephony path).

    The clean channel (no steps) returns ``audio`` unchanged. See
    :func:`apply_caller_channel_report` for the arguments and the report.
    """
    return apply_caller_channel_report(audio, channel, seed)[0]
