"""The worker side of every executor: build the stages once, then run task after task.

The same :class:`Worker` runs in the driver (serial), in a spawned process (local) and in a
Ray actor (ray), so a call's row does not depend on where it ran (timing columns aside).
"""

from __future__ import annotations

import dataclasses
import os
import queue
import signal
import socket
import threading
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from rig.campaign.call import finish_call, run_call, run_call_front
from rig.campaign.executors.base import CallTask, OracleTask, Task, WorkerSetup
from rig.campaign.front import FrontResult
from rig.stages import Stages

if TYPE_CHECKING:
    from rig.answers import Answer, Question
    from rig.pipeline import PipelineConfig
    from rig.scorer.base import Scorer, ScoreResult


def build_worker_stages(pipeline: PipelineConfig, runtime: object | None) -> Stages:
    """The real stages of ``pipeline`` under ``runtime`` (:func:`rig.runtime.build_stages`).

    Raises:
        ModelMissingError: a model package is missing (names the package).
    """
    from rig.runtime import build_stages

    return build_stages(pipeline, runtime)


def default_worker_runtime(n_workers: int, asr_threads: int | None = None,
                           scorer_threads: int | None = None, overlap: bool = False
                           ) -> object | None:
    """Each worker's thread budget (:func:`rig.runtime.default_runtime`: workers x threads
    <= cores; with ``overlap``, ASR and the judge split the worker's share), with
    ``asr_threads`` and ``scorer_threads`` where given."""
    from rig.runtime import default_runtime

    rt = default_runtime(n_workers, overlap=overlap)
    given = {k: v for k, v in (("asr_threads", asr_threads),
                               ("scorer_threads", scorer_threads)) if v is not None}
    return dataclasses.replace(rt, **given) if given else rt


def oracle_row(scorer: Scorer, key: str, question: Question, answer: Answer, seed: int,
               version: str) -> dict:
    """Grade ``answer``'s clean text and return the ``oracle.jsonl`` row (``call_id`` is the
    oracle key). Raises what :meth:`Scorer.score` raises (a missing model or engine)."""
    res = scorer.score(question, answer.clean_text, seed)
    return {"call_id": key, "answer_id": answer.answer_id, "seed": seed,
            "pipeline_version": version, "score": res.score,
            "parse_status": res.parse_status, "raw": res.raw, "reason": res.reason,
            "error": res.error, "seconds": res.seconds,
            "temperature": res.temperature, "mode": res.mode,
            "criteria": [c.to_dict() for c in res.criteria or ()] or None}


def oracle_result(row: dict) -> ScoreResult:
    """The :class:`ScoreResult` an ``oracle.jsonl`` row records."""
    from rig.scorer.base import ScoreResult

    return ScoreResult(row["score"], row["parse_status"], row["raw"], row["reason"], None,
                       row.get("seconds") or 0.0, row.get("temperature", 0.0), row["seed"],
                       row.get("error"), row.get("mode", "argmax"))


