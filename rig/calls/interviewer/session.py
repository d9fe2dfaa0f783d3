"""The reference interviewer as a live service: asks, listens, transcribes, scores.

One :class:`InterviewSession` per call. It asks each question of the call with TTS (rig's
hibari voice, or espeak-ng), listens with pipecat's Silero VAD and the pipeline's endpointing
timer (``vad.*`` and ``endpointing.silence_timeout_ms`` of ``pipelines/X.yaml``, the same
state machine and :class:`rig.vad.TurnTracker` as :func:`rig.vad.detect_turn`), transcribes
the turn with faster-whisper (``asr.*``), and, when the transcript's confidence is low
(``avg_logprob`` below ``repair_below_logprob``, or ``no_speech_prob`` above
``repair_above_no_speech``, or empty), asks the caller to repeat (the repair loop that burns
interview time), at most ``max_repeat_requests`` times per question. It scores the last
transcript with the rig scorer and writes the result
(:class:`rig.calls.interviewer.results.InterviewResult`) keyed by the call id
(:class:`rig.calls.interviewer.results.ResultStore`).

The session is transport-neutral: :meth:`InterviewSession.feed` takes the caller's audio
(8 kHz int16 PCM, any chunk size) and :meth:`InterviewSession.run` speaks through a ``say``
coroutine. :class:`InterviewerProcessor` puts it inside a pipecat pipeline
(``transport.input() -> InterviewerProcessor -> transport.output()``), which is how the
Twilio (websocket + ``TwilioFrameSerializer``) and WebRTC (``SmallWebRTCTransport``) services
run it; the SIP service feeds it from RTP directly.

Times in results are wall-clock epoch seconds (:func:`rig.calls.media.now_s`), so the caller
can place the turn close on its answer's word timings.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from rig.answers import Question
from rig.asr.whisper import AsrOptions, Transcript
from rig.audio import Audio, float_to_pcm16, pcm16_to_float
from rig.calls.interviewer.results import InterviewResult, QuestionResult
from rig.calls.media import CALL_RATE_HZ, FRAME_BYTES, FRAME_MS, now_s
from rig.pipeline import PipelineConfig
from rig.scorer.base import Scorer
from rig.vad import CloseReason, TurnEvent, TurnParams, TurnTracker

#: Active speech level of the interviewer's TTS, dBFS (as the caller's renders).
TTS_LEVEL_DB = -20.0


@dataclass(frozen=True)
class InterviewerSettings:
    """The service's behaviour beyond the pipeline YAML (not part of ``pipeline_version``).

    Attributes:
        voice: ``engine:voice_id`` of the TTS (``hibari:heart`` or ``espeak-ng:en-us``).
        repair_below_logprob: ask to repeat when the turn's ASR ``avg_logprob`` (natural log
            per token) is below this; 0.0 or above asks after every turn (tests).
        repair_above_no_speech: ask to repeat when ``no_speech_prob`` (0-1) is above this.
        max_repeat_requests: repeat requests per question at most.
        answer_timeout_s: with no speech this long after a question, the turn closes empty.
        max_turn_s: a turn longer than this is closed (s).
        The outage watchdog's window is the pipeline's ``faults.outage_window_ms``: once the
        caller's speech began, no frame for that long closes the turn (``media_outage``).
        pause_before_s: silence before the first question (s).
        repeat_prompt, closing: what the interviewer says.
    """
    voice: str = "hibari:heart"
    repair_below_logprob: float = -1.2
    repair_above_no_speech: float = 0.8
    max_repeat_requests: int = 1
    answer_timeout_s: float = 15.0
    max_turn_s: float = 120.0
    pause_before_s: float = 0.6
    repeat_prompt: str = "Sorry, I didn't catch that. Could you repeat your answer, please?"
    closing: str = "Thank you. That's all the questions I have. Goodbye."


@lru_cache(maxsize=64)
def _tts_pcm(voice: str, text: str) -> bytes:
    from rig.synth import get_engine

    engine, _, voice_id = voice.partition(":")
    audio = get_engine(engine, voice_id).synthesize(text, 1.0).resample(CALL_RATE_HZ)
    x = audio.samples.astype(np.float64)
    rms = np.sqrt(np.mean(x[np.abs(x) > 1e-3] ** 2)) if np.any(np.abs(x) > 1e-3) else 0.0
    if rms > 0:
        x = x * (10 ** (TTS_LEVEL_DB / 20) / rms)
        x = x * min(1.0, 0.89 / max(np.abs(x).max(), 1e-9))
    return float_to_pcm16(x.astype(np.float32)).tobytes()


def tts(voice: str, text: str) -> bytes:
    """Speak ``text`` as 8 kHz int16 PCM at an active level of -20 dBFS (cached per text).

    Raises:
        EngineUnavailable: the voice's engine is not installed.
    """
    return _tts_pcm(voice, " ".join(text.split()))


def warm_tts(settings: InterviewerSettings, questions: Sequence[Question]) -> None:
    """Speak (and cache) everything the interviewer may say: each question, the repeat
    prompt and the closing. A session speaks from its event loop, which serves every call at
    once; a prompt spoken there for the first time would stall the other calls' audio.

    Raises:
        EngineUnavailable: the voice's engine is not installed.
    """
    for text in (*(q.question for q in questions), settings.repeat_prompt, settings.closing):
        tts(settings.voice, text)


def check_voice(voice: str) -> None:
    """Speak one word with ``voice`` (``engine:voice_id``), so a voice that does not exist or
    is not installed fails when the service starts, not on every call (the word is cached).

    Raises:
        ConfigError: names ``--voice``, the value and why (the engine's own message).
    """
    from rig.errors import ConfigError

    engine, sep, voice_id = voice.partition(":")
    if not sep or not engine or not voice_id:
        raise ConfigError("--voice", "", "engine:voice_id, e.g. hibari:heart or "
                          "espeak-ng:en-us", voice)
    try:
        tts(voice, "Hello.")
    except Exception as exc:  # EngineUnavailable, an unknown engine, a failing synthesis
        raise ConfigError("--voice", "", str(exc), voice) from exc


def _default_transcribe(audio: Audio, options: AsrOptions) -> Transcript:
    from rig.calls.locks import transcribe_serial

    return transcribe_serial(audio, options)  # concurrent sessions share the model


def outage_deadline(speech_start_s: float | None, last_frame_s: float | None,
                    window_s: float) -> float | None:
    """When the outage watchdog closes a turn: ``window_s`` after the last frame arrived
    (epoch s), once speech began in the turn; None before speech (the answer timeout rules
    then) or before any frame."""
    if speech_start_s is None or last_frame_s is None:
        return None
    return last_frame_s + window_s


@dataclass(frozen=True)
class _Turn:
    speech_start_s: float | None
    close_s: float
    closed_by: CloseReason


class InterviewSession:
    """One call's interview. Feed it audio; run its script.

    Args:
        call_id: the rig's call id (results are keyed by it).
        questions: asked in order.
        pipeline: VAD, endpointing and ASR settings (``pipelines/X.yaml``).
        pipeline_version: stamped on the result.
        scorer: grades each final transcript (called in a worker thread).
        settings: repair loop and voice.
        seed: the scorer's seed.
        transport: recorded on the result.
        attempt_id: the caller's id of this attempt, echoed on the result (None if not sent).
        transcribe: (audio, AsrOptions) -> Transcript; default faster-whisper.
    """

    def __init__(self, *, call_id: str, questions: Sequence[Question], pipeline: PipelineConfig,
                 pipeline_version: str, scorer: Scorer, settings: InterviewerSettings,
                 seed: int = 0, transport: str = "unknown",
                 transcribe: Callable[[Audio, AsrOptions], Transcript] | None = None,
                 attempt_id: str | None = None) -> None:
        self.call_id, self.questions, self.pipeline = call_id, list(questions), pipeline
        self.attempt_id = attempt_id
        self.pipeline_version, self.scorer, self.settings = pipeline_version, scorer, settings
        self.seed, self.transport = seed, transport
        self._transcribe = transcribe or _default_transcribe
        if pipeline.turn.model != "none":
            from rig.errors import RigError

            raise RigError(f"pipeline {pipeline.name!r}: turn.model {pipeline.turn.model!r} "
                           "runs in simulated campaigns only; the real-call interviewer "
                           "closes turns with the VAD's timer (set turn.model: none)")
        self._params = TurnParams.from_pipeline(pipeline)
        self._vad = None
        self._tracker: TurnTracker | None = None
        self._pending = bytearray()
        self._frames: list[bytes] = []
        self._frame_t: list[float] = []
        self._last_frame_s: float | None = None  # epoch s the last frame arrived (watchdog)
        self._events: asyncio.Queue[TurnEvent] = asyncio.Queue()
        self.hung_up = asyncio.Event()

    # --- listening ---------------------------------------------------------------------------
    async def feed(self, pcm: bytes, sample_rate_hz: int = CALL_RATE_HZ) -> None:
        """The caller's audio: int16 mono PCM at ``sample_rate_hz`` (resampled to 8 kHz)."""
        from rig.vad import vad_analyzer

        if sample_rate_hz != CALL_RATE_HZ:
            a = Audio(pcm16_to_float(np.frombuffer(pcm, np.int16)), sample_rate_hz)
            pcm = float_to_pcm16(a.resample(CALL_RATE_HZ).samples).tobytes()
        if self._vad is None:
            self._vad = vad_analyzer(CALL_RATE_HZ, self._params)
            # the one turn tracker (rig.vad.tracker), on the epoch second each chunk arrived
            self._tracker = TurnTracker(self._params.start_ms,
                                        self._params.silence_timeout_ms, frame_ms=FRAME_MS)
        self._pending += pcm
        arrival = self._last_frame_s = now_s()
        while len(self._pending) >= FRAME_BYTES:
            frame = bytes(self._pending[:FRAME_BYTES])
            del self._pending[:FRAME_BYTES]
            self._frames.append(frame)
            self._frame_t.append(arrival)
            for ev in await self._tracker.feed(self._vad, frame, arrival):
                self._events.put_nowait(ev)

    def _audio_between(self, start_s: float, end_s: float) -> Audio:
        t = np.asarray(self._frame_t)
        idx = np.nonzero((t >= start_s) & (t <= end_s + 1e-6))[0]
        pcm = b"".join(self._frames[i] for i in idx)
        return Audio(pcm16_to_float(np.frombuffer(pcm, np.int16)), CALL_RATE_HZ)

    async def _wait_turn(self, listen_from_s: float) -> _Turn:
        """The caller's turn: from the first speech start (even one during the question: a
        barge-in) to the endpointing timer's close, the max-turn timer, or the outage
        watchdog (:func:`outage_deadline`: no frame for ``faults.outage_window_ms`` after
        speech began closes the turn then, ``media_outage``, so a turn never runs across a
        gap in the media)."""
        start: float | None = None
        s = self.settings
        window_s = self.pipeline.faults.outage_window_ms / 1000
        while True:
            timeout = (s.answer_timeout_s if start is None else s.max_turn_s) - (
                now_s() - (listen_from_s if start is None else start))
            outage = outage_deadline(start, self._last_frame_s, window_s)
            by_outage = outage is not None and outage - now_s() < timeout
            if by_outage:
                if outage <= now_s():
                    return _Turn(start, outage, "media_outage")
                timeout = outage - now_s()
            try:
                ev = await asyncio.wait_for(self._events.get(), max(timeout, 0.01))
            except TimeoutError:
                if by_outage:  # the watchdog's wait: closed unless a frame came meanwhile
                    if outage_deadline(start, self._last_frame_s, window_s) == outage:
                        return _Turn(start, outage, "media_outage")
                    continue
                return _Turn(start, now_s(), "no_speech" if start is None else "max_turn")
            if ev.kind == "speech_started" and start is None:
                start = ev.t_s
            elif ev.kind == "turn_closed" and start is not None:
                if ev.t_s < listen_from_s:  # a whole utterance before the question ended
                    start = None
                    continue
                return _Turn(start, ev.t_s, ev.reason)

    # --- the script --------------------------------------------------------------------------
    async def run(self, say: Callable[[bytes], Awaitable[float]]) -> InterviewResult:
        """Ask every question, then close. ``say(pcm)`` plays 8 kHz int16 PCM and returns the
        epoch second its playout ended. Never raises: a failure is the result's ``error``."""
        started = now_s()
        done: list[tuple] = []  # (question, transcript, turn, end, attempts, t_asr, scoring)
        s = self.settings
        status, error = "ok", None
        try:
            await asyncio.sleep(s.pause_before_s)
            for q in self.questions:
                end = q_end = await say(tts(s.voice, q.question))
                attempts: list[str] = []
                while True:
                    turn = await self._wait_turn(end)
                    begin = min(end, turn.speech_start_s or end) - 0.3
                    heard = self._audio_between(begin, turn.close_s)
                    t0 = now_s()
                    tr = await asyncio.to_thread(self._transcribe, heard, AsrOptions(
                        model=self.pipeline.asr.model, language=self.pipeline.asr.whisper_language,
                        beam_size=self.pipeline.asr.beam_size,
                        compute_type=self.pipeline.asr.compute_type,
                        word_timestamps=self.pipeline.asr.word_timestamps))
                    t_asr = now_s() - t0
                    attempts.append(tr.text)
                    if self._needs_repair(tr) and len(attempts) <= s.max_repeat_requests:
                        end = await say(tts(s.voice, s.repeat_prompt))
                        continue
                    break
                # scored while the interview goes on (the next question, the closing)
                scoring = asyncio.ensure_future(self._score(q, tr.text))
                done.append((q, tr, turn, (q_end, end), tuple(attempts), t_asr, scoring))
            await say(tts(s.voice, s.closing))
        except asyncio.CancelledError:
            status, error = "hung_up", "the call ended before the interview did"
        except Exception as exc:  # the call's result records it; the service goes on
            status, error = "error", f"{type(exc).__name__}: {exc}"
        finally:
            if self._vad is not None:
                await self._vad.cleanup()
                self._vad = None
        out: list[QuestionResult] = []
        for q, tr, turn, end, attempts, t_asr, scoring in done:
            while True:  # the grading is owed even when the call is torn down meanwhile
                try:
                    res, t_scorer = await asyncio.shield(scoring)
                    break
                except asyncio.CancelledError:
                    continue
            out.append(QuestionResult(
                question_id=q.question_id, question_end_epoch_s=end[0],
                prompt_end_epoch_s=end[1],
                turn_speech_start_epoch_s=turn.speech_start_s,
                turn_close_epoch_s=turn.close_s, turn_closed_by=turn.closed_by,
                transcript=tr.text, asr_avg_logprob=tr.avg_logprob,
                asr_no_speech_prob=tr.no_speech_prob, repeat_requests=len(attempts) - 1,
                attempts=attempts, score=res.score, parse_status=res.parse_status,
                scorer_raw=res.raw, scorer_reason=res.reason, scorer_error=res.error,
                seed=self.seed, t_asr_s=t_asr, t_scorer_s=t_scorer))
        return InterviewResult(call_id=self.call_id, transport=self.transport,
                               pipeline_version=self.pipeline_version, started_epoch_s=started,
                               ended_epoch_s=now_s(), questions=tuple(out), status=status,
                               error=error, attempt_id=self.attempt_id)

    async def _score(self, q: Question, text: str):
        t0 = now_s()
        res = await asyncio.to_thread(self.scorer.score, q, text, self.seed)
        return res, now_s() - t0

    def _needs_repair(self, tr: Transcript) -> bool:
        s = self.settings
        if not tr.text.strip():
            return True
        if tr.avg_logprob is not None and tr.avg_logprob < s.repair_below_logprob:
            return True
        return tr.no_speech_prob is not None and tr.no_speech_prob > s.repair_above_no_speech


def make_processor(session: InterviewSession,
                   on_done: Callable[[InterviewResult], Awaitable[None]]):
    """A pipecat ``FrameProcessor`` running ``session`` between a transport's input and output.

    It consumes ``InputAudioRawFrame`` (the caller), pushes ``OutputAudioRawFrame`` (the
    interviewer's speech; the output transport paces it in real time), starts the script on
    ``StartFrame`` and calls ``on_done(result)`` when the script ends (the service then ends
    the pipeline from outside, as pipecat 1.14 requires).
    """
    from pipecat.frames.frames import (
        CancelFrame,
        EndFrame,
        InputAudioRawFrame,
        OutputAudioRawFrame,
        StartFrame,
    )
    from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

    class InterviewerProcessor(FrameProcessor):
        def __init__(self) -> None:
            super().__init__(name=f"interviewer-{session.call_id}")
            self._task = None

        async def _say(self, pcm: bytes) -> float:
            await self.push_frame(OutputAudioRawFrame(audio=pcm, sample_rate=CALL_RATE_HZ,
                                                      num_channels=1))
            await asyncio.sleep(len(pcm) / 2 / CALL_RATE_HZ + 2 * FRAME_MS / 1000)
            return now_s()

        async def _script(self) -> None:
            result = await session.run(self._say)
            await on_done(result)

        async def process_frame(self, frame, direction: FrameDirection):
            await super().process_frame(frame, direction)
            if isinstance(frame, InputAudioRawFrame):
                await session.feed(frame.audio, frame.sample_rate)
                return
            if isinstance(frame, StartFrame):
                await self.push_frame(frame, direction)
                self._task = self.create_task(self._script(), name="interview-script")
                return
            if isinstance(frame, EndFrame | CancelFrame) and self._task is not None:
                if not self._task.done():
                    await self.cancel_task(self._task)
                self._task = None
            await self.push_frame(frame, direction)

    return InterviewerProcessor()
