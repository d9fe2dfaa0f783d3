"""Score sources without a real call: the spec parser, extractor loading and its return
checks, and each source through the campaign's TransportCaller with the call itself replaced
by a fake (a synthetic AgentResult and BotRecord), each row saying which source gave its
score."""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from rig.audio import Audio
from rig.calls.agent.loop import AgentResult, AnswerPlay
from rig.calls.bots.record import BotRecord, BotTurn
from rig.calls.bots.score_sources import (
    RIG_GRADE_LABEL,
    ExtractorError,
    SourceSpec,
    load_extractor,
    parse_score_sources,
    run_extractor,
)
from rig.calls.interviewer.results import ResultStore
from rig.calls.run.caller import TransportCaller
from rig.campaign.row import CallRow
from rig.campaign.runner import CampaignSpec, run_campaign
from rig.errors import ConfigError
from rig.scorer.fake import FakeScorer
from rig.stages import Stages
from rig.synth.base import RenderedAnswer, WordTiming

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "tests" / "data" / "calls_bank"
SR = 8000
QUESTION = "What was your most recent job, and what did you do there?"


# --- the spec and the extractor ---------------------------------------------------------------
def test_spec_parses_single_sources_and_chains():
    assert parse_score_sources("interviewer") == (SourceSpec("interviewer"),)
    assert parse_score_sources("interviewer, rig") == (SourceSpec("interviewer"),
                                                       SourceSpec("rig"))
    (ex,) = parse_score_sources("extractor:my.pkg.scores:read_score")
    assert (ex.kind, ex.module, ex.function) == ("extractor", "my.pkg.scores", "read_score")
    (own,) = parse_score_sources("rig:asr")
    assert own.kind == "rig" and own.own_asr and str(own) == "rig:asr"
    (ex,) = parse_score_sources("extractor:/tmp/x/bot_scores.py:f")
    assert ex.module == "/tmp/x/bot_scores.py" and str(ex) == "extractor:/tmp/x/bot_scores.py:f"


@pytest.mark.parametrize("text, problem", [
    ("", "comma-separated chain"), ("llm", "unknown score source"),
    ("extractor:onlymodule", "extractor:MODULE:FUNCTION"),
    ("extractor:mod:not-a-name", "extractor:MODULE:FUNCTION"),
    ("rig,rig", "named twice"), ("rig,rig:asr", "named twice"),
    ("interviewer,,rig", "comma-separated chain")])
def test_bad_specs_are_a_config_error_naming_the_option(text, problem):
    with pytest.raises(ConfigError, match=problem) as err:
        parse_score_sources(text)
    assert "--score-source" in str(err.value)


def test_extractor_loads_from_a_file_and_bad_names_are_clear(tmp_path):
    f = tmp_path / "bot_scores.py"
    f.write_text("def read(record):\n    return record.messages[-1]['score']\nNOT_FN = 3\n"
                 "def three(a, b, c):\n    return 1\n")
    fn = load_extractor(SourceSpec("extractor", str(f), "read"))
    assert fn(BotRecord(messages=({"score": 71},))) == 71
    with pytest.raises(ConfigError, match="has no function missing"):
        load_extractor(SourceSpec("extractor", str(f), "missing"))
    with pytest.raises(ConfigError, match="has no function NOT_FN"):
        load_extractor(SourceSpec("extractor", str(f), "NOT_FN"))
    with pytest.raises(ConfigError, match="file not found"):
        load_extractor(SourceSpec("extractor", str(tmp_path / "nope.py"), "read"))
    with pytest.raises(ConfigError, match=r"cannot import.*no_such_module_xyz"):
        load_extractor(SourceSpec("extractor", "no_such_module_xyz", "read"))
    with pytest.raises(ConfigError, match=r"must take one argument.*three\(a, b, c\)"):
        load_extractor(SourceSpec("extractor", str(f), "three"))  # before any call


def test_extractor_returns_are_checked():
    rec = BotRecord(messages=({"function": "record_score", "arguments": {"score": 64}},))

    def named(value):
        def read_score(_record):
            return value
        return read_score

    assert run_extractor(named(64), rec).score == 64.0
    got = run_extractor(named({"score": 80, "decision": "advance", "reason": "clear"}), rec)
    assert (got.score, got.decision, got.reason) == (80.0, "advance", "clear")
    none = run_extractor(named(None), rec)
    assert none.score is None and none.raw == "None"  # no score found: never a score
    assert run_extractor(named({"score": None}), rec).score is None
    for bad, text in [("64", "'64'.*str"), (True, "must be a number"),
                      (float("nan"), "must be a number"), (101, "outside 0-100"),
                      ({"points": 3}, "holds 'score'"), ({"score": 5, "x": 1}, "unknown"),
                      ({"score": 5, "decision": "hire"}, "decision 'hire'"),
                      ([64], "expected a 0-100 score")]:
        with pytest.raises(ExtractorError, match=text) as err:
            run_extractor(named(bad), rec)
        assert "read_score" in str(err.value)

    def boom(_r):
        raise KeyError("score")
    with pytest.raises(ExtractorError, match="boom raised KeyError"):
        run_extractor(boom, rec)


