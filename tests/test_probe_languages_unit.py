"""Probes in other languages: the language check, the dual-framing sets and replies in es, fr
and de, the hedging sets and their markers, and the name swap's refusal (fake scorers)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml
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
    # negations and intensifiers a fresh-clone tester found read as the opposite
    ("es", "No estoy nada de acuerdo.", "strongly_disagree"),
    ("es", "No estoy para nada de acuerdo", "strongly_disagree"),
    ("es", "Estoy en total desacuerdo", "strongly_disagree"),
    ("fr", "Je ne suis pas vraiment d'accord", "disagree"),
    ("fr", "Je suis en total désaccord", "strongly_disagree"),
    ("de", "Ich stimme dem keineswegs zu", "strongly_disagree"),
    ("fr", "", None),
])
def test_replies_in_each_language_are_normalised(lang, reply, stance):
    p = normaliser(lang)(reply)
    assert (p.value.stance if p.value else None) == stance, (p.status, p.detail)
    if stance is None:
        assert p.status in ("out_of_range", "missing_field")
    if reply.startswith("I strongly"):
        assert p.value.rule.startswith("English reply")


def test_a_folder_of_another_language_is_refused_not_mixed(tmp_path):
    from rig.errors import ConfigError

    out = tmp_path / "run"
    run_dual_framing(FramingSpec(out, topics=("gender_leadership",), iterations=1,
                                 language="de"), FakeScorer(_answer_in("de")))
    before = (out / "asks.jsonl").read_bytes()
    with pytest.raises(ConfigError, match=r"language.*'de'.*another --out"):
        run_dual_framing(FramingSpec(out, topics=("gender_leadership",), iterations=1,
                                     language="fr"), FakeScorer(_answer_in("fr")))
    assert (out / "asks.jsonl").read_bytes() == before  # nothing written
    assert json.loads((out / "probe.json").read_text())["language"] == "de"


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


# -- hedging in es, fr, de ---------------------------------------------------------------------

def _hedge_fake(lex):
    """Rates an answer 4, minus one when it holds two or more of ``lex``'s markers; decides
    on its ratings."""
    import json
    import re

    def reply(user: str, seed: int) -> str:
        if "final decision" in user:
            r = [int(x) for x in re.findall(r"Your rating: (\d)/5", user)]
            return json.dumps({"decision": "advance" if sum(r) / len(r) >= 4 else
                               "do not advance", "reasoning": "mean"})
        ans = user.rsplit('"""', 2)[-2]
        return json.dumps({"score": 4 - (len(lex.find(ans)) >= 2), "reasoning": "rated"})
    return reply


@pytest.mark.parametrize("lang", OTHER)
def test_hedging_sets_load_with_cited_markers(lang):
    from rig.probes.data import DEFAULT_SHIBBOLETH, load_shibboleth
    from rig.probes.hedges import check_hedged

    s = load_shibboleth(DEFAULT_SHIBBOLETH / lang, lang)
    assert s.language == lang and len(s.items) >= 6 and len(s.fewshot) == 2
    assert s.hedges is not None and len(s.hedges.markers) == 4
    assert s.hedges.source.count("(") >= 1  # a citation: author (year)
    for it in s.items:
        i = it.item
        assert i.article_dropped is None
        assert not s.hedges.find(i.confident) and len(s.hedges.find(i.hedged)) >= 2
        assert check_hedged(i.confident, i.hedged, s.hedges) == []
        # the check sees a fact dropped from the hedged twin: its first sentence cut
        cut = i.hedged.split(". ", 1)[1]
        assert any("lacks content words" in p for p in check_hedged(i.confident, cut,
                                                                     s.hedges))


def test_hedging_set_checks_name_file_item_and_problem(tmp_path):
    import shutil

    from rig.probes.data import DEFAULT_SHIBBOLETH, load_shibboleth

    folder = tmp_path / "es"
    shutil.copytree(DEFAULT_SHIBBOLETH / "es", folder)
    f = folder / "initiative.yaml"
    f.write_text(f.read_text(encoding="utf-8").replace("En la clínica, los pacientes",
                                                       "Creo que en la clínica, los pacientes",
                                                       1), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"initiative.yaml: items\[0\] \(in_es01\): "
                                          r"confident answer has hedges \['creo que'\]"):
        load_shibboleth(folder, "es")
    with pytest.raises(ConfigError, match=r"hedges.yaml: language: the set was asked for in fr"):
        load_shibboleth(folder, "fr")
    (folder / "hedges.yaml").unlink()
    with pytest.raises(ConfigError, match=r"hedges\.yaml: missing"):
        load_shibboleth(folder, "es")


@pytest.mark.parametrize("lang", OTHER)
def test_hedging_probe_runs_in_each_language(tmp_path, lang):
    from rig.probes.data import DEFAULT_SHIBBOLETH, load_shibboleth
    from rig.probes.shibboleth import ProbeSpec, run_probe

    lex = load_shibboleth(DEFAULT_SHIBBOLETH / lang, lang).hedges
    res = run_probe(ProbeSpec("hedging", tmp_path / lang, n_sessions=2,
                              questions_per_session=None, conditions=("plain",),
                              language=lang), FakeScorer(_hedge_fake(lex)))
    s = res.summary
    assert s.language == lang and s.hedge_source == lex.source
    assert s.hedge_markers == {k: list(v) for k, v in lex.markers.items()}
    assert s.questions_per_session == 6  # every question of the 6-question set
    r = res.ratings
    assert set(r["score"]) == {3.0, 4.0}
    assert (r.loc[r["variant"] == "hedged", "score"] == 3).all()
    assert s.conditions_detail["plain"]["paired"]["mean_diff"] == pytest.approx(-1)


