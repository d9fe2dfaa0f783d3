"""The VAD analyzers and end-of-turn models turn detection runs on, built new or kept per
thread.

pipecat's ``SileroVADAnalyzer`` (Silero v5 ONNX on onnxruntime, no torch) or webrtcvad
(:mod:`rig.vad.webrtc`) under pipecat's VAD state machine, fed 20 ms frames of int16 PCM.
:func:`kept_analyzer` and :func:`kept_turn_model` keep one per (thread, sample rate, params)
and reset it before each recording to exactly the state a newly built one has (the ONNX
model's recurrent state and context window, the frame buffer, the rolling volume window and
the state machine's counters), instead of loading the model for every call.
"""

from __future__ import annotations

import copy
import threading

from rig.errors import EngineUnavailable
from rig.vad.params import TurnParams


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
    from rig.vad.smart_turn import reset, smart_turn_analyzer

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
        pool[key] = smart_turn_analyzer(sample_rate_hz, params.turn_model_stop_ms)
    reset(pool[key])
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
