"""The simulated phone line: G.711 against audioop, anti-aliasing, durations, framing, and the
caller-side chain's numpy steps (band limit, G.711 transport, loss, jitter, gain, clipping).
AMR-NB and Opus (PyAV) are tested in ``test_profiles_channels_integration.py`` (integration)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pydantic import ValidationError

from rig.audio import Audio
from rig.channel import (
    FRAME_MS,
    alaw_decode,
    alaw_encode,
    apply_caller_channel,
    apply_caller_channel_report,
    decode,
    encode,
    frames,
    mulaw_decode,
    mulaw_encode,
    telephony_path,
    vad_frames,
)
from rig.channel.network import late_mask, loss_mask
from rig.channel.steps import Jitter, PacketLoss
from rig.profiles import Channel

pytestmark = pytest.mark.unit

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    try:
        import audioop  # CPython <= 3.12; the audioop-lts backport on 3.13+
    except ImportError:  # pragma: no cover - depends on the interpreter
        audioop = None

needs_audioop = pytest.mark.skipif(
    audioop is None, reason="audioop is not available (removed in Python 3.13; "
                            "pip install audioop-lts)")

ALL_INT16 = np.arange(-32768, 32768, dtype=np.int16)
ALL_CODES = np.arange(256, dtype=np.uint8)


def tone(freq_hz: float, duration_s: float, sample_rate_hz: int, amp: float = 0.5) -> Audio:
    t = np.arange(round(duration_s * sample_rate_hz)) / sample_rate_hz
    return Audio((amp * np.sin(2 * np.pi * freq_hz * t)).astype(np.float32), sample_rate_hz)


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64))))


# --- G.711 bit-exactness ---------------------------------------------------------------------

@needs_audioop
def test_mulaw_encode_matches_audioop_for_every_int16() -> None:
    ref = np.frombuffer(audioop.lin2ulaw(ALL_INT16.tobytes(), 2), np.uint8)
    np.testing.assert_array_equal(mulaw_encode(ALL_INT16), ref)


@needs_audioop
def test_alaw_encode_matches_audioop_for_every_int16() -> None:
    ref = np.frombuffer(audioop.lin2alaw(ALL_INT16.tobytes(), 2), np.uint8)
    np.testing.assert_array_equal(alaw_encode(ALL_INT16), ref)


@needs_audioop
def test_mulaw_decode_matches_audioop_for_every_code() -> None:
    ref = np.frombuffer(audioop.ulaw2lin(ALL_CODES.tobytes(), 2), np.int16)
    np.testing.assert_array_equal(mulaw_decode(ALL_CODES), ref)


@needs_audioop
def test_alaw_decode_matches_audioop_for_every_code() -> None:
    ref = np.frombuffer(audioop.alaw2lin(ALL_CODES.tobytes(), 2), np.int16)
    np.testing.assert_array_equal(alaw_decode(ALL_CODES), ref)


def test_decoders_accept_bytes_and_keep_shape() -> None:
    codes = mulaw_encode(ALL_INT16[::257])
    np.testing.assert_array_equal(mulaw_decode(codes.tobytes()), mulaw_decode(codes))
    block = alaw_encode(ALL_INT16[:1024].reshape(32, 32))
    assert block.shape == (32, 32) and alaw_decode(block).shape == (32, 32)


def test_zero_encodes_to_the_silence_codes() -> None:
    zero = np.zeros(1, np.int16)
    assert mulaw_encode(zero)[0] == 0xFF and alaw_encode(zero)[0] == 0xD5


@pytest.mark.parametrize("enc,dec", [(mulaw_encode, mulaw_decode), (alaw_encode, alaw_decode)])
def test_full_scale_saturates_without_wrapping(enc, dec) -> None:
    ends = np.array([32767, 32766, -32767, -32768], np.int16)
    out = dec(enc(ends)).astype(np.int32)
    assert np.all(out[:2] > 32000) and np.all(out[2:] < -32000)
    # and through the float path, well beyond full scale
    audio = Audio(np.array([1.0, 1.5, 40.0, -1.0, -1.5, -40.0], np.float32), 8000)
    codec = "mulaw" if enc is mulaw_encode else "alaw"
    back = decode(encode(audio, codec), codec).samples
    assert np.all(back[:3] > 0.97) and np.all(back[3:] < -0.97)


def test_encoder_rejects_float_input() -> None:
    with pytest.raises(TypeError, match="int16"):
        mulaw_encode(np.zeros(4, np.float32))


def test_mulaw_quantisation_noise_is_g711_like() -> None:
    # A -10 dBFS sine through mu-law keeps a signal-to-quantisation-noise ratio near 38 dB.
    x = tone(1004.0, 1.0, 8000, amp=10 ** (-10 / 20) * np.sqrt(2))
    y = telephony_path(x, 8000, "mulaw")
    sqnr = 20 * np.log10(rms(x.samples) / rms(y.samples - x.samples))
    assert 35.0 < sqnr < 42.0


# --- resampling, durations, dtype ------------------------------------------------------------

@pytest.mark.parametrize("codec", ["mulaw", "alaw", "none"])
def test_tone_above_line_nyquist_is_removed_not_folded(codec) -> None:
    # 5 kHz at 16 kHz would fold to 3 kHz at 8 kHz without an anti-aliasing filter.
    x = tone(5000.0, 1.0, 16000, amp=0.5)
    y = telephony_path(x, 8000, codec).samples[400:-400]  # skip the filter's edges
    assert 20 * np.log10((rms(y) + 1e-12) / rms(x.samples)) <= -40.0
    spectrum = np.abs(np.fft.rfft(y * np.hanning(len(y))))
    freqs = np.fft.rfftfreq(len(y), 1 / 8000)
    band = spectrum[(freqs > 2900) & (freqs < 3100)].max()
    ref = np.abs(np.fft.rfft(x.samples * np.hanning(len(x.samples)))).max()
    assert 20 * np.log10((band + 1e-12) / ref) <= -40.0


@pytest.mark.parametrize("codec", ["mulaw", "alaw", "none"])
def test_in_band_tone_passes(codec) -> None:
    x = tone(1000.0, 1.0, 16000, amp=0.3)
    y = telephony_path(x, 8000, codec).samples[400:-400]
    assert abs(20 * np.log10(rms(y) / rms(x.samples))) < 0.5


@pytest.mark.parametrize("rate_hz", [16000, 22050, 24000, 44100, 8000])
@pytest.mark.parametrize("duration_s", [0.013, 1.0, 3.337])
def test_duration_survives_the_chain_within_one_frame(rate_hz, duration_s) -> None:
    x = tone(440.0, duration_s, rate_hz)
    line = telephony_path(x)
    back = line.resample(16000)
    assert abs(line.duration_s - x.duration_s) <= 0.020
    assert abs(back.duration_s - x.duration_s) <= 0.020


@pytest.mark.parametrize("codec", ["mulaw", "alaw", "none"])
def test_output_is_float32_mono_at_the_line_rate(codec) -> None:
    y = telephony_path(tone(300.0, 0.5, 16000), 8000, codec)
    assert y.samples.dtype == np.float32 and y.samples.ndim == 1 and y.sample_rate_hz == 8000
    assert float(np.max(np.abs(y.samples))) <= 1.0


def test_unknown_codec_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown codec"):
        telephony_path(tone(300.0, 0.1, 16000), 8000, "g729")  # type: ignore[arg-type]


# --- framing ---------------------------------------------------------------------------------

def test_frames_are_160_bytes_per_20_ms_at_8_khz() -> None:
    codes = encode(telephony_path(tone(440.0, 1.0, 16000)), "mulaw")
    out = frames(codes)
    assert len(codes) == 8000 and len(out) == 50
    assert all(isinstance(f, bytes) and len(f) == 160 for f in out)
    assert b"".join(out) == codes.tobytes()


def test_short_last_frame_is_padded_with_silence_or_dropped() -> None:
    codes = np.zeros(170, np.uint8)
    padded = frames(codes)
    assert [len(f) for f in padded] == [160, 160]
    assert padded[1][10:] == bytes([0xFF]) * 150
    assert frames(codes, codec="alaw")[1][10:] == bytes([0xD5]) * 150
    assert len(frames(codes, pad=False)) == 1


def test_other_frame_lengths_and_bad_ones() -> None:
    assert {len(f) for f in frames(np.zeros(2400, np.uint8), frame_ms=30)} == {240}
    assert {len(f) for f in frames(np.zeros(1600, np.uint8), frame_ms=10,
                                   sample_rate_hz=16000)} == {160}
    with pytest.raises(ValueError, match="whole number"):
        frames(np.zeros(100, np.uint8), frame_ms=1, sample_rate_hz=11025)


# --- caller-side channel ---------------------------------------------------------------------

def test_clean_caller_channel_is_identity() -> None:
    x = tone(440.0, 0.2, 16000)
    y = apply_caller_channel(x, Channel(kind="clean"), seed=3)
    assert y.sample_rate_hz == x.sample_rate_hz
    np.testing.assert_array_equal(y.samples, x.samples)


def test_unimplemented_caller_channel_step_is_named() -> None:
    class Fake:
        kind = "amr-wb"

    fake = Channel.model_construct(steps=(Fake(),))
    with pytest.raises(ValueError, match="amr-wb"):
        apply_caller_channel(tone(440.0, 0.1, 16000), fake, seed=0)


def chain(*steps: dict) -> Channel:
    return Channel.model_validate({"steps": list(steps)})


def noise_audio(duration_s: float, rate_hz: int = 16000, seed: int = 0, amp: float = 0.1
                ) -> Audio:
    x = np.random.default_rng(seed).standard_normal(round(duration_s * rate_hz)) * amp
    return Audio(x.astype(np.float32), rate_hz)


NUMPY_CHAINS = {
    "pstn_mulaw": ({"kind": "bandlimit"}, {"kind": "g711", "law": "mulaw"}),
    "pstn_alaw": ({"kind": "bandlimit"}, {"kind": "g711", "law": "alaw"}),
    "g711_random_loss": ({"kind": "g711"}, {"kind": "packet_loss", "loss_pct": 5.0,
                                            "concealment": "repeat"}),
    "pcm_bursty_loss": ({"kind": "packet_loss", "model": "gilbert_elliott", "loss_pct": 5.0,
                         "mean_burst_frames": 4.0, "concealment": "silence"},),
    "pcm_jitter": ({"kind": "jitter", "jitter_ms": 20.0, "buffer_ms": 40.0},),
    "wideband_band": ({"kind": "bandlimit", "sample_rate_hz": 16000, "low_hz": 50.0,
                       "high_hz": 7000.0},),
    "gain_clip": ({"kind": "gain", "gain_db": 6.0}, {"kind": "clip", "ceiling_dbfs": -6.0}),
}


# --- the chain's schema -----------------------------------------------------------------------

def test_legacy_clean_kind_reads_as_no_steps() -> None:
    assert Channel.model_validate({"kind": "clean"}) == Channel()
    assert Channel().is_clean and Channel().describe() == "clean wideband"
    with pytest.raises(ValidationError, match="not a channel"):
        Channel.model_validate({"kind": "amr"})


@pytest.mark.parametrize("steps,match", [
    ([{"kind": "amr_nb", "bitrate_bps": 9000}], "AMR-NB's modes"),
    ([{"kind": "opus", "bitrate_bps": 1000}], "greater than or equal to 6000"),
    ([{"kind": "g711"}, {"kind": "packet_loss", "loss_pct": 3, "concealment": "codec"}],
     "no concealment of its own"),
    ([{"kind": "packet_loss", "loss_pct": 3, "concealment": "codec"}], "linear PCM"),
    ([{"kind": "packet_loss", "loss_pct": 3, "mean_burst_frames": 2}], "gilbert_elliott"),
    ([{"kind": "packet_loss", "model": "gilbert_elliott", "loss_pct": 3}], "mean_burst_frames"),
    ([{"kind": "packet_loss", "model": "gilbert_elliott", "loss_pct": 40, "bad_loss_pct": 50,
       "mean_burst_frames": 1}], "P\\(good->bad\\)"),
    ([{"kind": "opus"}, {"kind": "packet_loss", "loss_pct": 3, "concealment": "codec"},
      {"kind": "jitter", "jitter_ms": 10, "buffer_ms": 40, "concealment": "repeat"}],
     "share one concealment"),
    ([{"kind": "bandlimit", "sample_rate_hz": 8000, "high_hz": 4000}], "high_hz"),
    ([{"kind": "reverb"}], "does not match any of the expected tags"),
    ([{"kind": "gain", "gain_db": 6, "extra": 1}], "Extra inputs"),
])
def test_bad_chains_are_refused_with_the_reason(steps, match) -> None:
    with pytest.raises(ValidationError, match=match):
        Channel.model_validate({"steps": steps})


def test_codec_concealment_is_allowed_after_amr_and_opus() -> None:
    for codec in ({"kind": "amr_nb"}, {"kind": "opus"}):
        c = chain(codec, {"kind": "packet_loss", "loss_pct": 3, "concealment": "codec"},
                  {"kind": "jitter", "jitter_ms": 10, "buffer_ms": 40, "concealment": "codec"})
        assert len(c.steps) == 3 and "codec" in c.describe()


# --- loss and jitter patterns -----------------------------------------------------------------

def test_random_loss_rate_and_independence() -> None:
    step = PacketLoss(loss_pct=3.0)
    lost = loss_mask(200_000, step, np.random.default_rng(0))
    assert lost.mean() * 100 == pytest.approx(3.0, abs=0.15)
    # independent: P(lost | previous lost) is the base rate
    assert lost[1:][lost[:-1]].mean() * 100 == pytest.approx(3.0, abs=0.6)


def burst_lengths(lost: np.ndarray) -> np.ndarray:
    edges = np.diff(np.concatenate([[0], lost.astype(int), [0]]))
    return np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)


@pytest.mark.parametrize("loss_pct,burst", [(3.0, 3.0), (10.0, 2.0), (1.0, 8.0)])
def test_gilbert_elliott_meets_its_rate_and_burst_length(loss_pct, burst) -> None:
    step = PacketLoss(model="gilbert_elliott", loss_pct=loss_pct, mean_burst_frames=burst)
    lost = loss_mask(400_000, step, np.random.default_rng(1))
    assert lost.mean() * 100 == pytest.approx(loss_pct, rel=0.08)
    assert burst_lengths(lost).mean() == pytest.approx(burst, rel=0.08)
    # bursty: a loss follows a loss far more often than the base rate
    assert lost[1:][lost[:-1]].mean() > 3 * lost.mean()


def test_gilbert_elliott_with_losses_in_both_states() -> None:
    step = PacketLoss(model="gilbert_elliott", loss_pct=5.0, mean_burst_frames=5.0,
                      good_loss_pct=1.0, bad_loss_pct=50.0)
    lost = loss_mask(400_000, step, np.random.default_rng(2))
    assert lost.mean() * 100 == pytest.approx(5.0, rel=0.08)


def test_jitter_buffer_drops_the_packets_later_than_its_depth() -> None:
    step = Jitter(jitter_ms=20.0, buffer_ms=60.0)
    late = late_mask(200_000, step, np.random.default_rng(3))
    assert late.mean() == pytest.approx(np.exp(-3.0), rel=0.05)
    assert not late_mask(1000, Jitter(jitter_ms=0.0, buffer_ms=0.0),
                         np.random.default_rng(0)).any()
    deeper = late_mask(200_000, Jitter(jitter_ms=20.0, buffer_ms=100.0), np.random.default_rng(3))
    assert deeper.mean() < late.mean()


# --- chains: determinism, durations, the audio contract ---------------------------------------

@pytest.mark.parametrize("name", sorted(NUMPY_CHAINS))
def test_chain_is_deterministic_given_the_seed(name) -> None:
    c, x = chain(*NUMPY_CHAINS[name]), noise_audio(2.0)
    a, ra = apply_caller_channel_report(x, c, 5)
    b, rb = apply_caller_channel_report(x, c, 5)
    np.testing.assert_array_equal(a.samples, b.samples)
    assert ra == rb
    if ra.packets:  # a chain with a network draws its pattern from the seed
        other = [apply_caller_channel_report(x, c, s)[0].samples for s in range(6, 12)]
        assert any(not np.array_equal(a.samples, o) for o in other)


@pytest.mark.parametrize("name", sorted(NUMPY_CHAINS))
@pytest.mark.parametrize("rate_hz", [16000, 22050, 8000])
@pytest.mark.parametrize("duration_s", [0.013, 1.0, 3.337])
def test_duration_survives_every_chain_within_one_frame(name, rate_hz, duration_s) -> None:
    x = noise_audio(duration_s, rate_hz)
    y, report = apply_caller_channel_report(x, chain(*NUMPY_CHAINS[name]), 0)
    assert abs(y.duration_s - x.duration_s) <= FRAME_MS / 1000
    assert report.output_duration_s == y.duration_s and report.input_rate_hz == rate_hz
    assert y.samples.dtype == np.float32 and y.samples.ndim == 1
    assert y.sample_rate_hz == report.output_rate_hz
    assert np.all(np.abs(y.samples) <= 1.0)


def test_output_rate_follows_the_last_rate_setting_step() -> None:
    x = noise_audio(1.0, 16000)
    assert apply_caller_channel(x, chain({"kind": "g711"}), 0).sample_rate_hz == 8000
    assert apply_caller_channel(x, chain({"kind": "bandlimit"}, {"kind": "gain", "gain_db": -3}),
                                0).sample_rate_hz == 8000
    assert apply_caller_channel(x, chain({"kind": "gain", "gain_db": -3}), 0).sample_rate_hz \
        == 16000


def test_a_step_that_breaks_the_audio_contract_raises(monkeypatch) -> None:
    from rig.channel import chain as chain_mod

    monkeypatch.setattr(chain_mod, "bandlimit",
                        lambda audio, step: Audio(audio.samples, 11025))
    with pytest.raises(ValueError, match="declared 8000 Hz"):
        apply_caller_channel(noise_audio(0.5), chain({"kind": "bandlimit"}), 0)


def test_negative_seed_is_refused() -> None:
    with pytest.raises(ValueError, match="seed"):
        apply_caller_channel(noise_audio(0.1), chain({"kind": "gain", "gain_db": 1}), -1)


# --- band limiting ----------------------------------------------------------------------------

def test_bandlimit_removes_tones_above_the_new_nyquist_without_folding() -> None:
    x = tone(5000.0, 1.0, 16000, amp=0.5)
    y = apply_caller_channel(x, chain({"kind": "bandlimit"}), 0).samples[400:-400]
    assert 20 * np.log10((rms(y) + 1e-12) / rms(x.samples)) <= -40.0
    spectrum = np.abs(np.fft.rfft(y * np.hanning(len(y))))
    freqs = np.fft.rfftfreq(len(y), 1 / 8000)
    ref = np.abs(np.fft.rfft(x.samples * np.hanning(len(x.samples)))).max()
    assert 20 * np.log10(spectrum[(freqs > 2900) & (freqs < 3100)].max() / ref) <= -40.0


@pytest.mark.parametrize("freq_hz,low_db,high_db", [
    (1000.0, -0.5, 0.5), (2000.0, -0.5, 0.5), (100.0, -200.0, -25.0), (3900.0, -200.0, -10.0)])
def test_bandlimit_passes_the_telephone_band_only(freq_hz, low_db, high_db) -> None:
    x = tone(freq_hz, 1.0, 16000, amp=0.3)
    y = apply_caller_channel(x, chain({"kind": "bandlimit"}), 0).samples[800:-800]
    level = 20 * np.log10(rms(y) / rms(x.samples))
    assert low_db <= level <= high_db, level


def test_bandlimit_keeps_time_alignment() -> None:
    x = noise_audio(1.0, 8000)
    y = apply_caller_channel(x, chain({"kind": "bandlimit"}), 0).samples
    lags = range(-20, 21)
    cc = [np.dot(x.samples[100:-100], np.roll(y, -k)[100:-100]) for k in lags]
    assert list(lags)[int(np.argmax(cc))] == 0


# --- transports with numpy codecs: G.711 frames and PCM frames ---------------------------------

def test_g711_transport_sends_160_byte_packets_per_20_ms() -> None:
    from rig.channel.codecs import CODECS
    from rig.channel.steps import G711
    from rig.channel.transport import encode_g711

    enc = encode_g711(tone(440.0, 1.005, 16000), G711(law="alaw"), CODECS["alaw"])
    assert len(enc.packets) == 51 and {len(p) for p in enc.packets} == {160}
    assert enc.packets[-1][40:] == bytes([0xD5]) * 120  # the last frame padded with silence


def test_g711_step_is_the_telephony_codec() -> None:
    x = tone(700.0, 1.0, 8000, amp=0.4)
    for law in ("mulaw", "alaw"):
        y = apply_caller_channel(x, chain({"kind": "g711", "law": law}), 0)
        np.testing.assert_array_equal(y.samples, telephony_path(x, 8000, law).samples)


@pytest.mark.parametrize("concealment", ["silence", "repeat"])
def test_lost_frames_are_concealed_frame_by_frame(concealment) -> None:
    x = tone(400.0, 2.0, 8000, amp=0.3)
    c = chain({"kind": "g711"}, {"kind": "packet_loss", "loss_pct": 20.0,
                                 "concealment": concealment})
    y, report = apply_caller_channel_report(x, c, 3)
    clean = apply_caller_channel(x, chain({"kind": "g711"}), 0).samples
    lost = loss_mask(report.packets, c.steps[1], np.random.default_rng([3, 10, 1]))
    assert report.packets == 100 and report.packets_lost == int(lost.sum()) > 0
    assert report.loss_pct == pytest.approx(100 * lost.mean())
    frames_y = y.samples.reshape(100, 160)
    frames_clean = clean.reshape(100, 160)
    for k in range(100):
        if not lost[k]:
            np.testing.assert_array_equal(frames_y[k], frames_clean[k])
        elif concealment == "silence":
            assert not frames_y[k].any()
        elif k > 0:
            np.testing.assert_array_equal(frames_y[k], frames_y[k - 1])


def test_loss_of_pcm_frames_uses_20_ms_frames_at_the_audio_rate() -> None:
    x = noise_audio(1.0, 16000)
    c = chain({"kind": "packet_loss", "loss_pct": 30.0, "concealment": "silence"})
    y, report = apply_caller_channel_report(x, c, 0)
    assert report.packets == 50 and y.sample_rate_hz == 16000
    silent = ~y.samples.reshape(50, 320).any(axis=1)
    assert silent.sum() == report.packets_lost


def test_jitter_report_counts_late_packets_not_already_lost() -> None:
    x = noise_audio(4.0, 8000)
    c = chain({"kind": "g711"},
              {"kind": "packet_loss", "loss_pct": 10.0, "concealment": "silence"},
              {"kind": "jitter", "jitter_ms": 30.0, "buffer_ms": 30.0, "concealment": "silence"})
    _, r = apply_caller_channel_report(x, c, 1)
    lost = loss_mask(r.packets, c.steps[1], np.random.default_rng([1, 10, 1]))
    late = late_mask(r.packets, c.steps[2], np.random.default_rng([1, 10, 2]))
    assert r.packets_lost == lost.sum() and r.packets_late == (late & ~lost).sum()
    assert r.packets_missing == (lost | late).sum()
    assert [s.packets_missing for s in r.steps[1:]] == [lost.sum(), late.sum()]
    assert r.expected_missing_pct == pytest.approx(100 * (1 - 0.9 * (1 - np.exp(-1))))
    row = r.to_row()
    assert row["channel_packets"] == 200 and row["channel_chain"].startswith("g711 mulaw")
    assert row["channel_missing_pct"] == pytest.approx(100 * (lost | late).mean())


# --- level ------------------------------------------------------------------------------------

def test_gain_clips_at_full_scale_and_counts_it() -> None:
    x = tone(300.0, 1.0, 16000, amp=0.5)
    y, r = apply_caller_channel_report(x, chain({"kind": "gain", "gain_db": 12.0}), 0)
    assert float(np.max(np.abs(y.samples))) == pytest.approx(1.0)
    expected = np.count_nonzero(np.abs(x.samples.astype(np.float64) * 10 ** 0.6) > 1.0)
    assert r.clipped_samples == expected and 0 < r.clipped_pct < 100
    quiet, rq = apply_caller_channel_report(x, chain({"kind": "gain", "gain_db": -6.0}), 0)
    assert rq.clipped_samples == 0
    assert rms(quiet.samples) / rms(x.samples) == pytest.approx(10 ** (-6 / 20), rel=1e-4)


def test_clip_step_caps_at_its_ceiling() -> None:
    x = tone(300.0, 1.0, 16000, amp=0.9)
    y, r = apply_caller_channel_report(x, chain({"kind": "clip", "ceiling_dbfs": -6.0}), 0)
    assert float(np.max(np.abs(y.samples))) == pytest.approx(10 ** (-6 / 20), rel=1e-6)
    assert r.clipped_samples > 0


# --- frames a VAD accepts ----------------------------------------------------------------------

@pytest.mark.parametrize("rate_hz", [8000, 16000, 32000, 48000])
@pytest.mark.parametrize("frame_ms", [10, 20, 30])
def test_vad_frames_have_the_sizes_webrtcvad_accepts(rate_hz, frame_ms) -> None:
    out = vad_frames(noise_audio(0.35, rate_hz), "webrtc", frame_ms)
    assert out and {len(f) for f in out} == {2 * rate_hz * frame_ms // 1000}
    padded = vad_frames(noise_audio(0.35, rate_hz), "webrtc", frame_ms, pad=True)
    assert len(padded) == -(-round(0.35 * rate_hz) // (rate_hz * frame_ms // 1000))


def test_vad_frames_for_silero_are_its_windows() -> None:
    assert {len(f) for f in vad_frames(noise_audio(1.0, 8000), "silero")} == {512}
    assert {len(f) for f in vad_frames(noise_audio(1.0, 16000), "silero")} == {1024}


@pytest.mark.parametrize("vad,rate_hz,frame_ms", [
    ("webrtc", 22050, 20), ("webrtc", 16000, 25), ("silero", 48000, 20), ("other", 16000, 20)])
def test_vad_frames_refuse_what_the_vad_would_refuse(vad, rate_hz, frame_ms) -> None:
    with pytest.raises(ValueError):
        vad_frames(noise_audio(0.1, rate_hz), vad, frame_ms)  # type: ignore[arg-type]


def test_vad_frames_are_little_endian_int16_of_the_audio() -> None:
    x = Audio(np.array([0.0, 0.5, -0.5, 1.0] * 40, np.float32), 8000)
    (frame,) = vad_frames(x, "webrtc", 20)
    np.testing.assert_array_equal(np.frombuffer(frame, "<i2"), x.to_pcm16())


def test_write_wav_refuses_a_non_wav_path_and_names_it(tmp_path) -> None:
    from rig.audio import write_wav
    from rig.errors import RigError

    a = Audio(np.zeros(80, np.float32), 8000)
    with pytest.raises(RigError, match=r"x\.txt: the output must be a \.wav"):
        write_wav(tmp_path / "x.txt", a)
    (tmp_path / "f").write_text("")
    with pytest.raises(RigError, match="cannot write"):
        write_wav(tmp_path / "f" / "y.wav", a)
    assert write_wav(tmp_path / "ok.wav", a).is_file()


def test_a_codec_missing_from_pyav_is_named_with_the_fix() -> None:
    """PyAV's wheels from 18.1.1 on have no libopencore_amrnb: the error names the codec, the
    installed PyAV and the pin, instead of PyAV's bare UnknownCodecError."""
    av = pytest.importorskip("av")
    from rig.channel.transport import _context
    from rig.errors import EngineUnavailable

    with pytest.raises(EngineUnavailable) as err:
        _context(av, "libopencore_amrnb_gone", "w")
    text = str(err.value)
    assert "libopencore_amrnb_gone encoder" in text and av.__version__ in text
    assert "amr_nb channel step" in text and "<18.1.1" in text


def test_the_installed_pyav_encodes_and_decodes_amr_nb() -> None:
    """The mobile profiles' codec: rig's pin on PyAV (pyproject's pipeline extra) keeps it."""
    av = pytest.importorskip("av")
    from rig.channel.transport import _context

    assert _context(av, "libopencore_amrnb", "w") is not None
    assert _context(av, "libopencore_amrnb", "r") is not None
