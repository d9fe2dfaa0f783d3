"""Where the test suite's time goes: per file, wall and CPU seconds, from a run with
``RIG_TEST_TIMES=PATH`` (tests/conftest.py appends one JSON line per test phase: wall seconds
and the CPU seconds of the pytest process and its finished children).

    RIG_TEST_TIMES=/tmp/times.jsonl python -m pytest -q -m 'not unit'
    python benchmarks/test_times.py /tmp/times.jsonl [--top 40]

CPU seconds say what a test computes, whatever the machine's load; wall minus CPU is mostly
waiting (real-time audio between processes, server start-ups) or, on a loaded machine, queueing
for a core. A test's wall time is never asserted (issue 28): this script reads a run, it is not
a test.
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("times", type=Path, help="the RIG_TEST_TIMES JSONL file")
    ap.add_argument("--top", type=int, default=40, help="files to list (by wall seconds)")
    ap.add_argument("--tests", action="store_true", help="list tests, not files")
    args = ap.parse_args()
    recs = [json.loads(line) for line in args.times.read_text().splitlines() if line.strip()]
    by: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for r in recs:
        key = r["test"] if args.tests else r["test"].split("::")[0]
        by[key][0] += r["wall_s"]
        by[key][1] += r["cpu_s"]
        by[key][2] += r["phase"] == "call"
    wall = sum(v[0] for v in by.values())
    cpu = sum(v[1] for v in by.values())
    print(f"{sum(v[2] for v in by.values())} tests: wall {wall:.0f} s, CPU {cpu:.0f} s "
          f"(CPU/wall {cpu / wall:.2f})" if wall else "no records")
    print(f"{'wall_s':>8} {'cpu_s':>8} {'share':>6} {'tests':>5}  what")
    for key, (w, c, n) in sorted(by.items(), key=lambda kv: -kv[1][0])[:args.top]:
        print(f"{w:8.0f} {c:8.0f} {w / wall:6.1%} {n:5d}  {key}")


if __name__ == "__main__":
    main()
