"""Parts of ``summary.json`` about faults (:mod:`rig.campaign.faults`): capture rate by answer
length."""

from __future__ import annotations

from rig.campaign.schema_base import _f, _Part


class CaptureBin(_Part):
    """Completed calls of one answer-length bin and how many the interviewer's VAD heard."""

    words: str = _f("the bin: script words, inclusive ('1-2', '3-5', '6-15', '16+')")
    n_calls: int = _f("completed calls whose answer has that many script words", ge=0)
    n_captured: int = _f("of those, calls whose answer the VAD heard (not vad_missed)", ge=0)
    capture_rate: float = _f("n_captured / n_calls", ge=0, le=1)
