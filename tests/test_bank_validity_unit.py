"""The judge's bank-wide verdict beside a campaign's own figure (issue 33, item 4): kept by
`rig scorer validate`, found by bank, version, pipeline version and mode, else the shipped
one, else "never run"; stated in summary.json, the report's verdict and the console."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rig.scorer.bank_validity as bv
from rig.campaign.schema_validity import BankJudgeValidity

pytestmark = pytest.mark.unit

THRESHOLDS = {"min_spearman": 0.7, "min_decision_agreement": 0.8, "min_answers": 10}


def _result(verdict="low", spearman=0.77, agreement=0.725, n=40) -> dict:
    v = {"verdict": verdict, "spearman": spearman, "decision_agreement": agreement,
         "n_answers": n, "thresholds": THRESHOLDS, "not_computable": {}}
    return {"bank": "core", "modes": {"expected": {"validity": v}},
            "pipeline_versions": {"expected": "pv1"}}


def test_a_validation_is_kept_and_found_by_bank_version_pipeline_and_mode(tmp_path,
                                                                            monkeypatch):
    monkeypatch.setenv("RIG_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(bv, "_shipped", lambda: [])
    assert not bv.lookup("core", 1, "pv1", "expected").found
    [path] = bv.record(_result(), bank_version=1)
    assert json.loads(path.read_text())["reason"] == "decision agreement 0.725 below 0.8"
    b = bv.lookup("core", 1, "pv1", "expected")
    assert (b.found, b.source, b.verdict, b.n_answers) == (True, "cache", "low", 40)
    for other in (("core", 2, "pv1", "expected"), ("core", 1, "pv2", "expected"),
                  ("core", 1, "pv1", "argmax")):  # another bank version, judge or mode
        assert not bv.lookup(*other).found
    said = bv.bank_sentence(b)
    assert said.startswith("On the whole bank 'core' (40 answers; this machine's last "
                           "`rig scorer validate`, pipeline version pv1, ")
    assert said.endswith("): low, decision agreement 0.725 below 0.8.")


def test_never_run_says_how_to_measure_it(tmp_path, monkeypatch):
    monkeypatch.setenv("RIG_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(bv, "_shipped", lambda: [])
    b = bv.lookup("core", 1, "pv9", "expected")
    assert (b.found, b.source, b.verdict) == (False, "none", None)
    assert "never validated on the whole bank under pipeline version pv9: run `rig scorer " \
           "validate" in bv.bank_sentence(b)


def test_the_shipped_verdict_is_used_when_this_machine_has_none(tmp_path, monkeypatch):
    monkeypatch.setenv("RIG_CACHE_DIR", str(tmp_path))
    shipped = bv.entry(_result(), 1, "expected", "pv1")
    monkeypatch.setattr(bv, "_shipped", lambda: [shipped])
    b = bv.lookup("core", 1, "pv1", "expected")
    assert b.source == "shipped" and "the verdict shipped with rig" in bv.bank_sentence(b)


def test_reasons_name_the_threshold():
    ok = {"verdict": "adequate", "spearman": 0.8, "decision_agreement": 0.9,
          "thresholds": THRESHOLDS}
    assert bv.verdict_reason(ok) == ("Spearman 0.800 >= 0.7 and decision agreement 0.900 "
                                     ">= 0.8")
    nm = {"verdict": "not_measured", "not_computable": {"verdict": "5 answers"}}
    assert bv.verdict_reason(nm) == "5 answers"


def test_the_report_and_console_state_it_beside_the_campaigns_figure(capsys):
    from summaries import real_summary, summary_like

    from rig.cli.summary_lines import print_summary
    from rig.report.verdict import validity_sentence

    b = BankJudgeValidity(found=True, bank="core", bank_version=1, pipeline_version="pv1",
                          scoring_mode="expected", source="shipped", verdict="low",
                          reason="decision agreement 0.725 below 0.8", n_answers=40,
                          spearman=0.77, decision_agreement=0.725,
                          measured_at="2026-12-03T10:00:00+00:00")
    s = summary_like(real_summary(), judge_validity_bank=b)
    said = validity_sentence(s)
    assert said.startswith("Judge validity: ")
    assert said.endswith("On the whole bank 'core' (40 answers; the verdict shipped with rig, "
                         "pipeline version pv1, 2026-12-03): low, decision agreement 0.725 "
                         "below 0.8.")
    print_summary(s, Path("out"))
    assert "judge validity: On the whole bank 'core'" in capsys.readouterr().out
def test_the_shipped_file_is_for_the_shipped_bank_and_pipeline():
    from rig.answers import load_bank
    from rig.paths import DEFAULTS
    from rig.pipeline import load_pipeline, pipeline_version

    pipe = load_pipeline(DEFAULTS.pipelines / "reference.yaml")
    meta = load_bank(DEFAULTS.answer_bank / "core").meta
    b = bv.lookup(meta.name, meta.version, pipeline_version(pipe), pipe.scorer.mode)
    # the shipped entry, unless this machine validated since
    assert b.found and b.verdict in ("adequate", "low") and b.n_answers >= 10


