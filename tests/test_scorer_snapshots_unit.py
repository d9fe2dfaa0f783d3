"""The judge's rubric snapshots (rig.scorer.llamacpp._prime), on a stand-in for llama.cpp's
``Llama`` that records what is evaluated: a hit keeps the prefix, a miss evaluates it and
keeps a snapshot, a later miss restores it instead of evaluating, the oldest snapshots go
first past the byte budget, and a refused restore falls back to evaluating; snapshots on
disk (rig.scorer.kv_store) are read by a process that never evaluated the prefix, and a
damaged or foreign file is evaluated over, never trusted. That a restore
gives the grade of a fresh evaluation, bit for bit, is checked on the real model in
tests/test_scorer_integration.py."""

from __future__ import annotations

import os

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
    monkeypatch.setenv("RIG_JUDGE_KV", "off")  # this process's snapshots only (disk: below)
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


@pytest.fixture
def on_disk(fake, monkeypatch, tmp_path):
    """``fake`` with snapshots written to ``tmp_path`` (distinct bytes per prefix) and the
    model identity fixed (no llama_cpp needed)."""
    monkeypatch.setenv("RIG_JUDGE_KV", str(tmp_path))
    monkeypatch.setattr(L, "_snapshot", lambda llm: bytes(llm.input_ids[:llm.n_tokens].tolist()))
    monkeypatch.setattr(L.LlamaCppScorer, "_kv_identity", lambda self: ("sha", "0.3", 2048))
    return fake


def test_a_snapshot_on_disk_is_restored_by_a_process_that_never_evaluated_it(on_disk,
                                                                            tmp_path):
    from rig.scorer import kv_store

    scorer, llm, restores, _ = on_disk
    scorer._prime(llm, A)                       # miss: evaluated, written to disk
    assert len(list(tmp_path.glob("*.kv"))) == 1
    assert kv_store.load(("sha", "0.3", 2048), A) == bytes(A)
    L.forget_snapshots()                        # as a new process: nothing in memory
    other, llm2 = L.LlamaCppScorer(n_threads=1), FakeLlama()
    other._prime(llm2, A)
    assert llm.evaluated == [A] and not llm2.evaluated and restores == [tuple(A)]
    assert other.prefix_cache_stats() == {"hits": 1, "misses": 0, "restored": 1}
    # another identity (model, version, context, threads, GPU layers) is another file
    assert kv_store.load(("sha", "0.3", 4096), A) is None


@pytest.mark.parametrize("damage", ["truncated", "flipped", "empty"])
def test_a_damaged_snapshot_file_is_evaluated_over_never_trusted(on_disk, tmp_path, damage):
    scorer, llm, restores, _ = on_disk
    scorer._prime(llm, A)
    (f,) = tmp_path.glob("*.kv")
    blob = f.read_bytes()
    f.write_bytes({"truncated": blob[:-1], "flipped": blob[:-1] + bytes([blob[-1] ^ 1]),
                   "empty": b""}[damage])
    L.forget_snapshots()
    llm2 = FakeLlama()
    scorer._prime(llm2, A)
    assert llm2.evaluated == [A] and restores == []
    assert f.read_bytes() == blob                # rewritten whole by the fresh evaluation


def test_off_writes_nothing_and_a_full_folder_drops_the_oldest(on_disk, tmp_path,
                                                               monkeypatch):
    from rig.scorer import kv_store

    scorer, llm, _, _ = on_disk
    monkeypatch.setattr(kv_store, "MAX_BYTES", 2 * (64 + 3))  # two 3-token snapshots
    for i, p in enumerate((A, B, C)):
        scorer._prime(llm, p)
        f = tmp_path / f"{kv_store.key(('sha', '0.3', 2048), p)}.kv"
        if f.exists():  # written in one clock tick: order them by hand
            os.utime(f, (1000 + i, 1000 + i))
    kept = {f.read_bytes()[64:] for f in tmp_path.glob("*.kv")}
    assert len(kept) == 2 and bytes(A) not in kept
    assert not list(tmp_path.glob("*.tmp"))
    stale, fresh = tmp_path / "killed.tmp", tmp_path / "writing.tmp"  # a writer killed / busy
    stale.write_bytes(b"x")
    fresh.write_bytes(b"x")
    os.utime(stale, (1000, 1000))
    kv_store.store(("sha", "0.3", 2048), A, bytes(A))
    assert not stale.exists() and fresh.exists()
    monkeypatch.setenv("RIG_JUDGE_KV", "off")
    assert kv_store.kv_dir() is None and kv_store.load(("sha", "0.3", 2048), B) is None


def test_a_snapshot_renamed_to_another_rubrics_key_is_refused(on_disk, tmp_path):
    """A file copied over another prefix's name passes its checksum but names its own key:
    refused, the prefix evaluated and the right file written (found by the fresh-clone check:
    a restored foreign rubric had made every grading of that question a decode error)."""
    from rig.scorer import kv_store

    scorer, llm, restores, _ = on_disk
    scorer._prime(llm, A)
    scorer._prime(llm, B)
    ident = ("sha", "0.3", 2048)
    fa, fb = (tmp_path / f"{kv_store.key(ident, p)}.kv" for p in (A, B))
    fa.write_bytes(fb.read_bytes())
    assert kv_store.load(ident, A) is None
    L.forget_snapshots()
    llm2 = FakeLlama()
    scorer._prime(llm2, A)
    assert llm2.evaluated == [A] and restores == []
    assert kv_store.load(ident, A) == bytes(A)


def test_a_file_that_cannot_be_removed_does_not_stop_the_size_limit(on_disk, tmp_path,
                                                                   monkeypatch):
    from rig.scorer import kv_store

    scorer, llm, _, _ = on_disk
    import pathlib

    stuck = tmp_path / "old.kv"  # the oldest, and undeletable (another user's): unlink raises
    stuck.write_bytes(bytes(64 + 3))
    os.utime(stuck, (1000, 1000))
    real_unlink = pathlib.Path.unlink

    def unlink(self, missing_ok=False):
        if self == stuck:
            raise PermissionError(13, "Operation not permitted", str(self))
        return real_unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(pathlib.Path, "unlink", unlink)
    monkeypatch.setattr(kv_store, "MAX_BYTES", 2 * (64 + 3))
    for i, p in enumerate((A, B, C)):
        scorer._prime(llm, p)
        f = tmp_path / f"{kv_store.key(('sha', '0.3', 2048), p)}.kv"
        os.utime(f, (2000 + i, 2000 + i))
    kept = {f.read_bytes()[64:] for f in tmp_path.glob("*.kv") if f != stuck}
    assert kept == {bytes(C)} and stuck.exists()  # A and B went in its place


def test_a_folder_given_with_a_tilde_is_under_home(monkeypatch, tmp_path):
    from rig.scorer import kv_store

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("RIG_JUDGE_KV", "~/kv")
    assert kv_store.kv_dir() == tmp_path / "kv"
