"""ASR word timestamps through the real faster-whisper (tiny.en) on LibriVox speech: words
come back inside their segments and the audio, and the transcript is the one decoded
without them (issue 30, item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]
SPEECH = (ROOT.parent / "shared" / "data" / "speech" / "pocketsphinx" / "librivox"
          / "sense_and_sensibility_01_austen_64kb-0870.wav")


def test_word_times_from_the_real_whisper_lie_inside_their_segments() -> None:
    from rig.asr.checks import asr_suspect, clamp_timestamps
    from rig.asr.whisper import AsrOptions, transcribe
    from rig.audio import Audio, read_wav

    full = read_wav(SPEECH)
    clip = Audio(full.samples[: int(6.0 * full.sample_rate_hz)], full.sample_rate_hz)
    off = transcribe(clip, AsrOptions())
    on = transcribe(clip, AsrOptions(word_timestamps=True))
    assert on.text == off.text and on.text
    assert all(not s.words for s in off.segments)
    words = [w for s in on.segments for w in s.words]
    assert len(words) == len(on.text.split())
    clamped, _ = clamp_timestamps(on, clip.duration_s)
    for s in clamped.segments:
        for w in s.words:
            assert 0.0 <= w.start_s <= w.end_s <= clip.duration_s
            assert s.start_s - 0.5 <= w.start_s and w.end_s <= s.end_s + 0.5
            assert 0.0 <= w.probability <= 1.0
    # the whole clip is speech: no word lies outside it
    assert asr_suspect(clamped, ((0.0, clip.duration_s),), clip.duration_s)[0] is False
