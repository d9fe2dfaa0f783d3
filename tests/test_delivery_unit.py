"""Delivery variation (issue 33, item 3): with a deterministic pipeline the noise floor is
measured from what varies between real repeats of a call, the delivery. Each (answer,
repeat) is spoken at its own rate drawn from the seed, the same in every profile (pairs stay
paired); the planner then runs the repeats; every output suggests a step that can change the
answer."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from rig.answers import load_bank
from rig.campaign.delivery import rate_factor, varied_profile
from rig.campaign.repeats import floor_advice, repeat_variation
from rig.campaign.runner import CampaignSpec, plan_campaign
from rig.pipeline import load_pipeline
from rig.profiles import Profile, load_profiles
from rig.stats.noise import noise_floor

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
REFERENCE = load_pipeline(ROOT / "pipelines" / "reference.yaml")


def test_the_rate_is_drawn_per_answer_and_repeat_and_reproducible():
    f = [rate_factor("q01_strong", r, 5.0) for r in range(4)]
    assert f == [rate_factor("q01_strong", r, 5.0) for r in range(4)]  # same seed, same rate
    assert len(set(f)) == 4 and all(0.875 <= x <= 1.125 for x in f)  # +/-2.5 SD of 5%
    assert rate_factor("q01_weak", 0, 5.0) != f[0]
    assert rate_factor("q01_strong", 0, 0.0) == 1.0
    with pytest.raises(ValueError, match="--vary-delivery"):
        rate_factor("a", 0, 25.0)


def test_a_varied_profile_scales_rate_or_wpm_and_changes_the_call_id_hash():
    base = Profile(profile_id="b")
    v = varied_profile(base, "q01_strong", 1, 5.0)
    assert v.pace.rate == pytest.approx(rate_factor("q01_strong", 1, 5.0))
    assert v.content_hash != base.content_hash and v.profile_id == "b"
    slow = Profile(profile_id="s", pace={"wpm": 120.0})
    assert varied_profile(slow, "a", 0, 5.0).pace.wpm == pytest.approx(
        120.0 * rate_factor("a", 0, 5.0))
    assert varied_profile(base, "a", 0, 0.0) is base


def _plan(**kw):
    spec = CampaignSpec(answers_path=ROOT / "answer_bank" / "core",
                        profiles_path=ROOT / "profiles" / "demo",
                        pipeline_path=ROOT / "pipelines" / "reference.yaml",
                        out_dir=Path("unused"), question_ids=("q01_conflict",),
                        profile_ids=("slow",), **kw)
    return plan_campaign(spec, load_bank(spec.answers_path),
                         load_profiles(spec.profiles_path), "v", REFERENCE)


def test_the_planner_runs_varied_repeats_and_keeps_pairs_at_one_rate():
    still = _plan(baseline_repeats=2)
    assert still.repeats_skipped["n"] > 0  # deterministic: the second repeat skipped
    assert "--vary-delivery 5" in still.floor_advice
    assert "--baseline-repeats" not in still.floor_advice  # two are planned already
    # the command to run comes first, for both commands that plan two baseline repeats
    assert still.floor_advice.startswith("rerun the same command with --vary-delivery 5 "
                                         "(rig demo --vary-delivery 5, or your rig campaign "
                                         "run command with it)")
    assert "nothing random" in still.floor_advice  # then why more repeats would not do
    varied = _plan(baseline_repeats=2, delivery_sd_pct=5.0)
    assert varied.repeats_skipped["n"] == 0
    calls = varied.calls
    assert len(calls) == len(still.calls) + still.repeats_skipped["n"]
    for c in calls:  # within a repeat the answer is spoken at one rate by every profile
        f = rate_factor(c.answer.answer_id, c.repeat, 5.0)
        nominal = load_profiles(ROOT / "profiles" / "demo").get(c.profile.profile_id)
        if nominal.pace.rate is not None:
            assert c.profile.pace.rate == pytest.approx(min(2.0, nominal.pace.rate * f))
        else:
            assert c.profile.pace.wpm == pytest.approx(nominal.pace.wpm * f)
    assert "baseline-repeats 2 or more" in varied.floor_advice or \
        "more baseline repeats" in varied.floor_advice


def test_one_repeat_advises_the_baseline_repeats_too_never_a_step_that_is_skipped():
    advice = _plan().floor_advice
    assert "--vary-delivery 5 --baseline-repeats 3" in advice
    assert advice.startswith("rerun your rig campaign run command with")  # demo plans two
    assert "--repeats 2" not in advice
    base = load_profiles(ROOT / "profiles" / "demo").baseline
    noisy = base.model_copy(update={"noise": base.noise.model_copy(
        update={"kind": "pink", "snr_db": 30.0})})
    assert "--baseline-repeats 2 or more" in floor_advice(
        repeat_variation(noisy, REFERENCE), 1)
    assert "vary the delivery too" in floor_advice(repeat_variation(noisy, REFERENCE), 2)


def test_the_noise_floor_reason_carries_the_advice():
    rows = pd.DataFrame({"answer_id": ["a", "b"], "profile_id": ["baseline"] * 2,
                         "score": [50.0, 60.0], "parse_status": ["ok", "ok"]})
    nf = noise_floor(rows, advice="rerun with --vary-delivery 5 --baseline-repeats 3")
    assert not nf.measured and nf.reason.endswith("--vary-delivery 5 --baseline-repeats 3")
    nf = noise_floor(rows, repeats_skipped="deterministic: ...", advice="rerun with X")
    assert nf.reason.endswith("(they could not differ, so they were not run: "
                              "deterministic: ...); to measure it, rerun with X")