# --- the sources through the campaign ---------------------------------------------------------
def fake_render(script, profile, seed, *, answer_id="", resolve_path=None, cache_dir=None):
    from rig.script import reference_text

    words, t = [], profile.response_delay_s
    for w in reference_text(script).split():
        words.append(WordTiming(w, t, t + 0.25))
        t += 0.3
    audio = Audio(np.zeros(int((t + 1) * SR), np.float32), SR)
    return RenderedAnswer(audio=audio, words=tuple(words), speech_start_s=words[0].start_s,
                          speech_end_s=t, snr_db_measured=None, engine="fake", voice_id="x",
                          render_key="fake", engine_version="fake 1", rate=1.0,
                          wpm_measured=None, pauses_total_s=0.0)


ASR_TEXT = "i was a shift lead at a grocery store"


def stages(asr_calls: list) -> Stages:
    from rig.asr.whisper import Transcript
    from rig.vad import TurnResult

    def transcribe(audio, options):
        asr_calls.append(audio)
        return Transcript(ASR_TEXT, -0.2, 0.01, audio.duration_s)

    return Stages(scorer=FakeScorer(), render=fake_render, caller_channel=lambda a, c, s: a,
                  telephony=lambda a, sr, codec: a,
                  detect_turn=lambda a, p: TurnResult(0.5, a.duration_s, "silence_timeout", ()),
                  transcribe=transcribe, content_similarity=lambda ref, hyp: 0.5)


def spec(out: Path) -> CampaignSpec:
    return CampaignSpec(answers_path=BANK, profiles_path=ROOT / "profiles" / "demo",
                        pipeline_path=ROOT / "pipelines" / "reference.yaml", out_dir=out,
                        answer_ids=("qr_strong",), profile_ids=("baseline",), n_boot=100,
                        transport="webrtc")


def call_of(t0: float, qid: str) -> AgentResult:
    """A 20 s call: the bot's greeting (0-1.5 s), its question (2-4.8 s), the answer played
    from 5.5 s, the bot's goodbye from 14 s."""
    sent = np.zeros(20 * SR, np.float32)
    sent[int(5.5 * SR):int(13 * SR)] = 0.1  # the answer
    silence = Audio(np.zeros(20 * SR, np.float32), SR)
    return AgentResult(t0, 20.0, (AnswerPlay(qid, t0 + 5.5, t0 + 5.0, False),), 0,
                       ((1.5, "Hello, thanks for joining."), (4.8, QUESTION),
                        (16.0, "Thank you for your time. Goodbye.")), (), "interviewer",
                       Audio(sent, SR), silence, 0, ((0.0, 1.5), (2.0, 4.8), (14.0, 16.0)), 0)


BOT_HEARD = "I was a shift lead at a grocery store for two years"


def bot_record(heard: bool = True, score_message: bool = True) -> BotRecord:
    return BotRecord(
        said=(BotTurn(0.0, 1.5, "Hello, thanks for joining."),
              BotTurn(2.0, 4.8, "So, tell me about your most recent job and what you did."),
              BotTurn(14.0, 16.0, "Thank you for your time. Goodbye.")),
        heard=((6.0, BOT_HEARD),) if heard else (),
        messages=({"type": "function_call", "name": "record_score",
                   "arguments": {"score": 77}},) if score_message else ())


def fake_caller(out: Path, record: BotRecord | None, sources: str, **kw) -> TransportCaller:
    caller = TransportCaller("webrtc", BANK, out, result_timeout_s=2.0,
                             score_sources=parse_score_sources(sources), **kw)
    caller._thread = SimpleNamespace(url="http://127.0.0.1:9", stop=lambda: None)
    caller.store = ResultStore()

    async def _place(base, params, answer, replies=None):
        res = call_of(time.time() - 25, params["question_ids"])
        if record is not None:
            caller._bot_records[params["attempt_id"]] = record
        return res, {"codec": "opus/48000", "packet_unit": "rtp", "packets_sent": 1,
                     "packets_received": 1, "packets_lost": 0, "jitter_ms": 1.0}

    caller._place = _place
    return caller


