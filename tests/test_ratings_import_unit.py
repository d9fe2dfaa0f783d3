"""`rig ratings import`: CSV and JSON lines into a campaign folder's ratings.jsonl, checked
against its calls and the bank's rubrics; every problem names file, line, field and value,
and a refused import writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rig.cli import app
from rig.errors import ConfigError
from rig.ratings.importer import DuplicateRating, import_ratings
from rig.ratings.model import read_ratings

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
Q01 = ["situation", "constructive_approach", "outcome", "reflection"]


def campaign(tmp_path: Path) -> Path:
    out = tmp_path / "camp"
    out.mkdir()
    (out / "campaign.json").write_text(json.dumps(
        {"campaign_id": "c", "answers_path": str(ROOT / "answer_bank" / "mini")}))
    rows = [{"call_id": f"c{i}", "answer_id": a, "question_id": q, "profile_id": p}
            for i, (a, q, p) in enumerate([("q01_strong", "q01_conflict", "baseline"),
                                           ("q01_weak", "q01_conflict", "noisy"),
                                           ("q03_strong", "q03_hard_bug", "baseline")])]
    (out / "calls.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_csv_with_points_and_totals(tmp_path):
    out = campaign(tmp_path)
    head = "call_id,answer_id,rater," + ",".join(f"points.{c}" for c in Q01) + ",total\n"
    f = write(tmp_path, "r.csv", head + "c0,,ann,18,30,20,15,\n,q01_weak,bob,,,,,22.5\n")
    added = import_ratings(f, out)
    assert [r.score for r in added] == [83.0, 22.5]
    back = read_ratings(out)
    assert back == added
    assert back[0].unit_kind == "call" and back[0].answer_id == "q01_strong"
    assert back[0].points == {"situation": 18, "constructive_approach": 30, "outcome": 20,
                              "reflection": 15}
    assert back[1].unit_kind == "answer" and back[1].points is None
    assert back[0].source == "import:r.csv"


def test_jsonl_appends_to_what_is_there(tmp_path):
    out = campaign(tmp_path)
    import_ratings(write(tmp_path, "a.jsonl", '{"call_id": "c2", "rater": "ann", "total": 70}\n'),
                   out)
    import_ratings(write(tmp_path, "b.jsonl", '{"call_id": "c2", "rater": "bob", "points": '
                         '{"problem_definition": 20, "method": 30, "resolution": 20, '
                         '"prevention": 5}, "rubric_version": 1, "could_not_hear": false}\n'),
                   out)
    assert [(r.rater_id, r.score) for r in read_ratings(out)] == [("ann", 70), ("bob", 75)]


@pytest.mark.parametrize("line, where, says", [
    ('{"call_id": "nope", "rater": "a", "total": 50}', "line 1: call_id", "unknown"),
    ('{"answer_id": "q09", "rater": "a", "total": 50}', "line 1: answer_id", "unknown"),
    ('{"call_id": "c0", "rater": "a", "total": 101}', "line 1: total", "out of range 0-100"),
    ('{"call_id": "c0", "rater": "a", "points": {"situation": 21, "constructive_approach": 1,'
     ' "outcome": 1, "reflection": 1}}', "line 1: points.situation", "out of range 0-20"),
    ('{"call_id": "c0", "rater": "a", "points": {"situation": 2}}', "line 1: points",
     "rubric does not match"),
    ('{"call_id": "c0", "rater": "a", "points": {"situation": 2, "constructive_approach": 1,'
     ' "outcome": 1, "reflection": 1, "method": 3}}', "line 1: points", "unknown ['method']"),
    ('{"call_id": "c0", "rater": "a", "total": 50, "rubric_version": 2}',
     "line 1: rubric_version", "does not match"),
    ('{"call_id": "c0", "total": 50}', "line 1: rater", "missing"),
    ('{"call_id": "c0", "answer_id": "q01_weak", "rater": "a", "total": 5}', "line 1",
     "exactly one"),
    ('{"call_id": "c0", "rater": "a"}', "line 1", "no grade"),
    ('{"call_id": "c0", "rater": "a", "total": "N/A"}', "line 1: total", "not a number"),
    ('{"call_id": "c0", "rater": "a", "score": 5}', "line 1: score", "unknown field"),
])
def test_named_errors_and_nothing_written(tmp_path, line, where, says):
    out = campaign(tmp_path)
    # a good first line: the bad second one still stops the whole file
    f = write(tmp_path, "r.jsonl", '{"call_id": "c1", "rater": "ok", "total": 10}\n' + line + "\n")
    where = where.replace("line 1", "line 2")
    with pytest.raises(ConfigError) as e:
        import_ratings(f, out)
    assert str(e.value).startswith(f"{f}: {where}: ") and says in str(e.value)
    assert not (out / "ratings.jsonl").exists()


def test_a_rater_rates_a_unit_once(tmp_path):
    out = campaign(tmp_path)
    f = write(tmp_path, "r.jsonl", '{"call_id": "c0", "rater": "a", "total": 50}\n')
    import_ratings(f, out)
    # a rating already in ratings.jsonl, found before the lock: a DuplicateRating too
    with pytest.raises(DuplicateRating, match="line 1: rater 'a' already rated call 'c0'"):
        import_ratings(f, out)
    two = write(tmp_path, "two.csv", "call_id,rater,total\nc1,a,5\nc2,a,6\nc1,a,7\n")
    with pytest.raises(ConfigError, match=r"two.csv: line 4: .*already rated call 'c1' \(line 2"):
        import_ratings(two, out)
    assert len(read_ratings(out)) == 1  # the refused file added nothing


def test_cli_import(tmp_path):
    out = campaign(tmp_path)
    f = write(tmp_path, "r.csv", "call_id,rater,total\nc0,ann,80\n")
    r = CliRunner().invoke(app, ["ratings", "import", str(f), "--into", str(out), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["added"] == 1
    bad = write(tmp_path, "bad.csv", "call_id,rater,total\nzz,ann,80\n")
    r = CliRunner().invoke(app, ["ratings", "import", str(bad), "--into", str(out)])
    assert r.exit_code == 2 and "line 2: call_id" in r.stderr
