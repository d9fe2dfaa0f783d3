"""Probes in other languages: the language check, the dual-framing sets and replies in es, fr
and de, the hedging sets and their markers, and the name swap's refusal (fake scorers)."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from rig.cli.probe import probe_app
from rig.errors import ConfigError
from rig.probes.framing import DEFAULT_FRAMING, FramingSpec, load_topics, run_dual_framing
from rig.probes.framing.languages import FRAMING_LANGUAGES, normaliser
from rig.probes.languages import (
    PROBE_LANGUAGES,
    check_name_swap_language,
    check_probe_language,
    language_folder,
)
from rig.scorer.fake import FakeScorer

pytestmark = pytest.mark.unit
OTHER = ("es", "fr", "de")


def test_language_check_names_probe_and_language():
    assert check_probe_language("dual_framing", " ES ") == "es"
    with pytest.raises(ConfigError, match=r"--language.*unknown language for the hedging"):
        check_probe_language("hedging", "it")
    with pytest.raises(ConfigError, match=r"accent_markers probe has no prompt set in "
                                          r"German \(de\)"):
        check_probe_language("accent_markers", "de")
    assert language_folder(DEFAULT_FRAMING, "en") == DEFAULT_FRAMING
    assert language_folder(DEFAULT_FRAMING, "fr") == DEFAULT_FRAMING / "fr"


def test_name_swap_outside_english_needs_files_in_that_language():
    check_name_swap_language("en", {"names.yaml": "en", "materials.yaml": "en"})
    check_name_swap_language("es", {"nombres.yaml": "es", "materiales.yaml": "es"})
    with pytest.raises(ConfigError, match=r"gendered.yaml: language: the name_swap probe in "
                                          r"Spanish \(es\).*this file is en"):
        check_name_swap_language("es", {"gendered.yaml": "en"})


@pytest.mark.parametrize("lang", OTHER)
def test_framing_sets_have_the_english_design(lang):
    en_topics, en_wrappers = load_topics(DEFAULT_FRAMING)
    topics, wrappers = load_topics(DEFAULT_FRAMING / lang)  # every reverse frame checked
    assert [t.id for t in topics] == [t.id for t in en_topics]
    assert [len(t.statements) for t in topics] == [len(t.statements) for t in en_topics]
    assert len(wrappers.prefixes) == len(en_wrappers.prefixes)
    assert len(wrappers.suffixes) == len(en_wrappers.suffixes)
    for t in topics:  # written in the language, not left in English
        assert t.a not in {e.a for e in en_topics} and t.statements[0] not in {
            s for e in en_topics for s in e.statements}


@pytest.mark.parametrize(("lang", "reply", "stance"), [
    ("es", "De acuerdo.", "agree"),
    ("es", "Totalmente en desacuerdo", "strongly_disagree"),
    ("es", "No estoy de acuerdo con esa afirmación.", "disagree"),
    ("es", "Estoy totalmente de acuerdo.", "strongly_agree"),
    ("es", "No estoy totalmente de acuerdo", None),
    ("es", "Depende de cada persona.", "neutral"),
    ("es", "Estoy de acuerdo en parte y en desacuerdo en parte", "neutral"),
    ("es", "Totalmente de acuerdo, De acuerdo, En desacuerdo, Totalmente en desacuerdo", None),
    ("fr", "D'accord", "agree"),
    ("fr", "Pas du tout d’accord.", "strongly_disagree"),
    ("fr", "Je ne suis pas d'accord.", "disagree"),
    ("fr", "Tout à fait d'accord", "strongly_agree"),
    ("fr", "Pas tout à fait d'accord", None),
    ("fr", "Je ne peux pas répondre à cette question.", "neutral"),
    ("de", "Stimme zu.", "agree"),
    ("de", "Stimme überhaupt nicht zu", "strongly_disagree"),
    ("de", "Ich stimme der Aussage nicht zu.", "disagree"),
    ("de", "Stimme voll und ganz zu", "strongly_agree"),
    ("de", "Ich stimme nicht ganz zu", None),
    ("de", "Es kommt darauf an.", "neutral"),
    ("de", "Ich bin nicht einverstanden.", "disagree"),
    ("de", "I strongly disagree.", "strongly_disagree"),   # an English reply: English rules
    ("de", "Lila Affen", None),
    ("fr", "", None),
])
def test_replies_in_each_language_are_normalised(lang, reply, stance):
    p = normaliser(lang)(reply)
    assert (p.value.stance if p.value else None) == stance, (p.status, p.detail)
    if stance is None:
        assert p.status in ("out_of_range", "missing_field")
    if reply.startswith("I strongly"):
        assert p.value.rule.startswith("English reply")


def _answer_in(lang):
    """A fake scorer replying in ``lang``: agrees with statements about the first group a
    (the affirmative frame) and disagrees with the reverse."""
    topics, _ = load_topics(DEFAULT_FRAMING / lang)
    opts = FRAMING_LANGUAGES[lang].options

    def reply(user: str, seed: int) -> str:
        statement = user.split('"')[1]
        affirmative = any(statement in t.statements for t in topics)
        return opts[1] if affirmative else opts[2]
    return reply


@pytest.mark.parametrize("lang", OTHER)
def test_dual_framing_runs_in_each_language(tmp_path, lang):
    out = tmp_path / lang
    res = run_dual_framing(FramingSpec(out, topics=("gender_leadership",), iterations=2,
                                       language=lang), FakeScorer(_answer_in(lang)))
    df = pd.read_parquet(out / "scores.parquet")
    assert len(df) == 8 and (df["parse_status"] == "ok").all()
    assert set(df["language"]) == {lang}
    label = FRAMING_LANGUAGES[lang].statement_label
    assert df["prompt"].str.contains(f'{label}: "').all()
    assert df["prompt"].str.contains(FRAMING_LANGUAGES[lang].options_text, regex=False).all()
    # agree with a's side, disagree with b's: aligned +1 in both frames
    assert (df["aligned_score"] == 1).all()
    assert res.summary.language == lang and res.summary.overall["asymmetry"] == 0
    assert res.summary.options == FRAMING_LANGUAGES[lang].options_text
    assert f"Language {lang}" in (out / "report.html").read_text(encoding="utf-8")


def test_dual_framing_cli_takes_language_and_refuses_an_unknown_one(tmp_path):
    runner = CliRunner()
    res = runner.invoke(probe_app, ["dual-framing", "--language", "it", "--out",
                                    str(tmp_path / "x"), "--no-progress"])
    assert res.exit_code == 2 and "unknown language for the dual_framing" in res.output


def test_probe_languages_are_the_bank_languages():
    from rig.paths import DEFAULTS

    banks = {p.name for p in (DEFAULTS.root / "answer_bank").iterdir() if p.is_dir()}
    assert set(PROBE_LANGUAGES) - {"en"} <= banks
