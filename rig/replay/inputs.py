"""What a replay reads: recorded interviews in the monitor's input format, with the fields
that say where the candidate's answers are and which question each one answers.

A recording comes with the monitor's metadata (:mod:`rig.monitor.meta`: a JSON sidecar or a
manifest line; ``call_id``, ``timestamp``, ``employer``, ``job_family``, ``score``,
``decision``, ...) and one of three replay layouts:

=========================  ===============================================================
``question_id``            the recording is one answer to this bank question (mono: the
                           candidate; stereo: the candidate's channel by ``layout``). The
                           monitor's ``score``/``decision`` are version A's, and optional
                           ``transcript`` is A's transcript (``--logged-a``)
``turns``                  a whole interview: a list of ``{"question_id", "start_s",
                           "end_s"}`` (seconds from the file's start) spanning each answer,
                           each with optional logged ``transcript``, ``score``,
                           ``decision`` of version A and ``reference_transcript``
neither (stereo only)      a whole stereo interview: rig finds the turns from the
                           interviewer's channel (:mod:`rig.replay.turns`)
=========================  ===============================================================

``reference_transcript`` (optional, per answer or per turn): what the candidate said, as a
person transcribed it; with it each version's WER is computed.

A stereo recording must say which channel is the candidate (``layout``: ``candidate_left``
or ``candidate_right``), or the run gives ``--stereo-layout``: replay does not guess (the
monitor's default would silently grade the interviewer if the guess were wrong).

Errors name the file, the field and the value (:class:`ReplayInputError`); a bad call or turn
is reported and left out, and the rest goes on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rig.config import DuplicateKeyError, loads_strict, validation_error
from rig.errors import ConfigError, RigError
from rig.monitor.meta import CallInput, CallMeta

TurnSource = Literal["whole_recording", "metadata", "interviewer_channel"]


class ReplayInputError(RigError):
    """A recording, or one turn of it, that cannot be replayed; the message names the file,
    the field and the value."""


class TurnSpec(BaseModel):
    """One answer of a whole-interview recording (``turns[i]``), seconds from the file's
    start; optional logged version-A results and a human reference transcript."""
    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str = Field(min_length=1, max_length=200)
    start_s: float = Field(ge=0)
    end_s: float = Field(gt=0)
    transcript: str | None = None
    score: float | None = Field(None, ge=0, le=100)
    decision: Literal["advance", "reject"] | None = None
    reference_transcript: str | None = None

    @model_validator(mode="after")
    def _span(self) -> TurnSpec:
        if self.end_s <= self.start_s:
            raise ValueError(f"end_s ({self.end_s:g}) must be after start_s ({self.start_s:g})")
        return self


class ReplayFields(BaseModel):
    """The replay's own fields of a call's metadata (the monitor's are in
    :class:`rig.monitor.meta.CallMeta`); other fields are ignored."""
    model_config = ConfigDict(frozen=True, extra="ignore")

    question_id: str | None = Field(None, min_length=1, max_length=200)
    turns: tuple[TurnSpec, ...] | None = Field(None, min_length=1)
    transcript: str | None = None
    reference_transcript: str | None = None

    @field_validator("turns", mode="before")
    @classmethod
    def _json_text(cls, v: object) -> object:
        """A CSV manifest holds the list as JSON text."""
        if isinstance(v, str):
            if not v.strip():
                return None
            try:
                return loads_strict(v)
            except (json.JSONDecodeError, DuplicateKeyError) as exc:
                raise ValueError(f"not a JSON list of turns ({exc})") from exc
        return v

    @field_validator("question_id", "transcript", "reference_transcript", mode="before")
    @classmethod
    def _blank(cls, v: object) -> object:
        return (v.strip() or None) if isinstance(v, str) else v

    @model_validator(mode="after")
    def _one_layout(self) -> ReplayFields:
        if self.question_id is not None and self.turns is not None:
            raise ValueError("give question_id (one answer) or turns (a whole interview), "
                             "not both")
        return self


@dataclass(frozen=True)
class ReplayTurn:
    """One candidate answer to replay: its span in the recording and its question.

    ``start_s``/``end_s``: seconds from the file's start (``end_s`` None: to the end).
    ``logged_*``: version A's stored results (``--logged-a``), None when not given.
    """
    index: int
    question_id: str
    start_s: float
    end_s: float | None
    source: TurnSource
    match_similarity: float | None = None
    logged_transcript: str | None = None
    logged_score: float | None = None
    logged_decision: str | None = None
    reference_transcript: str | None = None


@dataclass(frozen=True)
class ReplayCall:
    """A recording and what the metadata says of it. ``turns`` is None when they are to be
    found from the interviewer's channel."""
    source: str
    meta: CallMeta
    audio_path: str
    fields: ReplayFields
    layout: str | None
    turns: tuple[ReplayTurn, ...] | None
    skipped: tuple[str, ...] = field(default_factory=tuple)
    #: fields of the record close to one rig reads (a typo): named in errors
    near_misses: tuple[str, ...] = ()


