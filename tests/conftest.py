"""Shared fixtures. Every test module declares ``pytestmark`` = unit or integration, and its
file name says which (``test_*_unit.py``, ``test_*_integration.py``: checked at collection).

``RIG_STRICT=1`` (set by ``.ci/run``): a skipped integration test (a real component whose
engine, package or model is missing) fails the run instead of passing as a skip, so a missing
engine can never hide in a green run. A test that may still skip under it carries
``@pytest.mark.allowed_skip("why")``; the reason is printed with the skip (``-rfEs``). A whole
integration module skipped at import (a module-level ``importorskip``) becomes one failing
test named after the module.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import secrets
import sys
import urllib.request
from pathlib import Path

import pytest
from xdist_plan import order_for_workers, pytest_xdist_make_scheduler  # noqa: F401 (a hook)

if importlib.util.find_spec("torchaudio") is not None:
    # the coqui extra is installed: torchaudio (a CUDA wheel) is imported without its extension
    # before any test module imports transformers (rig/torchaudio_cpu.py)
    from rig.torchaudio_cpu import import_torchaudio

    import_torchaudio()

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
#: The GGUF that the loopback OpenAI-compatible server serves in the probe tests.
SERVER_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"


def _strict() -> bool:
    return os.environ.get("RIG_STRICT") == "1"


def _pin_xdist_worker() -> None:
    """Under pytest-xdist (``-n N``), worker ``gwI`` runs on its own ``1/N`` of the CPUs this
    run may use (``os.sched_setaffinity``; its child processes inherit it), so two workers
    never compete for a core: a real-time call test (audio paced at 20 ms frames between
    real processes) keeps a core of its own while the other worker runs llama.cpp or
    Whisper, which then start one thread a core they may use (:func:`rig.cpus.usable_cpus`),
    not one a core of the machine (issue 28: a real-time call timed out beside a CPU-heavy
    file when the workers shared both cores). Speed only, never a result: thread counts are
    not part of any result (rig/runtime.py). ``RIG_TEST_PIN=0`` turns it off; with more
    workers than CPUs nothing is pinned."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    n = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 0)
    if (not worker.startswith("gw") or n < 1 or os.environ.get("RIG_TEST_PIN") == "0"
            or not hasattr(os, "sched_setaffinity")):
        return
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < n:
        return
    share = len(cpus) // n
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or str(os.getppid())
    i = _claim_slot(run, n, int(worker[2:]) % n)
    os.sched_setaffinity(0, cpus[i * share:(i + 1) * share])


#: The socket that holds this worker's slot while the process lives (:func:`_claim_slot`).
_PIN_SLOT: list = []


def _claim_slot(run: str, n: int, first: int) -> int:
    """The first of ``n`` slots, from ``first`` on, that no live worker of test run ``run``
    holds, held from now until this process ends (an abstract Unix socket bound to its name:
    the kernel frees it when the holder dies, no file is left). A crashed worker's replacement
    is named gwN, gwN+1, ..., so ``gwI % n`` alone can name a live worker's slot (gw1 dies,
    its replacement gw2 took gw0's core and left gw1's idle); this gives it the freed slot.
    All taken: ``first``."""
    import socket

    for k in range(n):
        slot = (first + k) % n
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.bind(f"\0rig-test-pin-{run}-{slot}")
        except OSError:
            s.close()
            continue
        _PIN_SLOT.append(s)
        return slot
    return first


def pytest_configure(config):
    _pin_xdist_worker()
    config.addinivalue_line(
        "markers", "allowed_skip(reason): this integration test may skip even under "
                   "RIG_STRICT=1; reason says why (e.g. its engine needs non-free apt sources)")


def _skip_reason(longrepr) -> str:
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


def _strict_failure(what: str, reason: str) -> str:
    return (f"RIG_STRICT=1: {what} skipped: {reason}. Install what it needs (README, set-up "
            "command 2; .ci/run) or, if it cannot run in CI, mark it "
            "@pytest.mark.allowed_skip(\"why\")")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Under RIG_STRICT=1, the skip of an integration test (not ``allowed_skip``, not an
    xfail) is reported as a failure with the skip's reason."""
    rep = yield
    if (rep.skipped and _strict() and not hasattr(rep, "wasxfail")
            and item.get_closest_marker("integration") is not None
            and item.get_closest_marker("allowed_skip") is None):
        rep.outcome = "failed"
        rep.longrepr = _strict_failure("a real-component test", _skip_reason(rep.longrepr))
    return rep


