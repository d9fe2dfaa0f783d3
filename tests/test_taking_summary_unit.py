"""Turn-taking and conduct per profile (rig.campaign.taking_summary) checked against an
independent computation, in summary.json's schema (ProfileSummary.turn_taking), and the gate's
budgets (rig.gate.budgets): a profile over latency_p95_ms or talk_over_rate blocks and the
line names the profile and the budget."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rig.campaign.schema_taking import ProfileTurnTaking
from rig.campaign.taking_summary import profile_turn_taking
from rig.gate.budgets import budget_checks
from rig.gate.campaigns import Campaign
from rig.gate.policy import BudgetPolicy, GatePolicy

pytestmark = pytest.mark.unit


def rows(profile: str, latencies, turns=2, over=0, seed=0) -> pd.DataFrame:
    n = len(latencies)
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "profile_id": profile, "status": "ok", "response_latency_ms": latencies,
        "candidate_turns": [turns] * n, "talked_over_turns": [over] * n,
        "barge_in_stop_ms": [None] * n, "barge_in_stopped": [None] * n,
        "backchannels": [0] * n, "backchannel_stopped": [None] * n,
        "dead_air_max_s": rng.uniform(0.5, 4.0, n),
        "conduct_ai_disclosed": [True] * (n - 1) + [False],
        "conduct_prohibited": ["age: 'how old are you'"] + [""] * (n - 1),
        "conduct_prohibited_count": [1] + [0] * (n - 1),
        "conduct_accommodation_handled": [None] * n})


def test_percentiles_and_rates_match_an_independent_computation():
    lat = np.random.default_rng(7).gamma(4.0, 250.0, 57)
    g = rows("slow", lat, turns=3, over=1)
    g.loc[3, "response_latency_ms"] = None  # a call without a latency is left out
    tt = profile_turn_taking(g)
    kept = np.delete(lat, 3)
    assert tt.n_latency == 56
    assert tt.response_latency_p50_ms == pytest.approx(np.percentile(kept, 50), abs=1e-3)
    assert tt.response_latency_p95_ms == pytest.approx(np.percentile(kept, 95), abs=1e-3)
    assert tt.talk_over_rate == pytest.approx(57 / (3 * 57))
    assert tt.dead_air_max_s == pytest.approx(g["dead_air_max_s"].max())
    assert tt.ai_disclosed_rate == pytest.approx(56 / 57)
    assert tt.n_prohibited_calls == 1 and tt.prohibited_topics == {"age": 1}
    assert tt.n_barge_ins == 0 and tt.barge_in_stopped_rate is None
    ProfileTurnTaking.model_validate(tt.model_dump())  # the schema holds it


def test_a_simulated_profile_has_none():
    g = pd.DataFrame({"profile_id": ["p"], "status": ["ok"], "candidate_turns": [None]})
    assert profile_turn_taking(g) is None


def test_budgets_name_the_profile_and_the_budget_breached():
    fast = rows("baseline", [300.0, 400.0, 500.0])
    slow = rows("slow_speaker", [900.0, 1800.0, 2500.0], over=1)
    cand = Campaign.from_rows(pd.concat([fast, slow], ignore_index=True), "cand")
    policy = GatePolicy(budgets=BudgetPolicy(latency_p95_ms=1500, talk_over_rate=0.2))
    checks = {(c.check, c.subject): c for c in budget_checks(cand, policy)}
    lat = checks[("latency_p95_ms", "slow_speaker")]
    assert lat.blocked and lat.value == pytest.approx(np.percentile([900, 1800, 2500], 95))
    assert "slow_speaker" in lat.reason and "latency_p95_ms" in lat.reason
    assert "over the budget" in lat.reason
    over = checks[("talk_over_rate", "slow_speaker")]
    assert over.blocked and over.value == pytest.approx(0.5) and "talk_over_rate" in over.reason
    assert not checks[("latency_p95_ms", "baseline")].blocked
    assert not checks[("talk_over_rate", "baseline")].blocked
    assert budget_checks(cand, GatePolicy()) == []  # no budget: no line


def test_a_budget_on_a_simulated_campaign_is_not_computable():
    sim = Campaign.from_rows(pd.DataFrame({"profile_id": ["p"], "status": ["ok"],
                                           "candidate_turns": [None]}), "sim")
    (c,) = budget_checks(sim, GatePolicy(budgets=BudgetPolicy(latency_p95_ms=1000)))
    assert not c.computable and not c.blocked and "no response latency p95" in c.reason


def test_the_report_shows_a_short_table_per_profile():
    from types import SimpleNamespace

    from rig.report.taking import taking_html

    tt = profile_turn_taking(rows("slow_speaker", [900.0, 1800.0, 2500.0], over=1))
    page = taking_html({"baseline": SimpleNamespace(turn_taking=None),
                        "slow_speaker": SimpleNamespace(turn_taking=tt)})
    assert "slow_speaker" in page and "baseline" not in page
    assert f"{np.percentile([900, 1800, 2500], 95):.0f}" in page
    assert "age (1)" in page and "talk-over rate" in page
    assert taking_html({"baseline": SimpleNamespace(turn_taking=None)}) == ""


def test_the_gate_keeps_a_breached_budget_blocking():
    from rig.gate.evaluate import decide

    slow = Campaign.from_rows(rows("slow_speaker", [900.0, 1800.0, 2500.0]), "cand")
    policy = GatePolicy(budgets=BudgetPolicy(latency_p95_ms=1500))
    (c,) = decide(budget_checks(slow, policy), policy)
    assert c.blocked and c.check == "latency_p95_ms" and c.subject == "slow_speaker"
