"""calibration.json (rig.scorer.calibrated): built from a validity folder's answers.csv (a
synthetic one here), each question scored by the map fitted without it, the full map for
questions it never saw, and the file's named errors."""

from __future__ import annotations

import json

import pytest
from test_calibration_unit import bank

from rig.errors import ConfigError
from rig.scorer.calibrated import build_calibration, load_calibration
from rig.stats.calibration import leave_one_question_out

pytestmark = pytest.mark.unit


def validity(tmp_path, repeats: int = 2):
    d = bank(4)
    rows = []
    for r in range(repeats):  # two gradings per answer: averaged per answer
        for i, row in d.iterrows():
            rows.append({**row, "mode": "expected", "repeat": r, "answer_id": f"a{i}",
                         "score": row.score + (1 if r else -1)})
    import pandas as pd

    pd.DataFrame(rows).to_csv(tmp_path / "answers.csv", index=False)
    (tmp_path / "validity.json").write_text(json.dumps({"pipeline_version": "ref-abc",
                                                        "answers_path": "answer_bank/x"}))
    return d


@pytest.mark.parametrize("method", ["linear", "isotonic"])
def test_held_out_maps_score_out_of_sample(tmp_path, method):
    d = validity(tmp_path)
    cal = build_calibration(tmp_path, method)
    assert cal.judge_pipeline_version == "ref-abc" and cal.method == method
    fig, pred = leave_one_question_out(d, method)  # the repeat-averaged score is d.score
    assert cal.out_of_sample["after"] == pytest.approx(fig["after"])
    for _, row in pred.iterrows():
        assert cal.apply(row.question_id, row.score) == pytest.approx(row.calibrated)
    assert cal.apply("never_seen", 70.0) == pytest.approx(
        float(cal.all.calibration().apply(70.0)))
    path = tmp_path / "calibration.json"
    path.write_text(cal.model_dump_json())
    assert load_calibration(path) == cal


def test_errors_name_the_file_and_field(tmp_path):
    with pytest.raises(ConfigError, match=r"answers\.csv"):
        build_calibration(tmp_path)
    validity(tmp_path)
    with pytest.raises(ConfigError, match="no gradings in mode"):
        build_calibration(tmp_path, mode="argmax")
    with pytest.raises(ConfigError, match="no such file"):
        load_calibration(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"method": "cubic"}))
    with pytest.raises(ConfigError, match=r"bad\.json"):
        load_calibration(bad)


def test_calibrated_scorer_maps_the_score_and_keeps_the_judges_points(tmp_path):
    from rig.answers import load_bank
    from rig.scorer.calibrated import calibrated_scorer
    from rig.scorer.fake import FakeScorer

    validity(tmp_path)
    cal = build_calibration(tmp_path, "linear")
    q, a = load_bank("answer_bank/mini").answers()[0]
    inner = FakeScorer(mode="expected")
    raw = inner.score(q, a.clean_text, 0)
    got = calibrated_scorer(FakeScorer(mode="expected"), cal).score(q, a.clean_text, 0)
    assert got.score == pytest.approx(cal.apply(q.question_id, raw.score))
    assert got.score != pytest.approx(raw.score)
    assert got.criteria == raw.criteria and got.mode == "expected"
    assert sum(c.points for c in got.criteria) == pytest.approx(raw.score)


def test_cli_pipeline_version_and_factory(tmp_path):
    from typer.testing import CliRunner

    from rig.cli import app
    from rig.pipeline import load_pipeline, pipeline_version
    from rig.scorer.factory import _calibrated
    from rig.scorer.fake import FakeScorer

    validity(tmp_path)
    out = tmp_path / "calibration.json"
    run = CliRunner().invoke(app, ["scorer", "calibrate", str(tmp_path), "--out", str(out)])
    assert run.exit_code == 0, run.output
    assert "decision agreement" in run.output and out.is_file()
    bad = CliRunner().invoke(app, ["scorer", "calibrate", str(tmp_path), "--out", str(out),
                                   "--method", "cubic"])
    assert bad.exit_code == 2 and "linear or isotonic" in bad.output

    ref = load_pipeline("pipelines/reference.yaml")
    assert "calibration" not in ref.model_dump(exclude_none=True)["scorer"]
    cal = ref.model_copy(update={"scorer": ref.scorer.model_copy(
        update={"calibration": str(out)})})
    v1 = pipeline_version(cal)
    assert v1 != pipeline_version(ref)
    out.write_text(out.read_text().replace('"n_fit"', ' "n_fit"', 1))  # other bytes
    assert pipeline_version(cal) != v1
    wrapped = _calibrated(FakeScorer(mode="expected"), cal.scorer)
    assert wrapped.name == "fake+calibrated"
    assert _calibrated(FakeScorer(), ref.scorer).name == "fake"
