"""The shibboleth probe data: counts, schema, and the machine checks of equivalence."""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.errors import ConfigError
from rig.probes.data import (
    CATEGORIES,
    HEDGES,
    ShibbolethItem,
    articles,
    check_item,
    drop_articles,
    hedge_markers,
    load_shibboleth,
    propose_hedged,
    words,
)

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "probes" / "shibboleth"


@pytest.fixture(scope="module")
def probe_set():
    return load_shibboleth(DATA)


def test_at_least_60_questions_across_the_ten_categories(probe_set):
    assert len(probe_set.items) >= 60
    counts = probe_set.counts()
    assert set(counts) == set(CATEGORIES) and len(CATEGORIES) == 10
    assert all(n >= 5 for n in counts.values()), counts
    assert len({it.id for it in probe_set.items}) == len(probe_set.items)
    assert len({it.item.question for it in probe_set.items}) == len(probe_set.items)


def test_every_item_has_three_answers_and_a_note_per_pair(probe_set):
    for it in probe_set.items:
        i = it.item
        assert i.confident and i.hedged and i.article_dropped
        assert len(i.notes.hedged) >= 10 and len(i.notes.article_dropped) >= 10
        assert "REVIEW" not in i.notes.article_dropped + i.notes.hedged
        assert check_item(i) == [], (it.id, check_item(i))


def test_article_dropped_answers_are_the_confident_ones_minus_articles(probe_set):
    for it in probe_set.items:
        i = it.item
        assert articles(i.article_dropped) == []
        assert words(i.article_dropped) == words(drop_articles(i.confident))
        assert len(articles(i.confident)) >= 3


def test_hedged_answers_add_hedges_and_keep_content(probe_set):
    for it in probe_set.items:
        i = it.item
        assert hedge_markers(i.confident) == []
        assert len(hedge_markers(i.hedged)) >= 2
        # numbers survive verbatim
        nums = [w for w in words(i.confident) if w.isdigit()]
        assert all(n in words(i.hedged) for n in nums)
        # every hedge the note names is in the hedged text
        lexicon = {h for hs in HEDGES.values() for h in hs} | {"seem"}
        for quoted in i.notes.hedged.split("'")[1::2]:
            if quoted.lower() in lexicon:
                assert quoted.lower() in i.hedged.lower(), (it.id, quoted)


def test_fewshot_examples_are_not_probe_questions(probe_set):
    assert len(probe_set.fewshot) >= 2
    questions = {it.item.question for it in probe_set.items}
    for ex in probe_set.fewshot:
        assert ex.question not in questions
        assert check_item(ex) == []
        assert len(ex.reasoning) <= 200


def test_check_item_catches_what_changes_content():
    good = dict(id="x1", question="Tell me about a win.",
                confident="I led the team and the project, and a client signed a deal.",
                hedged="I think I led the team and the project, and perhaps a client signed a "
                       "deal.",
                article_dropped="I led team and project, and client signed deal.",
                notes={"hedged": "adds two hedges", "article_dropped": "drops four articles"})
    assert check_item(ShibbolethItem(**good)) == []
    bad = ShibbolethItem(**{**good, "article_dropped": "I led team and project, and client "
                                                       "signed contract."})
    assert any("minus its articles" in p for p in check_item(bad))
    bad = ShibbolethItem(**{**good, "hedged": "I think I led the team, and perhaps a client "
                                              "signed a deal."})
    assert any("content words" in p and "project" in p for p in check_item(bad))
    bad = ShibbolethItem(**{**good, "confident": "I think I led the team and the project, "
                                                 "and a client signed a deal."})
    assert any("has hedges" in p for p in check_item(bad))


def test_transforms_propose_variants():
    text = "The team shipped a fix. An audit found the cause."
    assert drop_articles(text) == "Team shipped fix. Audit found cause."
    assert len(hedge_markers(propose_hedged(text))) >= 2
    assert hedge_markers("This kind of work is relatively easy, it seems.") == [
        "kind of", "relatively", "it seems"]


def test_a_duplicate_id_names_the_file(tmp_path):
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_text((DATA / "initiative.yaml").read_text())
    (tmp_path / "fewshot.yaml").write_text((DATA / "fewshot.yaml").read_text())
    with pytest.raises(ConfigError, match=r"b\.yaml: items\[0\]\.id: duplicate id"):
        load_shibboleth(tmp_path)


def test_a_failed_check_is_a_config_error(tmp_path):
    text = (DATA / "initiative.yaml").read_text().replace(
        "Our team spent hour every Monday", "Our team spent two hours every Monday", 1)
    (tmp_path / "initiative.yaml").write_text(text)
    (tmp_path / "fewshot.yaml").write_text((DATA / "fewshot.yaml").read_text())
    with pytest.raises(ConfigError, match=r"initiative\.yaml: items\[0\] \(in01\): "
                                          r"article-dropped"):
        load_shibboleth(tmp_path)
