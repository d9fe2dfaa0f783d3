"""The pipeline's ``faults:`` block: what the offline interviewer does with a call whose
answer it did not hear, or heard as a fault (:class:`FaultPolicy`; the kinds and their
detection: :mod:`rig.campaign.faults`; ``docs/measurement.md``, "Faults").

Left out of :func:`rig.pipeline.pipeline_version` while it equals its defaults, so every
existing pipeline keeps its version: the default policy's figures are recomputed by the
summary from columns every row has (the suspect reasons, the WER's reference), so a row
logged before the policy and one logged after it are counted the same way; only the scorer
calls skipped on an excluded call differ (a score no figure reads). A setting other than the
default enters the hash.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

#: What to do with a call of a fault kind: ``exclude`` (not graded; left out of every mean
#: and the paired figures; counted per profile), or grade it as the other calls are.
Exclude = Literal["exclude", "grade"]


class FaultPolicy(BaseModel):
    """Per fault kind, ``exclude`` (the default: kept out of the scorer and the means, counted)
    or the alternative named; and the window that makes a gap in the frames an outage.

    ``vad_missed: grade_empty`` grades the empty text a VAD-gated interviewer received (its
    ASR was never run), never the recording: never a score for audio the interviewer did not
    hear. ``media_outage: grade`` (its default) grades what arrived before the outage closed
    the turn, as a truncated answer is graded; ``exclude`` leaves such calls out.
    """
    model_config = ConfigDict(frozen=True, extra="forbid")

    vad_missed: Literal["exclude", "grade_empty"] = "exclude"
    repetition_loop: Exclude = "exclude"
    empty_reference: Exclude = "exclude"
    media_outage: Exclude = "grade"
    outage_window_ms: int = Field(
        1000, ge=100, le=60000, description="no frames for this long closes the turn "
        "(closed_by media_outage): the reference interviewer's watchdog and the simulated "
        "line's outage alike")

    def excludes(self, kind: str) -> bool:
        """True when a call of fault ``kind`` is kept out of the scorer and the means."""
        return getattr(self, kind, "grade") == "exclude"
