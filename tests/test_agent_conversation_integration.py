"""The caller agent in an unscripted-looking conversation, with its real VAD (pipecat Silero)
and ASR (faster-whisper tiny.en), against a scripted interviewer in this test: a
:class:`~rig.calls.agent.loop.CallerLink` that plays hibari-rendered interviewer utterances in real
time and reacts to what the agent sends. No network. About 30 s of real time.

The interviewer opens the way pipecat's example bots do ("Hello! How can I assist you
today?"), waits for the agent's reply, thanks the candidate before asking anything, pauses,
asks a question in two sentences, and closes after the answer. The agent must reply to the
small talk with its short greeting (not the graded answer), say nothing over the thank-you or
in the pause, answer once after the question, and hang up after the goodbye.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from rig.audio import Audio, pcm16_to_float
from rig.calls.agent.brain import AgentAnswer, expected_question_s
from rig.calls.agent.loop import AgentSettings, render_replies, run_agent
from rig.calls.interviewer.session import tts
from rig.calls.media import FRAME_BYTES, FRAME_MS, PlayoutBuffer

pytestmark = pytest.mark.integration
VOICE = "hibari:heart"
QUESTION = ("Tell me about a time you disagreed with a coworker about how to get something "
            "done. What happened, and how did you handle it?")
ANSWER = "I once disagreed with a coworker about a deadline, and we talked it through."
PEAK = 300  # int16 peak above which a sent frame is the agent speaking


def _speech(text: str) -> Audio:
    return Audio(pcm16_to_float(np.frombuffer(tts(VOICE, text), np.int16)), 8000)


class ScriptedInterviewer:
    """A CallerLink whose far end is this script: utterances queued by :meth:`say` are pushed
    one 20 ms frame per tick (silence between them), and every frame the agent sends is kept
    with its loop time."""

    transport = "scripted"

    def __init__(self) -> None:
        self.playout = PlayoutBuffer()
        self.closed = asyncio.Event()
        self.sent: list[tuple[float, bool]] = []  # (loop time, agent speaking)
        self.said: list[tuple[str, float, float]] = []  # (text, start, end) in loop time
        self.hung_up = False

    async def send_frame(self, pcm: bytes) -> None:
        loud = np.abs(np.frombuffer(pcm, np.int16)).max() > PEAK
        self.sent.append((asyncio.get_running_loop().time(), bool(loud)))

    async def hangup(self) -> None:
        self.hung_up = True

    async def stats(self) -> dict:
        return {}

    async def say(self, text: str, pause_after_s: float = 0.0) -> None:
        """Speak ``text`` in real time, then ``pause_after_s`` of silence."""
        pcm = tts(VOICE, text)
        pcm += bytes(FRAME_BYTES - len(pcm) % FRAME_BYTES)
        frames = [pcm[i:i + FRAME_BYTES] for i in range(0, len(pcm), FRAME_BYTES)]
        frames += [bytes(FRAME_BYTES)] * round(pause_after_s * 1000 / FRAME_MS)
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        for i, f in enumerate(frames):
            if self.hung_up:
                return
            self.playout.push(f)
            await asyncio.sleep(max(0.0, t0 + (i + 1) * FRAME_MS / 1000 - loop.time()))
        self.said.append((text, t0, t0 + len(pcm) / 16000))

    async def agent_done(self, quiet_s: float = 1.0, timeout_s: float = 25.0) -> None:
        """Wait until the agent has spoken and then been quiet ``quiet_s``."""
        loop = asyncio.get_running_loop()
        t_end = loop.time() + timeout_s
        n0 = len(self.sent)
        while loop.time() < t_end and not self.hung_up:
            loud = [t for t, s in self.sent[n0:] if s]
            if loud and loop.time() - loud[-1] >= quiet_s:
                return
            await asyncio.sleep(0.05)
        raise AssertionError("the agent did not speak")

    def spoke(self) -> list[tuple[float, float]]:
        """The agent's talkspurts (start, end) in loop time (gaps under 1 s joined)."""
        out: list[list[float]] = []
        for t, loud in self.sent:
            if loud:
                if out and t - out[-1][1] < 1.0:
                    out[-1][1] = t
                else:
                    out.append([t, t])
        return [(a, b) for a, b in out]


async def _interview(link: ScriptedInterviewer) -> None:
    await asyncio.sleep(0.5)
    await link.say("Hello! How can I assist you today?")
    await link.agent_done()
    await link.say("Thank you for your time.", pause_after_s=1.3)
    await link.say("Tell me about a time you disagreed with a coworker about how to get "
                   "something done.", pause_after_s=0.6)
    await link.say("What happened, and how did you handle it?")
    await link.agent_done()
    await link.say("Thank you for your time. Goodbye.", pause_after_s=3.0)
    link.closed.set()


