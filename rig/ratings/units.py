"""What a campaign or replay folder lets people rate: its calls (a replay's turns) and the
answers behind them, each with the question whose rubric a rating must follow."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rig.answers import Question, load_bank
from rig.campaign.store import CallLog
from rig.errors import ConfigError
from rig.jsonfile import read_json
from rig.ratings.model import UnitKind


@dataclass(frozen=True)
class Unit:
    """One thing a rater can grade: a call (``unit_id`` = call_id, or a replay's turn_key) or
    an answer (``unit_id`` = answer_id); ``answer_id`` is None for a replay's turn."""
    unit_kind: UnitKind
    unit_id: str
    answer_id: str | None
    question_id: str


@dataclass(frozen=True)
class Ratable:
    """A folder's units by id, and the bank's questions by id."""
    folder: Path
    kind: Literal["campaign", "replay"]
    questions: dict[str, Question]
    calls: dict[str, Unit]
    answers: dict[str, Unit]


def _input_path(folder: Path, meta: Path, recorded: str, field: str) -> Path:
    p = Path(recorded)
    for cand in (p, folder / p, folder.parent / p):
        if cand.exists():
            return cand
    raise ConfigError(meta, field, "no such file or folder (run from where the campaign or "
                      "replay was run)", recorded, True)


def load_ratable(folder: str | Path) -> Ratable:
    """The units of a campaign folder (``campaign.json``, ``calls.jsonl``) or a replay folder
    (``replay.json``, ``rows.jsonl``).

    Raises:
        ConfigError: the folder is neither, or the answer bank it names is missing.
    """
    folder = Path(folder)
    if (folder / "campaign.json").is_file():
        meta_path, kind, log_name, key, bank_field = (folder / "campaign.json", "campaign",
                                                      "calls.jsonl", "call_id", "answers_path")
    elif (folder / "replay.json").is_file():
        meta_path, kind, log_name, key, bank_field = (folder / "replay.json", "replay",
                                                      "rows.jsonl", "turn_key", "bank")
    else:
        raise ConfigError(folder, "FOLDER", "not a campaign or replay folder (no campaign.json "
                          "or replay.json)")
    meta = read_json(meta_path)
    if not isinstance(meta, dict) or not isinstance(meta.get(bank_field), str):
        raise ConfigError(meta_path, bank_field, "missing: the answer bank is needed to check "
                          "ratings against the rubric")
    bank = load_bank(_input_path(folder, meta_path, meta[bank_field], bank_field))
    questions = {q.question_id: q for q in bank.questions if q.graded}
    answers = {a.answer_id: Unit("answer", a.answer_id, a.answer_id, q.question_id)
               for q, a in bank.answers()}
    calls: dict[str, Unit] = {}
    log = folder / log_name
    for row in CallLog(log, key="row_id" if kind == "replay" else "call_id").rows() \
            if log.is_file() else []:
        uid = row.get(key)
        if isinstance(uid, str) and row.get("question_id") in questions:
            aid = row.get("answer_id") if kind == "campaign" else None
            calls[uid] = Unit("call", uid, aid, row["question_id"])
    if kind == "replay":
        answers = {}  # a replay's turns are real recordings, not the bank's scripts
    return Ratable(folder, kind, questions, calls, answers)
