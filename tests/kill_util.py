"""Kill tests' machinery: drivers run in a subprocess (their own session, so the whole process
tree can be cleaned up by its group id), SIGKILLed at seeded random moments and resumed.

The campaign scenario (:func:`campaign_kill_run`) is the issue's: a 200-call campaign on fake
stages (``executor_fakes``: the logic under test is the log and the scheduler, not the
models) run by the local executor with 2 worker processes, killed with SIGKILL at
``n_kills`` moments drawn from ``random.Random(seed)`` (a target count of lines logged, then
a delay of 0-0.25 s), alternating the driver and one of its workers, resumed after each
(a killed driver is started again; a killed worker is replaced by its driver). The result
dict is what ``benchmarks/reliability_kill.py`` prints. Linux only (process tree from /proc).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
#: profiles of the 200-call campaign: the baseline and these 4, x 40 answers of answer_bank/core
KILL_PROFILES = ("long_pauses", "noise_10db", "short_pauses", "slow")
#: no single wait of a kill test lasts longer (seconds)
WAIT_S = 180.0


def campaign_spec(out: Path, **kw):
    """The 200-call campaign: 40 answers (answer_bank/core) x 5 profiles (profiles/demo:
    the baseline and :data:`KILL_PROFILES`), repeat 0."""
    from rig.campaign.runner import CampaignSpec

    base = dict(answers_path=ROOT / "answer_bank" / "core",
                profiles_path=ROOT / "profiles" / "demo",
                pipeline_path=ROOT / "pipelines" / "reference.yaml", out_dir=Path(out),
                repeats=1, profile_ids=KILL_PROFILES, n_boot=200, campaign_id="kill")
    base.update(kw)
    return CampaignSpec(**base)


_CAMPAIGN_DRIVER = """
import signal
import sys
from pathlib import Path
# Ctrl-C raises KeyboardInterrupt, as in a command typed at a terminal, even when the tests
# run as a background job (whose shell starts it, and so this process, with SIGINT ignored)
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, {tests!r})
import typer
from executor_fakes import make_stages
from {spec_module} import {spec_function} as campaign_spec
from rig.campaign.executors import ExecutorSpec
from rig.cli.campaign import _run
try:  # what the rig command does with typer.Exit
    _run(campaign_spec(Path({out!r})), False, executor=ExecutorSpec("local", workers=2),
         stages=make_stages(sleep_s={sleep_s}))
except typer.Exit as exc:
    sys.exit(exc.exit_code)
"""


def campaign_driver(out: Path, sleep_s: float = 0.02,
                    spec: str = "kill_util:campaign_spec") -> str:
    """Code that runs (or resumes) a campaign into ``out`` as ``rig campaign run`` does, local
    executor with 2 workers, fake stages (``sleep_s`` per call's ASR). ``spec``:
    ``MODULE:FUNCTION`` (a module under tests/) making the CampaignSpec from the folder; by
    default the 200-call campaign."""
    module, function = spec.split(":")
    return _CAMPAIGN_DRIVER.format(tests=str(TESTS), out=str(out), sleep_s=sleep_s,
                                   spec_module=module, spec_function=function)


def alive(pid: int) -> bool:
    """``pid`` is a live process (not a zombie left for a parent that does not reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def start(code: str, *, log: Path | None = None) -> subprocess.Popen:
    """Run ``python -c code`` in a new session (its group id is its pid); output to ``log``
    (appended) or discarded."""
    out = open(log, "ab") if log is not None else subprocess.DEVNULL  # noqa: SIM115
    try:
        return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)],
                                stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "COLUMNS": "200"},
                                start_new_session=True)
    finally:
        if log is not None:
            out.close()


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL what is left of ``proc``'s session (its workers included) and reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=30)


def children(pid: int) -> list[tuple[int, str]]:
    """``(pid, command line)`` of the live children of ``pid`` (from /proc)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            state = stat.rsplit(")", 1)[1].split()[0]
            if ppid == pid and state != "Z":
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                out.append((int(d.name), cmd))
        except (OSError, ValueError, IndexError):
            continue
    return out


def worker_pids(driver_pid: int) -> list[int]:
    """The spawned worker processes of a campaign driver (not the resource tracker)."""
    return sorted(p for p, cmd in children(driver_pid)
                  if "spawn_main" in cmd and "resource_tracker" not in cmd)


def n_lines(path: Path) -> int:
    """Line breaks in ``path`` (0 when it does not exist)."""
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def wait_until(cond, proc: subprocess.Popen | None = None, timeout_s: float = WAIT_S,
               what: str = "a condition") -> bool:
    """Poll ``cond()`` every 20 ms; True when it holds, False when ``proc`` exited first.

    Raises:
        TimeoutError: neither within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return True
        if proc is not None and proc.poll() is not None:
            return False
        time.sleep(0.02)
    raise TimeoutError(f"waited {timeout_s:.0f} s for {what}")


