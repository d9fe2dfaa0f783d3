"""Show that a change left the rows alone: run the demo at two commits and compare the rows.

    python benchmarks/rows_identical.py REF_BEFORE [REF_AFTER]   # default REF_AFTER: HEAD
    python benchmarks/rows_identical.py --compare DIR_A DIR_B    # two finished campaign folders

Each commit is checked out into a temporary git worktree and its demo (``rig demo --no-sweep``:
30 calls on the embedded defaults, the real TTS, line, VAD, ASR and llama.cpp judge) runs with that
worktree first on ``PYTHONPATH``, in this environment, one after the other. The rows are then
compared per ``call_id`` without the runtime columns (``rig.campaign.row.RUNTIME_COLUMNS``:
stage timings, the campaign id, the recording path); every other column must be equal (floats
bit for bit). Prints one line per differing call and column, then ``identical: N calls`` or
``different: K of N calls``; exits 0 when identical, 1 otherwise.

The embedded judge has no wall-clock budget (``scorer.budget_s`` applies to remote endpoints
only), so a loaded machine gives the same rows as an idle one, only later.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rig.campaign.row import comparable  # noqa: E402


def rows(folder: Path) -> dict[str, dict]:
    """The campaign's rows (``calls.jsonl``), keyed by call id, runtime columns dropped."""
    out = {}
    with (folder / "calls.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                r = json.loads(line)
                out[r["call_id"]] = comparable(r)
    return out


def compare(a: Path, b: Path) -> int:
    ra, rb = rows(a), rows(b)
    diff = 0
    for cid in sorted(set(ra) | set(rb)):
        if cid not in ra or cid not in rb:
            print(f"{cid}: only in {a if cid in ra else b}")
            diff += 1
            continue
        cols = [k for k in sorted(set(ra[cid]) | set(rb[cid])) if ra[cid].get(k) != rb[cid].get(k)]
        for k in cols:
            print(f"{cid} {k}: {ra[cid].get(k)!r} != {rb[cid].get(k)!r}")
        diff += bool(cols)
    n = len(set(ra) | set(rb))
    print(f"identical: {n} calls" if not diff else f"different: {diff} of {n} calls")
    return 0 if not diff else 1


def demo_at(ref: str, work: Path) -> Path:
    tree, out = work / f"tree-{ref.replace('/', '_')}", work / f"demo-{ref.replace('/', '_')}"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), ref],
                   check=True, capture_output=True)
    try:
        env = dict(os.environ, PYTHONPATH=str(tree))
        subprocess.run([sys.executable, "-m", "rig.cli", "demo", "--no-sweep", "--out", str(out)],
                       cwd=tree, env=env, check=True)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                       check=False, capture_output=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("refs", nargs="*", help="REF_BEFORE [REF_AFTER] (git commits)")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("DIR_A", "DIR_B"))
    args = ap.parse_args()
    if args.compare:
        return compare(*args.compare)
    if not 1 <= len(args.refs) <= 2:
        ap.error("give REF_BEFORE [REF_AFTER], or --compare DIR_A DIR_B")
    before, after = args.refs[0], (args.refs[1] if len(args.refs) == 2 else "HEAD")
    with tempfile.TemporaryDirectory(prefix="rows-identical-") as tmp:
        a, b = demo_at(before, Path(tmp)), demo_at(after, Path(tmp))
        return compare(a, b)


if __name__ == "__main__":
    raise SystemExit(main())
