"""What every executor shares: its settings, the tasks it runs, the question-affine queue and
the fault accounting.

A campaign runs in two phases (:mod:`rig.campaign.runner`): the oracle gradings its calls
need (:class:`OracleTask`, one per question, answer, seed and pipeline version), then the calls
(:class:`CallTask`). An executor takes a list of tasks and hands each result to the driver's
``on_result`` callback, in the driver's thread: the driver is the only writer of the logs.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rig.errors import ConfigError

if TYPE_CHECKING:
    from rig.answers import Answer, Question
    from rig.pipeline import PipelineConfig
    from rig.profiles import Profile
    from rig.scorer.base import ScoreResult
    from rig.stages import Stages

ExecutorKind = Literal["serial", "local", "ray"]
#: A task that has killed this many workers is given up: logged as a failed call (or a failed
#: oracle grading) whose error names the deaths, never retried in a loop.
MAX_WORKER_DEATHS = 3


def default_workers() -> int:
    """One worker per two cores (at least one): each worker runs ASR and the scorer, which
    each use more than one thread."""
    from rig.cpus import usable_cpus

    return max(1, usable_cpus() // 2)


#: The thread pools a worker's libraries size from the environment at load (OpenMP: libgomp
#: in CTranslate2 and llama.cpp; OpenBLAS and MKL under numpy and scipy).
THREAD_POOL_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def worker_cpus(setup: object) -> int:
    """The CPUs one worker uses: the larger of its ASR and judge thread budgets (``setup``'s
    ``runtime``, a :class:`rig.runtime.Runtime`), at least 1. A Ray actor asks for this many
    ``num_cpus``; a local worker's OpenMP and BLAS pools are sized to it."""
    rt = getattr(setup, "runtime", None)
    return max(1, getattr(rt, "asr_threads", 1) or 1, getattr(rt, "scorer_threads", 1) or 1)


@dataclass(frozen=True)
class ExecutorSpec:
    """How a campaign's calls are spread.

    Attributes:
        kind: ``serial`` (in this process, one call after another: today's loop), ``local``
            (``workers`` processes on this machine; ``workers == 1`` is ``serial``) or ``ray``
            (actors on a Ray cluster).
        workers: worker processes or actors; None: :func:`default_workers` (local) or as many
            as the cluster's CPUs hold (ray).
        ray_address: ``auto`` (the cluster this machine belongs to), ``HOST:PORT``, or None
            (start a local Ray instance for this campaign and stop it after).
        concurrency: calls in flight at once over a real transport (driver threads; a real
            call takes its real time). Simulated calls ignore it.
        runtime: thread budgets and device of each worker (:class:`rig.runtime.Runtime`);
            None: split this machine's cores over the workers.
        overlap: inside a worker, run the front of the next call (render .. ASR) while the
            scorer grades the current one; None: when the worker's threads leave room.
    """
    kind: ExecutorKind = "serial"
    workers: int | None = None
    ray_address: str | None = None
    concurrency: int = 1
    runtime: object | None = None
    overlap: bool | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("serial", "local", "ray"):
            raise ConfigError("--executor", "", "must be serial, local or ray", self.kind)
        if self.workers is not None and self.workers < 1:
            raise ConfigError("--workers", "", "must be at least 1", self.workers)
        if self.concurrency < 1:
            raise ConfigError("--concurrency", "", "must be at least 1", self.concurrency)

    def resolved(self, real_transport: bool = False) -> ExecutorSpec:
        """This spec with ``overlap`` decided: only local workers overlap (not this process,
        not Ray actors, not real-transport calls); None means on when each worker's share of
        the cores (cores // workers) is at least 2, one thread for ASR and one for the judge.
        """
        from rig.cpus import usable_cpus

        overlap = self.overlap
        if real_transport or self.kind != "local":
            overlap = False
        elif overlap is None:
            n = self.n_workers()
            overlap = n > 1 and usable_cpus() // n >= 2
        return dataclasses.replace(self, overlap=overlap)

    def in_driver(self, real_transport: bool = False) -> bool:
        """The calls run in the driver's process: serial, a real transport, or one local
        worker that does not overlap."""
        return (real_transport or self.kind == "serial"
                or (self.kind == "local" and self.n_workers() == 1 and not self.overlap))

    def record(self, runtime: object | None, n_workers: int | None) -> dict:
        """campaign.json's ``runtime``: how the calls ran, with the workers' thread budgets
        and device (not in ``pipeline_version``: none of it changes a result)."""
        rt = dataclasses.asdict(runtime) if dataclasses.is_dataclass(runtime) else {}
        return {"executor": self.kind, "workers": n_workers, "ray_address": self.ray_address,
                "concurrency": self.concurrency, "overlap": self.overlap, **rt}

    def n_workers(self) -> int:
        """Workers of a serial or local executor (ray: see the Ray executor)."""
        if self.kind == "serial":
            return 1
        return self.workers or default_workers()


