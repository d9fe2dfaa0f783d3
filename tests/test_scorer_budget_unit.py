"""``scorer.budget_s`` is a wall-clock limit for remote endpoints only (issue 29): the
embedded judge gets none from the factory, the openai backend keeps it, and the base class
still records a remote grading over its budget as a ``timeout``."""

from __future__ import annotations

import pytest

import rig.scorer.base as base
from rig.answers import load_bank
from rig.pipeline import load_pipeline
from rig.scorer.factory import build_scorer
from rig.scorer.fake import FakeScorer

pytestmark = pytest.mark.unit


def test_the_embedded_judge_gets_no_wall_clock_budget():
    settings = load_pipeline("pipelines/reference.yaml").scorer
    assert settings.backend == "llamacpp" and settings.budget_s == 120
    assert build_scorer(settings).budget_s is None


def test_a_remote_endpoint_keeps_its_budget():
    settings = load_pipeline("pipelines/reference.yaml").scorer.model_copy(update={
        "backend": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m",
        "budget_s": 7.0})
    assert build_scorer(settings).budget_s == 7.0
    assert build_scorer(settings, grading=False).budget_s is None


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def _tick(self) -> float:
        self.t += 1000.0
        return self.t

    monotonic = perf_counter = _tick


def test_a_budget_applies_only_where_one_is_set(monkeypatch):
    q, a = next(iter(load_bank("answer_bank/mini").answers()))
    at_rest = FakeScorer().score(q, a.clean_text, 0)
    monkeypatch.setattr(base, "time", _Clock())
    loaded = FakeScorer().score(q, a.clean_text, 0)
    assert loaded.parse_status == at_rest.parse_status == "ok"
    assert loaded.score == at_rest.score
    remote = FakeScorer()
    remote.budget_s = 120.0
    assert remote.score(q, a.clean_text, 0).parse_status == "timeout"
