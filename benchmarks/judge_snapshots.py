"""Core-seconds per grading with and without the judge's rubric snapshots, same gradings, one run.

When gradings of several questions interleave (replay turns in recording order, validation
banks, probe asks, a worker whose queue changes question), each change of question used to
evaluate the ~450-token rubric prefix afresh. :mod:`rig.scorer.llamacpp` now keeps a copy of
each prefix's KV cells and restores it on the next miss. This script grades the same
(question, text) pairs - ``--questions`` questions of ``answer_bank/core`` with ``--per-question``
clean answer scripts each - in the order that changes question at every grading (the worst
case), in passes that alternate snapshots off and on (``off, on, off, on``: a change of the
machine's load hits both alike), with one llama.cpp thread, so the process's CPU seconds are
the compute itself. Each pass starts with no snapshot and an empty grading memo.

Prints, per setting, CPU seconds per grading, rubric evaluations (misses) and restores, the
ratio on/off, and checks that both settings read bit-identical level distributions (a restore
must not change a grade).

    python benchmarks/judge_snapshots.py [--questions 3] [--per-question 2] [--passes 2]
"""

from __future__ import annotations

import argparse
import time


def gradings(n_questions: int, per_question: int) -> list[tuple]:
    """(question, text) pairs, question changing at every step: q1a1, q2a1, q3a1, q1a2, ..."""
    from rig.answers import load_bank
    from rig.paths import DEFAULTS as D

    bank = load_bank(D.answer_bank / "core")
    cols = [[(q, a.clean_text) for a in q.answers[:per_question]]
            for q in bank.questions[:n_questions]]
    return [col[i] for i in range(per_question) for col in cols if i < len(col)]


def run_pass(scorer, pairs: list[tuple], snapshots: bool) -> tuple[float, dict, list]:
    """One pass: (CPU seconds, prefix-cache counts, level distributions per grading)."""
    import rig.scorer.llamacpp as L
    from rig.scorer.base import forget_gradings

    forget_gradings()
    L.forget_snapshots()
    L.SNAPSHOT_BYTES = 128 * 2**20 if snapshots else 0
    before = scorer.prefix_cache_stats()
    replies = []
    levels = scorer._complete_levels

    def recorded(*a, **k):
        reply = levels(*a, **k)
        replies.append(reply.distributions)
        return reply
    scorer._complete_levels = recorded
    c0 = time.process_time()
    try:
        for q, text in pairs:
            scorer.score(q, text, 0)
    finally:
        scorer._complete_levels = levels
    cpu = time.process_time() - c0
    after = scorer.prefix_cache_stats()
    return cpu, {k: after[k] - before[k] for k in after}, replies


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=3)
    ap.add_argument("--per-question", type=int, default=2)
    ap.add_argument("--passes", type=int, default=2, help="off/on pairs")
    args = ap.parse_args()
    import os

    from rig.scorer.llamacpp import LlamaCppScorer

    pairs = gradings(args.questions, args.per_question)
    scorer = LlamaCppScorer(mode="expected", n_threads=1)
    scorer.score(pairs[0][0], "warm-up: load the model", 0)  # loading is not a grading
    cpu = {False: 0.0, True: 0.0}
    counts = {False: {}, True: {}}
    replies: dict[bool, list] = {}
    for _ in range(args.passes):
        for snap in (False, True):
            s, c, r = run_pass(scorer, pairs, snap)
            cpu[snap] += s
            for k, v in c.items():
                counts[snap][k] = counts[snap].get(k, 0) + v
            if snap in replies:
                assert replies[snap] == r, "a pass read other levels than the one before"
            replies[snap] = r
    n = len(pairs) * args.passes
    print(f"{len(pairs)} gradings per pass ({args.questions} questions interleaved), "
          f"{args.passes} passes per setting, 1 thread, load {os.getloadavg()[0]:.1f}")
    for snap in (False, True):
        print(f"  snapshots {'on ' if snap else 'off'}: {cpu[snap] / n:6.2f} CPU s per grading;"
              f" {counts[snap]}")
    print(f"on / off: {cpu[True] / cpu[False]:.3f} (CPU s)")
    same = replies[True] == replies[False]
    print(f"level distributions bit-identical on and off: {same}")
    if not same:
        raise SystemExit("a restored snapshot changed a grade")


if __name__ == "__main__":
    main()