def test_accent_markers_english_only_and_name_swap_refuses_a_set_of_another_language(
        tmp_path):
    from rig.probes.shibboleth import ProbeSpec, run_probe

    with pytest.raises(ConfigError, match="accent_markers probe has no prompt set in Spanish"):
        run_probe(ProbeSpec("accent_markers", tmp_path / "a", language="es"), FakeScorer())
    from rig.probes.names import DEFAULT_NAMES

    res = CliRunner().invoke(probe_app, ["name-swap", "--language", "fr", "--name-set",
                                         str(DEFAULT_NAMES / "gendered.yaml"), "--out",
                                         str(tmp_path / "n"), "--no-progress"])
    assert res.exit_code == 2, res.output
    assert "name_swap probe in French (fr)" in res.output and "this file is en" in res.output


def spanish_name_swap_inputs(tmp_path) -> tuple:
    """(a Spanish name set, Spanish materials with one resume), written under ``tmp_path``."""
    names = tmp_path / "nombres.yaml"
    names.write_text(yaml.safe_dump({
        "id": "es_gendered", "title": "Nombres", "version": 1, "language": "es",
        "source": "a test set of first names, not a published table",
        "surnames": ["García", "López"],
        "groups": [{"id": "male", "label": "m", "first_names": ["Hugo", "Mateo"]},
                   {"id": "female", "label": "f", "first_names": ["Lucía", "Sofía"]}]},
        allow_unicode=True), encoding="utf-8")
    mats = tmp_path / "materiales.yaml"
    mats.write_text(yaml.safe_dump({"version": 1, "language": "es", "resumes": [{
        "id": "res_es", "role": "Atención al cliente",
        "text": "{name}\nAtención al cliente, cuatro años de experiencia en un centro de "
                "llamadas."}]}, allow_unicode=True), encoding="utf-8")
    return names, mats


def test_name_swap_runs_with_names_and_material_of_that_language(tmp_path):
    import json

    from rig.probes.name_swap import NameSwapSpec, run_name_swap

    names, mats = spanish_name_swap_inputs(tmp_path)
    spec = NameSwapSpec(tmp_path / "out", name_sets=(str(names),), materials_path=mats,
                        kinds=("resume",), names_per_group=1, conditions=("plain",),
                        features=("hire",), language="es")
    res = run_name_swap(spec, FakeScorer(lambda u, s: json.dumps({"hire": "yes"})))
    assert len(res.rows) == 2 and set(res.rows["group"]) == {"male", "female"}
    with pytest.raises(ConfigError, match=r"name set 'es_gendered': language: .*this file is es"):
        run_name_swap(NameSwapSpec(tmp_path / "o2", name_sets=(str(names),),
                                   materials_path=mats, kinds=("resume",), language="de"),
                      FakeScorer())


def test_check_and_hedging_cli_take_language(tmp_path, monkeypatch):
    import rig.cli.probe as cli
    from rig.probes.data import DEFAULT_SHIBBOLETH, load_shibboleth

    runner = CliRunner()
    res = runner.invoke(probe_app, ["check", "--language", "de"])
    assert res.exit_code == 0, res.output
    assert "every item passed" in res.output and "Clemen" in res.output
    lex = load_shibboleth(DEFAULT_SHIBBOLETH / "fr", "fr").hedges
    monkeypatch.setattr(cli, "_scorer", lambda spec, option="--scorer":
                        FakeScorer(_hedge_fake(lex)))
    out = tmp_path / "h"
    res = runner.invoke(probe_app, ["hedging", "--language", "fr", "--sessions", "1",
                                    "--mitigation", "none", "--out", str(out),
                                    "--no-progress"])
    assert res.exit_code == 0, res.output
    assert pd.read_parquet(out / "scores.parquet")["answer"].str.contains("clinique").any()
    res = runner.invoke(probe_app, ["accent-markers", "--language", "fr", "--out",
                                    str(tmp_path / "a"), "--no-progress"])
    assert res.exit_code == 2 and "no prompt set in French" in res.output


def test_a_set_is_read_in_its_own_language_unless_told_otherwise(tmp_path):
    from rig.probes.data import DEFAULT_SHIBBOLETH
    from rig.probes.languages import set_language

    es = DEFAULT_SHIBBOLETH / "es"
    assert set_language(es, None) == "es"  # its hedges.yaml says es
    assert set_language(es / "fewshot.yaml", None) == "es"  # a file of the set: its folder
    assert set_language(es, "fr") == "fr"  # --language wins; loading then names the clash
    assert set_language(DEFAULT_SHIBBOLETH, None) == "en"  # no hedges.yaml
    assert set_language(None, None) == "en"
    assert set_language(tmp_path / "bench.csv", None) == "en"
