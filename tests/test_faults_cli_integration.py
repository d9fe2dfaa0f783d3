"""Fault inputs made here, of each kind issue 30 names, through the real stages and the CLI.

A bank written in the test (not a shipped fixture) with one answer per fault, and a clean one,
under a baseline and a fresh outage profile (frames stop for 2.5 s, 40% into the answer),
through hibari TTS, the 8 kHz mu-law line, pipecat's Silero VAD (start window 500 ms, a
pipeline written here) and faster-whisper tiny.en; then ``rig campaign summarize`` and the
report from the command line. The scorer is a counting fake: what is checked is which texts
reach it (the llama.cpp judge's own test is ``tests/test_scorer_integration.py``).

Each input has a named outcome:

* a looping transcript: an answer that repeats one word six times, transcribed by the real
  Whisper as the loop it is: ``repetition_loop``, excluded, never graded;
* a one-word answer ("No.") shorter than the 500 ms start window: ``vad_missed``, not
  transcribed, never graded;
* an empty reference: a script of fillers only, which the WER normaliser reduces to no
  words: ``empty_reference``, excluded, never graded, no WER;
* a recording with an outage: every answer under the outage profile that lasts past the
  outage closes by ``media_outage``, graded on what arrived (the default policy), with the
  words after the outage lost.

Nothing is lost: every planned call has one row, every row completed, and the summary counts
every fault while no excluded call reaches a mean.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from rig.scorer.fake import FakeScorer
from rig.stages import Stages

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]

CLEAN = "I stayed late with my manager and we fixed the weekly schedule together."
LOOP = "Sorry, sorry, sorry, sorry, sorry, sorry."
ONE_WORD = "No."
FILLERS = "Um, uh, hmm. Um, uh."


class CountingScorer(FakeScorer):
    """A fake scorer that keeps every text it was asked to grade."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def score(self, question, transcript, seed):  # type: ignore[override]
        self.texts.append(transcript)
        return super().score(question, transcript, seed)


def _grades(s: float) -> list[dict]:
    return [{"grader_id": "a", "score": s}, {"grader_id": "b", "score": s}]


def _write_inputs(tmp: Path) -> tuple[Path, Path, Path]:
    bank = tmp / "bank"
    bank.mkdir()
    q = {"question_id": "f01", "category": "teamwork", "rubric_version": 1, "cutoff": 60,
         "question": "Tell me about a time you disagreed with a coworker.",
         "rubric": [{"id": "example", "points": 100,
                     "description": "Describes one specific disagreement and its outcome."}],
         "answers": [
             {"answer_id": "f_clean", "tier": "strong", "script": CLEAN,
              "reference_grades": _grades(85)},
             {"answer_id": "f_loop", "tier": "weak", "script": LOOP,
              "reference_grades": _grades(0)},
             {"answer_id": "f_one_word", "tier": "weak", "script": ONE_WORD,
              "reference_grades": _grades(0)},
             {"answer_id": "f_fillers", "tier": "weak", "script": FILLERS,
              "reference_grades": _grades(0)},
             {"answer_id": "f_border", "tier": "borderline", "script": CLEAN + " It worked.",
              "reference_grades": _grades(62)}]}
    (bank / "f01.yaml").write_text(yaml.safe_dump(q, sort_keys=False))
    profiles = tmp / "profiles"
    profiles.mkdir()
    (profiles / "baseline.yaml").write_text(
        (ROOT / "profiles" / "core" / "baseline.yaml").read_text())
    (profiles / "outage_2500ms.yaml").write_text(
        "profile_id: outage_2500ms\nchanges: [channel]\n"
        "outage: {duration_s: 2.5, at_share: 0.4}\n")
    pipe = yaml.safe_load((ROOT / "pipelines" / "reference.yaml").read_text())
    pipe["name"] = "faults-held-back"
    pipe["vad"]["start_ms"] = 500
    pipeline = tmp / "pipeline.yaml"
    pipeline.write_text(yaml.safe_dump(pipe, sort_keys=False))
    return bank, profiles, pipeline


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> tuple[Path, CountingScorer]:
    from rig.campaign.plan import CampaignSpec
    from rig.campaign.runner import run_campaign

    tmp = tmp_path_factory.mktemp("faults")
    bank, profiles, pipeline = _write_inputs(tmp)
    scorer = CountingScorer()
    spec = CampaignSpec(answers_path=bank, profiles_path=profiles, pipeline_path=pipeline,
                        out_dir=tmp / "out", repeats=1, n_boot=200, audio=False)
    run_campaign(spec, stages=Stages(scorer=scorer), progress=False)
    return tmp / "out", scorer


