"""The bank-wide judge verdict a campaign's summary states beside its own figure
(``summary.json``'s ``judge_validity_bank``; :mod:`rig.scorer.bank_validity` finds it)."""

from __future__ import annotations

from typing import Literal

from rig.campaign.schema_base import _f, _Part


class BankJudgeValidity(_Part):
    """The last `rig scorer validate` of the whole bank under this pipeline version, or why
    there is none. A campaign grades only its own answers (often too few for a verdict); this
    is the judge's verdict on every script of the bank."""

    found: bool = _f("a validation of this bank under this pipeline version and scoring mode "
                     "was found")
    bank: str = _f("the bank's name (bank.yaml)")
    bank_version: int = _f("the bank's version (bank.yaml)")
    pipeline_version: str = _f("the pipeline version looked up (and measured, when found)")
    scoring_mode: str | None = _f("the scorer's mode looked up")
    source: Literal["cache", "shipped", "none"] = _f(
        "cache: this machine's last `rig scorer validate`; shipped: rig/data/"
        "judge_validity.json, measured when the version was released; none: never run")
    verdict: Literal["adequate", "low", "not_measured"] | None = _f(
        "the bank-wide verdict (thresholds as judge_validity's); null when not found")
    reason: str = _f("the verdict's reason in words (the thresholds missed or met), or how "
                     "to measure it")
    n_answers: int | None = _f("answers graded", default=None, ge=0)
    spearman: float | None = _f("Spearman correlation with the reference grades",
                                default=None)
    decision_agreement: float | None = _f("share of decisions agreeing with the reference "
                                          "grades' at the cutoff", default=None)
    measured_at: str | None = _f("UTC time of the validation (ISO 8601)", default=None)