def _strict_module(path: Path) -> bool:
    """The module at ``path`` sets ``pytestmark`` to (a list with) ``pytest.mark.integration``
    and not ``allowed_skip``; read from its source (a module skipped at import has no
    attributes)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return False
    marks = " ".join(ast.unparse(n.value) for n in tree.body if isinstance(n, ast.Assign)
                     and any(getattr(t, "id", None) == "pytestmark" for t in n.targets))
    return "mark.integration" in marks and "mark.allowed_skip" not in marks


class _SkippedModule(pytest.Item):
    """Stands for an integration module that skipped at import, under RIG_STRICT=1: fails."""

    def __init__(self, *, reason: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.reason = reason
        self.add_marker(pytest.mark.integration)

    def runtest(self) -> None:
        pytest.fail(_strict_failure(f"the integration module {self.path.name}", self.reason),
                    pytrace=False)

    def reportinfo(self):
        return self.path, None, f"{self.path.name} (skipped at import)"


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    """Under RIG_STRICT=1, an integration module skipped at import is collected as one
    failing test (a collection error would stop the whole run)."""
    rep = yield
    if (rep.skipped and _strict() and isinstance(collector, pytest.Module)
            and _strict_module(collector.path)):
        item = _SkippedModule.from_parent(collector.parent, name=collector.name,
                                          nodeid=collector.nodeid, path=collector.path,
                                          reason=_skip_reason(rep.longrepr))
        rep = pytest.CollectReport(rep.nodeid, "passed", None, [item])
    return rep


def pytest_ignore_collect(collection_path, config):
    """Collect only the files that can hold selected tests: ``-m unit`` skips the
    ``*_integration.py`` files that hold no unit test, ``-m 'not unit'`` skips the
    ``*_unit.py`` files (unit tests only: :func:`_check_file_name`). Importing a module costs
    its imports (sentence-transformers and torch, pipecat, Ray) in every pytest-xdist worker;
    the markers still select the tests. Any other ``-m`` collects everything."""
    name = collection_path.name
    if collection_path.parent != DATA.parent or not name.startswith("test_"):
        return None
    markexpr = " ".join((config.option.markexpr or "").split())
    if markexpr == "unit" and name.endswith("_integration.py"):
        try:
            return "mark.unit" not in collection_path.read_text(encoding="utf-8")
        except OSError:
            return None
    if markexpr == "not unit" and name.endswith("_unit.py"):
        return True
    return None


def pytest_collection_modifyitems(config, items):
    for item in items:
        marks = {m.name for m in item.iter_markers()}
        if not ({"unit", "integration"} & marks):
            raise pytest.UsageError(f"{item.nodeid}: mark the module unit or integration")
        _check_file_name(item, marks)

    # Tests marked `coqui` need the extra `coqui` (torchaudio beside the CPU torch): the main
    # run leaves them out, and .ci/run's coqui step runs them with `-m coqui` (a skip would be
    # a RIG_STRICT failure in the main run; here they are not collected into it at all).
    if "coqui" not in (config.option.markexpr or ""):
        out = [i for i in items if i.get_closest_marker("coqui") is not None]
        if out:
            config.hook.pytest_deselected(items=out)
            items[:] = [i for i in items if i.get_closest_marker("coqui") is None]
    order_for_workers(config, items)  # under pytest-xdist: longest files first (xdist_plan)


def _check_file_name(item, marks: set[str]) -> None:
    """The file name shows the kind: ``test_*_unit.py`` holds unit tests only;
    ``test_*_integration.py`` runs a real component in at least one of its tests (it may hold
    unit tests of the same subject beside them; ``-m unit`` still selects by marker)."""
    stem = item.path.stem
    if item.path.parent != DATA.parent or not (ROOT / "pyproject.toml").is_file() \
            or not stem.startswith("test_"):
        return  # not one of this project's test files (tests/test_ci_unit.py copies this file)
    if stem.endswith("_unit"):
        if "integration" in marks:
            raise pytest.UsageError(f"{item.nodeid}: an integration test in a *_unit.py file; "
                                    "move it to a *_integration.py file")
    elif not stem.endswith("_integration"):
        raise pytest.UsageError(f"{item.path.name}: name a test file test_*_unit.py or "
                                "test_*_integration.py (what its markers say)")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    # synthesized audio goes to a per-session temp folder; models stay in the user cache
    monkeypatch.setenv("RIG_AUDIO_CACHE", str(tmp_path_factory.getbasetemp() / "audio-cache"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def small_real_campaign_spec(tmp_path_factory):
    """One small real campaign (hibari TTS, 8 kHz mu-law line, Silero VAD with the 800 ms
    timer, faster-whisper tiny.en, the llama.cpp judge), run once per session and shared by
    the campaign, report, drill-down and export tests: q01_strong and q03_strong under the
    baseline, long_pauses (truncates) and short_pauses (does not): 6 calls, with their audio.
    The pipeline is pipelines/reference.yaml with a grading budget a loaded machine cannot
    miss (a timed-out grading would leave its call unscored and unattributed).
    Returns its :class:`rig.campaign.runner.CampaignSpec` (the folder is ``out_dir``); tests
    must not change the folder."""
    from kill_drivers import real_pipeline

    from rig.campaign.runner import CampaignSpec, run_campaign

    out = tmp_path_factory.mktemp("small_real") / "small"
    spec = CampaignSpec(answers_path=ROOT / "answer_bank" / "mini",
                        profiles_path=ROOT / "profiles" / "demo",
                        pipeline_path=real_pipeline(out.parent), out_dir=out,
                        repeats=1, answer_ids=("q01_strong", "q03_strong"),
                        profile_ids=("long_pauses", "short_pauses"), n_boot=500)
    run_campaign(spec, progress=False)
    return spec


@pytest.fixture(scope="session")
def real_serial_reference(tmp_path_factory):
    """kill_drivers.real_spec's 4 calls on the real stages, run once per session by the serial
    executor: the uninterrupted reference the real-stage kill test and the local-executor test
    compare their rows with, and the campaign the real-stage sweep test sweeps. Returns
    ``(pipeline_path, result)``; the folder is ``result.out_dir``, which tests must not
    change."""
    from kill_drivers import real_pipeline, real_spec

    from rig.campaign.executors import ExecutorSpec
    from rig.campaign.runner import run_campaign
    from rig.scorer.base import forget_gradings

    base = tmp_path_factory.mktemp("real_serial")
    pipeline = real_pipeline(base)
    from rig.scorer.llamacpp import forget_snapshots

    forget_gradings()  # its judge counts are checked: grade here, not from an earlier test
    forget_snapshots()  # ... and prime each rubric here (evaluated, or restored from disk)
    res = run_campaign(real_spec(base / "ref", pipeline), progress=False,
                       executor=ExecutorSpec("serial"))
    return pipeline, res


@pytest.fixture(scope="session")
def small_real_campaign(small_real_campaign_spec) -> Path:
    """The folder of :func:`small_real_campaign_spec`'s campaign."""
    return small_real_campaign_spec.out_dir


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """``python -m rig.scorer.serve`` (``llama_cpp.server`` with rig's AMX guard) on a free
    loopback port with an API key, stopped after the module. Waits for readiness at most 240 s."""
    pytest.importorskip("llama_cpp.server", reason="needs 'llama-cpp-python[server]'")
    from procs import free_port, served

    from rig.models import ensure_model

    key = "sk-" + secrets.token_hex(16)
    port = free_port()
    base = f"http://127.0.0.1:{port}/v1"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def ready() -> bool:
        req = urllib.request.Request(f"{base}/models", headers={"Authorization": f"Bearer {key}"})
        try:
            with opener.open(req, timeout=5) as r:
                return r.status == 200
        except OSError:
            return False

    cmd = [sys.executable, "-m", "rig.scorer.serve", "--model",
           str(ensure_model(SERVER_MODEL)), "--n_threads", "2", "--n_ctx", "4096", "--host",
           "127.0.0.1", "--port", str(port), "--api_key", key, "--verbose", "False"]
    with served(cmd, tmp_path_factory.mktemp("server") / "server.log", ready,
                "llama_cpp.server", 240):
        yield base, key


def _cpu_s() -> float:
    import resource

    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                 resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _timed(phase: str, item):
    """Append ``{test, phase, wall_s, cpu_s}`` to ``$RIG_TEST_TIMES`` (a JSONL path) around a
    test phase: CPU seconds of this process and its finished children, so a test's compute
    reads apart from its real-time waits whatever the machine's load (how CI time is
    budgeted, issue 28). Children still running (a server fixture) count when reaped."""
    import json
    import time

    path = os.environ.get("RIG_TEST_TIMES")
    if not path:
        return (yield)
    w0, c0 = time.perf_counter(), _cpu_s()
    try:
        return (yield)
    finally:
        rec = {"test": item.nodeid, "phase": phase,
               "wall_s": round(time.perf_counter() - w0, 2), "cpu_s": round(_cpu_s() - c0, 2)}
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec) + "\n")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _timed("setup", item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _timed("call", item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    return (yield from _timed("teardown", item))