def run(tmp_path: Path, record: BotRecord | None, sources: str, **kw) -> tuple[dict, list]:
    asr: list = []
    out = tmp_path / "c"
    with fake_caller(out, record, sources, **kw) as caller:
        run_campaign(spec(out), stages=stages(asr), progress=False, call_fn=caller)
    (row,) = [json.loads(x) for x in (out / "calls.jsonl").read_text().splitlines()]
    assert len(pd.read_parquet(out / "calls.parquet")) == 1
    return row, asr


def read_score(record: BotRecord):
    """An extractor: the bot's LLM function call ``record_score``."""
    calls = [m for m in record.messages if m.get("name") == "record_score"]
    return calls[-1]["arguments"]["score"] if calls else None


EXTRACTOR = f"extractor:{__name__}:read_score"


def test_extractor_source_reads_the_bots_function_call(tmp_path):
    row, asr = run(tmp_path, bot_record(), EXTRACTOR)
    assert row["status"] == "ok", row["error"]
    assert row["score_source"] == "extractor" and row["score"] == 77.0
    assert row["parse_status"] == "ok" and row["scorer_mode"] is None
    assert row["decision"] == "advance"  # the question's cutoff 60, as on every row
    assert row["transcript"] == BOT_HEARD and not asr  # the bot's own transcript: no rig ASR
    assert row["interviewer_heard"] == BOT_HEARD
    assert row["question_asked"].startswith("So, tell me about your most recent job")
    assert 0 < row["question_match_similarity"] <= 1
    assert row["interviewer_said"].split(" | ")[0] == "Hello, thanks for joining."


def test_extractor_finding_no_score_is_a_parse_failure_never_a_score(tmp_path):
    row, _ = run(tmp_path, bot_record(score_message=False), EXTRACTOR)
    assert row["score_source"] == "extractor" and row["score"] is None
    assert row["parse_status"] == "missing_field" and row["decision"] is None
    assert "no score" in row["scorer_error"]


def test_rig_grades_the_bots_transcript_when_exposed(tmp_path):
    row, asr = run(tmp_path, bot_record(), "rig")
    assert row["score_source"] == "rig_grade_bot_transcript"
    assert row["transcript"] == BOT_HEARD and not asr
    assert row["score"] is not None and row["parse_status"] == "ok"  # the campaign's scorer
    # the answer's turn is over when the bot speaks again (14 s); origin 5.0 s
    assert row["turn_close_s"] == pytest.approx(9.0) and row["turn_closed_by"] == \
        "interviewer_spoke"
    # no speech segments from a real call's interviewer: the suspect checks are not run
    assert all(row[c] is None for c in ("asr_suspect", "asr_suspect_reason", "turn_suspect",
                                        "turn_suspect_reason"))


def test_rig_grades_its_own_asr_of_the_answer_audio_without_a_bot_transcript(tmp_path):
    row, asr = run(tmp_path, bot_record(heard=False), "rig")
    # over WebRTC the rig's ASR hears the audio the rig sent, not the bot's input: said so
    assert row["score_source"] == "rig_grade_sent_audio" and row["transcript"] == ASR_TEXT
    (audio,) = asr  # the answer's span of the interviewer-side audio: origin 5 s to 14 s
    assert audio.duration_s == pytest.approx(9.0)
    assert float(np.abs(audio.samples).max()) == pytest.approx(0.1)
    assert row["interviewer_heard"] is None


def test_agent_view_when_the_link_gives_no_bot_record(tmp_path):
    row, asr = run(tmp_path, None, "rig")
    assert row["score_source"] == "rig_grade_sent_audio" and len(asr) == 1
    assert row["question_asked"] == QUESTION  # the agent's ASR of the bot's question
    assert row["question_match_similarity"] == pytest.approx(1.0)
    assert "Goodbye" in row["interviewer_said"]


def test_a_bad_extractor_return_fails_the_call_naming_the_function(tmp_path):
    row, _ = run(tmp_path, BotRecord(messages=({"name": "record_score",
                                                "arguments": {"score": "high"}},)), EXTRACTOR)
    assert row["status"] == "error" and row["score_source"] is None
    assert "read_score" in row["error"] and "'high'" in row["error"]


def test_interview_log_is_written_beside_the_recording(tmp_path):
    row, _ = run(tmp_path, bot_record(), "rig")
    log = json.loads((tmp_path / "c" / "recordings" / f"{row['call_id']}.interview.json")
                     .read_text())
    assert log["score_source"] == "rig_grade_bot_transcript"
    assert [a["question_id"] for a in log["answers"]] == ["q_recent_role"]
    assert log["unanswered"] == []


def test_simulated_rows_say_interviewer_when_scored():
    assert CallRow.from_dict({"call_id": "a", "score": 50.0}).score_source == "interviewer"
    assert CallRow.from_dict({"call_id": "a", "score": None}).score_source is None
    assert CallRow.from_dict({"call_id": "a", "transport": "webrtc",
                              "score": 50.0}).score_source is None
    assert "not the bot's decision" in RIG_GRADE_LABEL


