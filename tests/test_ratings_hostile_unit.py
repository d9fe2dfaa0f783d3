"""`rig ratings import` and the collect page's writer against a hostile user: two processes
writing ratings.jsonl at once lose nothing and double nothing, a CSV row longer than its
header, a torn or damaged ratings.jsonl, odd numbers and ids; each is refused by name and
nothing is written."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import pytest
from test_ratings_import_unit import campaign, write

from rig.errors import ConfigError
from rig.ratings.importer import DuplicateRating, import_ratings
from rig.ratings.model import read_ratings

pytestmark = pytest.mark.unit


def _import_at_once(args: tuple[str, str]) -> str:
    file, folder = args
    _BARRIER.wait(timeout=120)  # a lost process fails the test instead of hanging it
    try:
        import_ratings(file, folder)
        return "ok"
    except DuplicateRating as exc:
        return str(exc)


_BARRIER = None


def _init(barrier) -> None:
    global _BARRIER
    _BARRIER = barrier


def _race(files: list[Path], out: Path) -> list[str]:
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(len(files))
    with ctx.Pool(len(files), initializer=_init, initargs=(barrier,)) as pool:
        # bounded: a lost worker fails the test instead of hanging the run
        return pool.map_async(_import_at_once,
                              [(str(f), str(out)) for f in files]).get(timeout=300)


def test_imports_at_once_from_several_processes_lose_nothing(tmp_path):
    out = campaign(tmp_path)
    files = [write(tmp_path, f"r{i}.jsonl",
                   f'{{"call_id": "c{i % 3}", "rater": "r{i}", "total": {i}}}\n')
             for i in range(6)]
    assert _race(files, out) == ["ok"] * 6
    assert sorted(r.rater_id for r in read_ratings(out)) == [f"r{i}" for i in range(6)]


def test_one_rater_one_unit_from_two_processes_is_kept_once(tmp_path):
    out = campaign(tmp_path)
    files = [write(tmp_path, f"same{i}.jsonl", f'{{"call_id": "c0", "rater": "ann", '
                   f'"total": {50 + i}}}\n') for i in range(4)]
    results = _race(files, out)
    assert results.count("ok") == 1
    assert all("line 1: rater 'ann' already rated call 'c0'" in r
               for r in results if r != "ok")
    assert len(read_ratings(out)) == 1


def test_a_csv_row_longer_than_its_header_is_refused(tmp_path):
    out = campaign(tmp_path)
    f = write(tmp_path, "long.csv", "call_id,rater,total\nc0,ann,80\nc1,bob,70,99\n")
    with pytest.raises(ConfigError, match=r"long.csv: line 3: 1 cell\(s\) more than the "
                       r"header's 3 \(got \['99'\]\)"):
        import_ratings(f, out)
    assert read_ratings(out) == []


def test_a_torn_ratings_file_stops_the_import_and_is_left_as_it_was(tmp_path):
    out = campaign(tmp_path)
    import_ratings(write(tmp_path, "a.jsonl", '{"call_id": "c0", "rater": "a", "total": 5}\n'),
                   out)
    torn = (out / "ratings.jsonl").read_text() + '{"rater_id": "b", "unit_ki'
    (out / "ratings.jsonl").write_text(torn)
    f = write(tmp_path, "b.jsonl", '{"call_id": "c1", "rater": "b", "total": 5}\n')
    with pytest.raises(ConfigError, match=r"ratings.jsonl: line 2: not a JSON rating"):
        import_ratings(f, out)
    assert (out / "ratings.jsonl").read_text() == torn


@pytest.mark.parametrize(("row", "says"), [
    ('{"call_id": "c0", "rater": "a", "total": "nan"}', "line 1: total: not a number"),
    ('{"call_id": "c0", "rater": "a", "total": "inf"}', "line 1: total: not a number"),
    ('{"call_id": "c0", "rater": "a", "total": true}', "line 1: total: not a number"),
    ('{"call_id": "c0", "rater": "a", "total": -0.5}', "line 1: total: out of range 0-100"),
    ('{"call_id": "c0", "rater": "a", "total": 1e3}', "line 1: total: out of range 0-100"),
    ('{"call_id": "c0", "rater": "   ", "total": 5}', "line 1: rater: missing"),
    ('{"call_id": "../c0", "rater": "a", "total": 5}', "line 1: call_id: unknown"),
    ('{"call_id": ["c0"], "rater": "a", "total": 5}', "line 1: call_id: unknown"),
    ('{"answer_id": "q01_strong", "rater": "a", "points": {"situation": 20, '
     '"constructive_approach": 36, "outcome": 20, "reflection": 15}}',
     "line 1: points.constructive_approach: out of range 0-35"),
    ('{"answer_id": "q01_strong", "rater": "a", "points": {"situation": 20}}',
     "line 1: points: the rubric does not match"),
    ('{"answer_id": "q01_strong", "rater": "a", "total": 5, "rubric_version": 2}',
     "line 1: rubric_version: does not match"),
])
def test_hostile_values_are_named_and_nothing_written(tmp_path, row, says):
    out = campaign(tmp_path)
    with pytest.raises(ConfigError, match=says.replace("(", r"\(").replace(")", r"\)")):
        import_ratings(write(tmp_path, "h.jsonl", row + "\n"), out)
    assert not (out / "ratings.jsonl").exists()


def test_csv_header_naming_a_column_twice_is_refused(tmp_path):
    """csv.DictReader kept the last of two 'points.situation' cells silently (the first
    rater's 25 became 0); a JSON object naming a key twice was already refused."""
    out = campaign(tmp_path)
    f = write(tmp_path, "dup.csv", "call_id,rater,points.situation,points.situation,"
              "points.constructive_approach,points.outcome,points.reflection\n"
              "c0,ann,18,0,30,20,15\n")
    with pytest.raises(ConfigError, match=r"names 'points\.situation' twice"):
        import_ratings(f, out)
    assert not (out / "ratings.jsonl").exists()


def test_rater_and_rater_id_both_given_is_refused(tmp_path):
    """'rater' was taken and a different 'rater_id' dropped without a word."""
    out = campaign(tmp_path)
    f = write(tmp_path, "both.csv", "call_id,rater,rater_id,total\nc0,ann,bob,50\n")
    with pytest.raises(ConfigError, match="rater or rater_id, not both"):
        import_ratings(f, out)
    assert not (out / "ratings.jsonl").exists()


def test_rig_errors_survive_pickling_across_processes():
    """ConfigError(path, field, problem) did not unpickle (pickle calls cls(*args)), so one
    raised in a pool worker killed the pool's result thread and its map hung: the race test
    above hung for good when a slow process found the rating in ratings.jsonl before the
    lock and raised a plain ConfigError (now DuplicateRating)."""
    import pickle

    from rig.calls.run.options import OptionConflict
    from rig.errors import ModelMissingError
    from rig.stats.rows import RowsError

    for err in (ConfigError("f.csv", "score", "bad", "x", True), DuplicateRating("a", "b", "c"),
                RowsError("r.csv", "", "empty"), OptionConflict("--port", "needs x"),
                ModelMissingError("m", ["pkg"])):
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and str(back) == str(err)
        assert back.__dict__ == err.__dict__