def _rows(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "calls.parquet").set_index(["answer_id", "profile_id"])


def test_nothing_is_lost(campaign) -> None:
    out, _ = campaign
    log = [json.loads(x) for x in (out / "calls.jsonl").read_text().splitlines() if x.strip()]
    rows = _rows(out)
    assert len(rows) == 5 * 2 and len(log) == 10 and rows.index.is_unique
    assert set(rows["status"]) == {"ok"}, rows["error"].dropna().tolist()


def test_each_fault_input_has_its_named_outcome_and_no_unheard_audio_is_scored(
        campaign) -> None:
    out, scorer = campaign
    rows = _rows(out)
    base = rows.xs("baseline", level="profile_id")
    assert pd.isna(base.loc["f_clean", "faults"])
    assert not pd.isna(base.loc["f_clean", "score"])
    loop = base.loc["f_loop"]
    assert loop["faults"] == "repetition_loop" and loop["fault_excluded"]
    assert "repetition_loop" in loop["asr_suspect_reason"]
    one = base.loc["f_one_word"]
    assert one["faults"] == "vad_missed" and one["fault_excluded"]
    assert pd.isna(one["transcript"]) and pd.isna(one["wer"])  # the ASR never ran
    fill = base.loc["f_fillers"]
    assert "empty_reference" in fill["faults"].split(",") and fill["fault_excluded"]
    assert fill["wer_reference_words"] == 0
    for aid in ("f_loop", "f_one_word", "f_fillers"):
        for prof in ("baseline", "outage_2500ms"):
            r = rows.loc[(aid, prof)]
            if r["fault_excluded"]:
                assert pd.isna(r["score"]) and r["parse_status"] == "not_scored", (aid, prof)
    # the scorer graded the oracle (each script once) and the calls not excluded, no more
    n_answers, kept = 5, int((~rows["fault_excluded"].astype(bool)).sum())
    assert len(scorer.texts) >= n_answers + kept - 1  # a script the oracle cache holds once
    assert len(scorer.texts) <= n_answers + kept + int(rows["truncated"].sum())
    outage = rows.xs("outage_2500ms", level="profile_id")
    for aid in ("f_clean", "f_border"):
        r = outage.loc[aid]
        assert r["turn_closed_by"] == "media_outage", aid
        assert "media_outage" in r["faults"].split(",") and not r["fault_excluded"]
        assert r["words_lost"] > 0 and r["outage_s"] == 2.5
        assert not pd.isna(r["score"])  # graded on what arrived before the outage


def test_the_cli_summary_and_report_count_every_fault(campaign) -> None:
    from rig.cli import app

    out, _ = campaign
    res = CliRunner().invoke(app, ["campaign", "summarize", str(out), "--n-boot", "200"])
    assert res.exit_code == 0, res.output
    s = json.loads((out / "summary.json").read_text())
    rows = _rows(out)
    for pid, p in s["profiles"].items():
        mine = rows.xs(pid, level="profile_id")
        assert p["n_excluded"] == int(mine["fault_excluded"].sum())
        kept = mine[~mine["fault_excluded"].astype(bool)]
        assert p["wer_mean"] == pytest.approx(pd.to_numeric(kept["wer"]).dropna().mean())
        assert p["excluded_from"]
    base = s["profiles"]["baseline"]["faults"]
    assert base["repetition_loop"] >= 1 and base["vad_missed"] >= 1
    assert base["empty_reference"] >= 1
    assert s["profiles"]["outage_2500ms"]["faults"]["media_outage"] >= 2
    short = s["profiles"]["baseline"]["capture_by_length"][0]
    assert short["words"] == "1-2" and short["n_captured"] < short["n_calls"]
    page = (out / "report.html").read_text()
    for label in ("VAD missed the answer", "media outage", "looping transcript",
                  "empty reference"):
        assert label in page, label
