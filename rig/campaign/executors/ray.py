"""``--executor ray --ray-address auto|HOST:PORT``: Ray actors, each holding its own stages.

Each actor is a :class:`~rig.campaign.executors.worker.Worker` (``num_cpus`` = its thread
budget) that builds its stages once and runs one task at a time; the driver hands out tasks
from the same question-affine queue as the local executor and writes every row itself. An
actor that dies (its process killed, its node lost: ``RayActorError``) has its task put back
and a new actor started; a task that has killed
:data:`~rig.campaign.executors.base.MAX_WORKER_DEATHS` actors is given up.

Every node must hold the same rig install, the model packages, and the files the inputs name
at the same absolute paths (noise files and recordings a profile names, the answer bank):
tasks carry the questions, answers and profiles, but a profile's files are read where the
call runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

from rig.campaign.executors.base import (
    OnFailure,
    OnResult,
    RunStats,
    Task,
    TaskQueue,
    WorkerSetup,
    worker_cpus,
)
from rig.errors import EngineUnavailable, RigError

#: Actors that die before they are ready, in a row, before the run stops.
MAX_START_DEATHS = 3


def _ray():
    try:
        import ray
    except ImportError as exc:
        raise EngineUnavailable("--executor ray needs Ray: pip install 'rig[ray]'") from exc
    return ray


@dataclass
class _Actor:
    handle: object
    ready_ref: object
    ready: bool = False
    task: Task | None = None
    ref: object = None
    last_group: str | None = None


class RayExecutor:
    """Actors on the Ray cluster at ``address`` (``auto``, ``HOST:PORT``; None: the Ray
    instance this process already joined, else a local one started here and stopped on
    exit). ``n_workers`` actors; None: as many as the cluster's CPUs hold."""

    def __init__(self, setup: WorkerSetup, n_workers: int | None, address: str | None) -> None:
        self.setup, self.address = setup, address
        self.ray = _ray()
        self._owns = False
        self.cpus = worker_cpus(setup)
        self.requested = n_workers
        self.actors: list[_Actor] = []
        self.stats = RunStats()
        self._start_deaths = 0

    def __enter__(self) -> RayExecutor:
        ray = self.ray
        if not ray.is_initialized():
            # "local": a new instance even where `ray start` left one to join by default
            _check_address(self.address)
            try:
                ray.init(address=self.address or "local", include_dashboard=False,
                         log_to_driver=False)
            except (ValueError, ConnectionError, RuntimeError) as exc:
                raise RigError(f"--ray-address: cannot start or join Ray at "
                               f"{self.address or 'local'!r}: {exc}") from None
            self._owns = True
        biggest = _largest_node_cpus(ray)
        if biggest is not None and biggest < self.cpus:
            # Ray would keep every actor pending for a node that never comes
            self.close()
            raise RigError(
                f"--executor ray: each actor asks for {self.cpus} CPUs (its ASR and judge "
                f"threads: this machine's cores split over --workers, or --asr-threads and "
                f"--scorer-threads), but the largest Ray node has {biggest:g}; pass "
                f"--asr-threads and --scorer-threads of at most {max(1, int(biggest))}")
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.n_workers = self.requested or max(1, cpus // self.cpus)
        from rig.campaign.executors.worker import Worker

        if hasattr(self.setup, "worker_class"):  # a rig.jobs job's setup
            Worker = self.setup.worker_class()
        self._cls = ray.remote(num_cpus=self.cpus, max_restarts=0,
                               max_task_retries=0)(Worker)
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _start(self) -> None:
        h = self._cls.remote(self.setup)
        self.actors.append(_Actor(h, h.ready.remote()))
        self.stats.n_workers_started += 1

    def _died(self, a: _Actor, queue: TaskQueue, on_failure: OnFailure | None,
              err: Exception) -> None:
        how = f"actor lost ({type(err).__name__})"
        self.actors.remove(a)
        self.ray.kill(a.handle)
        self.stats.n_worker_deaths += 1
        self.stats.death_causes.append(how)
        if not a.ready:
            self._start_deaths += 1
            if self._start_deaths >= MAX_START_DEATHS:
                raise RigError(f"Ray actors die while starting ({err}); run with "
                               "--executor local --workers 1 to see the error")
        if a.task is not None:
            failure = queue.death(a.task, how)
            if failure is not None:
                self.stats.n_failed_by_deaths += 1
                if on_failure is None:
                    raise RigError(failure.error)
                on_failure(failure)

    def _get(self, ref):
        """``ray.get``; an error the worker raised (not its death) is raised as itself."""
        ray = self.ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayActorError:
            raise
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, Exception) and not isinstance(
                    cause, ray.exceptions.RayActorError):
                raise cause from None
            raise

    def run(self, tasks: Sequence[Task], on_result: OnResult,
            on_failure: OnFailure | None = None) -> RunStats:
        """Run ``tasks``; ``on_result(task, row)`` for each, in this thread. Raises what an
        actor raised building its stages or running an oracle grading."""
        ray = self.ray
        lost = (ray.exceptions.RayActorError, ray.exceptions.ActorDiedError,
                ray.exceptions.ActorUnavailableError)
        queue = TaskQueue(tasks)
        while len(queue) or any(a.task is not None for a in self.actors):
            want = min(self.n_workers, len(queue) + sum(a.task is not None for a in self.actors))
            while len(self.actors) < want:
                self._start()
            for a in self.actors:
                if a.ready and a.task is None and len(queue):
                    held = [b.task.group for b in self.actors if b.task is not None]
                    a.task = queue.next_for(a.last_group, held)
                    a.ref = a.handle.run_reporting.remote(a.task)
            refs = {}
            for a in self.actors:
                refs[a.ref if a.ready else a.ready_ref] = a
            refs.pop(None, None)
            done, _ = ray.wait(list(refs), num_returns=1)
            for ref in done:
                a = refs[ref]
                try:
                    value = self._get(ref)
                except lost as exc:
                    self._died(a, queue, on_failure, exc)
                    continue
                if not a.ready:
                    a.ready, self._start_deaths = True, 0
                    continue
                task, a.task, a.ref = a.task, None, None
                a.last_group = task.group
                row, report = value
                self.stats.record(report)
                self.stats.n_results += 1
                on_result(task, row)
        return self.stats

    def close(self) -> None:
        """Kill the actors; stop the Ray instance this executor started."""
        for a in self.actors:
            with contextlib.suppress(Exception):  # already gone with its node
                self.ray.kill(a.handle)
        self.actors = []
        if self._owns:
            self.ray.shutdown()


def _largest_node_cpus(ray) -> float | None:
    """The CPUs of the largest live node of the cluster (None: Ray does not say)."""
    try:
        nodes = ray.nodes()
    except Exception:
        return None
    cpus = [n.get("Resources", {}).get("CPU", 0.0) for n in nodes if n.get("Alive")]
    return max(cpus) if cpus else None


def _check_address(address: str | None) -> None:
    """Refuse, before Ray is asked, an address that is not ``auto``/``local``, ``HOST:PORT``
    or ``ray://HOST:PORT``, and a ``HOST:PORT`` where nothing listens (Ray itself would wait on
    its GCS timeouts for minutes).

    Raises:
        RigError: naming ``--ray-address`` and the value."""
    import socket

    if address in (None, "auto", "local"):
        return
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise RigError(f"--ray-address: auto, local, HOST:PORT or ray://HOST:PORT "
                       f"(got {address!r})")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise RigError(f"--ray-address: nothing answers at {hostport} ({exc}); is the Ray "
                       f"head started there (`ray start --head`)? (got {address!r})") from None
