"""The oracle: the scorer's grade of each script's clean text (no audio), keyed by what it
depends on and persisted in ``oracle.jsonl`` like the calls."""

from __future__ import annotations

import hashlib
from pathlib import Path

from rig.answers import Answer, Question
from rig.campaign.executors.worker import oracle_result, oracle_row
from rig.campaign.store import CallLog
from rig.scorer.base import Scorer, ScoreResult


def oracle_key(question: Question, answer: Answer, seed: int, version: str) -> str:
    """The oracle grade depends on the rubric, the script's clean text, the seed and the
    pipeline version: a change to any of them re-grades."""
    text = hashlib.sha256(answer.clean_text.encode()).hexdigest()[:12]
    return f"{answer.answer_id}|{seed}|{version}|{question.rubric_hash[:12]}|{text}"


def oracle_done(row: dict | None) -> bool:
    """A logged grading that needs no retry (not an error or a timeout)."""
    return row is not None and row["parse_status"] not in ("error", "timeout")


class OracleCache:
    """The scorer's grade of each script's clean text, persisted like the calls."""

    def __init__(self, path: Path, scorer: Scorer, version: str) -> None:
        self.log, self.scorer, self.version = CallLog(path), scorer, version

    def get(self, question: Question, answer: Answer, seed: int) -> ScoreResult:
        key = oracle_key(question, answer, seed, self.version)
        row = self.log.get(key)
        if not oracle_done(row):
            row = oracle_row(self.scorer, key, question, answer, seed, self.version)
            self.log.append(row)
        return oracle_result(row)
