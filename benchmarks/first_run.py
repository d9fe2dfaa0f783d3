"""A newcomer's first run, timed: ``rig demo`` end to end, with the machine and its load.

Runs ``rig demo --out OUT`` (the README's command 1 after the install) in a subprocess and
prints one JSON object: the wall time (s), the demo's own closing line (caller audio seconds
per wall second), the machine (CPU model, cores, memory), the 1-minute load average sampled
every 10 s during the run (min, mean, max: a loaded machine is slower, so an estimate is
stated with its load), and the disk taken by the virtual environment, the assembled models
(``$RIG_CACHE_DIR`` or ``~/.cache/rig``) and the demo's output folder. ``--cold`` first
removes the assembled models, so their assembly (once per machine) is timed too.

    python benchmarks/first_run.py [--out /tmp/first-run] [--cold] [--no-sweep]

The README's and ``rig demo --help``'s estimate (about 3.5 min on 2 idle cores; 18 min at a
load of 3.4, issue 33's hand timing) comes from this script's run with ``--cold`` and an empty
``RIG_AUDIO_CACHE`` (benchmarks/README.md, "First run"). Run it on your own machine and
compare.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path


def _du_bytes(path: Path) -> int | None:
    """Bytes under ``path`` (files only, links not followed); None when it does not exist."""
    if not path.exists():
        return None
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def _machine() -> dict:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem_kb = next(int(x.split()[1]) for x in Path("/proc/meminfo").read_text().splitlines()
                      if x.startswith("MemTotal"))
    except (OSError, StopIteration):
        mem_kb = 0
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": round(mem_kb / 1e6, 1),
            "python": platform.python_version(), "platform": platform.platform()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/rig-first-run"))
    ap.add_argument("--cold", action="store_true", help="remove the assembled models first")
    ap.add_argument("--no-sweep", action="store_true", help="pass --no-sweep to rig demo")
    args = ap.parse_args()
    cache = Path(os.environ.get("RIG_CACHE_DIR") or Path.home() / ".cache" / "rig")
    if args.cold:
        shutil.rmtree(cache / "models", ignore_errors=True)
    shutil.rmtree(args.out, ignore_errors=True)
    loads: list[float] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(10.0):
            loads.append(os.getloadavg()[0])

    threading.Thread(target=sample, daemon=True).start()
    cmd = [sys.executable, "-m", "rig.cli", "demo", "--out", str(args.out), "--no-progress",
           *(["--no-sweep"] if args.no_sweep else [])]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    done.set()
    lines = proc.stdout.strip().splitlines()
    print(json.dumps({
        "command": " ".join(cmd), "exit_code": proc.returncode, "wall_s": round(wall, 1),
        "closing_lines": [ln for ln in lines if ln.startswith(("done in", "report:"))],
        "load_1min": {"min": min(loads, default=None), "max": max(loads, default=None),
                      "mean": round(sum(loads) / len(loads), 2) if loads else None,
                      "samples": len(loads)},
        "machine": _machine(),
        "disk_bytes": {"venv": _du_bytes(Path(sys.prefix)), "models": _du_bytes(cache / "models"),
                       "demo_output": _du_bytes(args.out)},
        "stderr_tail": proc.stderr[-2000:] if proc.returncode else None,
    }, indent=2))


if __name__ == "__main__":
    main()
