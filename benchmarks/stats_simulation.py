"""Validate rig's statistics by simulation: interval coverage and the gate's false blocks.

Simulates campaigns with known true deltas (the model is in ``rig/stats/simulation.py``: the
worked example's design, 32 answers x (baseline + 6 profiles) x 3 repeats = 672 calls) and
prints

* how often the 95% intervals of ``paired_by_profile`` (bootstrap ``ci95`` and ``t_ci95``)
  cover each profile's true mean delta (target 93-97%);
* the same coverage in smaller campaigns, 8 to 32 answers (pairs) per profile, for reading:
  the percentile bootstrap runs narrow in small samples, and the figures quoted in
  ``rig.stats.intervals`` and ``rig.stats.profile_paired`` are these;
* how often ``rig gate`` blocks a release that changed nothing (target <= 5%);
* how often it blocks releases with a real regression (its power; no target).

Usage::

    python benchmarks/stats_simulation.py [--campaigns 1000] [--releases 1000] [--jobs 2]
        [--pair-counts 8,16,24,32]

Exit status 0 when both targets are met, 1 when not.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from rig.stats.simulation import Coverage, Design, GateStudy, coverage_study, gate_study

COVERAGE_TARGET = (0.93, 0.97)
FALSE_BLOCK_MAX = 0.05
REGRESSIONS: tuple[tuple[str, float], ...] = (("long_pauses", -10.0), ("long_pauses", -25.0),
                                             ("noise_10db", -12.0))


def _chunks(n: int, jobs: int) -> list[tuple[int, int]]:
    """(offset, size) pieces of range(n), one per job."""
    size = -(-n // jobs)
    return [(start, min(size, n - start)) for start in range(0, n, size)]


def _coverage(args: tuple[int, int, int, Design]) -> Coverage:
    offset, n, seed, design = args
    return coverage_study(n, design, seed=seed + offset)


def _gate(args: tuple[int, int, int, dict[str, float] | None]) -> GateStudy:
    offset, n, seed, extra = args
    return gate_study(n, seed=seed + offset, extra_effects=extra)


def run_coverage(n: int, jobs: int, seed: int, design: Design | None = None
                 ) -> tuple[float, float, dict[str, tuple[float, float]]]:
    """(bootstrap coverage, t coverage, per profile (bootstrap, t)) over ``n`` campaigns."""
    d = design or Design()
    with ProcessPoolExecutor(jobs) as pool:
        parts = list(pool.map(_coverage, [(o, k, seed, d) for o, k in _chunks(n, jobs)]))
    total = sum(p.n_intervals for p in parts)
    boot = sum(p.boot * p.n_intervals for p in parts) / total
    t = sum(p.t * p.n_intervals for p in parts) / total
    profiles = parts[0].by_profile
    by = {name: (sum(p.by_profile[name][0] * p.n_campaigns for p in parts) / n,
                 sum(p.by_profile[name][1] * p.n_campaigns for p in parts) / n)
          for name in profiles}
    return boot, t, by


def run_gate(n: int, jobs: int, seed: int, extra: dict[str, float] | None
             ) -> tuple[float, int, dict[str, int]]:
    with ProcessPoolExecutor(jobs) as pool:
        parts = list(pool.map(_gate, [(o, k, seed, extra) for o, k in _chunks(n, jobs)]))
    blocked = sum(p.n_blocked for p in parts)
    by: dict[str, int] = {}
    for p in parts:
        for k, v in p.by_check.items():
            by[k] = by.get(k, 0) + v
    return blocked / n, blocked, by


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--campaigns", type=int, default=1000, help="simulated campaigns (coverage)")
    ap.add_argument("--releases", type=int, default=1000, help="simulated no-change releases")
    ap.add_argument("--power-releases", type=int, default=200,
                    help="simulated releases per regression (power)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes")
    ap.add_argument("--pair-counts", default="8,16,24,32",
                    help="answers (pairs) per profile of the small-sample coverage runs, "
                         "comma-separated multiples of the answers per question")
    ap.add_argument("--seed", type=int, default=20240801)
    args = ap.parse_args(argv)
    d = Design()
    pair_counts = [int(x) for x in args.pair_counts.split(",") if x.strip()]
    bad = [k for k in pair_counts if k < d.answers_per_question or k % d.answers_per_question]
    if bad:
        ap.error(f"--pair-counts: {bad} not a positive multiple of {d.answers_per_question} "
                 "(the answers per question)")
    print(f"design: {d.n_answers} answers ({d.n_questions} questions x "
          f"{d.answers_per_question}), baseline + {len(d.profile_deltas)} profiles, "
          f"{d.repeats} repeats = {d.n_answers * (len(d.profile_deltas) + 1) * d.repeats} calls;"
          f" call noise sd {d.noise_sd:g}, per-answer effect sd {d.effect_sd:g}, parse "
          f"failures {d.parse_failure_rate:.0%}")
    print("true mean deltas (points): "
          + ", ".join(f"{k} {v:+g}" for k, v in d.profile_deltas.items()))
    ok = True

    t0 = time.perf_counter()
    boot, t, by = run_coverage(args.campaigns, args.jobs, args.seed)
    n_int = args.campaigns * len(d.profile_deltas)
    lo, hi = COVERAGE_TARGET
    print(f"\nCI coverage over {args.campaigns} campaigns ({n_int} intervals per kind), "
          f"target {lo:.0%}-{hi:.0%}:  ({time.perf_counter() - t0:.0f} s)")
    for name, value in (("ci95 (percentile bootstrap, 2000 resamples)", boot),
                        ("t_ci95 (Student t)", t)):
        good = lo <= value <= hi
        ok &= good
        print(f"  {name:<45} {value:6.1%}  {'ok' if good else 'OUT OF TARGET'}")
    for name, (b, tt) in by.items():
        print(f"    {name:<14} bootstrap {b:6.1%}   t {tt:6.1%}")

    t0 = time.perf_counter()
    print(f"\nCI coverage by answers (pairs) per profile, {args.campaigns} campaigns each "
          f"({n_int} intervals per kind), for reading:")
    print(f"  {'pairs':>5}  {'ci95 (bootstrap)':>16}  {'t_ci95':>7}")
    for k in pair_counts:
        if k == d.n_answers:
            kb, kt = boot, t  # the run above
        else:
            small = Design(n_questions=k // d.answers_per_question)
            kb, kt, _ = run_coverage(args.campaigns, args.jobs, args.seed, small)
        print(f"  {k:>5}  {kb:>16.1%}  {kt:>7.1%}")
    print(f"  ({time.perf_counter() - t0:.0f} s)")

    t0 = time.perf_counter()
    rate, blocked, by_check = run_gate(args.releases, args.jobs, args.seed + 10**6, None)
    good = rate <= FALSE_BLOCK_MAX
    ok &= good
    print(f"\ngate false-block rate over {args.releases} releases that changed nothing: "
          f"{rate:.1%} ({blocked} blocked; target <= {FALSE_BLOCK_MAX:.0%})  "
          f"{'ok' if good else 'OUT OF TARGET'}  ({time.perf_counter() - t0:.0f} s)")
    if by_check:
        print("  blocked by: " + ", ".join(f"{k} {v}" for k, v in sorted(by_check.items())))

    print(f"\ngate power (share of {args.power_releases} releases blocked), for reading only:")
    for profile, shift in REGRESSIONS:
        rate, blocked, by_check = run_gate(args.power_releases, args.jobs, args.seed + 2 * 10**6,
                                           {profile: shift})
        print(f"  {profile} {shift:+g} points: {rate:.1%}  ("
              + ", ".join(f"{k} {v}" for k, v in sorted(by_check.items())) + ")")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
