"""rig sweep logic with fake stages: --vary parsing, variants (one at a time, grid), what
re-runs, resume, verdict rules, outputs recomputed from sweep.parquet."""

import dataclasses
import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rig.campaign.runner import CampaignSpec, run_campaign
from rig.errors import ConfigError
from rig.pipeline import load_pipeline, pipeline_version
from rig.sweep import headline, parse_vary, plan_variants, recompute, run_sweep
from rig.sweep.plan import apply_changes, rerun_from
from rig.sweep.verdict import tost_p_value, verdict

sys.path.insert(0, str(Path(__file__).parent))
from executor_fakes import make_stages

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
REF = load_pipeline(ROOT / "pipelines" / "reference.yaml")


# --- --vary and variants ----------------------------------------------------------------

def test_parse_vary_reads_yaml_scalars():
    v = parse_vary("endpointing.silence_timeout_ms=500, 800,1200")
    assert v.path == "endpointing.silence_timeout_ms" and v.values == (500, 800, 1200)
    assert parse_vary("asr.model=whisper-tiny.en,whisper-base").values == (
        "whisper-tiny.en", "whisper-base")
    assert parse_vary("scorer.temperature=0.5").values == (0.5,)
    for bad in ("endpointing.silence_timeout_ms", "=1", "a.b=", "a.b=1,,2"):
        with pytest.raises(ConfigError, match="--vary"):
            parse_vary(bad)


def test_a_dotted_path_sets_one_field_and_pydantic_validates_it():
    p = apply_changes(REF, {"endpointing.silence_timeout_ms": 1500})
    assert p.endpointing.silence_timeout_ms == 1500
    assert p.asr == REF.asr and pipeline_version(p) != pipeline_version(REF)
    with pytest.raises(ConfigError, match=r"--vary.*silence_timeout_ms.*50"):
        apply_changes(REF, {"endpointing.silence_timeout_ms": 50})  # below ge=100
    with pytest.raises(ConfigError, match=r"no such field.*timeout_s"):
        apply_changes(REF, {"endpointing.timeout_s": 1})
    with pytest.raises(ConfigError, match="whisper-huge"):
        apply_changes(REF, {"asr.model": "whisper-huge"})
    with pytest.raises(ConfigError, match="not a setting a sweep varies"):
        apply_changes(REF, {"name": "x"})


def test_each_section_reruns_from_its_first_stage():
    assert rerun_from("endpointing.silence_timeout_ms") == "turn"
    assert rerun_from("vad.confidence") == "turn"
    assert rerun_from("asr.model") == "asr"
    assert rerun_from("scorer.temperature") == "score"
    assert rerun_from("telephony.codec") == "channel"


def test_one_at_a_time_vs_grid():
    timer = parse_vary("endpointing.silence_timeout_ms=500,800,1200")
    asr = parse_vary("asr.model=whisper-tiny.en,whisper-base")
    one = plan_variants(REF, [timer, asr])
    # the campaign first; 800 ms and tiny.en are the campaign's own pipeline: not repeated
    assert [v.variant_id for v in one] == [
        "campaign", "endpointing.silence_timeout_ms=500",
        "endpointing.silence_timeout_ms=1200", "asr.model=whisper-base"]
    assert [v.rerun_from for v in one] == [None, "turn", "turn", "asr"]
    grid = plan_variants(REF, [timer, asr], grid=True)
    assert len(grid) == 3 * 2  # 6 cells, one of them the campaign
    cell = next(v for v in grid if v.changes == {"endpointing.silence_timeout_ms": 500,
                                                  "asr.model": "whisper-base"})
    assert cell.rerun_from == "turn"  # the most upstream change wins
    assert len({v.version for v in grid}) == len(grid)
    with pytest.raises(ConfigError, match="each path once"):
        plan_variants(REF, [timer, timer])


# --- verdict rules ----------------------------------------------------------------------