def parse_fields(raw: dict | None, source: str) -> ReplayFields:
    """The replay fields of one metadata record.

    Raises:
        ConfigError: a field is invalid (names ``source``, the field and the value).
    """
    try:
        return ReplayFields.model_validate(raw or {})
    except ValidationError as exc:
        raise validation_error(source, exc) from exc


def turns_of(fields: ReplayFields, meta: CallMeta, known_questions: set[str], source: str
             ) -> tuple[tuple[ReplayTurn, ...] | None, tuple[str, ...]]:
    """The turns the metadata gives, and a message for each one left out (a question the bank
    lacks: never graded against another rubric). ``(None, ())``: none given (found later from
    the interviewer's channel)."""
    skipped: list[str] = []
    if fields.question_id is not None:
        if fields.question_id not in known_questions:
            return (), (f"{source}: question_id: not in the answer bank (got "
                        f"{fields.question_id!r}); the answer is left out",)
        return (ReplayTurn(0, fields.question_id, 0.0, None, "whole_recording",
                           logged_transcript=fields.transcript, logged_score=meta.score,
                           logged_decision=meta.decision,
                           reference_transcript=fields.reference_transcript),), ()
    if fields.turns is None:
        return None, ()
    out = []
    for i, t in enumerate(fields.turns):
        if t.question_id not in known_questions:
            skipped.append(f"{source}: turns[{i}].question_id: not in the answer bank (got "
                           f"{t.question_id!r}); the turn is left out")
            continue
        out.append(ReplayTurn(i, t.question_id, t.start_s, t.end_s, "metadata",
                              logged_transcript=t.transcript, logged_score=t.score,
                              logged_decision=t.decision,
                              reference_transcript=t.reference_transcript))
    return tuple(out), tuple(skipped)


def check_logged(turn: ReplayTurn, source: str) -> None:
    """Refuse, under ``--logged-a``, an answer without version A's logged result or with a
    score off the bank's 0-100 scale (its delta against B's 0-100 score would mean nothing).

    Raises:
        ReplayInputError: names the file, the field and the value."""
    field = "score" if turn.source == "whole_recording" else f"turns[{turn.index}].score"
    if turn.logged_score is None and turn.logged_decision is None:
        raise ReplayInputError(f"{source}: {field}: --logged-a needs version A's logged score "
                               "or decision (got null); the answer is left out")
    if turn.logged_score is not None and not 0 <= turn.logged_score <= 100:
        raise ReplayInputError(f"{source}: {field}: version A's logged score must be on the "
                               f"bank's 0-100 scale, as B's is (got {turn.logged_score:g}); "
                               "rescale it, or replay A (drop --logged-a); the answer is left "
                               "out")


#: The fields rig reads from a replay record (the monitor's and the replay's).
KNOWN_FIELDS = frozenset({*CallMeta.model_fields, *ReplayFields.model_fields})


def near_misses(raw: dict | None) -> list[str]:
    """``'questionid' (did you mean question_id?)`` for each field of ``raw`` that rig does
    not read but that is close to one it does (other fields, a name or a phone number, are
    dropped without a word, by design)."""
    import difflib

    out = []
    for key in raw or {}:
        if key in KNOWN_FIELDS:
            continue
        close = difflib.get_close_matches(key, sorted(KNOWN_FIELDS), n=1, cutoff=0.8)
        if close:
            out.append(f"{key!r} (did you mean {close[0]}?)")
    return out


def check_span(turn: ReplayTurn, duration_s: float, source: str) -> None:
    """Refuse a turn that reaches past the recording's end (by more than 50 ms: rounding).

    Raises:
        ReplayInputError: names the file, ``turns[i].end_s`` and its value.
    """
    if turn.source != "metadata":
        return
    end = turn.end_s if turn.end_s is not None else duration_s
    if turn.start_s >= duration_s or end > duration_s + 0.05:
        what = "start_s" if turn.start_s >= duration_s else "end_s"
        value = turn.start_s if what == "start_s" else end
        raise ReplayInputError(f"{source}: turns[{turn.index}].{what}: past the recording's "
                               f"end ({duration_s:.2f} s) (got {value:g}); the turn is left "
                               "out")


def replay_call(item: CallInput, known_questions: set[str], stereo_layout: str | None
                ) -> ReplayCall:
    """A monitor input item as a replay call.

    Raises:
        ReplayInputError: the item is unusable (its reason), or its replay fields are
            invalid.
    """
    if item.error is not None or item.meta is None or item.audio_path is None:
        raise ReplayInputError(item.error or f"{item.source}: unusable")
    try:
        fields = parse_fields(item.raw, item.source)
    except ConfigError as exc:
        raise ReplayInputError(str(exc)) from exc
    turns, skipped = turns_of(fields, item.meta, known_questions, item.source)
    return ReplayCall(item.source, item.meta, str(item.audio_path), fields,
                      item.meta.layout or stereo_layout, turns, skipped,
                      tuple(near_misses(item.raw)))
