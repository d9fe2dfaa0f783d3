"""The drill-down's logic on hand-made rows and fake stages: the alignment, the struck
(lost) words, the entries and filters' data, and the campaign audio files."""

import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
from summaries import real_summary

from rig.audio import Audio
from rig.drilldown import drilldown_html, pair_entries
from rig.drilldown.align import align_transcript, alignment_counts, script_words
from rig.drilldown.audio import audio_paths, peaks, read_call_audio, write_call_audio
from rig.synth.base import RenderedAnswer, WordTiming
from rig.vad import TurnResult

pytestmark = pytest.mark.unit
sys.path.insert(0, str(Path(__file__).parent))

SCRIPT = "I led the team, and we shipped it on time."


def test_alignment_marks_substitutions_deletions_and_insertions():
    steps = align_transcript(SCRIPT, "I lead the team we shipped it on time today")
    ops = [(s.op, s.ref, s.hyp) for s in steps]
    assert ("substitute", "led", "lead") in ops
    assert ("delete", "and", None) in ops
    assert ("insert", None, "today") in ops
    assert alignment_counts(steps) == {"equal": 8, "substitute": 1, "delete": 1, "insert": 1}


def test_alignment_of_empty_sides():
    assert align_transcript("", "") == []
    assert [s.op for s in align_transcript("two words", "")] == ["delete", "delete"]
    assert [s.op for s in align_transcript("", "heard")] == ["insert"]


def test_lost_words_are_the_scripts_last_words_lost_without_timings():
    words = script_words(SCRIPT, 3)
    assert [w.word for w in words if w.lost] == ["it", "on", "time."]
    assert not any(w.lost for w in script_words(SCRIPT, 0))
    assert not any(w.lost for w in script_words(SCRIPT, None))


def test_lost_words_follow_the_timings_when_recorded():
    timings = [{"word": "I", "after_turn_close": False},
               {"word": "um", "after_turn_close": False, "is_filler": True},
               {"word": "led", "after_turn_close": True}]
    words = script_words(SCRIPT, 99, timings)
    assert [(w.word, w.lost, w.filler) for w in words] == [
        ("I", False, False), ("um", False, True), ("led", True, False)]


def _row(profile, answer, score, decision, *, repeat=0, truncated=False, lost=0,
         transcript=SCRIPT, tier="strong", **kw):
    return {"call_id": f"{profile}-{answer}-{repeat}", "profile_id": profile,
            "answer_id": answer, "question_id": "q1", "tier": tier, "repeat": repeat,
            "cutoff": 50.0, "score": score, "decision": decision, "status": "ok",
            "script": SCRIPT, "transcript": transcript, "truncated": truncated,
            "words_lost": lost, "words_total": 10, "wer": 0.1, "turn_close_s": 2.0,
            "turn_closed_by": "silence_timeout", **kw}


SUMMARY = real_summary()  # profiles baseline and long_pauses


def _rows(**extra):
    crit = json.dumps([{"criterion_id": "specific", "points_max": 25, "points": 20.5}])
    return pd.DataFrame([
        _row("baseline", "a1", 80.0, "advance", scorer_criteria_json=crit,
             scorer_reason="clear example", **extra),
        _row("baseline", "a1", 78.0, "advance", repeat=1, **extra),
        _row("long_pauses", "a1", 30.0, "reject", truncated=True, lost=4,
             transcript="I led the team and we", **extra),
        _row("baseline", "a2", 40.0, "reject", tier="weak", **extra),
        _row("long_pauses", "a2", 35.0, "reject", tier="weak", **extra),
    ])


def test_entries_pair_each_answer_with_its_baseline_and_decide_on_mean_scores():
    entries = pair_entries(SUMMARY, _rows())
    assert [(e["profile_id"], e["answer_id"]) for e in entries] == [
        ("long_pauses", "a1"), ("long_pauses", "a2")]
    a1, a2 = entries
    assert a1["base"]["repeat"] == 0 and a1["n_base"] == 2 and a1["base_score"] == 79.0
    assert a1["flipped"] and a1["truncated"]
    assert not a2["flipped"] and not a2["truncated"]


def test_section_shows_struck_words_alignment_points_and_filter_data(tmp_path):
    doc = drilldown_html(tmp_path, SUMMARY, _rows())
    assert doc.startswith("<section id='calls'>") and "<script>" in doc
    assert "data-profile='long_pauses'" in doc and "data-tier='weak'" in doc
    assert doc.count("data-flipped='1'") == 1 and doc.count("data-truncated='1'") == 1
    # the truncated call: its last 4 script words struck, the missing ones deleted
    assert "<del class='dd-lost' title='lost after the turn closed'>time.</del>" in doc
    assert "<del>shipped</del><sup class='dd-mark'>D</sup>" in doc
    assert "repeat 0 shown of 2" in doc
    assert "<th scope='col'>criterion</th>" in doc and "clear example" in doc
    assert "not recorded" in doc and "<audio" not in doc  # no audio folder
    assert "Legend" in doc


def test_suspect_reasons_are_shown_when_the_columns_exist(tmp_path):
    doc = drilldown_html(tmp_path, SUMMARY, _rows(asr_suspect=True,
                                                  asr_suspect_reason="no speech heard"))
    assert "ASR suspect: no speech heard" in doc
    assert "ASR suspect" not in drilldown_html(tmp_path, SUMMARY, _rows())


def test_no_rows_is_an_empty_section(tmp_path):
    assert "No calls." in drilldown_html(tmp_path, SUMMARY, pd.DataFrame())


