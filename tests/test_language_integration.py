"""A Spanish answer, spoken by espeak-ng's Spanish voice over the 8 kHz mu-law line, through
real faster-whisper base (issue 32): Whisper detects Spanish under asr.language auto, and a
pipeline fixed to English translates it instead (higher WER, a language_mismatch suspect)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.answers import load_bank
from rig.asr.checks import asr_suspect
from rig.asr.wer import error_rate
from rig.asr.whisper import AsrOptions, transcribe
from rig.campaign.call import render_call_audio
from rig.errors import EngineUnavailable
from rig.pipeline import Telephony, load_pipeline
from rig.profiles import load_profiles

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]


def test_spanish_answer_auto_vs_fixed_english(tmp_path: Path) -> None:
    bank = load_bank(ROOT / "answer_bank" / "es")
    _, answer = next((q, a) for q, a in bank.answers() if a.answer_id == "es_q01_weak")
    profile = load_profiles(ROOT / "profiles" / "es").baseline
    try:
        made = render_call_audio(answer, profile, 0, cache_dir=tmp_path, telephony=Telephony())
    except EngineUnavailable as exc:
        pytest.skip(f"espeak-ng is not installed: {exc}")
    auto_cfg = load_pipeline(ROOT / "pipelines" / "multilingual.yaml").asr
    assert auto_cfg.language == "auto" and auto_cfg.whisper_language is None
    auto = transcribe(made.audio, AsrOptions(model=auto_cfg.model, language=None))
    fixed = transcribe(made.audio, AsrOptions(model=auto_cfg.model, language="en"))
    assert auto.language == "es" and 0.5 < auto.language_probability <= 1.0
    assert fixed.language == "en" and fixed.language_probability == 1.0
    w_auto = error_rate(answer.clean_text, auto.text, "es").wer
    w_fixed = error_rate(answer.clean_text, fixed.text, "es").wer
    assert w_auto < 0.5 < w_fixed, (w_auto, w_fixed, auto.text, fixed.text)
    speech = [(0.0, made.audio.duration_s)]
    assert asr_suspect(auto, speech, made.audio.duration_s, "es", "auto") == (False, None)
    flag, why = asr_suspect(fixed, speech, made.audio.duration_s, "es", "en")
    assert flag and "language_mismatch: spoken es, decoded as en" in why
