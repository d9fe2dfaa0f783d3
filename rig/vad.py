"""Turn detection: a VAD plus an endpointing timer that closes the candidate's turn.

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

ClosedBy = Literal["silence_timeout", "end_of_audio", "no_speech"]


@dataclass(frozen=True)
class TurnParams:
    """Endpointing settings.

    Attributes:
        silence_timeout_ms: silence after speech that closes the turn (pipecat ``stop_secs``).
        start_ms: speech needed before the VAD confirms the candidate started (``start_secs``).
        confidence: Silero speech-probability threshold, 0-1.
        min_volume: pipecat's smoothed-volume threshold, 0-1.
    """
    silence_timeout_ms: int = 800
    start_ms: int = 200
    confidence: float = 0.7
    min_volume: float = 0.6


@dataclass(frozen=True)
class TurnResult:
    """Where the candidate's turn started and closed, in seconds from the start of the audio.

    ``turn_close_s`` is the moment the endpointing timer fired (``closed_by='silence_timeout'``),
    or the end of the audio when it never fired; ``speech_start_s`` is None when no speech was
    detected (then the whole audio is the turn, ``closed_by='no_speech'``).
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


class _KeptAnalyzer:
    """A Silero analyzer and a copy of its state as built, to restore before each recording."""

    def __init__(self, sample_rate_hz: int, params: TurnParams) -> None:
        self.vad = silero_analyzer(sample_rate_hz, params)
        self._fresh = {k: copy.deepcopy(v) for k, v in vars(self.vad).items()
                       if k not in _KEPT_ATTRS}

    def reset(self):
        """The analyzer, in the state :func:`silero_analyzer` returns it (model included)."""
        vars(self.vad).update(copy.deepcopy(self._fresh))
        self.vad._model.reset_states()
        return self.vad


def kept_analyzer(sample_rate_hz: int, params: TurnParams):
    """This thread's Silero analyzer for (``sample_rate_hz``, ``params``), reset to the state
    of a newly built one (see the module's notes). The thread keeps it: never call
    ``cleanup()`` on it; :func:`release_analyzers` frees them.

    Raises:
        EngineUnavailable: pipecat (with Silero) is not installed.
    """
    pool: dict = _local.__dict__.setdefault("analyzers", {})
    key = (sample_rate_hz, params)
    if key not in pool:
        if len(pool) >= 4:  # a process rarely runs more than one endpointing setting
            release_analyzers()
            pool = _local.__dict__.setdefault("analyzers", {})
        pool[key] = _KeptAnalyzer(sample_rate_hz, params)
    return pool[key].reset()


def release_analyzers() -> None:
    """Free this thread's kept analyzers (their executor threads and ONNX sessions)."""
    for kept in _local.__dict__.pop("analyzers", {}).values():
        kept.vad._executor.shutdown(wait=False)


def _check_rate(audio: Audio, caller: str) -> None:
    if audio.sample_rate_hz not in SILERO_RATES_HZ:
        raise ValueError(f"{caller}: Silero VAD takes {SILERO_RATES_HZ} Hz, got "
                         f"{audio.sample_rate_hz} Hz; resample first")


def detect_turn(audio: Audio, params: TurnParams) -> TurnResult:
    """Run the VAD frame by frame and return where the turn closes.

    Args:
        audio: float32 mono at 8000 or 16000 Hz (what the interviewer receives).
        params: endpointing settings.

    Raises:
        ValueError: the sample rate is not one Silero accepts.
    """
    _check_rate(audio, "detect_turn")
    return asyncio.run(_detect(audio, params))


async def _events(audio: Audio, params: TurnParams):
    """Yield ``("start", onset_s)`` when the VAD confirms speech (dated back by ``start_ms``)
    and ``("close", t_s)`` when the endpointing timer fires, frame by frame."""
    from pipecat.audio.vad.vad_analyzer import VADState

    vad = kept_analyzer(audio.sample_rate_hz, params)
    pcm = audio.to_pcm16().tobytes()
    frame_bytes = audio.sample_rate_hz * FRAME_MS // 1000 * 2
    prev = VADState.QUIET
    for i in range(0, len(pcm) - frame_bytes + 1, frame_bytes):
        t_end = (i + frame_bytes) / 2 / audio.sample_rate_hz
        state = await vad.analyze_audio(pcm[i:i + frame_bytes])
        if state == VADState.SPEAKING and prev in (VADState.QUIET, VADState.STARTING):
            # pipecat confirms speech start_secs after it began
            yield "start", max(0.0, t_end - params.start_ms / 1000)
        if state == VADState.QUIET and prev in (VADState.STOPPING, VADState.SPEAKING):
            yield "close", t_end
        prev = state


async def _detect(audio: Audio, params: TurnParams) -> TurnResult:
    start_s: float | None = None
    seg_start: float | None = None
    segments: list[tuple[float, float]] = []
    events = _events(audio, params)
    try:
        async for kind, t in events:
            if kind == "start":
                seg_start = t
                if start_s is None:
                    start_s = t
            else:
                seg_end = max(0.0, t - params.silence_timeout_ms / 1000)
                segments.append((seg_start if seg_start is not None else 0.0, seg_end))
                return TurnResult(start_s, t, "silence_timeout", tuple(segments))
    finally:
        await events.aclose()
    if start_s is None:
        return TurnResult(None, audio.duration_s, "no_speech", ())
    segments.append((seg_start if seg_start is not None else start_s, audio.duration_s))
    return TurnResult(start_s, audio.duration_s, "end_of_audio", tuple(segments))


@dataclass(frozen=True)
class Turn:
    """One stretch of speech the endpointing timer closed, in seconds from the audio's start.

    ``start_s`` is the speech onset (pipecat's confirmation dated back by ``start_ms``);
    ``speech_end_s`` the last speech before the silence that closed it (``close_s`` minus the
    timer); ``close_s`` the moment the timer fired, or the end of the audio
    (``closed_by='end_of_audio'``, then ``speech_end_s == close_s``).
    """
    start_s: float
    speech_end_s: float
    close_s: float
    closed_by: Literal["silence_timeout", "end_of_audio"]

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
        ValueError: the sample rate is not one Silero accepts.
    """
    _check_rate(audio, "detect_turns")
    return asyncio.run(_detect_all(audio, params))


async def _detect_all(audio: Audio, params: TurnParams) -> tuple[Turn, ...]:
    turns: list[Turn] = []
    start: float | None = None
    async for kind, t in _events(audio, params):
        if kind == "start":
            start = t
        elif start is not None:
            end = max(start, t - params.silence_timeout_ms / 1000)
            turns.append(Turn(start, end, t, "silence_timeout"))
            start = None
    if start is not None:
        turns.append(Turn(start, audio.duration_s, audio.duration_s, "end_of_audio"))
    return tuple(turns)
