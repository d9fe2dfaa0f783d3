"""The judge's rubric snapshots (rig.scorer.llamacpp._prime), on a stand-in for llama.cpp's
``Llama`` that records what is evaluated: a hit keeps the prefix, a miss evaluates it and
keeps a snapshot, a later miss restores it instead of evaluating, the oldest snapshots go
first past the byte budget, and a refused restore falls back to evaluating. That a restore
gives the grade of a fresh evaluation, bit for bit, is checked on the real model in
tests/test_scorer_integration.py."""

from __future__ import annotations

import numpy as np
import pytest

import rig.scorer.llamacpp as L

pytestmark = pytest.mark.unit


class FakeLlama:
    def __init__(self) -> None:
        self.input_ids = np.zeros(64, dtype=np.intc)
        self.n_tokens = 0
        self.evaluated: list[list[int]] = []

    def reset(self) -> None:
        self.n_tokens = 0

    def eval(self, tokens: list[int]) -> None:
        self.evaluated.append(list(tokens))
        self.input_ids[self.n_tokens:self.n_tokens + len(tokens)] = tokens
        self.n_tokens += len(tokens)


@pytest.fixture
def fake(monkeypatch):
    """(scorer, llm, restores): snapshots are the evaluated tokens, 100 bytes each."""
    restores: list[tuple] = []
    ok = {"restore": True}

    def snapshot(llm):
        return bytes(100)

    def restore(llm, prefix, data):
        restores.append(tuple(prefix))
        if not ok["restore"]:
            return False
        llm.input_ids[:len(prefix)] = prefix
        llm.n_tokens = len(prefix)
        return True

    monkeypatch.setattr(L, "_snapshot", snapshot)
    monkeypatch.setattr(L, "_restore", restore)
    monkeypatch.setattr(L, "SNAPSHOT_BYTES", 250)
    L.forget_snapshots()
    yield L.LlamaCppScorer(n_threads=1), FakeLlama(), restores, ok
    L.forget_snapshots()


A, B, C = [1, 2, 3], [4, 5, 6], [7, 8, 9]


def test_a_miss_is_evaluated_once_then_restored(fake):
    scorer, llm, restores, _ = fake
    scorer._prime(llm, A)           # miss: evaluated, snapshot kept
    llm.eval([42])                  # the transcript part
    scorer._prime(llm, A)           # hit: kept in place
    scorer._prime(llm, B)           # miss
    scorer._prime(llm, A)           # restored, not evaluated
    assert llm.evaluated == [A, [42], B]
    assert restores == [tuple(A)] and llm.n_tokens == 3
    assert list(llm.input_ids[:3]) == A
    assert scorer.prefix_cache_stats() == {"hits": 2, "misses": 2, "restored": 1}


def test_the_least_recently_used_snapshot_goes_first_past_the_budget(fake):
    scorer, llm, restores, _ = fake
    for p in (A, B, A, C):          # 250 bytes hold two: A restored (recent), B oldest
        scorer._prime(llm, p)
    assert list(L._SNAPSHOTS[llm]) == [tuple(A), tuple(C)]
    scorer._prime(llm, B)           # evicted: evaluated afresh
    assert llm.evaluated[-1] == B and restores == [tuple(A)]


def test_a_refused_restore_evaluates_the_prefix(fake):
    scorer, llm, restores, ok = fake
    scorer._prime(llm, A)
    scorer._prime(llm, B)
    ok["restore"] = False
    scorer._prime(llm, A)
    assert llm.evaluated == [A, B, A] and restores == [tuple(A)]
    assert scorer.prefix_cache_stats() == {"hits": 0, "misses": 3, "restored": 0}


def test_no_budget_keeps_no_snapshot_and_an_empty_prefix_is_a_miss(fake, monkeypatch):
    scorer, llm, restores, _ = fake
    monkeypatch.setattr(L, "SNAPSHOT_BYTES", 0)
    for p in (A, B, A):
        scorer._prime(llm, p)
    assert llm.evaluated == [A, B, A] and not restores and not L._SNAPSHOTS.get(llm)
    scorer._prime(llm, [])
    assert scorer.prefix_cache_stats()["misses"] == 4 and llm.n_tokens == 0
