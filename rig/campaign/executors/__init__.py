"""Executors: where a campaign's oracle gradings and calls run.

* :mod:`~rig.campaign.executors.base`    :class:`ExecutorSpec`, the tasks, the question-affine
  queue, fault accounting.
* :mod:`~rig.campaign.executors.worker`  the worker side (stages built once, task by task).
* :mod:`~rig.campaign.executors.serial`  in the driver's process (and real-transport calls in
  driver threads, ``--concurrency``).
* :mod:`~rig.campaign.executors.local`   spawned worker processes on this machine.
* :mod:`~rig.campaign.executors.ray`     Ray actors on a cluster (extra ``ray``).

Every executor hands results back to the driver, the only writer of ``calls.jsonl`` and
``oracle.jsonl``; so resume and "no call twice" hold whatever ran the calls.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from rig.campaign.executors.base import (
    MAX_WORKER_DEATHS,
    CallTask,
    ExecutorSpec,
    OracleTask,
    ProfilePaths,
    RunStats,
    TaskFailure,
    WorkerSetup,
    default_workers,
)
from rig.campaign.executors.worker import Worker

__all__ = ["MAX_WORKER_DEATHS", "CallTask", "CampaignInterrupted", "ExecutorSpec",
           "OracleTask", "ProfilePaths", "RunStats", "TaskFailure", "WorkerSetup",
           "default_workers", "open_executor"]


class CampaignInterrupted(KeyboardInterrupt):
    """Ctrl-C during a campaign: the workers were stopped; ``n_logged`` of ``n_planned``
    planned calls are in ``calls.jsonl``, and rerunning the same command resumes."""

    def __init__(self, n_logged: int, n_planned: int) -> None:
        self.n_logged, self.n_planned = n_logged, n_planned
        super().__init__(f"interrupted: {n_logged} of {n_planned} calls logged; rerun the "
                         "same command to resume")


@contextlib.contextmanager
def open_executor(spec: ExecutorSpec, setup: WorkerSetup, *,
                  call_fn: Callable[..., dict] | None = None) -> Iterator:
    """The executor ``spec`` describes, started, and stopped on exit (on an error or Ctrl-C,
    its workers are killed). ``call_fn`` (a real transport's caller) always runs in this
    process, ``spec.concurrency`` calls at once.

    Raises:
        ConfigError: ``ray`` with a real transport, or the ``ray`` extra not installed.
    """
    from rig.campaign.call import run_call
    from rig.errors import ConfigError

    real = call_fn is not None and call_fn is not run_call
    if real and spec.kind == "ray":
        raise ConfigError("--executor", "", "a real transport's calls run from the driver "
                          "(--concurrency K); use --executor local or serial", "ray")
    if spec.in_driver(real):
        from rig.campaign.executors.serial import SerialExecutor

        yield SerialExecutor(Worker(setup), call_fn=call_fn or run_call,
                             concurrency=spec.concurrency if real else 1)
        return
    if spec.kind == "local":
        from rig.campaign.executors.local import LocalExecutor

        with LocalExecutor(setup, spec.n_workers()) as ex:
            yield ex
        return
    from rig.campaign.executors.ray import RayExecutor

    with RayExecutor(setup, spec.workers, spec.ray_address) as ex:
        yield ex