def _call(link: ScriptedInterviewer, answer: AgentAnswer, settings: AgentSettings,
          interview) -> tuple:
    """The agent against ``interview`` (a coroutine driving ``link``): its result and its
    events rounded for printing."""

    async def call():
        interviewer = asyncio.ensure_future(interview)
        try:
            return await run_agent(link, [answer], settings, replies=render_replies(_speech))
        finally:
            link.hung_up = True
            await asyncio.wait([interviewer], timeout=5)

    res = asyncio.run(call())
    events = [(round(t, 2), k, d) for t, k, d in res.events]
    print("agent events:", *events, sep="\n  ")
    return res, events


def test_the_agent_replies_to_small_talk_waits_out_thanks_and_answers_the_question():
    answer = AgentAnswer("q01_conflict", _speech(ANSWER), 0.5, 0.0,
                         expected_question_s(QUESTION), QUESTION)
    link = ScriptedInterviewer()
    res, events = _call(link, answer, AgentSettings(time_limit_s=60.0), _interview(link))
    kinds = [k for _, k, _ in events]
    said = {text: (a, b) for text, a, b in link.said}
    spurts = link.spoke()
    print("agent spoke:", [(round(a - link.sent[0][0], 2), round(b - link.sent[0][0], 2))
                           for a, b in spurts])

    # small talk got the short greeting reply, not the answer
    assert "heard_small_talk" in kinds and "reply_started" in kinds, events
    first_reply = next(d for _, k, d in events if k == "reply_started")
    assert first_reply == "greeting"
    # the answer: once, after the whole question (not over the thank-you, nor in the pauses)
    assert [p.question_id for p in res.plays] == ["q01_conflict"], events
    q_end = said["What happened, and how did you handle it?"][1]
    thanks = said["Thank you for your time."]
    answer_start = res.plays[0].start_epoch_s - res.t0_epoch_s + link.sent[0][0]
    assert answer_start > q_end, events
    assert not any(thanks[0] - 0.1 < a < q_end for a, _ in spurts), spurts
    assert res.plays[0].asked_text.lower().startswith("tell me about a time you disagreed")
    assert res.plays[0].match_similarity >= 0.3
    # two talkspurts: the reply and the answer
    assert len(spurts) == 2, spurts
    # the goodbye ended the call (not the agent's time limit)
    assert res.hung_up_by in ("caller", "interviewer"), events
    assert "heard_closing" in kinds and "time_limit" not in kinds


def test_a_repeat_that_would_run_past_the_calls_limit_is_not_started():
    """The interviewer asks the same question again after the answer, so late that the
    repeat would end after the call's limit: the agent hangs up before it (its limit must not
    cut the graded answer short and read as words the interviewer lost)."""
    speech = _speech(ANSWER)
    answer = AgentAnswer("q01_conflict", speech, 0.5, 0.0, expected_question_s(QUESTION),
                         QUESTION)
    q_s = _speech(QUESTION).duration_s
    # the repeat would start about here (both questions, the answer, the waits between)
    repeat_at_s = 0.5 + 2 * (q_s + 0.5 + 0.7) + speech.duration_s + 1.0
    link = ScriptedInterviewer()
    settings = AgentSettings(time_limit_s=repeat_at_s + speech.duration_s / 2)

    async def interview() -> None:
        await asyncio.sleep(0.5)
        await link.say(QUESTION)
        await link.agent_done()
        await link.say(QUESTION, pause_after_s=20.0)

    res, events = _call(link, answer, settings, interview())
    assert [p.question_id for p in res.plays] == ["q01_conflict"], events
    assert res.hung_up_by == "caller_time_limit", events
    last = events[-1]
    assert last[1] == "time_limit" and "would run past" in last[2], events
    assert last[0] < settings.time_limit_s, events


def test_an_answer_playing_at_the_calls_limit_is_finished():
    """The call's limit falls a second into the answer: the agent plays it to its end and
    waits ``ANSWER_TAIL_S`` for the interviewer before hanging up (its own limit must not cut
    the graded answer)."""
    from rig.calls.agent.loop import ANSWER_TAIL_S

    speech = _speech(ANSWER)
    answer = AgentAnswer("q01_conflict", speech, 0.5, 0.0, expected_question_s(QUESTION),
                         QUESTION)
    q_s = _speech(QUESTION).duration_s
    link = ScriptedInterviewer()
    # the answer starts about 0.5 s (the question's start) + q_s + 0.3-0.8 s; the limit 1 s in
    settings = AgentSettings(time_limit_s=0.5 + q_s + 1.5)

    async def interview() -> None:
        await asyncio.sleep(0.5)
        await link.say(QUESTION, pause_after_s=30.0)

    res, events = _call(link, answer, settings, interview())
    kinds = [k for _, k, _ in events]
    assert [p.question_id for p in res.plays] == ["q01_conflict"], events
    start = res.plays[0].start_epoch_s - res.t0_epoch_s
    assert start < settings.time_limit_s, events  # it began before the limit
    assert "limit_extended" in kinds and kinds[-1] == "time_limit", events
    # hung up only after the whole answer and the tail
    assert res.duration_s >= start + speech.duration_s + ANSWER_TAIL_S - 0.1, (res.duration_s,
                                                                             events)
    (a, b), = [(a, b) for a, b in link.spoke()]  # one talkspurt: the whole answer
    assert b - a == pytest.approx(speech.duration_s, abs=0.6)
