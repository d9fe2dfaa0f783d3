"""Compatibility said up front (issue 27, item 6), logic only: the walk of a bot's processors
and the VAD verdict on chains of fake processors (:mod:`rig.calls.bots.pipeline_check`), the
load-time notes (:mod:`rig.calls.bots.compat`: the pipecat version, a bot folder's own
requirement, a keyword a pydantic params model drops, what in-process replaces) and the
campaign's record and warnings (:mod:`rig.calls.run.compat_log`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

import pytest

from rig.calls.bots.compat import (
    load_notes,
    requirement_notes,
    source_notes,
    version_note,
)
from rig.calls.bots.pipeline_check import check_pipeline, walk_processors
from rig.calls.run.compat_log import CompatLog

pytestmark = pytest.mark.unit


# --- fakes named like pipecat's classes (matched by name along the MRO) -----------------------
class FrameProcessor:
    def __init__(self, name: str) -> None:
        self.name = name
        self.next = None


class VADAnalyzer:
    pass


class SileroVADAnalyzer(VADAnalyzer):
    pass


class BaseTurnAnalyzer:
    pass


class LocalSmartTurnAnalyzerV3(BaseTurnAnalyzer):
    pass


class BaseUserTurnStartStrategy:
    pass


class VADUserTurnStartStrategy(BaseUserTurnStartStrategy):
    pass


class TranscriptionUserTurnStartStrategy(BaseUserTurnStartStrategy):
    pass


class TurnAnalyzerUserTurnStopStrategy:
    def __init__(self, analyzer) -> None:
        self._turn_analyzer = analyzer


@dataclass
class UserTurnStrategies:
    start: list = field(default_factory=lambda: [VADUserTurnStartStrategy(),
                                                 TranscriptionUserTurnStartStrategy()])
    stop: list = field(default_factory=list)


@dataclass
class LLMUserAggregatorParams:
    vad_analyzer: object | None = None
    user_turn_strategies: object | None = None


class UserTurnController:
    def __init__(self, strategies) -> None:
        self._user_turn_strategies = strategies


class LLMUserAggregator(FrameProcessor):
    def __init__(self, vad=None, stop=()) -> None:
        super().__init__("LLMUserAggregator#0")
        self._params = LLMUserAggregatorParams(vad_analyzer=vad)
        self._user_turn_controller = UserTurnController(UserTurnStrategies(stop=list(stop)))


class STTService(FrameProcessor):
    pass


class SegmentedSTTService(STTService):
    pass


class WhisperSTTService(SegmentedSTTService):
    pass


class DeepgramSTTService(STTService):
    pass


class LLMService(FrameProcessor):
    pass


class OpenAIRealtimeLLMService(LLMService):
    pass


class VADProcessor(FrameProcessor):
    def __init__(self) -> None:
        super().__init__("VADProcessor#0")
        self._vad_controller = type("VADController", (), {})()
        self._vad_controller._vad_analyzer = SileroVADAnalyzer()


class ParallelPipeline(FrameProcessor):
    def __init__(self, branches) -> None:
        super().__init__("ParallelPipeline#0")
        self.processors = branches


def chain(*procs):
    for a, b in pairwise(procs):
        a.next = b
    return procs[0]


def test_a_vad_in_the_user_aggregator_hears():
    c = check_pipeline(chain(FrameProcessor("RigInprocInput"), WhisperSTTService("stt"),
                             LLMUserAggregator(SileroVADAnalyzer()), LLMService("llm")))
    assert c.hearing == "hears"
    assert c.vad == ("SileroVADAnalyzer in LLMUserAggregator#0",)
    assert c.processors == ("RigInprocInput", "stt", "LLMUserAggregator#0", "llm")
    assert c.stt == ("stt (segmented)",)
    assert "VADUserTurnStartStrategy in LLMUserAggregator#0" in c.start_strategies
    assert "SileroVADAnalyzer" in c.message


def test_a_turn_analyzer_is_named_beside_the_vad():
    agg = LLMUserAggregator(SileroVADAnalyzer(),
                            stop=[TurnAnalyzerUserTurnStopStrategy(LocalSmartTurnAnalyzerV3())])
    c = check_pipeline(chain(FrameProcessor("in"), agg))
    assert c.hearing == "hears"
    assert c.turn_analyzers == ("LocalSmartTurnAnalyzerV3 in LLMUserAggregator#0",)


def test_no_vad_and_a_segmented_stt_is_deaf():
    c = check_pipeline(chain(FrameProcessor("in"), WhisperSTTService("whisper"),
                             LLMUserAggregator(None), LLMService("llm")))
    assert c.hearing == "deaf" and c.vad == ()
    assert "will not hear the answer" in c.message and "whisper (segmented)" in c.message


def test_no_vad_no_stt_is_deaf():
    assert check_pipeline(chain(FrameProcessor("in"), FrameProcessor("x"))).hearing == "deaf"


def test_a_vad_processor_anywhere_hears_even_in_a_parallel_branch():
    branch = chain(FrameProcessor("a"), VADProcessor())
    c = check_pipeline(chain(FrameProcessor("in"), ParallelPipeline([branch]),
                             WhisperSTTService("stt"), LLMUserAggregator(None)))
    assert c.hearing == "hears" and c.vad == ("SileroVADAnalyzer in VADProcessor#0",)
    assert "VADProcessor#0" in c.processors and c.processors[-1] == "LLMUserAggregator#0"


@pytest.mark.parametrize("procs", [
    lambda: [DeepgramSTTService("deepgram"), LLMUserAggregator(None)],  # transcription start
    lambda: [OpenAIRealtimeLLMService("realtime")],  # hears the audio itself
])
def test_no_vad_but_a_streaming_stt_or_speech_to_speech_service_is_unknown(procs):
    c = check_pipeline(chain(FrameProcessor("in"), *procs()))
    assert c.hearing == "unknown" and "rig cannot tell" in c.message


def test_walk_visits_each_processor_once_on_a_cycle():
    a, b = FrameProcessor("a"), FrameProcessor("b")
    a.next, b.next = b, a
    assert [p.name for p in walk_processors(a)] == ["a", "b"]


def test_an_attribute_that_raises_is_skipped():
    class Odd(FrameProcessor):
        @property
        def __dict__(self):
            raise RuntimeError("no")

    odd = Odd.__new__(Odd)
    c = check_pipeline(chain(FrameProcessor("in"), LLMUserAggregator(SileroVADAnalyzer())))
    assert c.hearing == "hears"
    assert check_pipeline(odd).hearing == "deaf"


# --- load-time notes ---------------------------------------------------------------------------
def test_version_note_is_a_warning_only_when_the_versions_differ():
    assert version_note("1.14.0", "1.14.0").severity == "info"
    n = version_note("0.0.90", "1.14.0")
    assert n.severity == "warning" and "0.0.90" in n.text and "1.14.0" in n.text
    assert version_note(None, "1.14.0").severity == "warning"


@pytest.mark.parametrize("text, warns", [
    ('dependencies = ["pipecat-ai[webrtc,silero]>=0.0.90,<1.0"]', True),
    ("pipecat-ai[daily]==0.0.95\n", True),
    ("pipecat-ai>=1.0\n", False),
    ("numpy\n", False),
])
def test_a_bot_folder_requirement_the_installed_version_misses(tmp_path, text, warns):
    name = "pyproject.toml" if "dependencies" in text else "requirements.txt"
    (tmp_path / name).write_text(text)
    notes = requirement_notes(tmp_path / "bot.py", "1.14.0")
    assert bool(notes) is warns
    if warns:
        assert str(tmp_path / name) in notes[0].text and "1.14.0" in notes[0].text


BOT = '''from pydantic import BaseModel


class VADAnalyzer:
    pass


class TransportParams(BaseModel):
    audio_in_enabled: bool = False


class DailyParams(TransportParams):
    vad_analyzer: object | None = None


params = {"webrtc": lambda: TransportParams(audio_in_enabled=True,
                                            vad_analyzer=VADAnalyzer())}
other = TransportParams(audio_in_enabled=True, colour="red")
daily = DailyParams(vad_analyzer=VADAnalyzer())


def later():
    return no_such_name(vad_analyzer=1)  # noqa: F821 - not resolvable: skipped


async def run_bot(transport, runner_args):
    pass
'''


def _load(tmp_path):
    from rig.paths import import_file

    p = tmp_path / "bot.py"
    p.write_text(BOT)
    return p, import_file(p, "rig_test_compat_")


def test_a_vad_keyword_the_params_model_drops_is_a_warning_naming_file_and_line(tmp_path):
    p, mod = _load(tmp_path)
    notes = source_notes(p, vars(mod))
    dropped = [n for n in notes if n.kind == "ignored_setting"]
    assert [n.severity for n in dropped] == ["warning", "info"]
    assert f"{p}:16: TransportParams(vad_analyzer=...)" in dropped[0].text
    assert "will not hear the answer" in dropped[0].text
    assert "colour" in dropped[1].text and "will not hear" not in dropped[1].text
    # a params class that has the field: no drop, but in-process rig's transport replaces it
    (rep,) = [n for n in notes if n.kind == "replaced"]
    assert f"{p}:19: DailyParams(vad_analyzer=...)" in rep.text and "not used" in rep.text


def test_load_notes_order_and_what_in_process_replaces(tmp_path):
    p, mod = _load(tmp_path)
    notes = load_notes(p, vars(mod), mod.run_bot, "run_bot")
    assert notes[0].kind == "pipecat_version"
    assert notes[-1].kind == "replaced" and "run_bot(transport" in notes[-1].text
    assert "8 kHz" in notes[-1].text and "TransportParams there are not used" in notes[-1].text


def test_a_syntax_error_gives_no_note(tmp_path):
    p = tmp_path / "bad.py"
    p.write_text("def (:\n")
    assert source_notes(p, {}) == []


def test_real_pipecat_transport_params_drops_vad_analyzer(tmp_path):
    """pipecat 1.14's TransportParams has no vad_analyzer: the check finds the silent drop."""
    pytest.importorskip("pipecat.transports.base_transport")
    from rig.calls.bots.app import load_bot

    p = tmp_path / "old_style_bot.py"
    p.write_text("from pipecat.transports.base_transport import TransportParams\n"
                 "transport_params = {'webrtc': lambda: TransportParams(\n"
                 "    audio_in_enabled=True, vad_analyzer=object())}\n"
                 "async def run_bot(transport, runner_args):\n    pass\n")
    notes = load_bot(f"pipecat:{p}:run_bot").notes
    (drop,) = [n for n in notes if n.kind == "ignored_setting"]
    assert drop.severity == "warning" and f"{p}:2:" in drop.text