def finish(proc: subprocess.Popen, timeout_s: float = WAIT_S) -> int:
    """Wait for ``proc`` to exit (killing its group after ``timeout_s``); its exit code."""
    try:
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        raise TimeoutError(f"the driver ran past {timeout_s:.0f} s") from None


#: the last line of CPython's spawn bootstrap when the process that spawned it died before
#: it wrote the child its setup (``multiprocessing.spawn._main``'s first ``pickle.load``)
SPAWN_EOF = "EOFError: Ran out of input"


def tracebacks(text: str) -> list[str]:
    """The Python tracebacks in ``text``: from "Traceback (most recent call last):" through
    the first line after it that is not indented (the exception)."""
    out, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith("Traceback (most recent call last):"):
            indent = len(line) - len(line.lstrip())
            j = i + 1
            while j < len(lines) and (len(lines[j]) - len(lines[j].lstrip()) > indent
                                      or not lines[j].strip()):
                j += 1
            out.append("\n".join(lines[i:j + 1]))
    return out


def is_spawn_bootstrap_eof(tb: str) -> bool:
    """``tb`` is CPython's own spawn bootstrap failing to read its setup because the driver
    was SIGKILLed between starting a worker's interpreter and writing it the process object
    (``multiprocessing.popen_spawn_posix`` writes it after the exec): the worker exits at
    once and runs nothing; no rig frame is in it. Any other traceback is rig's to answer."""
    files = [ln.strip() for ln in tb.splitlines() if ln.strip().startswith("File ")]
    return (tb.rstrip().endswith(SPAWN_EOF) and bool(files)
            and all('"<string>"' in f or "multiprocessing" in f for f in files))


def log_ids(path: Path) -> list[str]:
    """Call ids of a JSON-lines log, line by line.

    Raises:
        AssertionError: a line (torn or not) does not parse as a row."""
    ids = []
    for i, line in enumerate(path.read_text(encoding="utf-8").split("\n")):
        if not line.strip():
            continue
        try:
            ids.append(json.loads(line)["call_id"])
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise AssertionError(f"{path}: line {i + 1} is not a whole row: {line[:80]!r}"
                                 ) from exc
    return ids


