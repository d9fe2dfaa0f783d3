"""The replay's rows: one per (turn, version), typed; ``calls.parquet`` of a replay folder.

Identity: ``turn_key`` names one answer of one recording (the call id, the recording's
sha256, the turn's span and question, the question's rubric hash); ``row_id`` one replay of
it (``turn_key``, the version's label and ``pipeline_version``, the profile and whether the
codec was re-applied). A rerun finds the same ids and skips the rows already logged.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from rig.errors import RigError

VersionLabel = Literal["A", "B"]


def short_hash(*parts: object) -> str:
    """sha256 of the parts joined by ``|``, 16 hex digits."""
    return hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()[:16]


class ReplayRow(BaseModel):
    """One turn replayed (or logged) under one version. Units in the names; times in seconds
    from the turn's start unless named ``*_in_file_s``."""
    model_config = ConfigDict(extra="forbid", frozen=True)

    # identity
    replay_id: str
    row_id: str
    turn_key: str
    call_id: str
    source: str
    turn_index: int
    question_id: str
    turn_source: str
    question_match_similarity: float | None = None
    layout: str | None = None
    start_in_file_s: float
    end_in_file_s: float | None = None
    version: VersionLabel
    pipeline_version: str | None = None
    result_source: Literal["replayed", "logged"]
    profile_id: str | None = None
    codec_reapplied: bool = False
    status: Literal["ok", "error"] = "ok"
    error: str | None = None
    # turn detection (replayed rows)
    turn_duration_s: float | None = None
    speech_start_s: float | None = None
    turn_close_s: float | None = None
    closed_by: str | None = None
    truncated: bool | None = None
    speech_after_close_s: float | None = None
    words_lost: int | None = None
    lost_text: str | None = None
    # ASR
    transcript: str | None = None
    asr_avg_logprob: float | None = None
    asr_no_speech_prob: float | None = None
    reference_transcript: str | None = None
    wer: float | None = None
    # scorer and decision
    score: float | None = None
    parse_status: str | None = None
    scorer_error: str | None = None
    scorer_criteria_json: str | None = None
    decision: Literal["advance", "reject"] | None = None
    cutoff: float
    # measured segments (the monitor's signals, on the call; pauses on the turn)
    employer: str
    job_family: str
    language: str | None = None
    channel_class: str | None = None
    codec: str | None = None
    snr_db: float | None = None
    snr_method: str | None = None
    asr_logprob_call: float | None = None
    pace_wpm: float | None = None
    longest_pause_s: float | None = None
    seg_snr_db: str
    seg_asr_logprob: str
    seg_pace_wpm: str
    seg_longest_pause_s: str
    # timings
    t_vad_s: float | None = None
    t_asr_s: float | None = None
    t_scorer_s: float | None = None


#: column -> Arrow type name for :func:`rig.campaign.store.write_parquet` (every file has the
#: same columns and types, even when every value of one is null)
_ARROW = {str: "string", float: "float64", int: "int64", bool: "bool"}


def row_types() -> dict[str, str]:
    """Each column's Arrow type name, in schema order."""
    import typing

    out: dict[str, str] = {}
    for name, f in ReplayRow.model_fields.items():
        ann = f.annotation
        args = [a for a in typing.get_args(ann) if a is not type(None)] or [ann]
        base = args[0]
        if typing.get_origin(base) is Literal:
            base = str
        out[name] = _ARROW.get(base, "string")
    return out


def checked(row: dict) -> dict:
    """``row`` validated against :class:`ReplayRow` and returned with every column.

    Raises:
        RigError: a column of the wrong type or an unknown column (a bug in a stage)."""
    try:
        return ReplayRow.model_validate(row).model_dump()
    except ValidationError as exc:
        raise RigError(f"replay row {row.get('row_id')}: {exc}") from exc
