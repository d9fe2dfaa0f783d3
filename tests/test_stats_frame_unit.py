"""The MetricFrame shape of the rate tables (rig.stats.frame), recomputed with pandas on the
masked subsets as fairlearn's own tests recompute its metrics."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rig.stats import GroupFrame, RateTable, scoring_rate_table, selection_rate_table

pytestmark = pytest.mark.unit


def _rows(seed: int = 3, n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    score = np.round(rng.normal(60, 10, n) - 5 * (g == "c"))
    return pd.DataFrame({"group": g, "score": score,
                         "decision": np.where(score >= 62, "advance", "reject")})


def _expected(df: pd.DataFrame, hit: pd.Series) -> tuple[dict[str, float], float]:
    return {str(k): float(v) for k, v in hit.groupby(df["group"]).mean().items()}, \
        float(hit.mean())


@pytest.mark.parametrize("kind", ["scoring", "selection"])
def test_overall_by_group_ratio_and_difference_match_pandas(kind: str) -> None:
    df = _rows()
    if kind == "scoring":
        table = scoring_rate_table(df, ["group"], min_share=0.0)
        hit = (df["score"] > df["score"].median()).astype(float)
    else:
        table = selection_rate_table(df, ["group"], min_share=0.0)
        hit = (df["decision"] == "advance").astype(float)
    by, overall = _expected(df, hit)
    top = max(by.values())
    assert isinstance(table, RateTable) and isinstance(table, GroupFrame)
    assert table.overall == pytest.approx(overall)
    assert table.values() == pytest.approx(by)
    assert list(table.values()) == sorted(by)
    assert table.group_max() == pytest.approx(top)
    assert table.group_min() == pytest.approx(min(by.values()))
    assert table.ratio() == pytest.approx({g: v / top for g, v in by.items()})
    assert table.difference() == pytest.approx({g: v - top for g, v in by.items()})
    assert table.ratio("to_overall") == pytest.approx({g: v / overall for g, v in by.items()})
    assert table.difference("to_overall") == pytest.approx(
        {g: v - overall for g, v in by.items()})
    # fairlearn's ratio(method="between_groups"): the smallest group over the largest
    assert min(table.ratio().values()) == pytest.approx(min(by.values()) / top)
    assert table.reference_group is not None and table.reference_group.rate == table.group_max()
    assert table.group("a") is not None and table.group("a").rate == pytest.approx(by["a"])
    assert table.group("nobody") is None


def test_the_ratio_is_the_rows_impact_ratio() -> None:
    table = scoring_rate_table(_rows(5), ["group"], min_share=0.0)
    assert table.ratio() == {c.category: c.impact_ratio for c in table.by_group}
    assert table.difference() == {c.category: c.difference for c in table.by_group}


def test_degenerate_data_keep_the_type_with_none_where_undefined() -> None:
    zero = scoring_rate_table(pd.DataFrame({"g": list("xxyy"), "score": [50.0] * 4}), ["g"],
                              min_share=0.0)
    assert isinstance(zero, RateTable)
    assert zero.ratio() == {"x": None, "y": None}
    assert zero.ratio("to_overall") == {"x": None, "y": None}  # overall rate 0
    assert zero.difference() == {"x": 0.0, "y": 0.0}
    failed = pd.DataFrame({"g": ["x", "y"], "score": [np.nan, np.nan]})
    none = scoring_rate_table(failed, ["g"], min_share=0.0)
    assert isinstance(none, RateTable) and none.overall is None and none.reference is None
    # no scored row: no category has a share, so every one is excluded, and reported
    assert [c.category for c in none.excluded] == ["x", "y"]
    assert none.values() == none.ratio() == none.difference("to_overall") == {}
    assert none.group_max() is None and none.group_min() is None
    assert none.reference_group is None


def test_an_unknown_method_is_refused() -> None:
    table = scoring_rate_table(_rows(), ["group"], min_share=0.0)
    with pytest.raises(ValueError, match="to_reference or to_overall"):
        table.ratio("between")  # type: ignore[arg-type]