def tear_last_line(path: Path) -> bool:
    """Append the first half of the log's last row with no line break: what a crash in the
    middle of writing a row leaves (a SIGKILL rarely does: one ``write`` per row)."""
    lines = path.read_bytes().rstrip(b"\n").split(b"\n")
    if not lines or not lines[-1]:
        return False
    with path.open("ab") as f:
        f.write(lines[-1][: len(lines[-1]) // 2])
    return True


@dataclass
class KillRun:
    """What a kill scenario did: ``kills`` delivered (``driver`` / ``worker``), the moments
    (target lines logged) and what the driver logs held at the end."""
    kills: list[str] = field(default_factory=list)
    targets: list[int] = field(default_factory=list)
    drivers_started: int = 0
    torn_injected: int = 0
    exit_codes: list[int] = field(default_factory=list)


def kill_campaign(out: Path, *, seed: int = 19, n_kills: int = 20, sleep_s: float = 0.02,
                  log: Path | None = None) -> KillRun:
    """Run the 200-call campaign into ``out``, SIGKILLing it ``n_kills`` times (see the
    module), then once more to the end without a kill. After the 5th driver kill, a torn
    half row is appended to ``calls.jsonl`` (the resume must move it aside, not lose the
    next row).

    Raises:
        TimeoutError: a wait ran past :data:`WAIT_S`; AssertionError: the last run failed.
    """
    rng = random.Random(seed)
    n_oracle, n_calls = 40, 200
    total = n_oracle + n_calls
    # moments while work is left (a worker exists to be killed), in logged lines
    targets = sorted(rng.sample(range(0, total - 4), n_kills))
    run = KillRun(targets=targets)
    code = campaign_driver(out, sleep_s)
    logged = lambda: n_lines(out / "oracle.jsonl") + n_lines(out / "calls.jsonl")  # noqa: E731
    proc: subprocess.Popen | None = None
    try:
        for i, target in enumerate(targets):
            kind = "driver" if i % 2 == 0 else "worker"
            delay = rng.uniform(0.0, 0.25)
            if proc is None or proc.poll() is not None:
                if proc is not None:
                    run.exit_codes.append(proc.returncode)
                proc = start(code, log=log)
                run.drivers_started += 1
            wait_until(lambda t=target: logged() >= t, proc, what=f"{target} lines logged")
            if kind == "worker":
                wait_until(lambda p=proc: worker_pids(p.pid), proc, what="a worker")
            time.sleep(delay)
            if proc.poll() is not None:  # it finished meanwhile: resumed, nothing to kill
                continue
            if kind == "driver":
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
                run.exit_codes.append(proc.returncode)
                run.kills.append("driver")
                if run.kills.count("driver") == 5 and (out / "calls.jsonl").is_file():
                    run.torn_injected += tear_last_line(out / "calls.jsonl")
                proc = None
            else:
                pids = worker_pids(proc.pid)
                if not pids:
                    continue
                try:
                    os.kill(rng.choice(pids), signal.SIGKILL)
                except ProcessLookupError:
                    continue
                run.kills.append("worker")
        if proc is None or proc.poll() is not None:
            if proc is not None:
                run.exit_codes.append(proc.returncode)
            proc = start(code, log=log)
            run.drivers_started += 1
        run.exit_codes.append(finish(proc))
        proc = None
    finally:
        if proc is not None:
            kill_group(proc)
    return run


def reference_campaign(out: Path) -> Path:
    """The same campaign uninterrupted, in this process (serial executor, same fakes);
    returns its calls.parquet."""
    sys.path.insert(0, str(TESTS))
    from executor_fakes import make_stages

    from rig.campaign.executors import ExecutorSpec
    from rig.campaign.runner import run_campaign

    run_campaign(campaign_spec(out), stages=make_stages(), progress=False,
                 executor=ExecutorSpec("serial"))
    return Path(out) / "calls.parquet"


def _key(row: dict) -> str:
    return json.dumps(row, default=str, sort_keys=True)


def campaign_kill_figures(out: Path, reference_parquet: Path, run: KillRun) -> dict:
    """Check a killed-and-resumed campaign against an uninterrupted one and count: kills
    survived, planned calls lost (not in calls.parquet), duplicated (more than once there,
    or logged ``ok`` more than once), rows that differ from the reference's (timing columns
    aside: :data:`rig.campaign.row.RUNTIME_COLUMNS`), and torn lines left in calls.jsonl."""
    import pandas as pd

    from rig.campaign.row import RUNTIME_COLUMNS

    ref = pd.read_parquet(reference_parquet)
    got = pd.read_parquet(out / "calls.parquet")
    planned = set(ref["call_id"])
    counts = got["call_id"].value_counts()
    torn_left = 0
    ok_twice = 0
    try:
        ids = log_ids(out / "calls.jsonl")
        rows = [json.loads(x) for x in (out / "calls.jsonl").read_text().splitlines() if x]
        ok = [r["call_id"] for r in rows if r.get("status") == "ok"]
        ok_twice = len(ok) - len(set(ok))
    except AssertionError:
        torn_left, ids = 1, []
    keep = [c for c in ref.columns if c not in RUNTIME_COLUMNS]

    def norm(df):
        return df[keep].sort_values("call_id").reset_index(drop=True)

    n_differ = -1  # not comparable: calls lost or duplicated
    if set(got["call_id"]) == planned and len(got) == len(ref):
        a, b = (norm(d).to_dict("records") for d in (got, ref))
        n_differ = sum(_key(x) != _key(y) for x, y in zip(a, b, strict=True))
    return {"kills": len(run.kills), "driver_kills": run.kills.count("driver"),
            "worker_kills": run.kills.count("worker"),
            "kills_survived": len(run.kills) if run.exit_codes[-1:] == [0] else 0,
            "calls_planned": len(planned),
            "calls_lost": len(planned - set(got["call_id"])),
            "calls_duplicated": int((counts > 1).sum()) + ok_twice,
            "rows_differing": n_differ, "torn_lines_injected": run.torn_injected,
            "torn_lines_left": torn_left,
            "torn_lines_moved_aside": n_lines(out / "calls.jsonl.torn"),
            "log_lines": len(ids), "drivers_started": run.drivers_started}
