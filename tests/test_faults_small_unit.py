"""The smaller faults of issue 30, each named for what it is: a text score in the input, a
Parquet file named .csv, a torn log line, a yes/no hint only where it applies, and
typographic fractions in a script."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import typer
from pydantic import BaseModel, ConfigDict
from typer.testing import CliRunner

from rig.answers import Answer
from rig.cli.stats import stats_app
from rig.config import load_model
from rig.errors import ConfigError
from rig.script import normalise_script, reference_text
from rig.stats.rows import RowsError, read_rows
from rig.stats.simulation import Design, simulate_campaign

pytestmark = pytest.mark.unit

stats = typer.Typer()
stats.add_typer(stats_app, name="stats")


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    return simulate_campaign(Design(), seed=5)


# -- a text score in rig stats' input -------------------------------------------------------

def test_a_text_score_is_named_as_input_not_as_a_scorer_parse_failure(tmp_path: Path,
                                                                      rows) -> None:
    df = rows.astype({"score": object})
    df.loc[[2, 5], "score"] = "N/A"
    csv = tmp_path / "calls.csv"
    df.to_csv(csv, index=False)
    res = CliRunner().invoke(stats, ["stats", "paired", str(csv)])
    said = " ".join(res.stderr.split())
    assert res.exit_code == 2, said
    assert "calls.csv: score: not a number in row 3 (2 such cells)" in said
    assert "not a scorer's reply" in said and "'N/A'" in said
    assert "parse failure" not in said and "unparsed" not in said


def test_only_an_empty_csv_cell_is_missing(tmp_path: Path) -> None:
    csv = tmp_path / "calls.csv"
    csv.write_text("answer_id,score,country\na1,,NA\na2,50,null\na3,NaN,-\n")
    df = read_rows(csv)
    assert pd.isna(df.loc[0, "score"]) and df.loc[1, "score"] == 50 and pd.isna(df.loc[2, "score"])
    assert list(df["country"]) == ["NA", "null", "-"]  # Namibia stays Namibia


# -- a Parquet file named .csv, and the reverse -----------------------------------------------

def test_a_parquet_file_named_csv_is_named_as_parquet(tmp_path: Path, rows) -> None:
    wrong = tmp_path / "calls.csv"
    rows.to_parquet(wrong)
    with pytest.raises(RowsError, match=r"calls\.csv: this is a Parquet file .*name it "
                                        r"\.parquet"):
        read_rows(wrong)
    res = CliRunner().invoke(stats, ["stats", "paired", str(wrong)])
    assert res.exit_code == 2 and "name it .parquet" in " ".join(res.stderr.split())
    assert "utf-8" not in res.stderr.lower()


def test_a_csv_named_parquet_is_named_as_text(tmp_path: Path, rows) -> None:
    wrong = tmp_path / "calls.parquet"
    rows.to_csv(wrong, index=False)
    with pytest.raises(RowsError, match=r"calls\.parquet: not a Parquet file: text with "
                                        r"commas \(a CSV\?\): name it \.csv"):
        read_rows(wrong)


# -- a torn last log line in rig campaign summarize -------------------------------------------

def test_summarize_says_a_torn_last_line_was_left_out(tmp_path: Path) -> None:
    from test_campaign_unit import make_stages, spec

    from rig.campaign.runner import run_campaign
    from rig.cli import app

    s = spec(tmp_path, repeats=1, profile_ids=("short_pauses",),
             question_ids=("q01_conflict",))
    run_campaign(s, stages=make_stages(), progress=False)
    log = s.out_dir / "calls.jsonl"
    with log.open("ab") as f:
        f.write(b'{"call_id": "cut-off-mid-w')
    res = CliRunner().invoke(app, ["campaign", "summarize", str(s.out_dir), "--n-boot", "100"])
    said = " ".join(res.stderr.split())
    assert res.exit_code == 0, res.output
    assert f"{log}: 1 torn last line" in said and f"{log}.torn" in said
    (s.out_dir / "calls.jsonl.torn").write_bytes(b'{"call_id": "x\n{"call_id": "y\n')
    res = CliRunner().invoke(app, ["campaign", "summarize", str(s.out_dir), "--n-boot", "100"])
    assert "calls.jsonl.torn: 2 torn line(s) set aside" in " ".join(res.stderr.split())


# -- the yes/no hint only for a known text field ----------------------------------------------

class _Cfg(BaseModel):
    model_config = ConfigDict(extra="forbid")
    language: str = "en"
    repeats: int = 1


@pytest.mark.parametrize(("text", "hint"), [
    ("language: no\n", True),       # a text field that YAML 1.1 made False
    ("verbose: true\n", False),     # a key the model does not have
    ("repeats: [1]\n", False),      # not a bool at all
])
def test_yes_no_hint_only_where_yaml_turned_text_into_a_bool(tmp_path: Path, text: str,
                                                             hint: bool) -> None:
    p = tmp_path / "c.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_model(p, _Cfg)
    assert ("yes/no" in str(e.value)) is hint, str(e.value)
    if text.startswith("verbose"):
        assert "verbose" in str(e.value) and "allowed here" in str(e.value)


# -- typographic fractions in a script --------------------------------------------------------

@pytest.mark.parametrize(("script", "spoken"), [
    ("Add ½ a cup.", "Add one half a cup."),
    ("About 3½ years, 13½ in all.", "About 3 and a half years, 13 and a half in all."),
    ("Then 2 ¾ of it, ⅓ and ⅔.", "Then 2 and three quarters of it, one third and two thirds."),
    ("A slash: 1⁄4 of it.", "A slash: 1/4 of it."),
    ("Add½cup, x⅔.", "Add one half cup, x two thirds."),
])
def test_typographic_fractions_are_spoken_as_words(script: str, spoken: str) -> None:
    assert normalise_script(script) == spoken


def test_tts_script_and_wer_reference_read_the_same_fraction_words() -> None:
    a = Answer(answer_id="a1", tier="borderline", script="I work ½ days [um] and ¼ nights.",
               reference_grades=[{"grader_id": "g1", "score": 50},
                                 {"grader_id": "g2", "score": 60}])
    assert a.script == "I work one half days [um] and one quarter nights."
    assert reference_text(a.script) == "I work one half days and one quarter nights."


def test_rig_stats_leaves_fault_excluded_calls_out_not_as_parse_failures(tmp_path):
    """A campaign's calls.parquet through rig stats paired: a call kept out as a fault (its
    logged fault_excluded, or on an older row a loop in asr_suspect_reason) is left out as
    rig campaign summarize leaves it, and counted apart, never a parse failure (fresh-clone
    tester, issue 30)."""
    import json

    from test_attribution_unit import attributed_rows
    from typer.testing import CliRunner

    from rig.cli import app
    from rig.stats.rows import read_rows

    rows = attributed_rows()
    first = rows.index[(rows["profile_id"] != "baseline")][0]
    rows["fault_excluded"] = False
    rows.loc[first, ["fault_excluded", "score", "parse_status"]] = [True, None, "not_scored"]
    older = rows.drop(columns=["fault_excluded"]).copy()
    older["asr_suspect_reason"] = None
    older.loc[first, "asr_suspect_reason"] = "repetition_loop: 'the the the'"
    for df, name in ((rows, "new.parquet"), (older, "old.parquet")):
        df.to_parquet(tmp_path / name)
        got = read_rows(tmp_path / name)
        assert len(got) == len(df) - 1 and got.attrs["n_fault_excluded"] == 1
        res = CliRunner().invoke(app, ["stats", "paired", str(tmp_path / name), "--n-boot",
                                       "200", "--json"])
        assert res.exit_code == 0, res.output
        out = json.loads(res.output)
        assert out["n_parse_failures"] == 0 and out["n_calls"] == len(df) - 1
        text = CliRunner().invoke(app, ["stats", "paired", str(tmp_path / name), "--n-boot",
                                        "200"]).output
        assert "1 call(s) kept out as faults" in text


# -- rig stats input a hostile user gives (issue 30) -----------------------------------------
_HEADER = "answer_id,question_id,tier,profile_id,repeat,score,cutoff\n"
_BODY = "".join(f"a{a},q1,strong,{p},0,{60 + a * 3 - (5 if p == 'noisy' else a % 2)},50\n"
                for a in range(6) for p in ("baseline", "noisy"))


def test_a_csv_naming_a_column_twice_is_refused_by_name(tmp_path: Path) -> None:
    f = tmp_path / "dup.csv"
    f.write_text(_HEADER.replace("cutoff", "score") + _BODY)
    with pytest.raises(RowsError, match=r"dup.csv: score: column named twice in the header "
                                        r"\(columns 6 and 7\)"):
        read_rows(f)
    out = CliRunner().invoke(stats, ["stats", "paired", str(f)])
    assert out.exit_code != 0 and "named twice" in out.output


def test_an_empty_or_non_utf8_csv_is_named_for_what_it_is(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(RowsError, match=r"empty\.csv: the file is empty"):
        read_rows(empty)
    latin = tmp_path / "latin.csv"
    latin.write_bytes((_HEADER + _BODY + "a7,q1,strong,baselin\xe9,0,55,50\n").encode("latin-1"))
    with pytest.raises(RowsError, match=r"latin.csv: not UTF-8 text .*0xe9.*save it as UTF-8"):
        read_rows(latin)


def test_a_header_only_file_says_it_has_no_rows(tmp_path: Path) -> None:
    """It said "no row has the baseline profile; profiles are []" (issue 30)."""
    import pandas as pd

    header = tmp_path / "header.csv"
    header.write_text("profile_id,answer_id,score\n")
    with pytest.raises(RowsError, match=r"header\.csv: no rows: the file has a header "
                                        r"\(profile_id, answer_id, score\) and no call rows"):
        read_rows(header)
    pq = tmp_path / "none.parquet"
    pd.DataFrame({"profile_id": pd.Series([], dtype=str)}).to_parquet(pq)
    with pytest.raises(RowsError, match=r"none\.parquet: no rows"):
        read_rows(pq)
    out = CliRunner().invoke(stats, ["stats", "paired", str(header)])
    assert out.exit_code != 0 and "no rows" in out.output


def test_a_clean_csv_still_reads(tmp_path: Path) -> None:
    f = tmp_path / "ok.csv"
    f.write_text(_HEADER + _BODY)
    assert len(read_rows(f)) == 12


def test_a_parquet_file_naming_a_column_twice_is_refused_by_name(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = tmp_path / "dup.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array(["a1"]), pa.array([60.0]), pa.array([1.0])],
                                        names=["answer_id", "score", "score"]), f)
    with pytest.raises(RowsError, match=r"dup\.parquet: score: column named twice in the "
                                        r"schema \(columns 2 and 3\)"):
        read_rows(f)


@pytest.mark.parametrize(("hypothesis", "script"), [
    ("About 3½ years.", "About 3 and a half years."),
    ("Add ¾ of it.", "Add three quarters of it."),
])
def test_wer_reads_a_typographic_fraction_in_a_transcript_as_its_words(hypothesis: str,
                                                                       script: str) -> None:
    from rig.asr.wer import normalize, wer

    assert normalize(hypothesis) == normalize(script)  # Whisper's alone: "31 2 years"
    assert wer(reference_text(normalise_script(script)), hypothesis).wer == 0.0


@pytest.mark.parametrize(("kept", "lost"), [("False", "True"), ("false", "true"), ("0", "1"),
                                            ("no", "yes"), ("NO", "Yes")])
def test_a_csv_fault_excluded_column_reads_its_text_as_the_flag(tmp_path: Path, kept: str,
                                                                lost: str) -> None:
    """A CSV export's fault_excluded as text: "no" is False (pandas' astype(bool) made every
    non-empty text True, so "no" dropped every call but the empty ones)."""
    f = tmp_path / "fe.csv"
    lines = ["answer_id,question_id,tier,profile_id,repeat,score,status,fault_excluded"]
    for i in range(6):
        for p in ("baseline", "noisy"):
            gone = p == "noisy" and i == 0
            flag = lost if gone else ("" if i == 1 else kept)
            lines.append(f"a{i},q1,strong,{p},0,{'' if gone else 60 + i},ok,{flag}")
    f.write_text("\n".join(lines) + "\n")
    df = read_rows(f)
    assert len(df) == 11 and df.attrs["n_fault_excluded"] == 1
    f.write_text("\n".join(lines).replace(f",{lost}", ",maybe") + "\n")
    with pytest.raises(ConfigError, match=r"fe\.csv: fault_excluded: expected true or false"
                                          r".*'maybe'"):
        read_rows(f)


def test_a_baseline_kept_out_whole_as_faults_is_named_as_such(tmp_path: Path) -> None:
    """Every baseline call fault_excluded ("1.00" in a spreadsheet export): rig stats said
    only 'no row has the baseline profile', though the file has six baseline rows."""
    from rig.stats import paired_by_profile

    f = tmp_path / "fe.csv"
    lines = ["answer_id,question_id,profile_id,repeat,score,status,fault_excluded"]
    lines += [f"a{i},q1,{p},0,{60 + i},ok,{'1.00' if p == 'baseline' else '0.00'}"
              for i in range(6) for p in ("baseline", "noisy")]
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(RowsError, match=r"no row has the baseline profile \(its 6 answer\(s\) "
                                        r"were all kept out as faults"):
        paired_by_profile(read_rows(f), baseline="baseline")
