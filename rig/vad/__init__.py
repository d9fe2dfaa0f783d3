"""Turn detection: a VAD plus an endpointing timer that closes the candidate's turn, and
optionally an end-of-turn model on top.

The interviewer closes the turn when its VAD has seen ``silence_timeout_ms`` of silence after
speech (see MEASUREMENT.md, "Turn close and truncation"). Speech after the close is lost.

The VAD is pipecat's ``SileroVADAnalyzer`` (Silero v5 ONNX on onnxruntime, no torch), driven
exactly as a pipecat interviewer drives it: 20 ms telephony frames of int16 PCM in, the VAD
state machine (``VADParams``: confidence, start_secs, stop_secs, min_volume) out, with
``stop_secs`` set to the endpointing timer. Silero consumes windows of 256 samples at 8 kHz or
512 at 16 kHz; pipecat buffers the 20 ms frames into those windows.

:func:`detect_turn` stops at the first close (a campaign call holds one answer);
:func:`detect_turns` runs the same VAD and timer over a whole recording and returns every turn
(production monitoring, :mod:`rig.monitor.signals`).

**One Silero session per process.** Both run on an analyzer kept per (thread, sample rate,
params) and reset before each recording to exactly the state a newly built one has (pipecat's
analyzer and its ONNX model carry state from frame to frame: the recurrent state and context
window, the 20 ms frame buffer, the rolling volume window and the state machine's counters),
instead of loading the ONNX model for every call. A test runs two recordings in a row on the
kept analyzer and compares every turn with a fresh analyzer's.

**Machine speed.** Nothing here reads a clock: pipecat 1.14's Silero analyzer resets its
model every 2 s of *audio* (windows counted), smart-turn runs on
:func:`rig.vad.smart_turn.audio_clock`; ``tests/test_suspect_vad_speed.py`` compares the
turns under a fast and a very slow clock.

**Engines** (``TurnParams.engine``, ``vad.engine`` of the pipeline): ``silero`` as above, or
``webrtcvad`` (:mod:`rig.vad.webrtc`: webrtcvad's decisions under the same pipecat state
machine and timer). **Turn model** (``TurnParams.turn_model``, ``turn.model``): ``none``, or
``smart-turn`` (:mod:`rig.vad.smart_turn`): when the VAD's timer fires the model is asked
whether the turn is complete, and the turn stays open while it says no (``closed_by`` then
reads ``turn_model`` or ``turn_model_timeout``). Each is kept per thread and reset per
recording like the Silero analyzer.
"""

from __future__ import annotations

import asyncio
import copy
import threading
from dataclasses import dataclass
from typing import Literal

from rig.audio import Audio
from rig.errors import EngineUnavailable

FRAME_MS = 20
SILERO_RATES_HZ = (8000, 16000)

ClosedBy = Literal["silence_timeout", "turn_model", "turn_model_timeout", "end_of_audio",
                   "no_speech"]


@dataclass(frozen=True)
class TurnParams:
    """Endpointing settings.

    Attributes:
        silence_timeout_ms: silence after speech that closes the turn (pipecat ``stop_secs``);
            with a turn model, the silence after which the model is asked.
        start_ms: speech needed before the VAD confirms the candidate started (``start_secs``).
        confidence: Silero speech-probability threshold, 0-1 (silero only).
        min_volume: pipecat's smoothed-volume threshold, 0-1 (silero only).
        engine: ``silero`` or ``webrtcvad``.
        aggressiveness: webrtcvad's mode, 0-3 (webrtcvad only).
        frame_ms: webrtcvad's analysis frame, 10, 20 or 30 ms (webrtcvad only).
        turn_model: ``none`` or ``smart-turn``.
        turn_model_stop_ms: the turn model's own silence timer, counted from the VAD's stop
            (pipecat's ``SmartTurnParams.stop_secs``).
    """
    silence_timeout_ms: int = 800
    start_ms: int = 200
    confidence: float = 0.7
    min_volume: float = 0.6
    engine: Literal["silero", "webrtcvad"] = "silero"
    aggressiveness: int = 2
    frame_ms: int = 20
    turn_model: Literal["none", "smart-turn"] = "none"
    turn_model_stop_ms: int = 3000

    @classmethod
    def from_pipeline(cls, pipeline) -> TurnParams:
        """The settings of ``pipeline`` (:class:`rig.pipeline.PipelineConfig`): ``vad.*``,
        ``endpointing.silence_timeout_ms`` and ``turn.*``; another engine's fields keep
        their defaults here (they are unused)."""
        v, t = pipeline.vad, pipeline.turn
        engine_fields = {k: getattr(v, k) for k in ("confidence", "min_volume",
                                                     "aggressiveness", "frame_ms")
                         if getattr(v, k) is not None}
        model_fields = {} if t.stop_ms is None else {"turn_model_stop_ms": t.stop_ms}
        return cls(silence_timeout_ms=pipeline.endpointing.silence_timeout_ms,
                   start_ms=v.start_ms, engine=v.engine, turn_model=t.model,
                   **engine_fields, **model_fields)


