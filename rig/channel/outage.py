"""A media outage on the simulated line: frames stop for ``duration_s`` mid-answer, and the
samples of that span are absent (not silence, not concealment: a dropped WebRTC track or a
stalled media stream delivers nothing).

A profile sets it (:class:`Outage`, the profile's ``outage:``); :func:`turn_with_outage`
decides the turn as the reference interviewer's watchdog does on a real call
(:mod:`rig.calls.interviewer.session`): when no frame arrives for the pipeline's
``faults.outage_window_ms`` after speech began, the turn closes that long after the last
frame (``closed_by='media_outage'``) and the interviewer has heard the audio up to the
outage. A gap shorter than the window is bridged: the VAD sees the frames before and after
it back to back (absent samples do not count as silence), and times after the gap are on the
render's clock (shifted by the gap).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from rig.audio import Audio


class Outage(BaseModel):
    """Frames stop for ``duration_s`` seconds, beginning ``at_share`` of the way through the
    answer's speech (0-1 of the span from its first to its last word); ``duration_s: 0`` (the
    default) is no outage."""
    model_config = ConfigDict(frozen=True, extra="forbid")
    duration_s: float = Field(0.0, ge=0.0, le=60.0)
    at_share: float = Field(0.5, gt=0.0, lt=1.0)

    def describe(self) -> str:
        return ("none" if not self.duration_s else
                f"no frames for {self.duration_s:g} s from {self.at_share:.0%} of the answer")

    def start_s(self, speech_start_s: float, speech_end_s: float) -> float:
        """Where it begins on the render's clock, seconds."""
        return speech_start_s + self.at_share * max(0.0, speech_end_s - speech_start_s)


def splice(audio: Audio, start_s: float, duration_s: float) -> Audio:
    """``audio`` without the samples of ``[start_s, start_s + duration_s)``."""
    sr = audio.sample_rate_hz
    a, b = round(start_s * sr), round((start_s + duration_s) * sr)
    return Audio(np.concatenate([audio.samples[:a], audio.samples[b:]]).astype(np.float32), sr)


@dataclass(frozen=True)
class OutageTurn:
    """A turn decided across an outage.

    Attributes:
        turn: the turn on the render's clock (:class:`rig.vad.TurnResult`).
        heard: the audio the interviewer holds for the turn (the outage's samples absent).
        heard_until_s: the render's time up to which words reached it (the outage's start
            when it closed the turn, else the turn's close).
    """
    turn: object
    heard: Audio
    heard_until_s: float


def turn_with_outage(detect_turn: Callable, line: Audio, params, start_s: float,
                     duration_s: float, window_ms: int) -> OutageTurn:
    """The turn of ``line`` (the whole answer as the line would carry it) when its frames
    stop at ``start_s`` for ``duration_s`` seconds, under an outage window of ``window_ms``
    (module docstring). ``detect_turn(audio, params) -> TurnResult`` is the pipeline's turn
    detector (:attr:`rig.stages.Stages.detect_turn`)."""
    window_s = window_ms / 1000
    start_s = min(max(0.0, start_s), line.duration_s)
    if duration_s >= window_s:
        before = detect_turn(line.head(start_s), params)
        open_at_gap = (before.speech_start_s is not None
                       and before.closed_by in ("end_of_audio", "no_speech"))
        if before.speech_start_s is not None and not open_at_gap:
            return OutageTurn(before, line.head(before.turn_close_s), before.turn_close_s)
        if open_at_gap:
            t = replace(before, turn_close_s=start_s + window_s, closed_by="media_outage")
            return OutageTurn(t, line.head(start_s), start_s)
    spliced = splice(line, start_s, duration_s)  # bridged, or no speech before the gap
    t = detect_turn(spliced, params)

    def back(x: float | None) -> float | None:
        return None if x is None else (x + duration_s if x > start_s else x)

    shifted = replace(t, speech_start_s=back(t.speech_start_s), turn_close_s=back(t.turn_close_s),
                      speech_segments_s=tuple((back(a), back(b)) for a, b in t.speech_segments_s))
    return OutageTurn(shifted, spliced.head(t.turn_close_s), shifted.turn_close_s)
