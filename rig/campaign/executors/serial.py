"""In the driver's process: one task after another (``--executor serial``, ``--workers 1``),
or, for calls over a real transport, ``concurrency`` calls at once in driver threads (a real
call takes its real time; the threads wait on the line, not on the CPU)."""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Sequence

from rig.campaign.call import run_call
from rig.campaign.executors.base import CallTask, OnFailure, OnResult, RunStats, Task
from rig.campaign.executors.worker import Worker


class SerialExecutor:
    """Runs tasks with one :class:`Worker` in this process.

    ``call_fn``: runs one call (:func:`run_call`, or a real transport's caller); with
    ``concurrency`` > 1, that many calls run at once in threads of this process (the caller
    must be safe for that, as :class:`rig.calls.run.caller.TransportCaller` is); results are
    still handed to ``on_result`` in the calling thread only."""

    def __init__(self, worker: Worker, *, call_fn: Callable[..., dict] = run_call,
                 concurrency: int = 1) -> None:
        self.worker, self.call_fn, self.concurrency = worker, call_fn, concurrency
        self.stats = RunStats(n_workers_started=1)

    def run(self, tasks: Sequence[Task], on_result: OnResult,
            on_failure: OnFailure | None = None) -> RunStats:
        calls = [t for t in tasks if isinstance(t, CallTask)]
        if self.concurrency <= 1 or len(calls) <= 1:
            for t in tasks:
                row = self.worker.run(t, self.call_fn)
                self.stats.record(self.worker.report())
                on_result(t, row)
                self.stats.n_results += 1
            return self.stats
        for t in tasks:  # the oracle gradings first: the scorer is not shared across threads
            if not isinstance(t, CallTask):
                row = self.worker.run(t, self.call_fn)
                self.stats.record(self.worker.report())
                on_result(t, row)
                self.stats.n_results += 1
        pool = cf.ThreadPoolExecutor(self.concurrency, thread_name_prefix="rig-call")
        try:
            futures = {pool.submit(self.worker.run, t, self.call_fn): t for t in calls}
            for fut in cf.as_completed(futures):
                row = fut.result()
                self.stats.record(self.worker.report())
                on_result(futures[fut], row)
                self.stats.n_results += 1
        except BaseException:
            # Ctrl-C or a failing callback: start no more calls; those in flight finish
            # (a real call cannot be cut mid-line) before the process exits
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return self.stats
