"""Cost of ``content_similarity`` per call on this machine's CPU (the ``similarity`` extra).

Prints, from one run: the model's load time (import of torch and sentence-transformers, sha256
check of the weights, loading), then milliseconds per call for the bank's scripts against
their first halves, as a campaign meets them: the first time a script is seen (script and
transcript both embedded) and later (the script's embedding cached, only the transcript
embedded), and for the batch form over all answers at once. Compare ratios across machines.

    python benchmarks/content_similarity.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="passes over the bank")
    args = ap.parse_args()
    from rig.answers import load_bank

    scripts = [a.clean_text for _, a in load_bank(ROOT / "answer_bank" / "core").answers()]
    t0 = time.perf_counter()
    import torch

    import rig.asr.similarity as sim

    sim._encoder()
    load_s = time.perf_counter() - t0
    halves = [" ".join(s.split()[: len(s.split()) // 2]) for s in scripts]
    cold, warm = [], []
    for r in range(args.rounds):
        sim._cache.clear()
        for s, h in zip(scripts, halves, strict=True):
            t = time.perf_counter()
            sim.content_similarity(s, f"{h} round {r}")  # distinct after normalisation
            cold.append(time.perf_counter() - t)
            t = time.perf_counter()
            sim.content_similarity(s, f"{h} again {r}")  # the script is cached now
            warm.append(time.perf_counter() - t)
    sim._cache.clear()
    t = time.perf_counter()
    sim.content_similarities(scripts, halves)
    batch_s = time.perf_counter() - t

    def ms(xs: list[float]) -> str:
        xs = sorted(xs)
        return f"median {1000 * xs[len(xs) // 2]:.1f} ms, max {1000 * xs[-1]:.1f} ms"

    print(f"torch threads: {torch.get_num_threads()}; {len(scripts)} scripts, "
          f"{args.rounds} rounds")
    print(f"load (import, sha256 check, model): {load_s:.2f} s")
    print(f"per call, script not yet seen: {ms(cold)}")
    print(f"per call, script cached:       {ms(warm)}")
    print(f"batch of {len(scripts)} pairs: {1000 * batch_s / len(scripts):.1f} ms per pair")


if __name__ == "__main__":
    main()