def _call_audio(sr=16000, n_s=2.0):
    t = np.arange(int(sr * n_s)) / sr
    samples = (0.5 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    words = (WordTiming("Hello", 0.1, 0.5), WordTiming("um", 0.6, 0.8, is_filler=True),
             WordTiming("there.", 1.5, 1.9))
    rendered = RenderedAnswer(audio=Audio(samples, sr), words=words, speech_start_s=0.1,
                              speech_end_s=1.9, snr_db_measured=None, engine="fake",
                              voice_id="x", render_key="k", engine_version="1", rate=1.0,
                              wpm_measured=None, pauses_total_s=0.0)
    line = Audio(samples[::2].copy(), sr // 2)
    return Audio(samples, sr), line, rendered, TurnResult(0.1, 1.2, "silence_timeout", ())


def test_call_audio_files_are_written_and_read_back(tmp_path):
    caller, line, rendered, turn = _call_audio()
    paths = write_call_audio(tmp_path / "audio", "cid", caller, line, rendered, turn)
    assert paths == audio_paths(tmp_path / "audio", "cid")
    data, sr = sf.read(paths["caller"])
    assert sr == 16000 and len(data) == 32000 and sf.info(paths["line"]).format == "FLAC"
    assert sf.info(paths["line"]).samplerate == 8000
    rec = read_call_audio(tmp_path / "audio", "cid")
    assert rec["turn_close_s"] == 1.2 and rec["line_sample_rate_hz"] == 8000
    assert [w["after_turn_close"] for w in rec["words"]] == [False, False, True]
    assert rec["words"][1]["is_filler"] and len(rec["line_peaks"]) == 400
    assert max(rec["line_peaks"]) == pytest.approx(0.5, abs=0.01)
    assert sorted(p.name for p in (tmp_path / "audio").iterdir()) == [
        "cid.caller.flac", "cid.json", "cid.line.flac"]  # no temporary file left
    assert read_call_audio(tmp_path / "audio", "other") is None
    mask = os.umask(0)
    os.umask(mask)  # the files get the umask's modes, not mkstemp's 0600
    assert all(p.stat().st_mode & 0o777 == 0o666 & ~mask for p in paths.values())


def test_a_failed_write_leaves_no_partial_file(tmp_path, monkeypatch):
    caller, line, rendered, turn = _call_audio()

    def broken(path, *a, **k):
        Path(path).write_bytes(b"half")
        raise OSError("disk full")
    monkeypatch.setattr(sf, "write", broken)
    with pytest.raises(OSError, match="disk full"):
        write_call_audio(tmp_path, "cid", caller, line, rendered, turn)
    assert list(tmp_path.iterdir()) == []


def test_peaks_bins():
    assert peaks(np.array([], np.float32)) == []
    assert peaks(np.array([0.1, -0.9, 0.2, 0.3], np.float32), 2) == [0.9, 0.3]


def test_campaign_writes_audio_per_call_and_no_audio_writes_none(tmp_path):
    from test_campaign_unit import make_stages, spec

    from rig.campaign.row import comparable
    from rig.campaign.runner import run_campaign

    kw = dict(repeats=1, question_ids=("q01_conflict",), profile_ids=("long_pauses",))
    with_audio = run_campaign(spec(tmp_path / "a", **kw), stages=make_stages(), progress=False)
    out = with_audio.out_dir
    for r in with_audio.rows:
        assert all(p.is_file() for p in audio_paths(out / "audio", r["call_id"]).values())
    html = (out / "report.html").read_text()
    assert "<section id='calls'>" in html and "audio/" in html
    without = run_campaign(spec(tmp_path / "b", audio=False, **kw), stages=make_stages(),
                           progress=False)
    assert not (without.out_dir / "audio").exists()
    assert ({r["call_id"]: comparable(r) for r in with_audio.rows}
            == {r["call_id"]: comparable(r) for r in without.rows})


def test_cli_has_the_no_audio_opt_out():
    from typer.testing import CliRunner

    from rig.cli import app

    for cmd in (["campaign", "run", "--help"], ["demo", "--help"]):
        res = CliRunner().invoke(app, cmd, env={"COLUMNS": "200"})
        assert res.exit_code == 0 and "--no-audio" in res.output


def test_a_real_calls_recording_is_linked_relative_to_the_folder(tmp_path):
    rec = tmp_path / "recordings" / "long_pauses-a1-0.wav"
    rec.parent.mkdir()
    sf.write(rec, np.zeros((800, 2), np.float32), 8000)
    rows = _rows(recording_path="elsewhere/when/run.wav")  # a cwd-relative path gone stale
    doc = drilldown_html(tmp_path, SUMMARY, rows)
    assert "src='recordings/long_pauses-a1-0.wav'" in doc


def test_local_worker_processes_write_the_audio(tmp_path):
    from executor_fakes import ROOT, make_stages

    from rig.campaign.executors import ExecutorSpec
    from rig.campaign.runner import CampaignSpec, run_campaign

    spec = CampaignSpec(answers_path=ROOT / "answer_bank" / "core",
                        profiles_path=ROOT / "profiles" / "demo",
                        pipeline_path=ROOT / "pipelines" / "reference.yaml",
                        out_dir=tmp_path / "c", profile_ids=("long_pauses",),
                        question_ids=("q01_conflict",), n_boot=200)
    res = run_campaign(spec, stages=make_stages(), progress=False,
                       executor=ExecutorSpec("local", workers=2, overlap=False))
    assert res.rows and all(read_call_audio(tmp_path / "c" / "audio", r["call_id"])
                            for r in res.rows)
