"""A call of two questions on loopback, over the Twilio Media Streams websocket (the fastest
link: no ICE or DTLS): hibari TTS on both sides, the caller agent (pipecat Silero VAD +
faster-whisper) against the reference interviewer on pipecat (Silero VAD with the pipeline's
endpointing, faster-whisper). The grades come from the fake scorer: what is tested is the
call's turn-taking, not the grading. About 40 s of real time.

The agent must answer the two questions in order, each once, and the call must end on the
closing remark that follows the last answer (not at the agent's time limit); the interviewer
must return a result for each question with the answer it was asked for.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from rig.answers import load_bank
from rig.asr.wer import wer
from rig.audio import Audio, pcm16_to_float
from rig.calls.agent.brain import AgentAnswer, expected_question_s
from rig.calls.agent.loop import AgentSettings, run_agent
from rig.calls.interviewer.results import ResultStore
from rig.calls.interviewer.service import InterviewerService, ServiceThread
from rig.calls.interviewer.session import InterviewerSettings, tts
from rig.calls.transports.twilio import TwilioLoopbackLink
from rig.pipeline import load_pipeline
from rig.scorer.fake import FakeScorer

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "tests" / "data" / "calls_bank"
VOICE = "hibari:heart"

HOURS = {
    "question_id": "q_hours", "category": "logistics", "rubric_version": 1, "cutoff": 60,
    "question": "How many hours a week can you work, and on which days?",
    "rubric": [{"id": "hours", "points": 50, "description": "Gives a number of hours a week."},
               {"id": "days", "points": 50, "description": "Names the days they can work."}],
    "answers": [
        {"answer_id": "qh_strong", "tier": "strong",
         "script": "I can work forty hours a week, Monday to Friday.",
         "reference_grades": [{"grader_id": "a", "score": 95}, {"grader_id": "b", "score": 90}]},
        {"answer_id": "qh_border", "tier": "borderline", "script": "Most weekdays, I think.",
         "reference_grades": [{"grader_id": "a", "score": 60}, {"grader_id": "b", "score": 55}]},
        {"answer_id": "qh_weak", "tier": "weak", "script": "It depends.",
         "reference_grades": [{"grader_id": "a", "score": 10}, {"grader_id": "b", "score": 5}]},
    ],
}


def _speech(text: str) -> Audio:
    return Audio(pcm16_to_float(np.frombuffer(tts(VOICE, text), np.int16)), 8000)


def test_a_two_question_call_is_answered_in_order_and_ends_with_the_question_set(tmp_path):
    bank_dir = tmp_path / "bank"
    bank_dir.mkdir()
    for f in ("bank.yaml", "q_recent_role.yaml"):
        shutil.copy(BANK / f, bank_dir / f)
    (bank_dir / "q_hours.yaml").write_text(yaml.safe_dump(HOURS, sort_keys=False))
    bank = load_bank(bank_dir)
    questions = [bank.question("q_recent_role"), bank.question("q_hours")]
    scripts = {q.question_id: next(a for a in q.answers if a.tier == "strong").clean_text
               for q in questions}
    answers = [AgentAnswer(q.question_id, _speech(scripts[q.question_id]), 0.5, 0.0,
                           expected_question_s(q.question)) for q in questions]
    store = ResultStore(tmp_path / "results.jsonl")
    # no repair loop: each question is asked once, so each answer is played once
    service = InterviewerService(load_pipeline(ROOT / "pipelines" / "reference.yaml"), bank,
                                 FakeScorer(), store,
                                 InterviewerSettings(max_repeat_requests=0))
    settings = AgentSettings(time_limit_s=90.0)

    async def call(url: str):
        link = TwilioLoopbackLink(url.replace("http", "ws", 1) + "/twilio/media", {
            "call_id": "two-questions", "question_ids": "q_recent_role,q_hours", "seed": "0"})
        await link.connect()
        try:
            return await run_agent(link, answers, settings)
        finally:
            await link.hangup()

    with ServiceThread(service.app(("twilio",))) as th:
        res = asyncio.run(call(th.url))
        result = store.wait("two-questions", 60)
    events = [(round(t, 2), kind, detail) for t, kind, detail in res.events]
    print("agent events:", *events, sep="\n  ")

    # the agent answered both questions, in order, each once
    assert [p.question_id for p in res.plays] == ["q_recent_role", "q_hours"], events
    assert not any(p.repeat for p in res.plays)
    assert res.plays[0].start_epoch_s < res.plays[1].start_epoch_s
    # ... and the call ended on the closing remark after the last answer, not at the agent's
    # time limit. The reference interviewer closes the call as its goodbye ends, so over the
    # websocket it is usually first ("interviewer"); the agent hangs up itself ("caller")
    # when it has heard the goodbye before the far end closed. Either way the agent heard
    # the closing remark (it used to drop an utterance cut short by the far end's hang-up).
    assert res.hung_up_by in ("caller", "interviewer"), events
    assert res.duration_s < settings.time_limit_s - 30
    kinds = [kind for _, kind, _ in res.events]
    last_answer = max(i for i, k in enumerate(kinds) if k == "answer_started")
    # (the goodbye may come as two utterances, "Thank you." then "That's all ... Goodbye.":
    # the thank-you alone waits, the goodbye closes)
    heard_after = [k for k in kinds[last_answer + 1:] if k.startswith("heard_")]
    assert heard_after and heard_after[-1] == "heard_closing", events
    assert "goodbye" in res.heard[-1][1].lower()

    # the interviewer heard each answer on its own question, and graded both
    assert result is not None and result["status"] == "ok", result
    got = result["questions"]
    assert [q["question_id"] for q in got] == ["q_recent_role", "q_hours"]
    for q, play in zip(got, res.plays, strict=True):
        print(f"{q['question_id']}: {q['transcript']!r}")
        assert wer(scripts[q["question_id"]], q["transcript"]).wer <= 0.2
        assert q["turn_closed_by"] == "silence_timeout" and q["repeat_requests"] == 0
        assert q["parse_status"] == "ok" and q["score"] is not None
        # the answer started after its question had ended, and the turn began with it
        assert play.start_epoch_s > q["question_end_epoch_s"]
        assert abs(q["turn_speech_start_epoch_s"] - play.start_epoch_s) < 1.0
