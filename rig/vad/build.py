"""The turn-detector stage of :class:`rig.stages.Stages`, built from a pipeline config."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rig.vad import TurnParams, TurnResult, detect_turn

if TYPE_CHECKING:
    from rig.audio import Audio
    from rig.pipeline import PipelineConfig


def build_turn_detector(pipeline: PipelineConfig) -> Callable[[Audio, TurnParams], TurnResult]:
    """The turn detector ``pipeline``'s ``vad:`` section runs: :func:`rig.vad.detect_turn`
    (VAD + endpointing, and the turn model when ``vad.turn_model`` names one), called per call
    with ``TurnParams.from_pipeline(pipeline)``. Its models (Silero, Smart Turn) load on first
    use and are kept."""
    del pipeline  # one detector: the engine and its settings travel in TurnParams
    return detect_turn
