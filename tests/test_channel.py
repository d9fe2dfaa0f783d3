"""The simulated phone line: G.711 against audioop, anti-aliasing, durations, framing."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rig.audio import Audio
from rig.channel import (
    alaw_decode,
    alaw_encode,
    apply_caller_channel,
    decode,
    encode,
    frames,
    mulaw_decode,
    mulaw_encode,
    telephony_path,
)
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


def test_unimplemented_caller_channel_is_named() -> None:
    fake = Channel.model_construct(kind="amr-nb")
    with pytest.raises(ValueError, match="amr-nb"):
        apply_caller_channel(tone(440.0, 0.1, 16000), fake, seed=0)
