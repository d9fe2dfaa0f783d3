"""The replay test data (tests/replay_data.py) checked with rig's real components: the bank
loads and its scripts are the recordings' words; every built file decodes as the monitor reads
it; Silero under a 2000 ms timer keeps every answer whole and under 700 ms cuts exactly the
long-pause answers, at their first long pause; faster-whisper tiny.en transcribes every answer
with WER < 0.35; the turn spans and the stereo interviewer's questions are where the truth
says. Real speech from ../shared/data/speech (skipped without it)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import replay_data as rd

from rig.answers import load_bank
from rig.asr.wer import wer
from rig.asr.whisper import transcribe
from rig.audio import Audio
from rig.calls.agent.question_match import match_question
from rig.monitor.meta import iter_calls
from rig.monitor.recording import RecordingError, read_call_audio
from rig.script import Pause, parse_script
from rig.vad import TurnParams, detect_turn, detect_turns

pytestmark = [pytest.mark.integration,
              pytest.mark.allowed_skip("needs ../shared/data/speech (real recordings)"),
              pytest.mark.skipif(not rd.SHARED_SPEECH.is_dir(),
                                 reason=f"no {rd.SHARED_SPEECH}")]
FOLDERS = ("per_answer", "manifest", "turns", "stereo", "bad")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("replay")
    for name in FOLDERS:
        getattr(rd, f"build_{name}")(root / name)
    return root


def _audio(path: Path, layout: str | None = None):
    return read_call_audio(path.read_bytes(), "wav", layout)


def _answer_files(built: Path) -> dict[str, Path]:
    return {key: built / "per_answer" / f"call-{i + 1:02d}-{key}.wav"
            for i, key in enumerate(rd.ANSWERS)}


def test_bank_loads_and_its_scripts_are_the_recorded_words() -> None:
    bank = load_bank(rd.REPLAY_BANK)
    assert {q.question_id for q in bank.questions} == {"printing", "character", "reunion",
                                                       "service"}
    answers = {a.answer_id: (q, a) for q, a in bank.answers()}
    for key, rec in rd.ANSWERS.items():
        q, whole = answers[rec.bank_answer_id]
        assert q.question_id == rec.question_id, key
        assert wer(rec.reference_transcript, whole.clean_text).wer == 0, key
        if rec.long_pauses:
            g = next(i for i, p in enumerate(rec.pauses_s) if p >= 0.7)
            _, cut = answers[rec.cut_answer_id]
            kept = " ".join(rd._clip_text(c) for c in rec.clips[:g + 1])
            assert wer(kept, cut.clean_text).wer == 0, key
            assert whole.reference_score - cut.reference_score >= 30, key
            marks = [s.pause_s for s in parse_script(whole.script) if isinstance(s, Pause)]
            assert marks == [p for p in rec.pauses_s if p >= 0.7], key
    assert len({rd.ANSWERS[k].speaker for k in rd.ANSWERS}) >= 4
    assert sum(a.long_pauses for a in rd.ANSWERS.values()) == 4


def test_every_built_file_decodes_and_its_metadata_parses(built: Path) -> None:
    for name in FOLDERS:
        calls = list(iter_calls(built / name))
        assert calls and all(c.error is None for c in calls), [c.error for c in calls]
        for c in calls:
            if c.meta.call_id == "bad-04-empty":
                with pytest.raises(RecordingError, match="empty"):
                    _audio(c.audio_path)
                continue
            audio = _audio(c.audio_path, c.meta.layout)
            assert audio.codec == ("mulaw" if audio.candidate.sample_rate_hz == 8000 else None)
            assert audio.n_channels == (2 if name == "stereo" or "stereo" in c.meta.call_id
                                        else 1)
    assert not (built / "stereo" / "stereo.expected.json").exists()
    assert set(rd.expected_turns(built / "stereo")) == {c[0] for c in rd.STEREO_CALLS}
    side = json.loads((built / "per_answer" / "call-01-printing_lj_long.json").read_text())
    assert side["question_id"] == "printing" and side["reference_transcript"]
    assert len((built / "manifest" / "manifest.jsonl").read_text().splitlines()) == 9


def test_vad_keeps_answers_whole_at_2000_ms_and_cuts_long_pauses_at_700_ms(built) -> None:
    rows = []
    for key, path in _answer_files(built).items():
        rec, spans = rd.ANSWERS[key], rd.ANSWERS[key].clip_spans_s
        a8 = _audio(path).candidate.resample(8000)
        close = {ms: detect_turn(a8, TurnParams(silence_timeout_ms=ms)).turn_close_s
                 for ms in (2000, 700)}
        rows.append(f"{key:26s} pause {rec.longest_pause_s:.2f} s  speech end "
                    f"{rd.LEAD_S + spans[-1][1]:6.2f}  close@2000 {close[2000]:6.2f}  "
                    f"close@700 {close[700]:6.2f}")
        assert close[2000] >= rd.LEAD_S + spans[-1][1] - 0.25, rows[-1]
        if rec.long_pauses:  # closes in the first long pause
            g = next(i for i, p in enumerate(rec.pauses_s) if p >= 0.7)
            assert rd.LEAD_S + spans[g][1] < close[700] < rd.LEAD_S + spans[g + 1][0], rows[-1]
        else:
            assert close[700] >= rd.LEAD_S + spans[-1][1] - 0.25, rows[-1]
    print("\n" + "\n".join(rows))


def test_tiny_en_transcribes_every_whole_answer(built: Path) -> None:
    rows = []
    for key, path in _answer_files(built).items():
        text = transcribe(_audio(path).candidate).text
        w = wer(rd.ANSWERS[key].reference_transcript, text).wer
        rows.append(f"{key:26s} WER {w:.3f}  {text}")
        assert w < 0.35, rows[-1]
    print("\n" + "\n".join(rows))


def _vad_spans(audio: Audio) -> list[tuple[float, float]]:
    return [(t.start_s, t.speech_end_s) for t in
            detect_turns(audio.resample(8000), TurnParams(silence_timeout_ms=2000))]


def test_turn_spans_hold_the_speech_the_vad_finds(built: Path) -> None:
    cases = [(json.loads(p.with_suffix(".json").read_text())["turns"], _audio(p).candidate)
             for p in sorted((built / "turns").glob("*.wav"))]
    cases += [(truth["turns"], _audio(built / "stereo" / f"{cid}.wav").candidate)
              for cid, truth in rd.expected_turns(built / "stereo").items()]
    for turns, audio in cases:
        found = _vad_spans(audio)
        assert len(found) == len(turns), (found, turns)
        for (s, e), t in zip(found, turns, strict=True):
            assert t["start_s"] <= s and e <= t["end_s"] <= audio.duration_s, (s, e, t)


def test_stereo_interviewer_asks_the_bank_questions(built: Path) -> None:
    questions = {q.question_id: q.question for q in load_bank(rd.REPLAY_BANK).questions}
    for cid, truth in rd.expected_turns(built / "stereo").items():
        iv = _audio(built / "stereo" / f"{cid}.wav", "candidate_left").interviewer
        asked = [line for line in truth["interviewer"]
                 if match_question(line["text"], questions)[0]]
        assert len(asked) == len(truth["turns"])
        for line, turn in zip(asked, truth["turns"], strict=True):
            assert turn["start_s"] > line["end_s"]
            sr = iv.sample_rate_hz
            cut = iv.samples[int((line["start_s"] - 0.1) * sr):int((line["end_s"] + 0.1) * sr)]
            heard = transcribe(Audio(np.ascontiguousarray(cut), sr)).text
            assert match_question(heard, questions)[0] == turn["question_id"], heard


def test_bad_cases_are_bad_in_the_way_they_say(built: Path) -> None:
    bad = built / "bad"
    side = {cid: json.loads((bad / f"{cid}.json").read_text()) for cid in rd.BAD_CASES}
    assert _audio(bad / "bad-00-good.wav").candidate.duration_s > 5
    dur = _audio(bad / "bad-01-turn-past-end.wav").candidate.duration_s
    assert max(t["end_s"] for t in side["bad-01-turn-past-end"]["turns"]) > dur
    ids = {q.question_id for q in load_bank(rd.REPLAY_BANK).questions}
    assert side["bad-02-unknown-question"]["question_id"] not in ids
    assert "layout" not in side["bad-03-stereo-no-layout"]
    assert _audio(bad / "bad-03-stereo-no-layout.wav").n_channels == 2
    assert (bad / "bad-04-empty.wav").stat().st_size == 0