@dataclass(frozen=True)
class TurnResult:
    """Where the candidate's turn started and closed, in seconds from the start of the audio.

    ``turn_close_s`` is the moment the endpointing timer fired (``closed_by='silence_timeout'``),
    with a turn model the moment it judged the turn complete at a VAD stop
    (``'turn_model'``) or its own silence timer fired (``'turn_model_timeout'``), or the end of
    the audio when none of them did (``'end_of_audio'``); ``speech_start_s`` is None when no
    speech was detected (then the whole audio is the turn, ``closed_by='no_speech'``).
    """
    speech_start_s: float | None
    turn_close_s: float
    closed_by: ClosedBy
    speech_segments_s: tuple[tuple[float, float], ...]


def silero_analyzer(sample_rate_hz: int, params: TurnParams):
    """pipecat's ``SileroVADAnalyzer`` set up with ``params`` (``stop_secs`` is the
    endpointing timer), ready for 20 ms frames of int16 PCM at ``sample_rate_hz`` (8000 or
    16000) through ``await analyze_audio(frame) -> VADState``. The caller owns it: ``await
    cleanup()`` when done. Used by :func:`detect_turn` and by the real-call agent and
    interviewer (:mod:`rig.calls`), so every stage runs the same state machine.

    Raises:
        EngineUnavailable: pipecat (with Silero) is not installed (the message says how).
    """
    from loguru import logger

    logger.disable("pipecat")  # pipecat logs every VAD (re)configuration at DEBUG to stderr
    try:
        from pipecat.audio.vad.silero import SileroVADAnalyzer
        from pipecat.audio.vad.vad_analyzer import VADParams
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise EngineUnavailable("the Silero VAD needs pipecat: pip install "
                                "'pipecat-ai[silero]==1.14.0' (or 'rig[pipeline]')") from exc
    vad = SileroVADAnalyzer(sample_rate=sample_rate_hz, params=VADParams(
        confidence=params.confidence, start_secs=params.start_ms / 1000,
        stop_secs=params.silence_timeout_ms / 1000, min_volume=params.min_volume))
    vad.set_sample_rate(sample_rate_hz)
    return vad


#: Analyzer attributes a reset leaves alone: the ONNX model (its own state is reset with
#: ``reset_states``) and the one-thread executor it runs on.
_KEPT_ATTRS = ("_model", "_executor")
_local = threading.local()


def vad_analyzer(sample_rate_hz: int, params: TurnParams):
    """A new pipecat ``VADAnalyzer`` of ``params.engine``: :func:`silero_analyzer` or
    :func:`rig.vad.webrtc.webrtcvad_analyzer`. The caller owns it (``await cleanup()``).

    Raises:
        ValueError: settings or a rate the engine does not take.
        EngineUnavailable: the engine's package is not installed.
    """
    if params.engine == "webrtcvad":
        from rig.vad.webrtc import webrtcvad_analyzer

        return webrtcvad_analyzer(sample_rate_hz, params)
    if params.engine != "silero":
        raise ValueError(f"VAD engine {params.engine!r}: the rig runs silero or webrtcvad")
    return silero_analyzer(sample_rate_hz, params)


class _KeptAnalyzer:
    """A VAD analyzer and a copy of its state as built, to restore before each recording."""

    def __init__(self, sample_rate_hz: int, params: TurnParams) -> None:
        self.vad = vad_analyzer(sample_rate_hz, params)
        self._fresh = {k: copy.deepcopy(v) for k, v in vars(self.vad).items()
                       if k not in _KEPT_ATTRS}

    def reset(self):
        """The analyzer, in the state :func:`vad_analyzer` returns it (model included)."""
        vars(self.vad).update(copy.deepcopy(self._fresh))
        self.vad._model.reset_states()
        return self.vad


