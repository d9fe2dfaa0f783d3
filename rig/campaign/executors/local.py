"""``--executor local --workers N``: N worker processes on this machine.

Each worker is a ``multiprocessing`` process started with the ``spawn`` context (``fork`` is
unsafe once onnxruntime, CTranslate2 or llama.cpp threads exist), builds its stages once and
runs one task at a time sent over its own pipe, so the driver always knows which task each
worker holds. A worker that dies (SIGKILL, out of memory) has its task put back at the front
of its question and a new worker started (a worker whose driver dies exits within
:data:`DRIVER_CHECK_S`: :func:`exit_with_driver`); a task that has killed
:data:`~rig.campaign.executors.base.MAX_WORKER_DEATHS` workers is given up
(:class:`~rig.campaign.executors.base.TaskFailure`). Workers ignore SIGINT: on Ctrl-C the
driver stops them.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import multiprocessing.connection as mpc
import os
import pickle
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from rig.campaign.executors.base import (
    THREAD_POOL_ENV,
    OnFailure,
    OnResult,
    RunStats,
    Task,
    TaskQueue,
    WorkerSetup,
    describe_exit,
    worker_cpus,
)
from rig.errors import RigError
from rig.sigint import sigint_ignored

#: Workers that die before they are ready, in a row, before the run stops (a broken install
#: would otherwise restart workers forever).
MAX_START_DEATHS = 3


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it pickles, else a :class:`RigError` with its text."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        return RigError(f"{type(exc).__name__}: {exc}")


@contextlib.contextmanager
def thread_pools_sized(cpus: int):
    """The environment a worker process starts with: each of
    :data:`~rig.campaign.executors.base.THREAD_POOL_ENV` the user has not set (or set empty,
    which OpenMP reads as unset) is ``cpus`` inside, restored after (a spawned child copies
    the environment at its start).

    Without it each of N workers sizes its OpenMP and OpenBLAS pools to the whole machine,
    N x cores threads on cores CPUs. Ray does the same for its actors (``OMP_NUM_THREADS`` =
    the actor's ``num_cpus``), so local and Ray workers run with the same pools."""
    before = {k: os.environ.get(k) for k in THREAD_POOL_ENV
              if not os.environ.get(k, "").strip()}  # "" is unset, for OpenMP too
    os.environ.update(dict.fromkeys(before, str(cpus)))
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


#: how often a worker checks that its driver is alive (seconds)
DRIVER_CHECK_S = 0.5


def exit_with_driver(check_s: float = DRIVER_CHECK_S) -> threading.Thread:
    """Start a daemon thread that ends this worker process (``os._exit(1)``) once its parent,
    the driver, is gone (killed: SIGKILL, out of memory): its parent process id changes. An
    orphaned worker would otherwise finish its call (minutes of ASR and judge on the real
    stages) for a driver that cannot log it, beside the workers of the resumed run."""
    import os
    import time

    driver = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(check_s)
            if os.getppid() != driver:
                os._exit(1)

    t = threading.Thread(target=watch, name="rig-driver-watch", daemon=True)
    t.start()
    return t


def worker_main(setup: WorkerSetup, conn: mpc.Connection) -> None:
    """A worker process: build the stages, say ready, then run the tasks received until
    ``None`` or the pipe closes (:func:`rig.campaign.executors.worker.serve`)."""
    from rig.campaign.executors.worker import Worker, ignore_sigint, serve

    ignore_sigint()
    exit_with_driver()
    try:
        try:
            make = getattr(setup, "make_worker", None)  # a rig.jobs job's setup
            worker = make() if make is not None else Worker(setup)
        except Exception as exc:
            conn.send(("init_error", None, _portable(exc)))
            return
        conn.send(("ready", None, worker.ready()))
    except OSError:  # the driver died while this worker started (killed): nothing to say
        return
    lock = threading.Lock()  # the scoring thread and this one may both send

    def recv():
        try:
            return conn.recv()
        except (EOFError, OSError):  # the driver is gone
            return None

    def send(msg: tuple) -> None:
        kind, task_id, payload = msg
        with lock, contextlib.suppress(OSError):  # OSError: the driver is gone
            if kind == "done":  # before the row: the driver has it when the task is done
                conn.send(("report", None, worker.report()))
            conn.send((kind, task_id, _portable(payload) if kind == "raise" else payload))

    serve(worker, recv, send, setup.overlap)


@dataclass
class _Proc:
    proc: mp.process.BaseProcess
    conn: mpc.Connection
    ready: bool = False
    tasks: list[Task] = field(default_factory=list)  # in flight, in the order sent
    last_group: str | None = None
    alive: bool = True


class LocalExecutor:
    """``n_workers`` spawned processes, kept for the whole campaign (both phases); use as a
    context manager (the exit stops them)."""

    def __init__(self, setup: WorkerSetup, n_workers: int) -> None:
        self.setup, self.n_workers = setup, n_workers
        self.ctx = mp.get_context("spawn")
        self.procs: list[_Proc] = []
        self.slots = 2 if setup.overlap else 1  # tasks in flight per worker
        self.stats = RunStats()
        self._start_deaths = 0

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc) -> None:
        self.close(graceful=exc[0] is None)

    def _start(self) -> None:
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=worker_main, args=(self.setup, child), daemon=True,
                                name=f"rig-worker-{self.stats.n_workers_started}")
        # the child starts with SIGINT ignored (a disposition exec keeps): no Ctrl-C
        # traceback from a worker still importing
        with sigint_ignored(), thread_pools_sized(worker_cpus(self.setup)):
            proc.start()
        child.close()
        self.procs.append(_Proc(proc, parent))
        self.stats.n_workers_started += 1

    def _died(self, p: _Proc, queue: TaskQueue, on_failure: OnFailure | None) -> None:
        if not p.alive:
            return
        p.alive = False
        p.proc.join(timeout=10)
        how = describe_exit(p.proc.exitcode)
        with contextlib.suppress(OSError):
            p.conn.close()
        self.procs.remove(p)
        self.stats.n_worker_deaths += 1
        self.stats.death_causes.append(how)
        if not p.ready:
            self._start_deaths += 1
            if self._start_deaths >= MAX_START_DEATHS:
                raise RigError(f"campaign workers die while starting ({how}, "
                               f"{self._start_deaths} in a row): run with --workers 1 to "
                               "see the error")
        lost, p.tasks = p.tasks, []
        for task in lost:
            failure = queue.death(task, how, alone=len(lost) == 1)
            if failure is not None:
                self.stats.n_failed_by_deaths += 1
                if on_failure is None:
                    raise RigError(failure.error)
                on_failure(failure)

    def _message(self, p: _Proc, msg: tuple, on_result: OnResult) -> None:
        kind, task_id, payload = msg
        if kind == "ready":
            p.ready = True
            self._start_deaths = 0
        elif kind == "report":
            self.stats.record(payload)
        elif kind == "init_error" or kind == "raise":
            raise payload
        elif kind == "done":
            task = next(t for t in p.tasks if t.task_id == task_id)
            p.tasks.remove(task)
            p.last_group = task.group
            self.stats.n_results += 1
            on_result(task, payload)

    def run(self, tasks: Sequence[Task], on_result: OnResult,
            on_failure: OnFailure | None = None) -> RunStats:
        """Run ``tasks``; ``on_result(task, row)`` for each, in this thread. Raises what a
        worker raised building its stages or running an oracle grading (a missing model),
        and :class:`RigError` when workers keep dying as they start."""
        queue = TaskQueue(tasks)
        while len(queue) or any(p.tasks for p in self.procs):
            busy = sum(bool(p.tasks) for p in self.procs)
            while len(self.procs) < min(self.n_workers, len(queue) + busy):
                self._start()
            for p in list(self.procs):
                while (p.ready and p.alive and len(p.tasks) < self.slots and len(queue)
                       and not any(queue.suspect(t) for t in p.tasks)):
                    held = [q.tasks[-1].group for q in self.procs if q.tasks and q is not p]
                    t = queue.next_for(p.tasks[-1].group if p.tasks else p.last_group, held)
                    if p.tasks and queue.suspect(t):  # it runs alone, on the next free worker
                        queue.give_back(t)
                        break
                    try:
                        p.conn.send(t)
                    except OSError:  # it died since: the task goes back, uncounted
                        queue.give_back(t)
                        self._died(p, queue, on_failure)
                        break
                    p.tasks.append(t)
            by_obj: dict = {}
            for p in self.procs:
                by_obj[p.conn] = p
                by_obj[p.proc.sentinel] = p
            for obj in mpc.wait(list(by_obj)):
                p = by_obj[obj]
                if not p.alive:
                    continue
                if obj is p.conn:
                    try:
                        while p.conn.poll():
                            self._message(p, p.conn.recv(), on_result)
                    except (EOFError, OSError):
                        self._died(p, queue, on_failure)
                elif not p.proc.is_alive() or p.proc.exitcode is not None:
                    with contextlib.suppress(EOFError, OSError):  # a last result first
                        while p.conn.poll():
                            self._message(p, p.conn.recv(), on_result)
                    self._died(p, queue, on_failure)
        return self.stats

    def close(self, graceful: bool = True) -> None:
        """Stop the workers: ask them to exit (``graceful``), else or after 10 s, kill."""
        for p in self.procs:
            if graceful:
                with contextlib.suppress(OSError):
                    p.conn.send(None)
        for p in self.procs:
            if graceful:
                p.proc.join(timeout=10)
            if p.proc.is_alive():
                p.proc.kill()
                p.proc.join(timeout=10)
            with contextlib.suppress(OSError):
                p.conn.close()
        self.procs = []