def test_verdict_rules():
    # closes: CI includes 0 and TOST equivalent
    assert verdict(-1.0, [-3.0, 1.0], 1.0, 0.01, -40.0, [-45.0, -35.0]) == "closes"
    # CI includes 0 but equivalence not shown (too wide): disjoint from the campaign's
    assert verdict(-1.0, [-20.0, 18.0], 9.0, 0.4, -40.0, [-45.0, -35.0]) == "narrows"
    # smaller by more than its SE, intervals overlapping
    assert verdict(-30.0, [-40.0, -20.0], 5.0, None, -40.0, [-48.0, -32.0]) == "narrows"
    # smaller by less than its SE, intervals overlapping
    assert verdict(-38.0, [-48.0, -28.0], 5.0, None, -40.0, [-48.0, -32.0]) == "no effect"
    assert verdict(-48.0, [-52.0, -44.0], 2.0, None, -40.0, [-43.0, -37.0]) == "widens"
    assert verdict(-41.0, [-52.0, -30.0], 5.0, None, -40.0, [-43.0, -37.0]) == "no effect"
    assert verdict(None, None, None, None, -40.0, None) == "not computable"
    # one pair: a 39-point move with no interval and no standard error is not a verdict
    assert verdict(-1.2, None, None, None, -40.0, None) == "not computable"


def test_tost_p_value_equals_statsmodels_and_handles_constant_deltas():
    from statsmodels.stats.weightstats import ttost_paired

    d = pd.Series([1.0, -2.0, 0.5, 1.5, -0.5, 0.0])
    p = tost_p_value(d, 3.0)
    ref = ttost_paired(d.to_numpy(), 0 * d.to_numpy(), -3.0, 3.0)[0]
    assert p == pytest.approx(ref)
    assert tost_p_value(pd.Series([0.0, 0.0, 0.0]), 3.0) == 0.0
    assert tost_p_value(pd.Series([4.0, 4.0]), 3.0) == 1.0
    assert tost_p_value(pd.Series([1.0]), 3.0) is None


# --- a sweep on fakes -------------------------------------------------------------------

class Counting:
    """Fake stages that count the calls to each stage."""

    def __init__(self):
        self.counts = {"render": 0, "detect_turn": 0, "transcribe": 0, "score": 0}

    def stages_for(self, pipeline):
        st = make_stages()

        def counted(name, fn):
            def f(*a, **k):
                self.counts[name] += 1
                return fn(*a, **k)
            return f

        scorer = st.scorer
        orig = scorer.score

        def score(*a, **k):
            self.counts["score"] += 1
            return orig(*a, **k)

        scorer.score = score
        return dataclasses.replace(st, render=counted("render", st.render),
                                   detect_turn=counted("detect_turn", st.detect_turn),
                                   transcribe=counted("transcribe", st.transcribe))


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "camp"
    spec = CampaignSpec(answers_path=ROOT / "answer_bank" / "mini",
                        profiles_path=ROOT / "profiles" / "demo",
                        pipeline_path=ROOT / "pipelines" / "reference.yaml", out_dir=out,
                        profile_ids=("long_pauses", "short_pauses"), n_boot=200)
    run_campaign(spec, stages=make_stages(), progress=False)
    return out