def test_reports_label_a_rig_grade_plainly(tmp_path):
    import html

    run(tmp_path, bot_record(heard=False), "rig")
    page = html.unescape((tmp_path / "c" / "report.html").read_text())
    assert ("Scores: 1 of 1 calls graded by the rig from its own ASR of the audio the rig "
            "sent (not what the bot took in): " + RIG_GRADE_LABEL) in page
    assert "Score source rig_grade_sent_audio" in page.replace("<code>", "").replace("</code>",
                                                                               "")
    assert "The bot asked:" in page and "The bot said:" in page


def test_a_report_of_the_bots_own_scores_needs_no_label():
    from rig.calls.bots.score_sources import score_source_note

    assert score_source_note(["interviewer", "interviewer", None]) is None
    assert score_source_note([]) is None
    assert score_source_note(["extractor"]) == ("Scores: 1 of 1 calls read from the bot's own "
                                                "output by an extractor.")


def test_rig_asr_takes_the_rigs_own_asr_even_with_a_bot_transcript(tmp_path):
    row, asr = run(tmp_path, bot_record(), "rig:asr")
    assert row["score_source"] == "rig_grade_sent_audio" and row["transcript"] == ASR_TEXT
    assert len(asr) == 1 and row["interviewer_heard"] == BOT_HEARD


def bot_view_caller(out: Path, sources: str, **q_extra) -> TransportCaller:
    """A caller whose (loopback or in-process) bot also returns its own view of the turn, as
    the reference interviewer's result or an in-process bot's frames do."""
    caller = fake_caller(out, bot_record(heard=False), sources)
    place = caller._place

    async def _place(base, params, answer, replies=None):
        res, stats = await place(base, params, answer, replies)
        t0 = res.t0_epoch_s
        q = {"question_id": params["question_ids"], "question_end_epoch_s": t0 + 4.8,
             "prompt_end_epoch_s": t0 + 4.8, "turn_speech_start_epoch_s": t0 + 5.6,
             "turn_close_epoch_s": t0 + 12.0, "turn_closed_by": "silence_timeout",
             "transcript": "I was a shift lead, bot's words", "asr_avg_logprob": None,
             "asr_no_speech_prob": None, "repeat_requests": 0, "attempts": [],
             "score": 70.0, "parse_status": "ok", "scorer_raw": "{}",
             "scorer_reason": None, "scorer_error": None, "seed": 0, "t_asr_s": None,
             "t_scorer_s": None, **q_extra}
        caller.store.put({"call_id": params["call_id"], "attempt_id": params["attempt_id"],
                          "status": "ok", "error": None, "questions": [q]})
        return res, stats

    caller._place = _place
    return caller


def run_bot_view(tmp_path: Path, sources: str, **q_extra) -> tuple[dict, list]:
    asr: list = []
    out = tmp_path / "c"
    with bot_view_caller(out, sources, **q_extra) as caller:
        run_campaign(spec(out), stages=stages(asr), progress=False, call_fn=caller)
    (row,) = [json.loads(x) for x in (out / "calls.jsonl").read_text().splitlines()]
    return row, asr


def test_the_bots_own_view_of_the_turn_is_graded_when_it_shows_it(tmp_path):
    row, asr = run_bot_view(tmp_path, "rig")
    assert row["score_source"] == "rig_grade_bot_transcript" and not asr
    assert row["transcript"] == "I was a shift lead, bot's words"
    # the bot's own close (12 s) minus the answer's origin (5 s), by its own endpointing
    assert row["turn_close_s"] == pytest.approx(7.0)
    assert row["turn_closed_by"] == "silence_timeout"


def test_rig_asr_hears_the_answer_up_to_the_bots_own_turn_close(tmp_path):
    row, asr = run_bot_view(tmp_path, "rig:asr")
    (audio,) = asr
    assert row["score_source"] == "rig_grade_sent_audio"
    assert audio.duration_s == pytest.approx(7.0)  # origin 5 s to the bot's close at 12 s


def test_a_bot_result_without_a_score_falls_through_the_chain(tmp_path):
    row, _ = run_bot_view(tmp_path, "interviewer,rig", score=None, parse_status="not_scored")
    assert row["score_source"] == "rig_grade_bot_transcript" and row["score"] is not None
    alone, _ = run_bot_view(tmp_path / "alone", "interviewer", score=None,
                            parse_status="not_scored")
    assert alone["score_source"] is None and alone["parse_status"] == "not_scored"
    scored, _ = run_bot_view(tmp_path / "scored", "interviewer,rig")
    assert scored["score_source"] == "interviewer" and scored["score"] == 70.0
