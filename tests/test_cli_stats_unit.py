"""`rig stats` and `rig gate` through typer's CliRunner: output, --json, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from rig.cli.gate import gate_command
from rig.cli.stats import FIGURES, stats_app
from rig.stats import paired_by_profile
from rig.stats.simulation import Design, simulate_campaign

pytestmark = pytest.mark.unit

app = typer.Typer()
app.add_typer(stats_app, name="stats")
app.command("gate")(gate_command)
runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    res = runner.invoke(app, [str(a) for a in args])
    return res.exit_code, res.stdout, res.stderr


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    return simulate_campaign(Design(), seed=5)


@pytest.fixture
def files(tmp_path: Path, rows: pd.DataFrame) -> dict[str, Path]:
    pq, csv = tmp_path / "calls.parquet", tmp_path / "calls.csv"
    rows.to_parquet(pq)
    rows.to_csv(csv, index=False)
    return {"parquet": pq, "csv": csv}


def test_help_explains_every_figure() -> None:
    code, out, _ = run("stats", "--help")
    assert code == 0
    flat = " ".join(out.split())
    for name, _text in FIGURES:
        assert name in flat
    for cmd in ("sample-size", "paired", "impact", "ztest", "equivalence"):
        assert cmd in out


def test_sample_size_worked_example() -> None:
    code, out, _ = run("stats", "sample-size", "--sd", "6", "--delta", "3", "--profiles", "6",
                       "--repeats", "3")
    assert code == 0
    assert "31.4" in out and "32" in out and "224" in out and "672" in out
    code, out, _ = run("stats", "sample-size", "--sd", "6", "--delta", "3", "--profiles", "6",
                       "--repeats", "3", "--json")
    data = json.loads(out)
    assert data["n_answers"] == 32 and data["calls_per_run"] == 224
    assert data["calls_total"] == 672 and round(data["n_exact"], 1) == 31.4


def test_sample_size_bad_input_exits_2() -> None:
    code, _, err = run("stats", "sample-size", "--sd", "0", "--delta", "3")
    assert code == 2 and "sd must be > 0" in err


def test_ztest_worked_example_flags_and_exits_1() -> None:
    code, out, _ = run("stats", "ztest", "56%", "540", "38%", "120")
    assert code == 1
    assert "0.68" in out and "3.57" in out
    code, out, _ = run("stats", "ztest", "56%", "540", "38%", "120", "--json")
    data = json.loads(out)
    assert code == 1 and round(data["impact_ratio"], 2) == 0.68
    assert data["ztest"]["z"] == pytest.approx(3.5724, abs=1e-3)
    assert data["flagged"] is True


def test_ztest_counts_unpooled_and_degenerate() -> None:
    code, out, _ = run("stats", "ztest", "45", "100", "50", "100", "--unpooled", "--json")
    data = json.loads(out)
    assert code == 0 and data["ztest"]["pooled"] is False and data["flagged"] is False
    code, out, _ = run("stats", "ztest", "0", "50", "0", "60")
    assert code == 0 and "not computable" in out and "both rates are 0" in out
    code, out, _ = run("stats", "ztest", "0", "50", "0", "60", "--json")
    data = json.loads(out)
    assert data["impact_ratio"] is None and data["ztest"]["z"] is None
    code, _, err = run("stats", "ztest", "60", "50", "1", "60")
    assert code == 2 and "0 <= x <= n" in err
    code, _, err = run("stats", "ztest", "45", "100", "abc", "100")
    assert code == 2 and "X2" in err and "'abc'" in err


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_paired_table_and_json(files: dict[str, Path], rows: pd.DataFrame, fmt: str) -> None:
    code, out, _ = run("stats", "paired", files[fmt])
    assert code == 0 and "long_pauses" in out and "noise floor" in out
    code, out, _ = run("stats", "paired", files[fmt], "--json", "--n-boot", "500")
    assert code == 0
    data = json.loads(out)
    expected = paired_by_profile(rows, n_boot=500)
    for p, row in expected.items():
        got = data["profiles"][p]
        assert got["n_pairs"] == row.n_pairs
        assert got["mean_delta"] == pytest.approx(row.mean_delta)
        if row.ci95 is not None:
            assert got["ci95"] == pytest.approx(list(row.ci95))


def test_paired_with_mapped_column_names(tmp_path: Path, rows: pd.DataFrame) -> None:
    f = tmp_path / "export.csv"
    rows.rename(columns={"profile_id": "condition", "score": "total"}).to_csv(f, index=False)
    code, out, _ = run("stats", "paired", f, "--col", "profile_id=condition", "--col",
                       "score=total", "--json")
    assert code == 0 and "long_pauses" in json.loads(out)["profiles"]
    code, _, err = run("stats", "paired", f, "--col", "score=nonexistent")
    assert code == 2 and str(f) in err and "nonexistent" in err
    code, _, err = run("stats", "paired", f, "--col", "score")
    assert code == 2 and "RIG_NAME=FILE_NAME" in err and "'score'" in err


def test_paired_bad_input_names_file_column_value(tmp_path: Path, rows: pd.DataFrame) -> None:
    code, _, err = run("stats", "paired", tmp_path / "missing.parquet")
    assert code == 2 and "missing.parquet: file not found" in err
    f = tmp_path / "bad.csv"
    bad = rows.copy()
    bad["score"] = bad["score"].astype(object)
    bad.loc[4, "score"] = "n/a?"
    bad.to_csv(f, index=False)
    code, _, err = run("stats", "paired", f)
    assert code == 2 and f"{f}: score: not a number in row 5 (got 'n/a?')" in err
    g = tmp_path / "nocol.csv"
    rows.drop(columns=["answer_id"]).to_csv(g, index=False)
    code, _, err = run("stats", "paired", g)
    assert code == 2 and f"{g}: answer_id: column missing" in err
    code, _, err = run("stats", "paired", g.with_suffix(".txt").resolve())
    assert code == 2
    code, _, err = run("stats", "paired", f.parent / "calls.parquet", "--baseline", "clean")
    assert code == 2


def test_paired_baseline_missing_exits_2(files: dict[str, Path]) -> None:
    code, _, err = run("stats", "paired", files["csv"], "--baseline", "clean")
    assert code == 2 and "profile_id" in err and "'clean'" in err


def test_impact_scoring_and_selection(files: dict[str, Path], rows: pd.DataFrame) -> None:
    code, out, _ = run("stats", "impact", files["parquet"], "--by", "profile_id", "--json")
    data = json.loads(out)
    assert data["kind"] == "scoring" and data["median"] is not None
    assert code == (1 if any(c["flagged"] for c in data["by_group"]) else 0)
    code, out, _ = run("stats", "impact", files["parquet"], "--by", "profile_id",
                       "--decision", "decision", "--json")
    data = json.loads(out)
    assert data["kind"] == "selection"
    ok = rows[rows["parse_status"] == "ok"]
    rates = ok.groupby("profile_id")["decision"].apply(lambda s: (s == "advance").mean())
    for c in data["by_group"]:
        assert c["rate"] == pytest.approx(rates[c["category"]])
        assert c["impact_ratio"] == pytest.approx(rates[c["category"]] / rates.max())


def test_impact_intersectional_and_table(files: dict[str, Path]) -> None:
    code, out, _ = run("stats", "impact", files["csv"], "--by", "profile_id,tier",
                       "--decision", "decision")
    assert code in (0, 1) and "baseline × strong" in out and "Selection rates" in out


def test_impact_exit_codes(tmp_path: Path) -> None:
    fair = pd.DataFrame({"g": ["a"] * 50 + ["b"] * 50,
                         "decision": (["advance"] * 25 + ["reject"] * 25) * 2})
    f = tmp_path / "fair.csv"
    fair.to_csv(f, index=False)
    assert run("stats", "impact", f, "--by", "g", "--decision", "decision")[0] == 0
    unfair = fair.copy()
    unfair.loc[50:64, "decision"] = "reject"
    unfair.to_csv(f, index=False)
    code, out, _ = run("stats", "impact", f, "--by", "g", "--decision", "decision")
    assert code == 1 and "< 0.8" in out
    code, _, err = run("stats", "impact", f, "--by", "g", "--decision", "decision",
                       "--score", "score")
    assert code == 2 and "not both" in err
    code, _, err = run("stats", "impact", f, "--by", "segment", "--decision", "decision")
    assert code == 2 and "segment: column missing" in err


def test_impact_all_rates_zero_is_not_flagged(tmp_path: Path) -> None:
    df = pd.DataFrame({"g": ["a", "a", "b", "b"], "decision": ["reject"] * 4})
    f = tmp_path / "zero.csv"
    df.to_csv(f, index=False)
    code, out, _ = run("stats", "impact", f, "--by", "g", "--decision", "decision",
                       "--min-share", "0")
    assert code == 0 and "undefined" in out


def test_equivalence_command(files: dict[str, Path]) -> None:
    code, out, _ = run("stats", "equivalence", files["csv"], "--margin", "3", "--json")
    data = json.loads(out)
    assert code == 0 and data["profiles"]["long_pauses"]["equivalent"] is False
    code, out, _ = run("stats", "equivalence", files["csv"], "--margin", "3")
    assert code == 0 and "TOST" in out
    code, _, err = run("stats", "equivalence", files["csv"], "--margin", "0")
    assert code == 2 and "margin" in err


# -- rig gate -----------------------------------------------------------------------------------


def _campaign(folder: Path, seed: int, extra: dict[str, float] | None = None) -> Path:
    from rig.stats.simulation import draw_bank, simulate_calls

    d = Design()
    bank = draw_bank(d, np.random.default_rng(1))  # one bank for both releases
    folder.mkdir()
    simulate_calls(d, bank, np.random.default_rng(seed), extra).to_parquet(
        folder / "calls.parquet")
    return folder


def test_gate_pass_block_and_bad_input(tmp_path: Path) -> None:
    prev = _campaign(tmp_path / "prev", 2)
    same = _campaign(tmp_path / "same", 3)
    worse = _campaign(tmp_path / "worse", 4, {"long_pauses": -40.0})
    code, out, _ = run("gate", same, "--baseline", prev)
    assert code == 0 and "PASS" in out and (same / "gate.json").is_file()
    code, out, _ = run("gate", worse, "--baseline", prev)
    assert code == 1 and "BLOCK" in out and "blocked" in out
    assert json.loads((worse / "gate.json").read_text())["verdict"] == "block"
    code, out, _ = run("gate", worse, "--baseline", prev, "--json", "--out",
                       tmp_path / "g.json")
    assert code == 1 and json.loads(out)["verdict"] == "block"
    assert (tmp_path / "g.json").is_file()
    code, _, err = run("gate", worse, "--baseline", tmp_path / "nowhere")
    assert code == 2 and "nowhere: campaign folder not found" in err
    pol = tmp_path / "gate.yaml"
    pol.write_text("alpha: 7\n")
    code, _, err = run("gate", worse, "--baseline", prev, "--policy", pol)
    assert code == 2 and f"{pol}: alpha:" in err and "(got 7)" in err