def test_a_timer_sweep_reruns_from_turn_detection_and_truncation_falls_to_zero(
        campaign, tmp_path):
    c = Counting()
    varies = [parse_vary("endpointing.silence_timeout_ms=500,2000")]
    res = run_sweep(campaign, varies, tmp_path / "s", stages_for=c.stages_for, n_boot=200,
                    margin=5.0)
    n = len(pd.read_parquet(campaign / "calls.parquet"))
    assert res.n_run == 2 * n
    rows = pd.read_parquet(tmp_path / "s" / "sweep.parquet")
    # a truncated call also grades its turn text (stage attribution); an untruncated one
    # reuses the oracle grade
    n_turn_text = int((rows[rows["variant"] != "campaign"]["words_lost"] > 0).sum())
    assert c.counts == {"render": 2 * n, "detect_turn": 2 * n, "transcribe": 2 * n,
                        "score": 2 * n + n_turn_text}
    t = {(r["variant"], r["profile_id"]): r for r in res.sweep["table"]}
    assert t[("campaign", "long_pauses")]["truncation_rate"] == 1.0
    assert t[("endpointing.silence_timeout_ms=2000", "long_pauses")]["truncation_rate"] == 0.0
    assert t[("endpointing.silence_timeout_ms=2000", "long_pauses")]["verdict"] in (
        "closes", "narrows")
    assert t[("endpointing.silence_timeout_ms=2000", "baseline")]["dead_air_added_s"] == 1.2
    assert t[("endpointing.silence_timeout_ms=500", "baseline")]["dead_air_added_s"] == -0.3
    df = pd.read_parquet(tmp_path / "s" / "sweep.parquet")
    assert set(df["variant"]) == {"campaign", "endpointing.silence_timeout_ms=500",
                                  "endpointing.silence_timeout_ms=2000"}
    assert df.groupby("variant")["pipeline_version"].nunique().eq(1).all()
    assert df["pipeline_version"].nunique() == 3
    # resumable: a second run makes no call
    c2 = Counting()
    again = run_sweep(campaign, varies, tmp_path / "s", stages_for=c2.stages_for, n_boot=200)
    assert again.n_run == 0 and sum(c2.counts.values()) == 0
    assert again.sweep["table"] == res.sweep["table"]
    # the verdict table is recomputed from sweep.parquet alone
    assert json.loads(json.dumps(recompute(tmp_path / "s"))) == json.loads(
        json.dumps(res.sweep["table"]))
    html = (tmp_path / "s" / "report.html").read_text()
    assert "<svg" in html and "<script" not in html
    # laid out for a phone, the plot with its text alternative (the values in words)
    assert '<meta name="viewport"' in html and 'role="img"' in html
    assert "<title id=" in html and "long_pauses: 500: " in html and 'scope="col"' in html
    line = headline(res.sweep, "long_pauses")
    assert "2,000 ms timer" in line and "1.2 s longer" in line, line


def test_an_asr_change_reuses_the_turn_and_a_scorer_change_reuses_the_transcript(
        campaign, tmp_path):
    c = Counting()
    camp = pd.read_parquet(campaign / "calls.parquet")
    n = len(camp)
    res = run_sweep(campaign, [parse_vary("asr.model=whisper-base"),
                               parse_vary("scorer.max_tokens=200")],
                    tmp_path / "s", stages_for=c.stages_for, n_boot=200)
    assert c.counts["detect_turn"] == 0  # neither variant re-ran turn detection
    assert c.counts["transcribe"] == n  # the ASR variant only
    # scoring: both variants, their truncated calls' turn texts (stage attribution), plus the
    # scorer variant's oracle gradings of the scripts
    n_trunc = int((camp["words_lost"] > 0).sum())
    assert c.counts["score"] == (2 * n + 2 * n_trunc
                                 + camp[["answer_id", "seed"]].drop_duplicates().shape[0])
    df = pd.read_parquet(tmp_path / "s" / "sweep.parquet").set_index(
        ["variant", "answer_id", "profile_id", "repeat"])
    base = camp.set_index(["answer_id", "profile_id", "repeat"])
    for vid in ("asr.model=whisper-base", "scorer.max_tokens=200"):
        g = df.loc[vid]
        assert (g["turn_close_s"] == base.loc[g.index, "turn_close_s"]).all()
    g = df.loc["scorer.max_tokens=200"]
    assert (g["transcript"] == base.loc[g.index, "transcript"]).all()
    assert (g["asr_model"] == "whisper-tiny.en").all()
    assert (df.loc["asr.model=whisper-base"]["asr_model"] == "whisper-base").all()
    assert {v["variant_id"]: v["rerun_from"] for v in res.sweep["variants"]} == {
        "campaign": None, "asr.model=whisper-base": "asr", "scorer.max_tokens=200": "score"}


