"""The prediction-powered share advanced per profile (rig.ratings.agreement.profile_ppi) and
the note on imported ratings: the figures recomputed from rig.stats.ppi on arrays built by
hand, decisions on repeat-averaged grades."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rig.ratings.agreement import ppi_sample_note, profile_ppi
from rig.ratings.model import Rating
from rig.stats.ppi import ppi_mean

pytestmark = pytest.mark.unit


def _frame() -> pd.DataFrame:
    """12 answers x 2 repeats under one profile; answers 0-7 rated, 8-11 not."""
    rng = np.random.default_rng(5)
    rows = []
    for a in range(12):
        truth = float(rng.uniform(30, 90))
        for rep in range(2):
            rows.append({"profile_id": "p", "answer_id": f"a{a}", "cutoff": 60.0,
                         "score": truth + 8 + float(rng.normal(0, 6)),
                         "human": truth if a < 8 else np.nan, "repeat": rep})
    return pd.DataFrame(rows)


def test_the_share_advanced_is_ppi_on_the_repeat_averaged_decisions():
    d = _frame()
    _, delta, adv = profile_ppi(d, "p", "p")
    assert delta is None  # the baseline has no delta
    per = d.groupby("answer_id").agg(f=("score", "mean"), y=("human", "mean"))
    f = 100.0 * (per["f"] >= 60).to_numpy(float)
    rated = per["y"].notna().to_numpy()
    y = 100.0 * (per["y"][rated] >= 60).to_numpy(float)
    want = ppi_mean(y, f[rated], f[~rated])
    assert adv["estimate"] == pytest.approx(want.estimate)
    assert adv["ci95"] == pytest.approx(want.ci95)
    assert adv["n_rated"] == 8 and adv["n_unrated"] == 4
    assert adv["judge_only"] == pytest.approx(f.mean())


def _r(source: str) -> Rating:
    return Rating(rater_id="r", unit_kind="call", unit_id="c", question_id="q",
                  rubric_version=1, rubric_hash="h", score=50.0, source=source)


def test_imported_ratings_are_named_in_the_note_and_collected_ones_are_not():
    assert ppi_sample_note([_r("collect"), _r("collect")]) is None
    note = ppi_sample_note([_r("collect"), _r("import:hard_cases.csv")])
    assert note.startswith("1 of 2 ratings were imported (hard_cases.csv)")
    assert "random sample" in note
