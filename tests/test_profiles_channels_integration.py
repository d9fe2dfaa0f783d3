"""Real codecs and a real VAD on the caller-side channel: AMR-NB and Opus through PyAV (timing,
bitrates, concealment, determinism, durations) and webrtcvad / Silero taking the frames the
line hands them."""

from __future__ import annotations

import numpy as np
import pytest

from rig.audio import Audio
from rig.channel import (
    FRAME_MS,
    SILERO_WINDOW_SAMPLES,
    apply_caller_channel,
    apply_caller_channel_report,
    telephony_path,
    vad_frames,
)
from rig.channel.steps import AMR_NB_BITRATES_BPS
from rig.profiles import Channel

pytestmark = pytest.mark.integration

av = pytest.importorskip("av", reason="PyAV is not installed (it comes with faster-whisper)")


def chain(*steps: dict) -> Channel:
    return Channel.model_validate({"steps": list(steps)})


def noise_audio(duration_s: float, rate_hz: int = 16000, seed: int = 0) -> Audio:
    x = np.random.default_rng(seed).standard_normal(round(duration_s * rate_hz)) * 0.1
    return Audio(x.astype(np.float32), rate_hz)


def voiced(duration_s: float, rate_hz: int = 16000) -> Audio:
    """A vowel-like signal: harmonics of a gliding 120-160 Hz pitch, syllable-rate envelope."""
    t = np.arange(round(duration_s * rate_hz)) / rate_hz
    f0 = 140 + 20 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / rate_hz
    x = sum(np.sin(k * phase) / k for k in range(1, 20)) * 0.08
    x *= 0.55 + 0.45 * np.sin(2 * np.pi * 3 * t)
    return Audio(x.astype(np.float32), rate_hz)


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64))))


def best_lag(x: np.ndarray, y: np.ndarray, max_lag: int) -> int:
    n = min(len(x), len(y)) - 2 * max_lag
    a = x[max_lag:max_lag + n]
    scores = [np.dot(a, y[max_lag + k:max_lag + k + n]) for k in range(-max_lag, max_lag + 1)]
    return int(np.argmax(scores)) - max_lag


CODEC_CHAINS = {
    "amr_nb_12k2": ({"kind": "amr_nb", "bitrate_bps": 12200},),
    "amr_nb_4k75_loss": ({"kind": "amr_nb", "bitrate_bps": 4750},
                         {"kind": "packet_loss", "model": "gilbert_elliott", "loss_pct": 5,
                          "mean_burst_frames": 3, "concealment": "codec"}),
    "opus_48k": ({"kind": "opus", "bitrate_bps": 24000},),
    "opus_16k_jitter": ({"kind": "opus", "bitrate_bps": 16000, "sample_rate_hz": 16000},
                        {"kind": "jitter", "jitter_ms": 20, "buffer_ms": 40,
                         "concealment": "codec"}),
    "opus_loss_repeat": ({"kind": "opus"}, {"kind": "packet_loss", "loss_pct": 10,
                                            "concealment": "repeat"}),
    "mobile_then_pstn": ({"kind": "amr_nb"}, {"kind": "bandlimit"}, {"kind": "g711",
                                                                       "law": "alaw"}),
}


@pytest.mark.parametrize("bitrate_bps", AMR_NB_BITRATES_BPS)
def test_amr_nb_runs_at_every_mode_with_its_frame_size(bitrate_bps) -> None:
    # AMR-NB storage format: one header byte + the mode's class bits, per 20 ms frame
    expected_bytes = {4750: 13, 5150: 14, 5900: 16, 6700: 18, 7400: 20, 7950: 21, 10200: 27,
                      12200: 32}[bitrate_bps]
    from rig.channel.steps import AmrNb
    from rig.channel.transport import encode_amr_nb

    enc = encode_amr_nb(voiced(1.0), AmrNb(bitrate_bps=bitrate_bps))
    assert {len(p) for p in enc.packets} == {expected_bytes}
    assert len(enc.packets) in (50, 51)  # 50 frames, plus the encoder's flush
    y = apply_caller_channel(voiced(1.0), chain({"kind": "amr_nb", "bitrate_bps": bitrate_bps}),
                             0)
    assert y.sample_rate_hz == 8000 and len(y.samples) == 8000


