"""ASR word timestamps (issue 30, item 5): an option off by default that leaves every
pipeline's version alone, words clamped to the audio with their segments, and the
``text_without_speech`` check reading each word when they are there."""

from __future__ import annotations

import pytest

from rig.asr.checks import asr_suspect, clamp_timestamps
from rig.asr.whisper import AsrSegment, AsrWord, Transcript
from rig.pipeline import AsrSettings, PipelineConfig, pipeline_version

pytestmark = pytest.mark.unit


def test_word_timestamps_are_off_by_default_and_change_no_version() -> None:
    base = PipelineConfig(name="p")
    assert base.asr.word_timestamps is False
    assert pipeline_version(base) == pipeline_version(
        PipelineConfig(name="p", asr=AsrSettings(word_timestamps=False)))
    on = pipeline_version(PipelineConfig(name="p", asr=AsrSettings(word_timestamps=True)))
    assert on != pipeline_version(base)


def test_the_hashed_config_has_no_word_timestamps_key_while_off(monkeypatch) -> None:
    """What is hashed is what was hashed before the option existed (no ``word_timestamps``
    key), so every existing pipeline keeps its version and its calls their ids."""
    import rig.pipeline as pl

    seen: list[dict] = []
    monkeypatch.setattr(pl, "content_hash", lambda d: seen.append(d) or "h")
    pl.pipeline_version(PipelineConfig(name="p"))
    pl.pipeline_version(PipelineConfig(name="p", asr=AsrSettings(word_timestamps=True)))
    assert "word_timestamps" not in seen[0]["config"]["asr"]
    assert seen[1]["config"]["asr"]["word_timestamps"] is True


def _tr(words: tuple[AsrWord, ...], seg: tuple[float, float] = (0.5, 2.0)) -> Transcript:
    text = " ".join(w.word for w in words)
    return Transcript(text, -0.2, 0.1, 3.0, (AsrSegment(*seg, text, -0.2, 0.1, 1.2, words),))


def test_words_are_clamped_with_their_segment_and_the_segment_counted_once() -> None:
    t = _tr((AsrWord(0.5, 1.0, "yes", 0.9), AsrWord(2.6, 3.4, "thanks", 0.5)), seg=(0.5, 2.9))
    out, n = clamp_timestamps(t, 3.0)
    assert n == 1  # the segment's own times fit; one word did not
    assert out.segments[0].words[1] == AsrWord(2.6, 3.0, "thanks", 0.5)
    assert out.segments[0].words[0] == t.segments[0].words[0]
    assert (out.segments[0].start_s, out.segments[0].end_s) == (0.5, 2.9)
    assert clamp_timestamps(out, 3.0) == (out, 0)


def test_a_word_appended_in_the_silence_is_found_though_its_segment_starts_in_speech() -> None:
    speech = ((0.4, 1.0),)
    words = (AsrWord(0.5, 0.9, "Yes.", 0.9), AsrWord(2.8, 3.0, "Thank", 0.3))
    with_words = _tr(words, seg=(0.5, 3.0))
    suspect, why = asr_suspect(with_words, speech, 3.0)
    assert suspect is True
    assert why == "text_without_speech: 'Thank' at 2.80-3.00 s, outside the VAD's speech"
    # the same segment without word times: it overlaps the speech, so nothing is seen
    seg_only = Transcript(with_words.text, -0.2, 0.1, 3.0,
                          (AsrSegment(0.5, 3.0, with_words.text, -0.2, 0.1, 1.2),))
    assert asr_suspect(seg_only, speech, 3.0) == (False, None)
    # every word inside the speech: no suspect
    assert asr_suspect(_tr(words[:1], seg=(0.5, 0.9)), speech, 3.0) == (False, None)
