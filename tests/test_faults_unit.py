"""Faults (rig.campaign.faults, rig.pipeline_faults): each kind found from a row's columns,
the policy that keeps a call out of the scorer and the means, the counts per profile, pooled
WER beside the mean, capture rate by answer length; and the version rule of the faults
block."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_attribution_unit import attributed_rows

from rig.asr.wer import pooled_wer, wer, wer_columns
from rig.campaign.faults import (
    EXCLUDED_FROM,
    capture_by_length,
    excluded_mask,
    fault_columns,
    row_fault_kinds,
    vad_missed,
    wer_fields,
)
from rig.campaign.summary import campaign_summary
from rig.pipeline import PipelineConfig, pipeline_version
from rig.pipeline_faults import FaultPolicy

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("row", "kinds"), [
    ({"turn_suspect_reason": "no_speech_detected: the VAD never confirmed"}, ["vad_missed"]),
    ({"turn_suspect_reason": "closed_before_speech: closed at 0.3 s"}, ["vad_missed"]),
    ({"words_total": 1, "words_lost": 0, "turn_closed_by": "no_speech"}, ["vad_missed"]),
    ({"words_total": 4, "words_lost": 4}, ["vad_missed"]),
    ({"turn_closed_by": "media_outage"}, ["media_outage"]),
    ({"asr_suspect_reason": "no_speech: x; repetition_loop: 'the' x9"}, ["repetition_loop"]),
    ({"wer_reference_words": 0}, ["empty_reference"]),
    ({"turn_suspect_reason": "short_speech: 0.2 s", "words_total": 1, "words_lost": 0,
      "turn_closed_by": "silence_timeout", "wer_reference_words": 1}, []),
])
def test_each_fault_kind_is_found_from_the_rows_columns(row: dict, kinds: list) -> None:
    assert row_fault_kinds(row) == kinds


def test_vad_missed_needs_words_and_no_speech_heard() -> None:
    assert vad_missed(3, 0, "silence_timeout") and vad_missed(1, 1, "no_speech")
    assert not vad_missed(0, 0, "no_speech") and not vad_missed(3, 2, "silence_timeout")


def test_the_policy_decides_exclusion_per_kind() -> None:
    loop = {"asr_suspect_reason": "repetition_loop: 'a' x5"}
    assert fault_columns(loop, FaultPolicy()) == {"faults": "repetition_loop",
                                                  "fault_excluded": True}
    assert fault_columns(loop, FaultPolicy(repetition_loop="grade"))["fault_excluded"] is False
    outage = {"turn_closed_by": "media_outage"}
    assert fault_columns(outage, FaultPolicy())["fault_excluded"] is False  # graded as heard
    assert fault_columns(outage, FaultPolicy(media_outage="exclude"))["fault_excluded"]
    assert fault_columns({}, FaultPolicy()) == {"faults": None, "fault_excluded": False}


def test_old_rows_get_the_default_policy_and_logged_rows_keep_theirs() -> None:
    rows = pd.DataFrame([
        {"asr_suspect_reason": "repetition_loop: x", "fault_excluded": None},  # old row
        {"asr_suspect_reason": "repetition_loop: x", "fault_excluded": False},  # graded
        {"asr_suspect_reason": None, "fault_excluded": None}])
    assert excluded_mask(rows).tolist() == [True, False, False]
    assert excluded_mask(rows.drop(columns="fault_excluded")).tolist() == [True, True, False]


def test_pooled_wer_is_errors_over_reference_words_and_empty_references_are_apart() -> None:
    calls = [("the cat sat on the mat", "the cat sat on a mat"),
             ("hello there", "hello"), ("", "alpha beta gamma delta")]
    cols = [wer_columns(r, r, r, h) for r, h in calls]
    assert cols[0]["wer_errors"] == 1 and cols[0]["wer_reference_words"] == 6
    assert cols[2]["wer_reference_words"] == 0 and cols[2]["wer"] == 4.0  # jiwer 4
    got = wer_fields(pd.DataFrame(cols))
    assert got["wer_pooled"] == pytest.approx(2 / 8)
    assert got["wer_mean"] == pytest.approx((1 / 6 + 1 / 2) / 2)
    assert got["n_empty_spoken_reference"] == 1
    # jiwer's corpus WER over the same pairs, the empty one left out
    import jiwer

    assert got["wer_pooled"] == pytest.approx(jiwer.wer([r for r, _ in calls[:2]],
                                                        [h for _, h in calls[:2]]))
    assert pooled_wer(0, 0) is None and wer("a b", "a b").errors == 0


def test_capture_rate_by_answer_length() -> None:
    rows = pd.DataFrame([
        {"words_total": 1, "words_lost": 0, "turn_closed_by": "no_speech"},
        {"words_total": 2, "words_lost": 0, "turn_closed_by": "silence_timeout"},
        {"words_total": 30, "words_lost": 0, "turn_closed_by": "silence_timeout"}])
    bins = capture_by_length(rows)
    assert bins == [{"words": "1-2", "n_calls": 2, "n_captured": 1, "capture_rate": 0.5},
                    {"words": "16+", "n_calls": 1, "n_captured": 1, "capture_rate": 1.0}]


def _rows_with_faults() -> pd.DataFrame:
    rows = attributed_rows()
    rows["wer"] = 0.1
    rows["wer_errors"], rows["wer_reference_words"] = 1, 10
    lp = rows.index[rows["profile_id"] == "long_pauses"]
    # a looped transcript graded 0 by an older rig, and a whole recording the VAD missed
    rows.loc[lp[0], ["asr_suspect_reason", "score", "wer", "wer_errors"]] = [
        "repetition_loop: 'the' x12", 0.0, 4.0, 40]
    rows.loc[lp[1], ["turn_suspect_reason", "score"]] = ["no_speech_detected: x", 99.0]
    return rows


def test_excluded_calls_are_out_of_every_mean_and_counted_per_profile() -> None:
    rows = _rows_with_faults()
    s = campaign_summary(rows, campaign_id="c", pipeline_version="v", n_boot=50)
    p = s.profiles["long_pauses"]
    assert p.n_excluded == 2 and s.n_excluded_calls == 2
    assert p.faults == {"vad_missed": 1, "media_outage": 0, "repetition_loop": 1,
                        "empty_reference": 0}
    assert p.excluded_from == EXCLUDED_FROM and "paired delta" in p.excluded_from
    assert p.n_parse_failures == 0
    kept = rows[(rows["profile_id"] == "long_pauses")].iloc[2:]
    assert p.score_mean == pytest.approx(kept["score"].mean())
    assert p.wer_mean == pytest.approx(0.1) and p.wer_pooled == pytest.approx(0.1)
    # the paired figures never see them: the same as the rows without the two calls
    gone = campaign_summary(rows.drop(index=rows.index[rows["profile_id"] ==
                                                       "long_pauses"][:2]),
                            campaign_id="c", pipeline_version="v", n_boot=50)
    assert p.mean_delta == pytest.approx(gone.profiles["long_pauses"].mean_delta)
    assert s.profiles["baseline"].n_excluded == 0
    assert s.profiles["baseline"].excluded_from is None


def test_the_faults_block_enters_the_version_only_when_not_the_default() -> None:
    base = PipelineConfig(name="p")
    assert pipeline_version(base) == pipeline_version(PipelineConfig(name="p",
                                                                     faults=FaultPolicy()))
    assert "faults" not in str(pipeline_version(base))
    other = {pipeline_version(PipelineConfig(name="p", faults=FaultPolicy(**kw))) for kw in (
        {"repetition_loop": "grade"}, {"vad_missed": "grade_empty"},
        {"outage_window_ms": 2000})}
    assert len(other) == 3 and pipeline_version(base) not in other


def test_a_pipeline_yaml_names_a_bad_policy(tmp_path) -> None:
    from rig.errors import ConfigError
    from rig.pipeline import load_pipeline

    p = tmp_path / "p.yaml"
    p.write_text("name: p\nfaults:\n  repetition_loop: drop\n")
    with pytest.raises(ConfigError, match=r"p\.yaml.*faults.*repetition_loop"):
        load_pipeline(p)


def test_profile_hash_is_unchanged_without_an_outage() -> None:
    from rig.channel.outage import Outage
    from rig.profiles import Profile

    p = Profile(profile_id="x")
    assert p.content_hash == p.model_copy(update={"outage": Outage()}).content_hash
    assert p.content_hash != Profile(profile_id="x",
                                     outage=Outage(duration_s=3.0)).content_hash


def test_no_nan_in_fault_fields() -> None:
    s = campaign_summary(_rows_with_faults(), campaign_id="c", pipeline_version="v",
                         n_boot=50).to_dict()
    for p in s["profiles"].values():
        for k in ("wer_pooled", "wer_mean", "n_excluded"):
            assert p[k] is None or np.isfinite(p[k])


def test_timestamps_past_the_end_are_clamped_and_counted() -> None:
    from rig.asr.checks import asr_suspect, clamp_timestamps
    from rig.asr.whisper import AsrSegment, Transcript

    segs = (AsrSegment(0.2, 3.0, "a", -0.2, 0.1), AsrSegment(3.0, 5.6, "b", -0.2, 0.1))
    t = Transcript("a b", -0.2, 0.1, 5.0, segs)
    out, n = clamp_timestamps(t, 5.0)
    assert n == 1 and out.segments[1].end_s == 5.0 and out.segments[0] == segs[0]
    assert clamp_timestamps(out, 5.0) == (out, 0)
    # a small overshoot is no suspect (within END_TOLERANCE_S) but is still clamped
    assert asr_suspect(t, ((0.0, 5.0),), 5.0)[0] is False


def test_the_console_names_the_faults_and_what_they_were_left_out_of(capsys, tmp_path) -> None:
    """The campaign's console lines name each profile's fault kinds and the calls kept out
    (fresh-clone tester: the console never mentioned an outage)."""
    from rig.cli.summary_lines import print_summary

    s = campaign_summary(_rows_with_faults(), campaign_id="c", pipeline_version="v",
                         n_boot=50)
    print_summary(s, tmp_path)
    out = capsys.readouterr().out
    assert "long_pauses: faults: vad_missed 1, repetition_loop 1; 2 kept out of" in out
    assert "baseline: faults" not in out
