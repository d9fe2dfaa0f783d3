"""Turn detection's settings and results: :class:`TurnParams` (the VAD, the endpointing timer,
the turn model), :class:`TurnResult` (one answer's turn) and :class:`Turn` (each turn of a
whole recording). Times are seconds from the start of the audio."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FRAME_MS = 20
SILERO_RATES_HZ = (8000, 16000)

ClosedBy = Literal["silence_timeout", "turn_model", "turn_model_timeout", "end_of_audio",
                   "no_speech", "media_outage"]


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
    ``'media_outage'``: the line carried no frames for the pipeline's
    ``faults.outage_window_ms`` after speech began; the turn closed that long after the last
    frame (:mod:`rig.campaign.faults`).
    """
    speech_start_s: float | None
    turn_close_s: float
    closed_by: ClosedBy
    speech_segments_s: tuple[tuple[float, float], ...]



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
