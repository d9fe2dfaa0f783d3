"""Property tests (hypothesis, the ``ci`` profile of ``tests/props.py``): the G.711 codecs on
any int16 input and the WER normaliser on any text.

G.711 bounds (ITU-T G.711; the segment step of mu-law at magnitude m is at most m/16 + 8 on
the 16-bit scale, half of it the rounding error; A-law likewise): after encoding and
decoding, |decoded - clip(x)| <= 8 + |clip(x)| / 32, where clip is the codec's largest
decodable magnitude (mu-law 32124, A-law 32256); the sign is kept, the mapping is monotone, and
re-encoding a decoded signal gives the same codes.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from props import CI, counted

from rig.asr.wer import normalize, wer, wer_verbatim
from rig.audio import Audio
from rig.channel import codecs, g711

pytestmark = pytest.mark.unit

CODECS = {"mulaw": (g711.mulaw_encode, g711.mulaw_decode, 32124),
          "alaw": (g711.alaw_encode, g711.alaw_decode, 32256)}
int16_arrays = hnp.arrays(np.int16, st.integers(0, 400), elements=st.integers(-32768, 32767))


@pytest.mark.parametrize("codec", sorted(CODECS))
@CI
@given(pcm=int16_arrays)
@counted
def test_g711_round_trip_error_is_bounded(codec, pcm):
    enc, dec, clip = CODECS[codec]
    codes = enc(pcm)
    assert codes.dtype == np.uint8 and codes.shape == pcm.shape
    out = dec(codes).astype(np.int64)
    x = np.clip(pcm.astype(np.int64), -clip, clip)
    assert np.all(np.abs(out - x) <= 8 + np.abs(x) / 32)
    assert np.all(out * x >= 0)  # the sign is kept (mu-law may decode a tiny value to 0)
    order = np.argsort(pcm, kind="stable")
    assert np.all(np.diff(out[order]) >= 0)  # monotone
    # every code decodes to a value that encodes back to it (mu-law's "negative zero" 0x7F
    # to the positive 0xFF: both decode to 0)
    want = codes if codec == "alaw" else np.where(codes == 0x7F, 0xFF, codes).astype(np.uint8)
    assert np.array_equal(enc(dec(codes)), want)


@pytest.mark.parametrize("codec", sorted(CODECS))
@CI
@given(data=st.binary(max_size=400))
@counted
def test_g711_decodes_any_bytes(codec, data):
    _, dec, clip = CODECS[codec]
    out = dec(data)
    assert out.dtype == np.int16 and out.shape == (len(data),)
    assert np.all(np.abs(out.astype(np.int64)) <= clip)


@pytest.mark.parametrize("codec", sorted(CODECS))
@CI
@given(samples=hnp.arrays(np.float32, st.integers(0, 200),
                          elements=st.floats(allow_nan=False, allow_infinity=False,
                                                    width=32)))
@counted
def test_g711_float_audio_of_any_finite_level_encodes(codec, samples):
    codes = codecs.encode(Audio(samples, 8000), codec)
    back = codecs.decode(codes, codec)
    assert back.samples.dtype == np.float32 and back.samples.shape == samples.shape
    assert np.all(np.abs(back.samples) <= 1.0)


texts = st.one_of(
    st.text(),
    st.lists(st.sampled_from(
        ["one", "two", "1", "2", "twenty", "hundred", "point", "five", "%", "$", "£", "1st",
         "1/2", "half", "mr", "dr.", "o'clock", "cents", "0", "00", ".", "thousand", "uh",
         "um", "Hmm", "st", "colour", "'s", "\u00a0", "\u200b", "½", "³", "١", "Üh", "𝐓𝐡𝐞",
         "\u202e", "😀", "İ"]), max_size=10).map(" ".join))


@CI
@given(text=texts)
@counted
def test_wer_normaliser_is_idempotent_and_total(text):
    once = normalize(text)
    assert isinstance(once, str)
    assert normalize(once) == once
    assert once == " ".join(once.split())


@CI
@given(ref=texts, hyp=texts)
@counted
def test_wer_never_raises_and_is_zero_on_itself(ref, hyp):
    for fn in (wer, wer_verbatim):
        r = fn(ref, hyp)
        assert r.wer is None or r.wer >= 0.0
        assert min(r.substitutions, r.deletions, r.insertions, r.reference_words) >= 0
        same = fn(ref, ref)
        assert same.wer in (None, 0.0)