@pytest.mark.parametrize("steps,rate_hz", [
    (({"kind": "amr_nb"},), 8000),
    (({"kind": "opus", "sample_rate_hz": 48000},), 48000),
    (({"kind": "opus", "sample_rate_hz": 16000},), 16000),
    (({"kind": "opus", "sample_rate_hz": 8000, "bitrate_bps": 12000},), 8000),
])
def test_codecs_keep_time_alignment_within_a_millisecond(steps, rate_hz) -> None:
    x = noise_audio(2.0, 16000, seed=4)
    y = apply_caller_channel(x, chain(*steps), 0)
    ref = x.resample(rate_hz).samples
    lag = best_lag(ref, y.samples, max_lag=rate_hz // 50)
    assert abs(lag) <= rate_hz // 1000, lag


@pytest.mark.parametrize("steps", [({"kind": "amr_nb"},), ({"kind": "opus"},)])
def test_codecs_pass_speech_like_audio_at_its_level(steps) -> None:
    x = voiced(2.0)
    y = apply_caller_channel(x, chain(*steps), 0)
    level = 20 * np.log10(rms(y.samples[1600:-1600]) / rms(x.samples[1600:-1600]))
    assert -3.0 < level < 1.5, level


@pytest.mark.parametrize("codec", [{"kind": "amr_nb"}, {"kind": "opus"}])
def test_codec_concealment_fills_lost_frames_where_silence_leaves_holes(codec) -> None:
    x = voiced(3.0)
    loss = {"kind": "packet_loss", "loss_pct": 15.0}
    concealed, rc = apply_caller_channel_report(x, chain(codec, {**loss, "concealment": "codec"}),
                                                2)
    holes, rs = apply_caller_channel_report(x, chain(codec, {**loss, "concealment": "silence"}),
                                            2)
    assert rc.packets_lost == rs.packets_lost > 0  # the same pattern: same seed, same step
    frame = concealed.sample_rate_hz * FRAME_MS // 1000
    # the holes: runs of exact zeros at least a frame long (lost frames, shifted by the codec's
    # delay compensation, so not on the 20 ms grid)
    zero = np.concatenate([[False], holes.samples == 0.0, [False]])
    edges = np.flatnonzero(np.diff(zero.astype(int)))
    runs = [(a, b) for a, b in zip(edges[::2], edges[1::2], strict=True) if b - a >= frame]
    assert len(runs) >= 0.3 * rs.packets_lost  # bursts merge runs
    in_holes = np.concatenate([concealed.samples[a:b] for a, b in runs])
    assert rms(in_holes) > 0.1 * rms(x.samples)  # the decoder's concealment put sound there


@pytest.mark.parametrize("name", sorted(CODEC_CHAINS))
def test_codec_chains_are_deterministic_and_keep_durations(name) -> None:
    x = voiced(1.337)
    c = chain(*CODEC_CHAINS[name])
    a, ra = apply_caller_channel_report(x, c, 7)
    b, rb = apply_caller_channel_report(x, c, 7)
    np.testing.assert_array_equal(a.samples, b.samples)
    assert ra == rb
    assert abs(a.duration_s - x.duration_s) <= FRAME_MS / 1000
    assert a.samples.dtype == np.float32 and a.sample_rate_hz == ra.output_rate_hz
    assert np.all(np.isfinite(a.samples)) and np.all(np.abs(a.samples) <= 1.0)


def test_gilbert_elliott_loss_on_amr_packets_is_measured_and_reported() -> None:
    c = chain({"kind": "amr_nb"}, {"kind": "packet_loss", "model": "gilbert_elliott",
                                   "loss_pct": 3.0, "mean_burst_frames": 3.0,
                                   "concealment": "codec"})
    x = noise_audio(20.0, 8000)
    lost = packets = 0
    for seed in range(10):
        _, r = apply_caller_channel_report(x, c, seed)
        assert r.packets_lost == r.steps[1].packets_missing
        lost, packets = lost + r.packets_lost, packets + r.packets
    assert packets == 10 * 1001
    assert 100 * lost / packets == pytest.approx(3.0, abs=1.0)


# --- the VADs take the frames the line hands them ----------------------------------------------

@pytest.mark.parametrize("name", ["clean", *sorted(CODEC_CHAINS)])
@pytest.mark.parametrize("vad_rate_hz", [8000, 16000, 32000, 48000])
@pytest.mark.parametrize("frame_ms", [10, 20, 30])
def test_webrtcvad_accepts_every_frame_after_every_chain(name, vad_rate_hz, frame_ms) -> None:
    webrtcvad = pytest.importorskip("webrtcvad")
    vad = webrtcvad.Vad(2)
    steps = CODEC_CHAINS.get(name, ())
    line = telephony_path(apply_caller_channel(voiced(0.5), chain(*steps), 0))
    audio = line.resample(vad_rate_hz)
    out = vad_frames(audio, "webrtc", frame_ms)
    assert out
    for f in out:
        vad.is_speech(f, vad_rate_hz)  # raises on a frame it does not accept


def test_webrtcvad_refuses_what_vad_frames_refuses() -> None:
    webrtcvad = pytest.importorskip("webrtcvad")
    vad = webrtcvad.Vad(2)
    with pytest.raises(Exception):  # noqa: B017 - webrtcvad raises a bare Error
        vad.is_speech(b"\x00" * 2 * 200, 8000)  # 25 ms at 8 kHz


@pytest.mark.parametrize("rate_hz", [8000, 16000])
def test_silero_windows_match_pipecats_analyzer(rate_hz) -> None:
    pytest.importorskip("pipecat")
    from pipecat.audio.vad.silero import SileroVADAnalyzer

    vad = SileroVADAnalyzer(sample_rate=rate_hz)
    vad.set_sample_rate(rate_hz)
    assert vad.num_frames_required() == SILERO_WINDOW_SAMPLES[rate_hz]
    frames = vad_frames(voiced(0.2, rate_hz), "silero")
    assert {len(f) for f in frames} == {2 * SILERO_WINDOW_SAMPLES[rate_hz]}