def kept_analyzer(sample_rate_hz: int, params: TurnParams):
    """This thread's VAD analyzer for (``sample_rate_hz``, ``params``), reset to the state
    of a newly built one (see the module's notes). The thread keeps it: never call
    ``cleanup()`` on it; :func:`release_analyzers` frees them.

    Raises:
        EngineUnavailable: the engine's package (pipecat with Silero, webrtcvad) is missing.
    """
    pool: dict = _local.__dict__.setdefault("analyzers", {})
    key = (sample_rate_hz, params)
    if key not in pool:
        if len(pool) >= 4:  # a process rarely runs more than one endpointing setting
            release_analyzers()
            pool = _local.__dict__.setdefault("analyzers", {})
        pool[key] = _KeptAnalyzer(sample_rate_hz, params)
    return pool[key].reset()


def kept_turn_model(sample_rate_hz: int, params: TurnParams):
    """This thread's end-of-turn model for ``params.turn_model`` (``smart-turn``) at
    ``sample_rate_hz`` with ``params.turn_model_stop_ms``, cleared to its as-built state
    (its ONNX session is stateless between calls). Freed by :func:`release_analyzers`.

    Raises:
        ValueError: a turn model the rig does not run.
        EngineUnavailable: pipecat's smart-turn is not installed.
    """
    from rig.vad import smart_turn

    if params.turn_model != "smart-turn":
        raise ValueError(f"turn model {params.turn_model!r}: the rig runs smart-turn")
    pool: dict = _local.__dict__.setdefault("turn_models", {})
    key = (sample_rate_hz, params.turn_model, params.turn_model_stop_ms)
    if key not in pool:
        if len(pool) >= 4:  # a sweep of turn.stop_ms: free the older sessions
            for old in pool.values():
                if old._executor is not None:
                    old._executor.shutdown(wait=False)
            pool.clear()
        pool[key] = smart_turn.smart_turn_analyzer(sample_rate_hz, params.turn_model_stop_ms)
    smart_turn.reset(pool[key])
    return pool[key]


def release_analyzers() -> None:
    """Free this thread's kept analyzers and turn models (their executor threads and ONNX
    sessions)."""
    for kept in _local.__dict__.pop("analyzers", {}).values():
        kept.vad._executor.shutdown(wait=False)
    for turn in _local.__dict__.pop("turn_models", {}).values():
        if turn._executor is not None:
            turn._executor.shutdown(wait=False)
            turn._executor = None


def _check_rate(audio: Audio, caller: str) -> None:
    if audio.sample_rate_hz not in SILERO_RATES_HZ:
        raise ValueError(f"{caller}: the VAD takes {SILERO_RATES_HZ} Hz, got "
                         f"{audio.sample_rate_hz} Hz; resample first")


def detect_turn(audio: Audio, params: TurnParams) -> TurnResult:
    """Run the VAD frame by frame and return where the turn closes.

    Args:
        audio: float32 mono at 8000 or 16000 Hz (what the interviewer receives).
        params: endpointing settings.

    Raises:
        ValueError: the sample rate is not 8000 or 16000 Hz, or a setting the engine does
            not take (webrtcvad: frame_ms, aggressiveness).
        EngineUnavailable: the engine or turn model package is not installed.
    """
    _check_rate(audio, "detect_turn")
    return asyncio.run(_detect(audio, params))


async def _events(audio: Audio, params: TurnParams):
    """Frame by frame, yield ``("start", onset_s)`` when the VAD confirms speech (dated back by
    ``start_ms``), ``("stop", speech_end_s)`` when its timer fires (the last speech,
    ``silence_timeout_ms`` earlier) and ``("close", t_s, closed_by)`` when the turn closes: at
    the VAD's stop without a turn model; with one, where pipecat's
    ``TurnAnalyzerUserTurnStopStrategy`` would end the user's turn (:mod:`rig.vad.smart_turn`).
    """
    from pipecat.audio.turn.base_turn_analyzer import EndOfTurnState
    from pipecat.audio.vad.vad_analyzer import VADState

    from rig.vad.smart_turn import audio_clock

    vad = kept_analyzer(audio.sample_rate_hz, params)
    turn = None if params.turn_model == "none" else kept_turn_model(audio.sample_rate_hz, params)
    pcm = audio.to_pcm16().tobytes()
    frame_bytes = audio.sample_rate_hz * FRAME_MS // 1000 * 2
    prev = VADState.QUIET
    speaking = False  # pipecat's user-speaking flag: from the VAD's start to its stop
    for i in range(0, len(pcm) - frame_bytes + 1, frame_bytes):
        t_end = (i + frame_bytes) / 2 / audio.sample_rate_hz
        frame = pcm[i:i + frame_bytes]
        state = await vad.analyze_audio(frame)
        # pipecat pushes the VAD's started/stopped frame before the audio frame behind it
        if state == VADState.SPEAKING and prev in (VADState.QUIET, VADState.STARTING):
            # pipecat confirms speech start_secs after it began
            speaking = True
            if turn is not None:
                turn.update_vad_start_secs(params.start_ms / 1000)
            yield "start", max(0.0, t_end - params.start_ms / 1000)
        if state == VADState.QUIET and prev in (VADState.STOPPING, VADState.SPEAKING):
            speaking = False
            yield "stop", max(0.0, t_end - params.silence_timeout_ms / 1000)
            if turn is None:
                yield "close", t_end, "silence_timeout"
            else:
                verdict, _ = await turn.analyze_end_of_turn()
                if verdict == EndOfTurnState.COMPLETE:
                    yield "close", t_end, "turn_model"
        if turn is not None:
            with audio_clock(t_end):
                timed_out = turn.append_audio(frame, speaking) == EndOfTurnState.COMPLETE
            if timed_out:  # the model's own timer; it cleared itself
                yield "close", t_end, "turn_model_timeout"
        prev = state