def test_profile_selection_and_bad_input(campaign, tmp_path):
    c = Counting()
    res = run_sweep(campaign, [parse_vary("endpointing.silence_timeout_ms=2000")],
                    tmp_path / "s", stages_for=c.stages_for, profile_ids=("long_pauses",),
                    n_boot=200)
    assert {r["profile_id"] for r in res.sweep["table"]} == {"baseline", "long_pauses"}
    with pytest.raises(ConfigError, match="--profile"):
        run_sweep(campaign, [parse_vary("endpointing.silence_timeout_ms=2000")],
                  tmp_path / "s2", stages_for=c.stages_for, profile_ids=("nope",))
    with pytest.raises(ConfigError, match="CAMPAIGN_DIR"):
        run_sweep(tmp_path, [parse_vary("endpointing.silence_timeout_ms=2000")],
                  tmp_path / "s3", stages_for=c.stages_for)


def test_cli_refuses_a_bad_vary_naming_it(campaign, tmp_path):
    from typer.testing import CliRunner

    from rig.cli import app

    r = CliRunner().invoke(app, ["sweep", str(campaign), "--vary",
                                 "endpointing.silence_timeout_ms=20", "--out",
                                 str(tmp_path / "s")])
    assert r.exit_code == 2
    assert "--vary" in r.output and "silence_timeout_ms" in r.output


def test_the_demo_sweeps_the_timer_on_long_pauses_and_prints_one_line(campaign, monkeypatch,
                                                                      capsys):
    import shutil

    from rig.cli.demo import _demo_sweep
    from rig.sweep import core

    monkeypatch.setattr(core, "default_stages", lambda p, cache=None: make_stages())
    folder = campaign.parent / "demo_copy"
    shutil.copytree(campaign, folder)
    _demo_sweep(folder, progress=False)
    out = capsys.readouterr().out
    assert "a 2,000 ms timer" in out and "long_pauses gap" in out
    assert "every turn waits 1.2 s longer" in out
    sweep = json.loads((folder / "sweep" / "sweep.json").read_text())
    assert {r["profile_id"] for r in sweep["table"]} == {"baseline", "long_pauses"}
    # the campaign's summary and report now state the sweep's answer
    note = json.loads((folder / "summary.json").read_text())["sweep"]
    assert note["report"] == "sweep/report.html" and note["profile_id"] == "long_pauses"
    assert note["verdict"] in out
    assert note["verdict"].rstrip(".") in (folder / "report.html").read_text()


