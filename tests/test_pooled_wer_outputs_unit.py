"""Pooled WER beside the mean wherever a WER is summarised (issue 30, item 3): the read-speech
figures, the sweep's table, its CLI table and report, and the campaign CLI table. Each pooled
figure is recomputed here as all errors over all reference words."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from rig.campaign.read_speech import read_speech_summary

pytestmark = pytest.mark.unit


def _read_rows() -> pd.DataFrame:
    # one short prompt with a high WER and one long one with a low WER: the mean and the
    # pooled figure part ways
    return pd.DataFrame([
        {"profile_id": "baseline", "status": "ok", "wer": 1.0, "wer_errors": 2,
         "wer_reference_words": 2, "truncated": False},
        {"profile_id": "baseline", "status": "ok", "wer": 0.05, "wer_errors": 2,
         "wer_reference_words": 40, "truncated": False},
        {"profile_id": "baseline", "status": "ok", "wer": 0.0, "wer_errors": 0,
         "wer_reference_words": 18, "truncated": False},
        {"profile_id": "baseline", "status": "error", "wer": None, "wer_errors": None,
         "wer_reference_words": None, "truncated": None},
    ])


def test_read_speech_figures_carry_pooled_wer() -> None:
    rs = read_speech_summary(_read_rows(), {"baseline": {"speaker_id": "s",
                                                          "group": "g"}}, n_boot=200)
    d = rs.by_speaker["s"]
    assert d.wer_mean == pytest.approx((1.0 + 0.05 + 0.0) / 3)
    assert d.wer_pooled == pytest.approx(4 / 60)
    from rig.report.read_speech import figures_sentence

    assert "pooled 0.067" in figures_sentence("s", d)


def test_read_speech_rows_without_counts_give_no_pooled_figure() -> None:
    rows = _read_rows().drop(columns=["wer_errors", "wer_reference_words"])
    rs = read_speech_summary(rows, {"baseline": {"speaker_id": "s", "group": "g"}},
                             n_boot=200)
    assert rs.by_speaker["s"].wer_pooled is None


def _sweep(wer_pooled: float | None) -> dict:
    row = {"variant": "campaign", "profile_id": "fast", "n_pairs": 4, "mean_delta": -2.0,
           "ci95": [-4.0, 0.5], "se": 1.0, "tost_p": 0.2, "margin_points": 5.0,
           "campaign_mean_delta": -2.0, "campaign_ci95": [-4.0, 0.5], "flip_rate": 0.0,
           "truncation_rate": 0.0, "wer_mean": 0.4, "wer_pooled": wer_pooled,
           "dead_air_added_s": 0.0, "asr_s_per_call": 0.1, "scorer_s_per_call": 0.2,
           "verdict": "campaign"}
    return {"campaign_id": "c", "margin_points": 5.0, "table": [row], "varies": [],
            "variants": [{"variant_id": "campaign", "pipeline_version": "v", "settings": {},
                          "rerun_from": None, "n_calls": 4, "n_run_now": 0}]}


def test_sweep_verdict_table_carries_the_profiles_pooled_wer() -> None:
    from rig.sweep.verdict import verdict_table

    prof = {"n_pairs": 0, "mean_delta": None, "wer_mean": 0.4, "wer_pooled": 0.125}
    summary = {"baseline": "baseline", "profiles": {"baseline": prof, "fast": prof}}
    rows = pd.DataFrame(columns=["status", "parse_status", "score", "profile_id"])
    out = verdict_table("campaign", rows, summary, summary, {}, margin=5.0)
    assert [r["wer_pooled"] for r in out] == [0.125, 0.125]
    assert [r["wer_mean"] for r in out] == [0.4, 0.4]


def test_sweep_cli_table_and_report_show_pooled_wer(tmp_path, capsys) -> None:
    from rig.cli.sweep import print_sweep
    from rig.sweep.report import write_sweep_report

    print_sweep(_sweep(0.125))
    said = capsys.readouterr().out
    assert "WER pooled" in said and "0.125" in said and "0.400" in said
    page = write_sweep_report(tmp_path / "r.html", _sweep(0.125)).read_text()
    assert "WER pooled" in page and ">0.125<" in page
    # a sweep.json written before the column: n/a, no error
    old = _sweep(None)
    del old["table"][0]["wer_pooled"]
    print_sweep(old)
    write_sweep_report(tmp_path / "old.html", old)


def test_campaign_cli_table_shows_mean_and_pooled_wer(capsys) -> None:
    from test_attribution_unit import attributed_rows

    from rig.campaign.summary import campaign_summary
    from rig.cli.campaign import _print_summary

    rows = attributed_rows()
    s = campaign_summary(rows, campaign_id="c", pipeline_version="v", n_boot=100)
    _print_summary(s, Path("out"))
    said = capsys.readouterr().out
    assert "WER mean" in said and "WER pooled" in said
