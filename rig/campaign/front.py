"""The first half of a call, as plain data: :class:`FrontResult` (what
:func:`rig.campaign.call.run_call_front` returns and :func:`rig.campaign.call.finish_call`
scores)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rig.answers import Question


@dataclass(frozen=True)
class FrontResult:
    """The first half of a call (:func:`run_call_front`): everything up to and including ASR.

    Plain data (no audio, no stages), so it pickles and may cross a process boundary to the
    process that scores it (:func:`finish_call`).

    Attributes:
        row: the row's columns known after ASR (identity, condition, render, channel, turn,
            transcript, WER, similarity; ``status``/``error``/``traceback`` when a stage
            failed). Scoring columns are not in it yet.
        question: the question the answer was given to (its rubric and cutoff score it).
        transcript: what the ASR heard; None when a stage before scoring failed.
        seed: the call's seed (the scorer's sampling seed).
        oracle_score: the oracle's score of the clean script (0-100), None when it failed.
        timings_s: seconds per stage done so far (``synth``, ``channel``, ``vad``, ``asr``).
        turn_text: the script's words (no fillers) that started before the turn closed, when
            a word was lost; None when none was (the oracle's grade is reused) or a stage
            failed.
        scorer_text: what the scorer grades (:func:`rig.asr.transcript.scorer_text`); None:
            ``transcript``.
    """
    row: dict
    question: Question
    transcript: str | None
    seed: int
    oracle_score: float | None
    timings_s: dict[str, float]
    turn_text: str | None = None
    scorer_text: str | None = None

    @property
    def failed(self) -> bool:
        """True when a stage before scoring failed (the row says which, in ``error``)."""
        return self.row.get("status") == "error"