class Worker:
    """Holds one set of stages and runs tasks with them.

    Raises (at construction): what building the stages raises (a missing model package)."""

    def __init__(self, setup: WorkerSetup) -> None:
        self.setup = setup
        self.stages = (setup.stages if setup.stages is not None
                       else build_worker_stages(setup.pipeline, setup.runtime))
        if setup.audio_dir is not None:
            self.stages = dataclasses.replace(self.stages, audio_dir=setup.audio_dir)
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._cache0 = self._cache_stats()  # stages handed in may have graded before

    def ready(self) -> int:
        """This worker's process id (a Ray actor answers it once built)."""
        return os.getpid()

    def _cache_stats(self) -> dict[str, int]:
        stats = getattr(self.stages.scorer, "prefix_cache_stats", None)
        return dict(stats()) if callable(stats) else {"hits": 0, "misses": 0}

    def report(self) -> dict:
        """What this worker tells the driver with each result: ``{"worker": id (host, pid
        and a random part), "hits": int, "misses": int, "asr_device": str | None,
        "scorer_device": str | None}``; hits and misses are the judge's prompt-prefix cache
        counts (:meth:`rig.scorer.base.Scorer.prefix_cache_stats`) since this worker was
        built, cumulative (the driver keeps the latest per worker)."""
        now = self._cache_stats()
        return {"worker": self.worker_id,
                "hits": now.get("hits", 0) - self._cache0.get("hits", 0),
                "misses": now.get("misses", 0) - self._cache0.get("misses", 0),
                "asr_device": self.stages.asr_device,
                "scorer_device": self.stages.scorer_device}

    def run_reporting(self, task: Task) -> tuple[dict, dict]:
        """``(self.run(task), self.report())``: one round trip for a Ray actor."""
        return self.run(task), self.report()

    def _call_kwargs(self, task: CallTask) -> dict:
        s = self.setup
        return dict(question=task.question, answer=task.answer, profile=task.profile,
                    repeat=task.repeat, seed=task.seed, pipeline=s.pipeline,
                    pipeline_version=s.version, campaign_id=s.campaign_id,
                    stages=self.stages, oracle=task.oracle, resolve_path=task.paths)

    def front(self, task: Task) -> FrontResult | None:
        """A call's first half (render .. ASR: :func:`run_call_front`); None for an oracle
        grading (all scorer)."""
        return run_call_front(**self._call_kwargs(task)) if isinstance(task, CallTask) else None

    def finish(self, task: Task, front: FrontResult | None) -> dict:
        """The task's row from its :meth:`front` (:func:`finish_call`, or the oracle grading).
        Raises what :meth:`run` raises."""
        if front is None:
            return self.run(task)
        return finish_call(front, self.stages)

    def run(self, task: Task, call_fn=run_call) -> dict:
        """The task's row: a call row (:func:`run_call`; never raises) or an oracle row
        (raises when the scorer cannot run at all)."""
        if isinstance(task, OracleTask):
            return oracle_row(self.stages.scorer, task.key, task.question, task.answer,
                              task.seed, self.setup.version)
        assert isinstance(task, CallTask)
        return call_fn(**self._call_kwargs(task))


def _outcome(work: Callable[[], dict], task: Task) -> tuple:
    """``("done", task_id, row)``, or ``("raise", task_id, exc)`` for a setup error."""
    try:
        return ("done", task.task_id, work())
    except Exception as exc:
        return ("raise", task.task_id, exc)


def serve(worker: Worker, recv: Callable[[], Task | None], send: Callable[[tuple], None],
          overlap: bool) -> None:
    """A worker's loop: ``recv()`` tasks until None, ``send`` each outcome (:func:`_outcome`).

    With ``overlap``, this thread runs each call's front (render .. ASR) and hands it to a
    scoring thread through a queue of one, so the next call's ASR runs while the judge grades
    this one (the driver keeps two tasks in flight on such a worker). Results may then come
    back in a different order from the tasks; each names its task."""
    if not overlap:
        while (task := recv()) is not None:
            send(_outcome(lambda t=task: worker.run(t), task))
        return
    handoff: queue.Queue = queue.Queue(maxsize=1)

    def scoring() -> None:
        while (item := handoff.get()) is not None:
            task, front = item
            send(_outcome(lambda t=task, f=front: worker.finish(t, f), task))

    scorer = threading.Thread(target=scoring, name="rig-scoring", daemon=True)
    scorer.start()
    try:
        while (task := recv()) is not None:
            handoff.put((task, worker.front(task)))
    finally:
        handoff.put(None)
        scorer.join()


def given_up_row(failure_task: Task, error: str, setup: WorkerSetup) -> dict:
    """The row logged for a task given up after killing its workers: a failed call (the
    columns of :func:`run_call`'s, no score; a rerun retries it) or a failed oracle grading."""
    if isinstance(failure_task, OracleTask):
        t = failure_task
        return {"call_id": t.key, "answer_id": t.answer.answer_id, "seed": t.seed,
                "pipeline_version": setup.version, "score": None, "parse_status": "error",
                "raw": "", "reason": None, "error": error, "seconds": 0.0,
                "temperature": setup.pipeline.scorer.temperature,
                "mode": setup.pipeline.scorer.mode, "criteria": None}

    class _GivenUp(Exception):
        pass

    def fail(*_a, **_k):
        raise _GivenUp(error)

    stages = Stages(scorer=None, render=fail)  # type: ignore[arg-type]
    row = Worker(dataclasses.replace(setup, stages=stages)).run(failure_task)
    row.update({"error": error, "traceback": None})
    return row


def ignore_sigint() -> None:
    """Workers leave Ctrl-C to the driver, which stops them (a terminal sends SIGINT to the
    whole process group)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
