"""Flips toward and away from the reference decision, counted apart (issue 33, item 6;
docs/measurement.md, "Flip direction"), recomputed by hand; the summary, the verdict, the
console and the drill-down each show them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from rig.stats.flip_direction import flip_directions, reference_decision

pytestmark = pytest.mark.unit


def _rows() -> pd.DataFrame:
    # cutoff 60 everywhere; (reference grade, baseline score, profile score) per answer
    spec = {"a": (80, 70, 50),   # ref advance, base advance -> reject: away, qualified rejected
            "b": (40, 70, 50),   # ref reject, base advance -> reject: toward
            "c": (40, 50, 70),   # ref reject, base reject -> advance: away, unqualified advanced
            "d": (80, 70, 75),   # no flip
            "e": (None, 70, 50)}  # a flip without a reference grade
    rows = []
    for aid, (ref, b, p) in spec.items():
        for pid, score in (("baseline", b), ("slow", p)):
            rows.append({"answer_id": aid, "profile_id": pid, "score": float(score),
                         "parse_status": "ok", "cutoff": 60.0,
                         "reference_score": None if ref is None else float(ref)})
    return pd.DataFrame(rows)


def test_each_flip_is_toward_or_away_and_the_counts_add_up():
    d = flip_directions(_rows())["slow"]
    assert (d.n_pairs, d.n_flips, d.n_away, d.n_toward, d.n_no_reference) == (5, 4, 2, 1, 1)
    assert (d.n_away_qualified_rejected, d.n_away_unqualified_advanced) == (1, 1)
    assert d.away_rate == pytest.approx(2 / 5) and d.toward_rate == pytest.approx(1 / 5)
    assert d.away_ci95[0] < 0.4 < d.away_ci95[1]
    by = {f.answer_id: (f.reference_decision, f.direction) for f in d.flips}
    assert by == {"a": ("advance", "away"), "b": ("reject", "toward"),
                  "c": ("reject", "away"), "e": (None, "none")}


def test_reference_decision_is_the_grade_against_the_cutoff():
    assert reference_decision(60.0, 60.0) == "advance"
    assert reference_decision(59.9, 60.0) == "reject"
    assert reference_decision(None, 60.0) is None and reference_decision(float("nan"), 60) is None


def test_no_cutoff_no_directions():
    assert flip_directions(_rows().drop(columns=["cutoff"])) == {}


def _summary():
    from rig.campaign.summary import campaign_summary

    rows = _rows().assign(status="ok", question_id="q", tier="strong", repeat=0,
                          truncated=False, oracle_score=70.0)
    return campaign_summary(rows, campaign_id="c", pipeline_version="v", n_boot=100)


def test_summary_verdict_and_console_count_them_apart(capsys):
    from rig.cli.summary_lines import print_summary
    from rig.report.verdict import profile_sentence

    s = _summary()
    fd = s.profiles["slow"].flip_direction
    assert (fd.n_away, fd.n_toward, fd.n_no_reference) == (2, 1, 1)
    assert s.profiles["baseline"].flip_direction is None
    assert s.to_dict()["profiles"]["slow"]["flip_direction"]["flips"][1] == {
        "answer_id": "b", "baseline_decision": "advance", "profile_decision": "reject",
        "reference_decision": "reject", "direction": "toward"}
    words = ("4 of 5 decisions flip (2 away from the reference decision, 1 of them rejecting "
             "a qualified candidate, 1 toward it, 1 without a reference grade)")
    assert words in profile_sentence(s, "slow")
    print_summary(s, Path("out"))
    assert "slow: 4 of 5 decisions flip: 2 away from the reference decision" in \
        capsys.readouterr().out


def test_the_drilldown_shows_each_flips_reference_decision():
    from rig.drilldown import _summary_line, pair_entries

    s = _summary()
    rows = _rows().assign(status="ok", question_id="q", tier="strong", repeat=0)
    entries = {e["answer_id"]: e for e in pair_entries(s, rows)}
    assert entries["b"]["reference_decision"] == "reject"
    line = _summary_line(entries["b"], "baseline")
    assert "flipped: advance → reject; reference decision reject: toward it" in line
    assert "reference decision advance: away from it" in _summary_line(entries["a"],
                                                                         "baseline")