def test_cli_runs_a_grid_sweep_and_prints_the_verdicts(campaign, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from rig.cli import app
    from rig.sweep import core

    monkeypatch.setattr(core, "default_stages", lambda p, cache=None: make_stages())
    r = CliRunner().invoke(app, ["sweep", str(campaign), "--vary",
                                 "endpointing.silence_timeout_ms=800,2000", "--vary",
                                 "scorer.max_tokens=160,200", "--grid", "--profile",
                                 "long_pauses", "--n-boot", "200", "--out",
                                 str(tmp_path / "s")], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    sweep = json.loads((tmp_path / "s" / "sweep.json").read_text())
    assert len(sweep["variants"]) == 4 and sweep["grid"] is True
    assert "verdict" in r.output and "wrote" in r.output
    # the progress bar's last line counts every variant's calls (the campaign's are not run)
    n = (len(sweep["variants"]) - 1) * len(pd.read_parquet(campaign / "calls.parquet")[
        lambda d: d["profile_id"].isin(["baseline", "long_pauses"])])
    assert f": sweep calls: {n}/{n}, " in r.output, r.output  # the final count, our line


def test_a_scoring_only_variant_keeps_the_stage_attribution_and_the_levers(campaign, tmp_path):
    """A scorer or transcript variant scores the campaign's transcripts again: its truncated
    calls still grade their turn text (rebuilt from the cached render), the attribution
    columns still sum to score - oracle, and the transcript/style levers are applied."""
    camp = pd.read_parquet(campaign / "calls.parquet")
    res = run_sweep(campaign, [parse_vary("transcript.fillers=drop"),
                               parse_vary("scorer.style_criteria=drop")],
                    tmp_path / "s", stages_for=Counting().stages_for, n_boot=200)
    assert {v["variant_id"]: v["rerun_from"] for v in res.sweep["variants"]} == {
        "campaign": None, "transcript.fillers=drop": "score",
        "scorer.style_criteria=drop": "score"}
    df = pd.read_parquet(tmp_path / "s" / "sweep.parquet")
    for vid in ("transcript.fillers=drop", "scorer.style_criteria=drop"):
        g = df[(df["variant"] == vid) & (df["status"] == "ok")]
        assert len(g) == len(camp)
        trunc = g[g["words_lost"] > 0]
        assert len(trunc) and (trunc["turn_text_parse_status"] == "ok").all()
        # the same turn text as the campaign graded (not the oracle's script)
        key = ["answer_id", "profile_id", "repeat"]
        was = camp.set_index(key).loc[trunc.set_index(key).index, "score_turn_text"]
        assert np.allclose(trunc["score_turn_text"].to_numpy(), was.to_numpy())
        assert (trunc["score_turn_text"] != trunc["oracle_score"]).any()
        total = g["loss_turn_detection"] + g["loss_asr"]
        assert np.allclose(total, g["score"] - g["oracle_score"])


def test_a_resumed_sweep_starts_its_progress_at_the_calls_logged(campaign, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from rig.cli import app
    from rig.sweep import core

    monkeypatch.setattr(core, "default_stages", lambda p, cache=None: make_stages())
    args = ["sweep", str(campaign), "--vary", "endpointing.silence_timeout_ms=2000",
            "--profile", "long_pauses", "--n-boot", "200", "--out", str(tmp_path / "s")]
    first = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert first.exit_code == 0, first.output
    n = int(re.search(r": sweep calls: 0/(\d+), ", first.output).group(1))
    # the final count, then the phase after the last call, each on a line of its own
    final, said = first.output.index(f": sweep calls: {n}/{n}, "), first.output.index(
        ": summarizing 2 variants (200 bootstrap resamples each interval)")
    assert final < said, first.output
    again = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert again.exit_code == 0 and f": sweep calls: {n}/{n}, " in again.output, again.output
    assert "0 calls made" in again.output
    # the campaign's own timer: every variant is the campaign, nothing to run, no bar
    same = CliRunner().invoke(app, [*args[:3], "endpointing.silence_timeout_ms=800",
                                    *args[4:-1], str(tmp_path / "s2")], env={"COLUMNS": "200"})
    assert same.exit_code == 0 and "sweep calls" not in same.output, same.output


def test_ctrl_c_in_a_sweep_says_how_to_resume(campaign, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from rig.cli import app
    from rig.sweep import core

    def interrupted(*_a, **_k):
        raise KeyboardInterrupt

    monkeypatch.setattr(core, "run_variant", interrupted)
    monkeypatch.setattr(core, "default_stages", lambda p, cache=None: make_stages())
    r = CliRunner().invoke(app, ["sweep", str(campaign), "--vary",
                                 "endpointing.silence_timeout_ms=2000", "--out",
                                 str(tmp_path / "s")], env={"COLUMNS": "200"})
    assert r.exit_code == 130 and "rerun the same command to resume" in r.output, r.output
    assert "Traceback" not in r.output


def test_the_headline_says_too_few_pairs_rather_than_no_change():
    """Issue 33: with one pair per variant a 70-point move read 'no ... closes or narrows'."""
    sweep = {
        "variants": [{"variant_id": "campaign", "changes": {}},
                     {"variant_id": "t2000", "dead_air_added_s": 1.2,
                      "changes": {"endpointing.silence_timeout_ms": 2000}}],
        "table": [{"variant": "campaign", "profile_id": "long_pauses", "verdict": "campaign",
                   "mean_delta": -72.0, "ci95": None},
                  {"variant": "t2000", "profile_id": "long_pauses",
                   "verdict": "not computable", "mean_delta": -1.2, "ci95": None}]}
    line = headline(sweep, "long_pauses")
    assert line.startswith("too few pairs to judge the long_pauses gap (a 2,000 ms timer: "
                           "delta -1.2; campaign -72.0)"), line
    assert "sweep more answers" in line
