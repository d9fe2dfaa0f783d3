"""The embedded judge (Qwen2.5-Coder-1.5B GGUF on llama.cpp) in both scoring modes: graded
scores, reproducibility whatever was graded before, the time budget, and `rig scorer
validate` with its figures recomputed from its own rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from scipy import stats
from typer.testing import CliRunner

from rig.answers import load_bank
from rig.cli import app
from rig.scorer.llamacpp import LlamaCppScorer

pytestmark = pytest.mark.integration
MINI = load_bank("answer_bank/mini")


def _answer(answer_id: str):
    return next((q, a) for q, a in MINI.answers() if a.answer_id == answer_id)


def test_expected_mode_grades_off_the_grid_and_truncation_costs_points():
    s = LlamaCppScorer(mode="expected")
    q, a = _answer("q01_strong")
    full = s.score(q, a.clean_text, 0)
    assert full.parse_status == "ok" and full.mode == "expected"
    assert 0 < full.score < 100 and full.score != round(full.score)
    assert len(full.criteria) == len(q.rubric)
    for c in full.criteria:
        assert sum(c.level_probs) == pytest.approx(1.0)
        assert 0 < c.top_prob <= 1 and c.entropy_bits >= 0
    words = a.clean_text.split()
    cut = s.score(q, " ".join(words[: len(words) // 3]), 0)
    assert cut.parse_status == "ok"
    assert cut.score < full.score


GRADE_ONE = """
import json, sys
from rig.answers import load_bank
from rig.scorer.llamacpp import LlamaCppScorer
q, a = next((q, a) for q, a in load_bank("answer_bank/mini").answers()
            if a.answer_id == sys.argv[2])
s = LlamaCppScorer(mode=sys.argv[1])
print(json.dumps([s.score(q, a.clean_text, 0).score, s.prefix_cache_stats()]))
"""


def test_a_grade_does_not_depend_on_what_was_graded_before(tmp_path):
    """llama.cpp's own prompt cache made the cut between cached and new tokens depend on the
    previous prompt, and with it the arithmetic; the fixed two-part evaluation does not. In
    the reference pipeline's mode (``expected``); ``argmax`` shares the evaluation and the
    snapshots, and its gradings are compared across workers and executors elsewhere."""
    mode = "expected"
    s = LlamaCppScorer(mode=mode)
    s._memo.clear()  # an earlier test may have graded these answers in this process
    ids = ["q01_border_lo", "q01_border_hi", "q03_weak"]

    def grade(answer_id: str) -> float:
        q, a = _answer(answer_id)
        return s.score(q, a.clean_text, 0).score

    first = {i: grade(i) for i in ids}
    s._memo.clear()  # grade again, in another order: the prompt cache holds other prefixes
    second = {i: grade(i) for i in reversed(ids)}
    assert first == second
    # q01's rubric was last evaluated before q03's: the second pass restored its snapshot
    assert s.prefix_cache_stats()["restored"] >= 1
    # a fresh process, with nothing graded before, gives the same grade; so does the next
    # one, which restores the rubric the first left on disk (rig.scorer.kv_store)
    kv = tmp_path / "kv"

    def fresh_process() -> tuple[float, dict]:
        out = subprocess.run([sys.executable, "-c", GRADE_ONE, mode, "q01_border_hi"],
                             env={**os.environ, "RIG_JUDGE_KV": str(kv)}, capture_output=True,
                             text=True, check=True, timeout=600)
        return tuple(json.loads(out.stdout.strip().splitlines()[-1]))

    evaluated, restored = fresh_process(), fresh_process()
    assert evaluated[1] == {"hits": 0, "misses": 1, "restored": 0}, evaluated
    assert restored[1] == {"hits": 1, "misses": 0, "restored": 1}, restored
    assert evaluated[0] == restored[0] == first["q01_border_hi"]


class _LoadedClock:
    """Stands for the ``time`` module in rig.scorer.base: every read is 1000 s after the
    last, as on a machine so loaded that any grading runs past any wall-clock budget."""

    def __init__(self) -> None:
        self.t = 0.0

    def _tick(self) -> float:
        self.t += 1000.0
        return self.t

    monotonic = perf_counter = _tick


def test_a_grading_under_heavy_load_gives_the_same_row_as_at_rest(monkeypatch):
    """Issue 29: the embedded judge is bounded by tokens, never by wall time; a finished
    grading under load (a clock past the pipeline's 120 s budget) is the grading at rest."""
    import dataclasses

    import rig.scorer.base as base
    from rig.pipeline import load_pipeline
    from rig.scorer.factory import build_scorer

    settings = load_pipeline("pipelines/reference.yaml").scorer
    assert settings.budget_s == 120 and settings.mode == "expected"
    q, a = _answer("q03_strong")
    at_rest = build_scorer(settings).score(q, a.clean_text, 0)
    monkeypatch.setattr(base, "time", _LoadedClock())
    base.forget_gradings()  # equal scorers share a memo: grade again under the loaded clock
    loaded = build_scorer(settings).score(q, a.clean_text, 0)
    assert loaded.seconds >= 1000  # the clock did jump past the budget
    assert at_rest.parse_status == loaded.parse_status == "ok"
    assert dataclasses.replace(loaded, seconds=0.0) == dataclasses.replace(at_rest, seconds=0.0)


def test_rig_scorer_validate_json_recomputes_from_its_rows(tmp_path):
    r = CliRunner().invoke(app, ["scorer", "validate", "--answers", "answer_bank/mini",
                                 "--modes", "expected", "--json", "--no-progress",
                                 "--out", str(tmp_path / "v")])
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    rows = [x for x in res["answers"] if x["mode"] == "expected"]
    assert len(rows) == 8 and all(x["parse_status"] == "ok" for x in rows)
    v = res["modes"]["expected"]["validity"]
    s = [x["score"] for x in rows]
    ref = [x["reference_score"] for x in rows]
    assert v["spearman"] == pytest.approx(stats.spearmanr(s, ref)[0])
    assert v["pearson"] == pytest.approx(stats.pearsonr(s, ref)[0])
    agree = sum((x["score"] >= x["cutoff"]) == (x["reference_score"] >= x["cutoff"])
                for x in rows)
    assert v["n_decisions_agree"] == agree
    assert v["distinct_scores"] == len({round(x, 1) for x in s})
    assert res["inter_grader"]["validity"]["n_answers"] == 8
    written = json.loads((tmp_path / "v" / "validity.json").read_text())
    assert written["modes"] == res["modes"]
    page = (tmp_path / "v" / "report.html").read_text()
    assert "<svg" in page and "ceiling" in page and "http" not in page.split("<svg")[0]
