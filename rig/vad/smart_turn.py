"""pipecat's smart-turn v3 end-of-turn model, driven offline on the audio's own clock.

The model (``LocalSmartTurnAnalyzerV3``: a Whisper-encoder classifier, the
``smart-turn-v3.2-cpu.onnx`` that ships inside the pipecat-ai wheel, run on onnxruntime; no
network, no hub) reads the last 8 s of the turn's audio and says whether the speaker has
finished. A pipecat agent (``TurnAnalyzerUserTurnStopStrategy``) drives it so: every input
frame goes to ``append_audio(frame, user_speaking)``; when the VAD reports the user stopped,
``analyze_end_of_turn()`` is asked; COMPLETE ends the turn, INCOMPLETE keeps listening (a new
VAD start discards the verdict) until a later VAD stop gets COMPLETE or ``stop_secs`` of
silence after the VAD stop pass (``append_audio`` returns COMPLETE: the model's own timer).

pipecat stamps the buffered frames with ``time.monotonic()`` (wall time, as frames arrive in
real time); offline the rig feeds frames faster than real time, so its analyzer stamps them
with the audio clock instead (the end of each frame, seconds from the start of the
recording): the pre-speech window (``pre_speech_ms`` plus the VAD's ``start_secs``) and the
buffer trim then cover the same audio as on a live call.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

from rig.errors import EngineUnavailable

_clock = threading.local()


class _AudioClock:
    """Stands for the ``time`` module in pipecat's ``base_smart_turn``: ``monotonic()`` is
    this thread's audio clock while one is set (:func:`audio_clock`), else the real one."""

    def monotonic(self) -> float:
        t = getattr(_clock, "t_s", None)
        return time.monotonic() if t is None else t

    def __getattr__(self, name):
        return getattr(time, name)


@contextmanager
def audio_clock(t_s: float):
    """``time.monotonic()`` reads ``t_s`` inside pipecat's smart-turn on this thread."""
    _clock.t_s = t_s
    try:
        yield
    finally:
        _clock.t_s = None


def smart_turn_analyzer(sample_rate_hz: int, stop_ms: int):
    """pipecat's ``LocalSmartTurnAnalyzerV3`` on the bundled ONNX (one CPU thread), its own
    silence timer ``stop_secs = stop_ms / 1000``, taking int16 PCM at ``sample_rate_hz``
    (8000 or 16000; resampled to the model's 16 kHz inside). Frames must be appended inside
    :func:`audio_clock` (see the module's notes).

    Raises:
        EngineUnavailable: pipecat's smart-turn extra (onnxruntime, soxr) is missing.
    """
    try:
        from pipecat.audio.turn.smart_turn import base_smart_turn
        from pipecat.audio.turn.smart_turn.base_smart_turn import SmartTurnParams
        from pipecat.audio.turn.smart_turn.local_smart_turn_v3 import LocalSmartTurnAnalyzerV3
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise EngineUnavailable("turn.model smart-turn needs pipecat (its wheel ships the "
                                "ONNX): pip install 'pipecat-ai==1.14.0' (or "
                                "'rig[pipeline]')") from exc
    from loguru import logger

    logger.disable("pipecat")
    if not isinstance(base_smart_turn.time, _AudioClock):
        base_smart_turn.time = _AudioClock()  # the real clock wherever none is set
    turn = LocalSmartTurnAnalyzerV3(cpu_count=1,
                                    params=SmartTurnParams(stop_secs=stop_ms / 1000))
    turn.set_sample_rate(sample_rate_hz)
    return turn


def reset(turn) -> None:
    """Put a kept analyzer back in its as-built state (pipecat's ``clear()`` empties the
    buffer and timers; the VAD start delay is set again at the next VAD start)."""
    turn.clear()
    turn.update_vad_start_secs(0.0)
