"""Language settings and language-aware measures (issue 32): codes, the pipeline's
asr.language, bank and profile languages, WER normalisers per language, CER, and the
language_mismatch suspect rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.answers import load_bank
from rig.asr.checks import asr_suspect
from rig.asr.wer import cer, error_rate, normalize, wer
from rig.asr.whisper import AsrSegment, Transcript
from rig.errors import ConfigError
from rig.language import (
    WHISPER_LANGUAGES,
    check_language,
    error_unit,
    language_mismatch,
    whisper_language,
)
from rig.pipeline import AsrSettings, PipelineConfig, load_pipeline, pipeline_version
from rig.profiles.profile import Profile

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]


def test_codes_match_faster_whisper() -> None:
    tok = pytest.importorskip("faster_whisper.tokenizer")
    assert tuple(tok._LANGUAGE_CODES) == WHISPER_LANGUAGES


def test_check_language() -> None:
    assert check_language("ES") == "es"
    assert check_language("auto", allow_auto=True) == "auto"
    with pytest.raises(ValueError, match="'auto' or"):
        check_language("xx", allow_auto=True)
    with pytest.raises(ValueError, match="not a language Whisper knows"):
        check_language("auto")
    assert whisper_language("auto") is None and whisper_language("fr") == "fr"
    assert error_unit("ja") == "char" and error_unit("de") == "word"


def test_pipeline_language_default_keeps_version() -> None:
    """An absent asr.language is en, as it always was: the shipped pipelines' versions are
    those of a configuration written with language: en, and of one without it."""
    cfg = load_pipeline(ROOT / "pipelines" / "reference.yaml")
    dumped = cfg.model_dump(exclude={"description", "device"}, exclude_none=True)
    dumped["asr"].pop("language")
    assert pipeline_version(PipelineConfig.model_validate(dumped)) == pipeline_version(cfg)
    auto = cfg.model_copy(update={"asr": AsrSettings(model="whisper-base", language="auto")})
    assert pipeline_version(auto) != pipeline_version(cfg)
    assert auto.asr.whisper_language is None


def test_pipeline_language_errors(tmp_path: Path) -> None:
    p = tmp_path / "p.yaml"
    p.write_text("name: p\nasr: {model: whisper-tiny.en, language: es}\n")
    with pytest.raises(ConfigError, match="multilingual model"):
        load_pipeline(p)
    p.write_text("name: p\nasr: {model: whisper-base, language: klingon}\n")
    with pytest.raises(ConfigError) as e:
        load_pipeline(p)
    assert "asr.language" in str(e.value) and "klingon" in str(e.value)


def test_profile_language() -> None:
    assert Profile(profile_id="x").content_hash == Profile(profile_id="x",
                                                           language="en").content_hash
    es = Profile(profile_id="x", language="es")
    assert es.dimensions_changed(Profile(profile_id="b")) == ["language"]
    with pytest.raises(ValueError):
        Profile(profile_id="x", language="english")


def _bank(tmp: Path, meta: str, extra: str = "") -> Path:
    src = (ROOT / "answer_bank" / "mini" / "q01_conflict.yaml").read_text()
    (tmp / "bank.yaml").write_text(meta)
    (tmp / "q.yaml").write_text(extra + src)
    return tmp


def test_bank_language(tmp_path: Path) -> None:
    bank = load_bank(_bank(tmp_path, "name: b\nlanguage: de\n"))
    assert bank.meta.language == "de" and {q.language for q in bank.questions} == {"de"}
    assert load_bank(ROOT / "answer_bank" / "mini").questions[0].language == "en"
    with pytest.raises(ConfigError) as e:
        load_bank(_bank(tmp_path, "name: b\nlanguage: de\n", "language: fr\n"))
    assert "q.yaml" in str(e.value) and "language" in str(e.value) and "'fr'" in str(e.value)


def test_normalisers_per_language() -> None:
    # English: numbers and spellings standardised, as before
    assert normalize("Thirty percent, colour!") == normalize("30% color")
    # other languages: Whisper's basic normaliser, diacritics kept, punctuation gone
    assert normalize("¿Qué pasó? ¡Éxito!", "es") == "qué pasó éxito"
    assert normalize("Ça m'a coûté « cher ».", "fr") == "ça m a coûté cher"
    assert wer("Ich habe es geprüft.", "ich habe es geprüft", "de").wer == 0.0
    # the English normaliser would map 'uh' fillers and spellings in a Spanish text
    assert wer("Es decir, un cambio", "es decir un cambio", "es").wer == 0.0


def test_cer_and_error_rate() -> None:
    r = cer("今日は晴れです。", "今日は晴れです", "ja")
    assert r.wer == 0.0 and r.unit == "char" and r.reference_words == 7
    r = error_rate("今日は晴れです", "今日は雨です", "ja")
    assert r.unit == "char" and r.substitutions + r.deletions + r.insertions > 0
    assert r.wer == pytest.approx(
        (r.substitutions + r.deletions + r.insertions) / r.reference_words)
    w = error_rate("el equipo terminó", "el equipo termino", "es")
    assert w.unit == "word" and w.wer == pytest.approx(1 / 3)


def _tr(language: str, prob: float | None) -> Transcript:
    return Transcript("hola a todos", -0.2, 0.01, 3.0,
                      (AsrSegment(0.5, 2.5, "hola a todos", -0.2, 0.01, 1.1),), language, prob)


def test_language_mismatch_suspect() -> None:
    assert language_mismatch("es", "es", "auto", 0.9) is None
    assert language_mismatch(None, "es", "auto") is None
    assert "detected pt, p=0.55" in language_mismatch("es", "pt", "auto", 0.55)
    assert "fixed by the pipeline" in language_mismatch("es", "en", "en", 1.0)
    flag, why = asr_suspect(_tr("pt", 0.55), [(0.5, 2.5)], 3.0, "es", "auto")
    assert flag is True and why.startswith("language_mismatch: spoken es, detected pt")
    assert asr_suspect(_tr("es", 0.99), [(0.5, 2.5)], 3.0, "es", "auto") == (False, None)
    assert asr_suspect(_tr("pt", 0.5), [(0.5, 2.5)], 3.0) == (False, None)  # not checked


def test_campaign_refuses_profiles_in_another_language(tmp_path: Path) -> None:
    from rig.language import check_profile_languages
    from rig.profiles import load_profiles

    (tmp_path / "baseline.yaml").write_text("profile_id: baseline\n")
    (tmp_path / "es.yaml").write_text("profile_id: es\nlanguage: es\nchanges: [language]\n")
    profiles = load_profiles(tmp_path)
    with pytest.raises(ConfigError) as e:
        check_profile_languages("en", "answer_bank/mini", profiles)
    assert "es.yaml" in str(e.value) and "'es'" in str(e.value)
