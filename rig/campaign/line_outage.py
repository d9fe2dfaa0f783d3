"""A call's turn with or without a media outage (the profile's ``outage:``,
:mod:`rig.channel.outage`): which turn the interviewer took, which audio it holds, and which
script words reached it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rig.audio import Audio

if TYPE_CHECKING:
    from rig.pipeline import PipelineConfig
    from rig.profiles import Profile
    from rig.stages import Stages
    from rig.synth.base import RenderedAnswer
    from rig.vad import TurnParams, TurnResult


@dataclass(frozen=True)
class CallTurn:
    """The turn of one call.

    Attributes:
        turn: the turn on the render's clock.
        heard: the audio up to the turn's close as the interviewer holds it (an outage's
            samples absent).
        start_s, duration_s: the outage on the render's clock, seconds (``duration_s`` 0: none).
        heard_until_s: words starting at or after this never reached the interviewer
            (the turn's close, or the outage's start when the outage closed the turn).
    """
    turn: TurnResult
    heard: Audio
    start_s: float | None
    duration_s: float
    heard_until_s: float

    def heard_word(self, start_s: float) -> bool:
        """True when a word starting at ``start_s`` (render clock, s) reached the
        interviewer before the turn closed: before ``heard_until_s`` and not inside the
        outage."""
        if start_s >= self.heard_until_s:
            return False
        return not (self.duration_s and self.start_s is not None
                    and self.start_s <= start_s < self.start_s + self.duration_s)


def line_outage(stages: Stages, line: Audio, params: TurnParams, profile: Profile,
                rendered: RenderedAnswer, pipeline: PipelineConfig) -> CallTurn:
    """Detect the call's turn with ``stages.detect_turn`` on ``line``; with an outage in the
    profile, as :func:`rig.channel.outage.turn_with_outage` does (window: the pipeline's
    ``faults.outage_window_ms``; start: ``outage.at_share`` of the answer's speech)."""
    o = profile.outage
    if not o.duration_s:
        turn = stages.detect_turn(line, params)
        return CallTurn(turn, line.head(turn.turn_close_s), None, 0.0, turn.turn_close_s)
    from rig.channel.outage import turn_with_outage

    start = o.start_s(rendered.speech_start_s or 0.0,
                      rendered.speech_end_s or line.duration_s)
    got = turn_with_outage(stages.detect_turn, line, params, start, o.duration_s,
                           pipeline.faults.outage_window_ms)
    return CallTurn(got.turn, got.heard, start, o.duration_s, got.heard_until_s)
