"""`rig scorer validate` on the real judge (embedded llama.cpp, the pipeline's scorer) on 2
local workers gives the grades of one worker: 2 scripts, each worker building its judge once.
Sized small: the real model is slow on 2 shared cores. No assertion on wall time."""

from __future__ import annotations

import dataclasses

import pytest

from rig.answers import load_bank
from rig.campaign.executors import ExecutorSpec
from rig.paths import DEFAULTS
from rig.pipeline import load_pipeline
from rig.scorer.validate import PipelineScorers, validate_bank

pytestmark = pytest.mark.integration

SAME = ("answer_id", "question_id", "score", "parse_status", "raw", "criteria_json", "error")


def test_validate_on_two_workers_gives_the_real_judges_serial_grades():
    pytest.importorskip("llama_cpp")
    bank = load_bank(DEFAULTS.answer_bank / "mini")
    q = bank.questions[0]
    small = dataclasses.replace(bank, questions=(q.model_copy(update={"answers": q.answers[:2]}),))
    make = PipelineScorers(load_pipeline(DEFAULTS.pipelines / "reference.yaml"))
    serial = validate_bank(small, make, ["argmax"])
    local = validate_bank(small, make, ["argmax"], executor=ExecutorSpec("local", 2))
    assert len(serial.rows) == 2
    assert all(r["parse_status"] == "ok" for r in serial.rows), serial.rows
    assert [{k: r[k] for k in SAME} for r in local.rows] == [
        {k: r[k] for k in SAME} for r in serial.rows]
