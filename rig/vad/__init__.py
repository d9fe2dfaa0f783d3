"""Turn detection: a VAD plus an endpointing timer that closes the candidate's turn, and
optionally an end-of-turn model on top.

The interviewer closes the turn when its VAD has seen ``silence_timeout_ms`` of silence after
speech (see MEASUREMENT.md, "Turn close and truncation"). Speech after the close is lost.

The VAD is pipecat's ``SileroVADAnalyzer`` (Silero v5 ONNX on onnxruntime, no torch), driven
exactly as a pipecat interviewer drives it: 20 ms telephony frames of int16 PCM in, the VAD
state machine (``VADParams``: confidence, start_secs, stop_secs, min_volume) out, with
``stop_secs`` set to the endpointing timer. Silero consumes windows of 256 samples at 8 kHz or
512 at 16 kHz; pipecat buffers the 20 ms frames into those windows.

The modules:

* :mod:`rig.vad.params`: :class:`TurnParams`, :class:`TurnResult`, :class:`Turn`.
* :mod:`rig.vad.analyzers`: the VAD analyzers (:func:`silero_analyzer`, :func:`vad_analyzer`)
  and the per-thread kept ones (:func:`kept_analyzer`, :func:`kept_turn_model`,
  :func:`release_analyzers`). **One Silero session per process**: a kept analyzer is reset
  before each recording to exactly the state a newly built one has; a test runs two
  recordings in a row on it and compares every turn with a fresh analyzer's.
* :mod:`rig.vad.tracker`: :class:`TurnTracker`, the one definition of speech start, speech
  end and turn close, run by :mod:`rig.vad.detect`, the live interviewer
  (:mod:`rig.calls.interviewer.session`) and the caller agent (:mod:`rig.calls.agent.loop`).
* :mod:`rig.vad.detect`: :func:`detect_turn` stops at the first close (a campaign call holds
  one answer); :func:`detect_turns` runs the same VAD and timer over a whole recording and
  returns every turn (production monitoring, :mod:`rig.monitor.signals`).

**Machine speed.** Nothing here reads a clock: pipecat 1.14's Silero analyzer resets its
model every 2 s of *audio* (windows counted), smart-turn runs on
:func:`rig.vad.smart_turn.audio_clock`; ``tests/test_suspect_vad_speed_integration.py`` compares the
turns under a fast and a very slow clock.

**Engines** (``TurnParams.engine``, ``vad.engine`` of the pipeline): ``silero`` as above, or
``webrtcvad`` (:mod:`rig.vad.webrtc`: webrtcvad's decisions under the same pipecat state
machine and timer). **Turn model** (``TurnParams.turn_model``, ``turn.model``): ``none``, or
``smart-turn`` (:mod:`rig.vad.smart_turn`): when the VAD's timer fires the model is asked
whether the turn is complete, and the turn stays open while it says no (``closed_by`` then
reads ``turn_model`` or ``turn_model_timeout``). Each is kept per thread and reset per
recording like the Silero analyzer.
"""

from rig.vad.analyzers import (
    kept_analyzer,
    kept_turn_model,
    release_analyzers,
    silero_analyzer,
    vad_analyzer,
)
from rig.vad.detect import detect_turn, detect_turns
from rig.vad.params import FRAME_MS, SILERO_RATES_HZ, ClosedBy, Turn, TurnParams, TurnResult
from rig.vad.tracker import CloseReason, TurnEvent, TurnTracker

__all__ = ["FRAME_MS", "SILERO_RATES_HZ", "CloseReason", "ClosedBy", "Turn", "TurnEvent",
           "TurnParams", "TurnResult", "TurnTracker", "detect_turn", "detect_turns",
           "kept_analyzer", "kept_turn_model", "release_analyzers", "silero_analyzer",
           "vad_analyzer"]
