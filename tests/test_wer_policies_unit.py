"""The verbatim WER reference policy (rig.asr.wer.wer_verbatim) against jiwer directly."""

import jiwer
import pytest

from rig.asr.wer import wer, wer_verbatim

pytestmark = pytest.mark.unit


def test_verbatim_counts_a_filler_the_clean_policy_drops() -> None:
    ref, hyp = "I um think so, uh, yes", "I think so yes"
    assert wer(ref, hyp).wer == 0.0  # Whisper's normaliser drops "um" and "uh"
    r = wer_verbatim(ref, hyp)
    direct = jiwer.process_words("i fillerum think so filleruh yes", "i think so yes")
    assert r.wer == pytest.approx(direct.wer) == pytest.approx(2 / 6)
    assert (r.deletions, r.reference_words) == (2, 6)


def test_verbatim_matches_a_transcribed_filler() -> None:
    assert wer_verbatim("Hmm, yes, um, I did", "hmm yes um I did").wer == 0.0
    assert wer_verbatim("yes I did", "yes um I did").insertions == 1
