"""The shipped name-swap sets, materials and asks in es, fr and de (issue 32)."""

import json

import pytest

from rig.probes.languages import PROBE_LANGUAGES
from rig.probes.name_swap.asks import feature_prompt, parse_feature
from rig.probes.name_swap.texts import TEXTS
from rig.probes.names import (
    default_materials,
    load_materials,
    load_name_set,
    shipped_name_sets,
)

pytestmark = pytest.mark.unit
OTHER = ("es", "fr", "de")


@pytest.mark.parametrize("lang", PROBE_LANGUAGES)
def test_every_language_ships_a_balanced_sourced_gendered_set(lang):
    assert "gendered" in shipped_name_sets(lang)
    for set_id in shipped_name_sets(lang):
        s = load_name_set(set_id, lang)
        assert s.language == lang
        # balanced as the English set: every group the same number of first names, so every
        # slot has a name of each group at the same position
        sizes = {len(s.names_of(g)) for g in s.group_ids}
        assert len(sizes) == 1 and s.n_positions >= 8, sizes
        assert len(s.surnames) >= 9
        # every group's names come from the set's cited source
        assert len(s.source) > 100
        for g in s.groups:
            assert g.label


@pytest.mark.parametrize("lang", OTHER)
def test_other_languages_cite_their_statistics(lang):
    s = load_name_set("gendered", lang)
    want = {"es": "INE", "fr": "INSEE", "de": "Gesellschaft für deutsche Sprache"}[lang]
    assert want in s.source and set(s.group_ids) == {"male", "female"}
    first = {n for g in s.group_ids for n in s.names_of(g)}
    assert not first & set(s.surnames), "a surname also used as a first name"


@pytest.mark.parametrize("lang", OTHER)
def test_materials_are_in_the_language(lang):
    items = load_materials(default_materials(lang))
    kinds = [m.kind for m in items]
    assert kinds.count("resume") >= 3 and kinds.count("transcript") >= 2
    header = {"es": "Transcripción", "fr": "Transcription", "de": "Transkript"}[lang]
    assert any(header in m.template for m in items if m.kind == "transcript")
    assert all("Phone-screen" not in m.template for m in items)


@pytest.mark.parametrize("lang", OTHER)
def test_asks_and_reply_reader_in_the_language(lang):
    t = TEXTS[lang]
    a = feature_prompt("anti_bias", "hire", "Rol", "{name} texto", lang)
    assert t.questions["hire"] in a.user and t.fairness in a.system
    assert f'\\"{t.yes}\\"' in a.grammar and "yes" not in a.grammar
    assert parse_feature("hire", json.dumps({"hire": t.yes}), language=lang).value.value == 1
    assert parse_feature("hire", json.dumps({"hire": t.no}), language=lang).value.value == 0
    bad = parse_feature("hire", json.dumps({"hire": "maybe"}), language=lang)
    assert bad.status == "out_of_range" and t.yes in bad.detail
    c = feature_prompt("reasoning", "compensation", "Rol", "x", lang)
    assert "compensation_eur" in c.user and "compensation_eur" in c.grammar
    ok = parse_feature("compensation", '{"reasoning": "r", "compensation_eur": 42000}',
                       reasoning=True, language=lang)
    assert ok.status == "ok" and ok.value.value == 42000.0
    miss = parse_feature("compensation", '{"compensation_usd": 42000}', language=lang)
    assert miss.status == "missing_field"


def test_english_asks_unchanged():
    a = feature_prompt("plain", "hire", "Role", "x")
    assert a.user.endswith('Reply as JSON: {"hire": "yes" or "no"}')
    assert parse_feature("compensation", '{"compensation_usd": "$85,000"}').value.value == 85000


@pytest.mark.parametrize("lang", OTHER)
def test_cli_runs_the_shipped_set_of_the_language(tmp_path, monkeypatch, lang):
    import pandas as pd
    from typer.testing import CliRunner

    import rig.cli.probe as cli
    from rig.scorer.fake import FakeScorer

    yes = TEXTS[lang].yes
    monkeypatch.setattr(cli, "_scorer", lambda spec, option="--scorer": FakeScorer(
        lambda u, s: json.dumps({"hire": yes})))
    out = tmp_path / "ns"
    res = CliRunner().invoke(cli.probe_app, [
        "name-swap", "--language", lang, "--kind", "resume", "--items", "1",
        "--names-per-group", "1", "--feature", "hire", "--mitigation", "none", "--out",
        str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    df = pd.read_parquet(out / "scores.parquet")
    assert len(df) == 2 and (df["parse_status"] == "ok").all() and set(df["answer"]) == {yes}
