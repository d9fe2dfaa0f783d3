"""A smaller run of benchmarks/stats_simulation.py: coverage and the gate's false blocks.

The full benchmark runs 1,000 campaigns and 1,000 releases; here 150 campaigns (900 intervals
per kind) and 50 releases, with bands wide enough for that size (about 3 standard errors).
"""

from __future__ import annotations

import pytest

from rig.stats.simulation import Design, coverage_study, gate_study, simulate_campaign

pytestmark = pytest.mark.unit


def test_simulated_campaign_has_the_calls_parquet_columns() -> None:
    d = Design()
    rows = simulate_campaign(d, seed=1)
    assert len(rows) == d.n_answers * (len(d.profile_deltas) + 1) * d.repeats == 672
    for col in ("answer_id", "question_id", "tier", "profile_id", "repeat", "score",
                "parse_status", "cutoff", "decision", "wer", "truncated"):
        assert col in rows.columns
    assert rows["score"].isna().sum() == (rows["parse_status"] != "ok").sum()


def test_intervals_cover_the_true_delta() -> None:
    cov = coverage_study(150, seed=31, n_boot=1000)
    assert cov.n_missing == 0
    assert 0.925 <= cov.t <= 0.975  # exact for normal deltas: 95%
    assert 0.91 <= cov.boot <= 0.97  # percentile bootstrap runs a little narrow at 32 pairs


def test_bootstrap_runs_narrow_at_8_pairs_where_t_does_not() -> None:
    # rig.stats.intervals.SMALL_SAMPLE_PAIRS quotes the full benchmark: 88.3% against 94.7%
    cov = coverage_study(150, Design(n_questions=2), seed=41, n_boot=1000)
    assert cov.n_missing == 0
    assert 0.85 <= cov.boot <= 0.915  # about 3 standard errors around 88.3%
    assert 0.925 <= cov.t <= 0.975
    assert cov.boot < cov.t


def test_gate_rarely_blocks_a_release_that_changed_nothing() -> None:
    study = gate_study(50, seed=77)
    assert study.block_rate <= 0.05


def test_gate_blocks_a_large_regression() -> None:
    study = gate_study(10, seed=78, extra_effects={"long_pauses": -25.0})
    assert study.block_rate >= 0.7