# --- the campaign's record ----------------------------------------------------------------------
@dataclass(frozen=True)
class _Check:
    hearing: str
    message: str

    def to_dict(self):
        return {"hearing": self.hearing, "message": self.message}


def test_compat_log_says_warnings_once_and_writes_the_record(tmp_path):
    said: list[str] = []
    log = CompatLog(tmp_path, said.append, "pipecat:bot.py:run_bot", "pipecat")
    log.loaded([version_note("1.14.0", "1.14.0"), version_note("0.0.9", "1.14.0")])
    assert len(said) == 1 and "0.0.9" in said[0]
    log.pipeline("a1", _Check("deaf", "it will not hear the answer"))
    log.pipeline("a2", _Check("deaf", "it will not hear the answer"))
    log.pipeline("a3", None)
    assert said[1:] == ["warning: interviewer bot's pipeline: it will not hear the answer"]
    assert log.reason("a2") == "it will not hear the answer" and log.reason("a3") is None
    rec = json.loads((tmp_path / "bot_compat.json").read_text())
    assert rec["pipeline"]["hearing"] == "deaf" and len(rec["notes"]) == 2
    assert rec["bot"] == "pipecat:bot.py:run_bot" and rec["transport"] == "pipecat"


def test_a_hearing_pipeline_is_recorded_not_said(tmp_path):
    said: list[str] = []
    log = CompatLog(tmp_path, said.append, None, "pipecat")
    log.pipeline("a", _Check("hears", "a VAD is configured"))
    assert said == [] and log.reason("a") is None
    assert json.loads((tmp_path / "bot_compat.json").read_text())["pipeline"]["hearing"] == "hears"


def test_an_external_bot_is_said_to_be_not_inspectable(tmp_path):
    from rig.calls.run.caller import TransportCaller

    said: list[str] = []
    bank = Path(__file__).resolve().parent / "data" / "calls_bank"
    TransportCaller("webrtc", bank, tmp_path, interviewer_url="http://127.0.0.1:9",
                    progress=said.append)
    assert len(said) == 1 and "over webrtc: rig cannot inspect the bot" in said[0]
    said.clear()
    TransportCaller("webrtc", bank, tmp_path, progress=said.append)  # rig's own interviewer
    assert said == []