@dataclass(frozen=True)
class ProfilePaths:
    """``resolve_path`` of one profile: a path it names, relative to its file's folder
    (picklable, unlike a closure; the folder must exist on every node that runs its calls)."""
    folder: Path

    def __call__(self, rel: str) -> Path:
        p = Path(rel)
        return p if p.is_absolute() else self.folder / p


@dataclass(frozen=True)
class OracleTask:
    """Grade an answer's clean script text (the oracle score of its calls)."""
    key: str
    question: Question
    answer: Answer
    seed: int

    @property
    def task_id(self) -> str:
        return self.key

    @property
    def group(self) -> str:
        return self.question.question_id


@dataclass(frozen=True)
class CallTask:
    """One planned call with its oracle grade."""
    call_id: str
    question: Question
    answer: Answer
    profile: Profile
    repeat: int
    seed: int
    oracle: ScoreResult
    paths: ProfilePaths

    @property
    def task_id(self) -> str:
        return self.call_id

    @property
    def group(self) -> str:
        return self.question.question_id


Task = OracleTask | CallTask


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker needs once, before its first task.

    ``stages``: given (unit tests' fakes, which must pickle: module-level functions), each
    worker gets a copy; None: each worker builds the real stages once
    (``rig.runtime.build_stages(pipeline, runtime)``) and reuses them for all its calls.
    ``audio_dir``: where each call's audio is written (``Stages.audio_dir``; a Ray cluster's
    nodes must share it); None: not written.
    """
    pipeline: PipelineConfig
    version: str
    campaign_id: str
    runtime: object | None = None
    stages: Stages | None = None
    overlap: bool = False
    audio_dir: Path | None = None


@dataclass
class TaskFailure:
    """A task given up after killing :data:`MAX_WORKER_DEATHS` workers; ``error`` names the
    deaths (the row logged for it says so)."""
    task: Task
    error: str


class TaskQueue:
    """Tasks grouped by question, handed out so that a worker keeps to one question while it
    has calls (the scorer's KV cache then holds that question's rubric prefix).

    :meth:`next_for` gives a worker the next task of the question it ran last; when that
    question has none left, the next question no worker holds; when every question left is
    held, the question with the most tasks left. A task given back (its worker died) goes to
    the front of its question, and :meth:`death` counts its deaths.
    """

    def __init__(self, tasks: Iterable[Task]) -> None:
        self._groups: dict[str, collections.deque[Task]] = {}
        for t in tasks:
            self._groups.setdefault(t.group, collections.deque()).append(t)
        self.deaths: dict[str, list[str]] = collections.defaultdict(list)
        self._suspects: set[str] = set()

    def __len__(self) -> int:
        return sum(len(d) for d in self._groups.values())

    def next_for(self, last_group: str | None, held: Iterable[str] = ()) -> Task | None:
        """The next task for a worker that last ran ``last_group`` (None: none yet);
        ``held``: the groups other workers are on. None when the queue is empty."""
        if self._groups.get(last_group):
            return self._take(last_group)
        live = [g for g, d in self._groups.items() if d]
        if not live:
            return None
        held = set(held)
        free = [g for g in live if g not in held]
        g = free[0] if free else max(live, key=lambda k: len(self._groups[k]))
        return self._take(g)

    def _take(self, group: str) -> Task:
        t = self._groups[group].popleft()
        if not self._groups[group]:
            del self._groups[group]
        return t

    def give_back(self, task: Task) -> None:
        self._groups.setdefault(task.group, collections.deque()).appendleft(task)

    def death(self, task: Task, how: str, alone: bool = True) -> TaskFailure | None:
        """Count a worker's death while it ran ``task`` (``how``: e.g. ``killed by
        SIGKILL``): requeue the task, or give it up (return the failure) at
        :data:`MAX_WORKER_DEATHS`. A death with other tasks in flight on the same worker
        (``alone`` False: an overlapping worker) is not counted against any of them; each is
        then run alone (:meth:`suspect`) until it finishes, so the one that kills is found."""
        if not alone:
            self._suspects.add(task.task_id)
            self.give_back(task)
            return None
        seen = self.deaths[task.task_id]
        seen.append(how)
        if len(seen) >= MAX_WORKER_DEATHS:
            return TaskFailure(task, f"worker: {len(seen)} workers died running this task "
                                     f"({'; '.join(seen)}); not retried in this run")
        self._suspects.add(task.task_id)
        self.give_back(task)
        return None

    def suspect(self, task: Task) -> bool:
        """``task`` was in flight on a worker that died: run it with nothing beside it."""
        return task.task_id in self._suspects


@dataclass
class RunStats:
    """What an executor reports after a run.

    ``worker_reports``: each worker's latest :meth:`Worker.report
    <rig.campaign.executors.worker.Worker.report>` (keyed by its ``worker`` id; cumulative
    since the worker started, so the latest one counts all its gradings, a dead worker's up to
    its last result); :meth:`judge_prefix_cache` and :meth:`devices` sum them."""
    n_results: int = 0
    n_worker_deaths: int = 0
    n_workers_started: int = 0
    n_failed_by_deaths: int = 0
    death_causes: list[str] = field(default_factory=list)
    worker_reports: dict[str, dict] = field(default_factory=dict)

    def record(self, report: dict | None) -> None:
        """Keep a worker's latest report (None: nothing to keep)."""
        if report:
            self.worker_reports[report["worker"]] = report

    def judge_prefix_cache(self) -> dict:
        """``{"hits": int, "misses": int, "hit_rate": float | None}`` over every worker: the
        gradings whose rubric prefix was still in the judge's KV cache, those that evaluated
        it afresh, and hits / (hits + misses) (None when nothing was graded; memoised repeats
        of a text are neither)."""
        hits = sum(r.get("hits", 0) for r in self.worker_reports.values())
        misses = sum(r.get("misses", 0) for r in self.worker_reports.values())
        n = hits + misses
        return {"hits": hits, "misses": misses, "hit_rate": hits / n if n else None}

    def devices(self) -> dict[str, list[str]]:
        """``{"asr": [...], "scorer": [...]}``: the devices the workers' engines ran on
        (sorted, distinct; empty when no worker reported one)."""
        return {k: sorted({r[f"{k}_device"] for r in self.worker_reports.values()
                           if r.get(f"{k}_device")}) for k in ("asr", "scorer")}


#: ``on_result(task, row)``: a task's result row (a call row, or an oracle row), in the driver
#: thread. ``on_failure(failure)``: a task given up.
OnResult = Callable[[Task, dict], None]
OnFailure = Callable[[TaskFailure], None]


def describe_exit(exitcode: int | None) -> str:
    """``killed by SIGKILL`` for a negative exit code, ``exit code N`` otherwise."""
    import signal

    if exitcode is None:
        return "lost (no exit code)"
    if exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit code {exitcode}"
