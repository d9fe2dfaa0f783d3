"""rig.asr.checks on the real stages: the 8 kHz G.711 line, pipecat's Silero VAD and
faster-whisper (whisper-tiny.en), on silence, recorded kitchen noise (tests/data), a one-word
answer cut from a CMU ARCTIC recording, and a phrase repeated back to back.

Observed (tiny.en, int8, CPU): on silence and on the noise Whisper writes nothing (faster-
whisper drops windows with no_speech_prob > 0.6 and a low log-probability) and the VAD
finds no speech; the first word alone ("For", 0.25 s) is never confirmed by the VAD, and
Whisper hears "Monday" in it: both checks flag that call; with 0.35 s of the word the VAD
confirms 0.24 s of speech, under twice its 200 ms start window.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.asr.checks import suspect_columns
from rig.asr.whisper import transcribe
from rig.audio import Audio, read_wav
from rig.channel import telephony_path
from rig.vad import TurnParams, detect_turn

pytestmark = pytest.mark.integration
DATA = Path(__file__).resolve().parent / "data"
SR = 16000
PARAMS = TurnParams()


def call(audio: Audio, answer_start_s: float | None) -> tuple[dict, str]:
    """A call's suspect columns and transcript, the way run_call_front makes them."""
    line = telephony_path(audio, sample_rate_hz=8000, codec="mulaw")
    turn = detect_turn(line, PARAMS)
    heard = line.head(turn.turn_close_s)
    tr = transcribe(heard)
    return suspect_columns(tr, turn, heard.duration_s, answer_start_s, PARAMS.start_ms), tr.text


def speech() -> tuple[Audio, float]:
    sp = read_wav(DATA / "cmu_arctic_us_aew_a0003.wav", SR)
    return sp, detect_turn(sp.resample(8000), PARAMS).speech_start_s


def padded(audio: Audio, before_s: float = 0.5, after_s: float = 2.0) -> Audio:
    return Audio.concat([Audio.silence(before_s, SR), audio, Audio.silence(after_s, SR)])


@pytest.mark.parametrize("name", ["silence", "noise"])
def test_silence_and_noise_only_turns_are_never_scored_as_text(name: str) -> None:
    audio = (Audio.silence(4.0, SR) if name == "silence"
             else read_wav(DATA / "noise_dishes_10s.wav", SR).head(6.0))
    cols, text = call(audio, None)
    # whatever Whisper writes on a turn without speech is flagged
    assert cols["asr_suspect"] is (bool(text.strip()))
    assert cols["turn_suspect"] is False  # nothing was said, and nothing was detected
    # the same audio where an answer was expected: the interviewer heard none
    cols, _ = call(audio, 0.5)
    assert cols["turn_suspect"] is True
    assert cols["turn_suspect_reason"].startswith("no_speech_detected")


def test_a_clean_sentence_is_not_suspect() -> None:
    sp, _ = speech()
    cols, text = call(padded(sp, after_s=1.5), 0.5)
    assert "shook hands" in text.lower()
    assert cols == {"asr_suspect": False, "asr_suspect_reason": None, "turn_suspect": False,
                    "turn_suspect_reason": None}


@pytest.mark.parametrize("word_s", [0.25, 0.35])
def test_a_one_word_answer_is_flagged(word_s: float) -> None:
    sp, onset = speech()
    word = Audio(sp.samples[round(onset * SR):round((onset + word_s) * SR)], SR)
    cols, text = call(padded(word), 0.5)
    assert cols["turn_suspect"] is True
    assert cols["turn_suspect_reason"].split(":")[0] in ("no_speech_detected", "short_speech")
    if cols["turn_suspect_reason"].startswith("no_speech_detected") and text.strip():
        assert cols["asr_suspect_reason"].startswith("text_without_speech")


def test_a_phrase_said_five_times_is_flagged_as_a_repetition() -> None:
    sp, onset = speech()
    phrase = Audio(sp.samples[round(onset * SR):round((onset + 1.1) * SR)], SR)
    gap = Audio.silence(0.15, SR)
    cols, text = call(padded(Audio.concat([phrase, gap] * 5), after_s=1.5), 0.5)
    assert cols["asr_suspect"] is True, text
    assert "repetition_loop" in cols["asr_suspect_reason"]
