"""One executor layer for every long job: map independent work items over the campaign's
serial, local-process or Ray executors (:mod:`rig.campaign.executors`).

A job is a list of :class:`Item` (an id, a picklable payload) and a :class:`JobSetup` (a
module-level builder, run once per worker, that returns the function that turns one payload
into one result). :func:`run_items` hands each result to ``on_result(item_id, result)`` in the
driver's thread as it finishes, so the caller's own append-only log (``asks.jsonl``, a
sweep's ``calls.jsonl``) stays its only writer: resume and "nothing twice" hold whatever ran
the items. A worker that dies (SIGKILL, out of memory) has its item run again on a new worker
(the executors' :class:`~rig.campaign.executors.base.TaskQueue`); an item that kills
:data:`~rig.campaign.executors.base.MAX_WORKER_DEATHS` workers is given up
(``on_failure``). Callers order their outputs by item id, never by completion order, so the
results do not depend on the executor or the worker count.

Used by ``rig sweep``, the resumable ``rig probe`` commands, ``rig scorer validate`` and
``rig replay`` (``--executor serial|local|ray --workers N``).
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rig.campaign.executors.base import ExecutorSpec, TaskFailure


@dataclass(frozen=True)
class Item:
    """One independent work item: ``item_id`` (unique in its job), ``payload`` (picklable;
    what the worker's function gets) and ``group`` (items of a group go to the same worker
    while it has some, as a campaign's calls of one question do)."""
    item_id: str
    payload: Any
    group: str = ""

    @property
    def task_id(self) -> str:
        return self.item_id


@dataclass(frozen=True)
class JobSetup:
    """What each worker builds once: ``build(*args)`` returns ``fn(payload) -> result``
    (both picklable: a module-level function and plain arguments; the heavy stages, a judge
    or ASR, are built inside ``build``, once per worker). ``runtime``: thread budgets (sizes
    Ray actors' ``num_cpus``); ``overlap`` is always False (one item at a time)."""
    build: Callable[..., Callable[[Any], Any]]
    args: tuple = ()
    runtime: object | None = None
    overlap: bool = False
    audio_dir: None = None

    def make_worker(self) -> JobWorker:
        return JobWorker(self)

    @staticmethod
    def worker_class() -> type:
        return JobWorker


class JobWorker:
    """A worker of a job: holds the built function and runs item after item (in the driver,
    a spawned process or a Ray actor). Raises at construction what ``build`` raises."""

    def __init__(self, setup: JobSetup) -> None:
        self.fn = setup.build(*setup.args)
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

    def ready(self) -> int:
        return os.getpid()

    def report(self) -> dict:
        return {"worker": self.worker_id}

    def run(self, item: Item, call_fn: object = None) -> Any:
        """``fn(item.payload)``; raises what it raises (the driver re-raises it)."""
        return self.fn(item.payload)

    def run_reporting(self, item: Item) -> tuple[Any, dict]:
        return self.run(item), self.report()


@dataclass
class JobStats:
    """What a job run reports: results, workers started and died, items given up."""
    n_results: int = 0
    n_workers_started: int = 0
    n_worker_deaths: int = 0
    failures: list[TaskFailure] = field(default_factory=list)


def executor_spec(executor: str = "serial", workers: int = 1,
                  ray_address: str | None = None) -> ExecutorSpec:
    """The :class:`ExecutorSpec` of the CLI's ``--executor``/``--workers``/``--ray-address``.

    Raises:
        ConfigError: ``--executor`` not serial, local or ray, or ``--workers`` below 1."""
    return ExecutorSpec(executor, workers, ray_address)  # type: ignore[arg-type]


def run_items(items: Sequence[Item], setup: JobSetup, spec: ExecutorSpec | None,
              on_result: Callable[[str, Any], None],
              on_failure: Callable[[TaskFailure], None] | None = None) -> JobStats:
    """Run ``items`` on the executor ``spec`` describes (None: serial, in this process) and
    call ``on_result(item_id, result)`` for each as it finishes, in this thread.

    Raises:
        RigError: an item killed MAX_WORKER_DEATHS workers and ``on_failure`` is None, or
            workers die as they start; what ``build`` or ``fn`` raised (re-raised here);
        ConfigError / EngineUnavailable: ``ray`` without the ``ray`` extra."""
    ids = [it.item_id for it in items]
    if len(ids) != len(set(ids)):
        from rig.errors import RigError

        raise RigError("rig.jobs: item ids must be unique in a job")
    stats = JobStats()
    spec = spec or ExecutorSpec()
    if not items:
        return stats

    def done(task: Item, result: Any) -> None:
        stats.n_results += 1
        on_result(task.item_id, result)

    def failed(f: TaskFailure) -> None:
        stats.failures.append(f)
        if on_failure is None:
            from rig.errors import RigError

            raise RigError(f"{f.task.task_id}: {f.error}")
        on_failure(f)

    if spec.in_driver():
        worker = JobWorker(setup)
        stats.n_workers_started = 1
        for it in items:
            done(it, worker.run(it))
        return stats
    if spec.kind == "local":
        from rig.campaign.executors.local import LocalExecutor

        ex: Any = LocalExecutor(setup, spec.n_workers())  # type: ignore[arg-type]
    else:
        from rig.campaign.executors.ray import RayExecutor

        ex = RayExecutor(setup, spec.workers, spec.ray_address)  # type: ignore[arg-type]
    with ex:
        rs = ex.run(list(items), done, failed)  # type: ignore[arg-type]
    stats.n_workers_started, stats.n_worker_deaths = rs.n_workers_started, rs.n_worker_deaths
    return stats
