"""The gate's fault check (rig.gate.faults): a release that stops hearing answers (its calls
kept out of the scores as faults, so the flip and impact checks never see them) is blocked,
per profile, by an exact McNemar test on the answers lost (issue 30)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rig.gate import GatePolicy, evaluate_gate, load_campaign, load_policy

pytestmark = pytest.mark.unit


def rows(lost: range = range(0)) -> pd.DataFrame:
    """40 answers under the baseline and profile "p", two identical repeats; the answers in
    ``lost`` were not heard under "p" (vad_missed, kept out, no score)."""
    out = []
    for i in range(40):
        s = 60.0 if i % 2 == 0 else 40.0
        for pid in ("baseline", "p"):
            for r in range(2):
                gone = pid == "p" and i in lost
                out.append({"answer_id": f"a{i:03d}", "question_id": f"q{i // 4}",
                            "tier": "borderline", "profile_id": pid, "repeat": r,
                            "status": "ok", "score": np.nan if gone else s,
                            "parse_status": "not_scored" if gone else "ok", "cutoff": 50.0,
                            "faults": "vad_missed" if gone else None, "fault_excluded": gone,
                            "pipeline_version": "v1"})
    return pd.DataFrame(out)


def run(tmp_path: Path, cand: pd.DataFrame, prev: pd.DataFrame, policy: GatePolicy):
    folders = []
    for name, r in (("cand", cand), ("prev", prev)):
        (tmp_path / name).mkdir()
        r.to_parquet(tmp_path / name / "calls.parquet")
        (tmp_path / name / "summary.json").write_text(json.dumps({"pipeline_version": "v1"}))
        folders.append(load_campaign(tmp_path / name))
    res = evaluate_gate(*folders, policy)
    return res, [c for c in res.checks if c.check == "fault_rate"]


def test_a_release_that_stops_hearing_answers_is_blocked(tmp_path: Path) -> None:
    res, (line,) = run(tmp_path, rows(range(0, 20)), rows(), GatePolicy(n_boot=0))
    assert line.subject == "p" and line.value == 0.5 and line.previous == 0.0
    assert line.detail["only_candidate_lost"] == 20 and line.blocked
    assert res.verdict == "block" and "more answers lost as faults" in res.reasons[0]
    # the answers lost are not in the flip check's pairs: it saw nothing wrong
    assert not any(c.blocked for c in res.checks if c.check == "flip_rate")


def test_the_same_faults_in_both_releases_do_not_block(tmp_path: Path) -> None:
    res, (line,) = run(tmp_path, rows(range(0, 6)), rows(range(0, 6)), GatePolicy(n_boot=0))
    assert line.value == line.previous == 0.15 and not line.blocked
    assert res.verdict == "pass"


def test_one_more_lost_answer_is_not_significant(tmp_path: Path) -> None:
    _, (line,) = run(tmp_path, rows(range(0, 1)), rows(), GatePolicy(n_boot=0))
    assert line.p_value == 0.5 and not line.blocked and "does not block" in line.reason


def test_min_rise_and_switching_it_off(tmp_path: Path) -> None:
    policy = GatePolicy(n_boot=0, faults={"min_rise": 0.6})
    _, (line,) = run(tmp_path, rows(range(0, 20)), rows(), policy)
    assert not line.blocked and line.threshold == 0.6
    off = GatePolicy(n_boot=0, faults={"enabled": False})
    (tmp_path / "off").mkdir()
    res, lines = run(tmp_path / "off", rows(range(0, 20)), rows(), off)
    assert lines == [] and res.verdict == "pass"


def test_rows_without_fault_columns_add_no_line(tmp_path: Path) -> None:
    plain = rows().drop(columns=["faults", "fault_excluded", "status"])
    _, lines = run(tmp_path, plain, plain, GatePolicy(n_boot=0))
    assert lines == []


def test_the_policy_file_reads_the_faults_block(tmp_path: Path) -> None:
    f = tmp_path / "gate.yaml"
    f.write_text("faults:\n  min_rise: 0.1\n")
    assert load_policy(f).faults.min_rise == 0.1
    f.write_text("faults:\n  min_rise: 2\n")
    with pytest.raises(Exception, match=r"gate\.yaml.*faults\.min_rise"):
        load_policy(f)


# -- the replay gate: turns version B heard nothing of ---------------------------------------

def _replay_summary(heard_a: int, heard_b: int) -> dict:
    overall = {"n_pairs": 10, "n_calls": 12, "mean_delta": 0.0, "mean_score_a": 60.0,
               "p": 1.0, "ci95": [-1.0, 1.0], "flip_rate": 0.0, "flips": 0, "n_decided": 10,
               "flips_advance_to_reject": 0, "flip_ci95": [0.0, 0.0],
               "heard_nothing_a": heard_a, "heard_nothing_b": heard_b}
    return {"overall": overall, "segments": {}}


def test_a_replay_where_b_hears_fewer_answers_is_blocked() -> None:
    from rig.gate.replay import replay_checks

    checks = replay_checks(_replay_summary(0, 2), GatePolicy())
    (line,) = [c for c in checks if c.check == "replay_heard_nothing"]
    assert line.blocked and line.value == 2 and line.previous == 0
    assert "were not scored" in line.reason
    # the paired figures saw nothing: the two unheard turns are not paired
    assert not any(c.blocked for c in checks if c.check != "replay_heard_nothing")


def test_a_replay_with_the_same_unheard_turns_passes_and_the_limit_applies() -> None:
    from rig.gate.replay import replay_checks

    (same,) = [c for c in replay_checks(_replay_summary(3, 3), GatePolicy())
               if c.check == "replay_heard_nothing"]
    assert not same.blocked
    lenient = GatePolicy(replay={"max_heard_nothing_rise": 2})
    (line,) = [c for c in replay_checks(_replay_summary(0, 2), lenient)
               if c.check == "replay_heard_nothing"]
    assert not line.blocked and line.threshold == 2
