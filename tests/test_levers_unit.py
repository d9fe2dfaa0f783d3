"""The rubric and transcript levers (issue 16 item 4): ``scorer.style_criteria`` (criteria
tagged ``style: true`` dropped, the rest rescaled to 100) and ``transcript.fillers`` (filler
words dropped from the text the scorer reads), both versioned pipeline settings. The shipped
banks tag no criterion as style; tests/data/style_bank has one ("communicates_clearly")."""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.answers import load_bank, rescale_points
from rig.asr.transcript import drop_fillers, scorer_text
from rig.campaign.runner import CampaignSpec, plan_campaign
from rig.config import content_hash
from rig.errors import ConfigError
from rig.pipeline import PipelineConfig, load_pipeline, pipeline_version
from rig.profiles import load_profiles

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
STYLE_BANK = ROOT / "tests" / "data" / "style_bank"


def test_rescale_points_sums_to_100_by_largest_remainder() -> None:
    assert rescale_points([20, 35, 25]) == [25, 44, 31]
    assert rescale_points([25, 25, 25]) == [34, 33, 33]
    assert rescale_points([50, 50]) == [50, 50]
    assert sum(rescale_points([1, 1, 97])) == 100
    with pytest.raises(ValueError):
        rescale_points([])


def test_drop_removes_the_style_criterion_and_rescales() -> None:
    q = load_bank(STYLE_BANK).questions[0]
    assert [c.id for c in q.rubric if c.style] == ["communicates_clearly"]
    d = q.scored_rubric("drop")
    assert [c.id for c in d.rubric] == ["situation", "constructive_approach", "outcome"]
    assert sum(c.points for c in d.rubric) == 100
    assert d.rubric_hash != q.rubric_hash and d.cutoff == q.cutoff
    assert q.scored_rubric("keep") is q
    with pytest.raises(ValueError, match="keep or drop"):
        q.scored_rubric("maybe")


def test_the_shipped_bank_tags_none_and_keeps_its_rubric_hashes() -> None:
    for q in load_bank(ROOT / "answer_bank" / "core").questions:
        assert not any(c.style for c in q.rubric)
        assert q.scored_rubric("drop") is q
        old = content_hash({"v": q.rubric_version, "rubric": [
            c.model_dump(exclude={"style"}) for c in q.rubric], "cutoff": q.cutoff,
            "question": q.question})
        assert q.rubric_hash == old  # call ids of existing campaigns are unchanged


def test_a_rubric_of_style_criteria_only_cannot_be_dropped() -> None:
    q = load_bank(STYLE_BANK).questions[0]
    only = q.model_copy(update={"rubric": [c.model_copy(update={"style": True})
                                           for c in q.rubric]})
    with pytest.raises(ConfigError, match="no criterion"):
        only.scored_rubric("drop")


def _pipe(**kw) -> PipelineConfig:
    base = load_pipeline(ROOT / "pipelines" / "reference.yaml").model_dump()
    for k, v in kw.items():
        section, field = k.split("__")
        base[section][field] = v
    return PipelineConfig.model_validate(base)


def test_both_levers_are_versioned_settings() -> None:
    ref = _pipe()
    assert ref.scorer.style_criteria == "keep" and ref.transcript.fillers == "keep"
    versions = {pipeline_version(p) for p in (
        ref, _pipe(scorer__style_criteria="drop"), _pipe(transcript__fillers="drop"))}
    assert len(versions) == 3
    with pytest.raises(Exception, match="fillers"):
        _pipe(transcript__fillers="sometimes")


def test_the_plan_grades_the_scored_rubric_with_the_same_call_ids(tmp_path: Path) -> None:
    profiles = load_profiles(ROOT / "profiles" / "demo")
    spec = CampaignSpec(STYLE_BANK, ROOT / "profiles" / "demo", ROOT / "pipelines" /
                        "reference.yaml", tmp_path, profile_ids=("baseline",))
    bank = load_bank(STYLE_BANK)
    drop = _pipe(scorer__style_criteria="drop")
    planned = plan_campaign(spec, bank, profiles, "v1", drop).calls
    bare = plan_campaign(spec, bank, profiles, "v1").calls
    assert [c.call_id for c in planned] == [c.call_id for c in bare]
    assert all("communicates_clearly" not in [r.id for r in c.question.rubric]
               for c in planned)
    assert all("communicates_clearly" in [r.id for r in c.question.rubric] for c in bare)


def test_drop_fillers() -> None:
    assert drop_fillers("Um, I led the team. Uh I think, er, we shipped.") == \
        "I led the team. I think, we shipped."
    assert drop_fillers("the umbrella and the ermine, ahead") == \
        "the umbrella and the ermine, ahead"
    assert drop_fillers("Hmm. Mm-hmm, yes") == "yes"
    assert scorer_text("um yes", "keep") == "um yes" and scorer_text("um yes", "drop") == "yes"
    with pytest.raises(ValueError):
        scorer_text("x", "some")