async def _detect(audio: Audio, params: TurnParams) -> TurnResult:
    start_s: float | None = None
    seg_start: float | None = None
    segments: list[tuple[float, float]] = []
    events = _events(audio, params)
    try:
        async for kind, t, *why in events:
            if kind == "start":
                seg_start = t
                if start_s is None:
                    start_s = t
            elif kind == "stop":
                segments.append((seg_start if seg_start is not None else 0.0, t))
                seg_start = None
            else:
                return TurnResult(start_s, t, why[0], tuple(segments))
    finally:
        await events.aclose()
    if start_s is None:
        return TurnResult(None, audio.duration_s, "no_speech", ())
    if seg_start is not None:
        segments.append((seg_start, audio.duration_s))
    return TurnResult(start_s, audio.duration_s, "end_of_audio", tuple(segments))


@dataclass(frozen=True)
class Turn:
    """One stretch of speech the endpointing timer closed, in seconds from the audio's start.

    ``start_s`` is the speech onset (pipecat's confirmation dated back by ``start_ms``);
    ``speech_end_s`` the last speech before the silence that closed it (the VAD's last stop
    minus its timer); ``close_s`` the moment the turn closed (``closed_by`` as in
    :class:`TurnResult`), or the end of the audio (``closed_by='end_of_audio'``, then
    ``speech_end_s`` is the end of the audio if speech was still going on).
    """
    start_s: float
    speech_end_s: float
    close_s: float
    closed_by: Literal["silence_timeout", "turn_model", "turn_model_timeout", "end_of_audio"]

    @property
    def speech_s(self) -> float:
        """Duration of the turn's speech, pauses shorter than the timer included, seconds."""
        return max(0.0, self.speech_end_s - self.start_s)


def detect_turns(audio: Audio, params: TurnParams) -> tuple[Turn, ...]:
    """Every turn of a whole recording: the VAD and endpointing timer of :func:`detect_turn`,
    run to the end of the audio instead of stopping at the first close.

    A production call holds many candidate turns; :mod:`rig.monitor` uses them for speech
    pace, the SNR estimate's speech/non-speech split and truncation events.

    Args:
        audio: float32 mono at 8000 or 16000 Hz.
        params: endpointing settings.

    Returns:
        Turns in time order (empty when no speech was detected).

    Raises:
        ValueError: the sample rate is not 8000 or 16000 Hz, or a setting the engine does
            not take (webrtcvad: frame_ms, aggressiveness).
        EngineUnavailable: the engine or turn model package is not installed.
    """
    _check_rate(audio, "detect_turns")
    return asyncio.run(_detect_all(audio, params))


async def _detect_all(audio: Audio, params: TurnParams) -> tuple[Turn, ...]:
    turns: list[Turn] = []
    start: float | None = None
    end: float | None = None  # the turn's last speech end so far; None while speaking
    async for kind, t, *why in _events(audio, params):
        if kind == "start":
            if start is None:
                start = t
            end = None
        elif kind == "stop":
            end = t
        elif start is not None:
            turns.append(Turn(start, max(start, end if end is not None else t), t, why[0]))
            start = end = None
    if start is not None:
        turns.append(Turn(start, end if end is not None else audio.duration_s,
                          audio.duration_s, "end_of_audio"))
    return tuple(turns)
