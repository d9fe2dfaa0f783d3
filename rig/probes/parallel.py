"""A probe's asks on workers (``rig probe ... --executor local|ray --workers N``,
:mod:`rig.jobs`).

The probes' loops stay as they are. :func:`run_probe` first runs a probe's loop in planning
passes: each ask of the scorer not yet in ``asks.jsonl`` is recorded and answered "pending"
(nothing is asked, no output is written: :class:`~rig.probes.core.PlanDone`); the planned
asks run on the workers, each worker building its scorer once, and the driver appends each
reply to ``asks.jsonl`` as it comes (the only writer: a killed worker's ask is asked again on
another, a killed driver's rerun resumes from the log). An ask whose prompt holds earlier
replies (``dependent``, a session's decision) waits for the next pass. Then the probe runs
as it does serially, reading every reply from the log: the same rows as one worker (an ask
made by a worker in this run counts as asked now: ``cached`` False, as serially). Asks whose
parser does not pickle, and a ``--judge``'s asks, are asked in that last pass, in this
process.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

from rig.probes.core import FETCHED, PLANS, PlanDone

#: planning passes before the last (serial) one: the waves of dependent asks
MAX_WAVES = 4


def ask_worker(make_scorer: Callable[[], Any]) -> Callable[[tuple], dict]:
    """A probe worker: builds the scorer once (``make_scorer()``), then answers ``(key,
    system, user, grammar, parse, seed)`` with the ``asks.jsonl`` row
    (:meth:`rig.probes.core.AskLog.ask`'s)."""
    scorer = make_scorer()

    def ask(item: tuple) -> dict:
        key, system, user, grammar, parse, seed = item
        res = scorer.complete(system, user, grammar=grammar, parse=parse, seed=seed)
        return {"call_id": key, "raw": res.raw, "parse_status": res.parse_status,
                "error": res.error, "seconds": res.seconds, "temperature": res.temperature,
                "seed": seed}

    return ask


def _picklable(obj: object) -> bool:
    try:
        pickle.dumps(obj)
        return True
    except Exception:
        return False


def _plan(run: Callable[..., Any], args: tuple, kwargs: dict) -> list[tuple]:
    plan: list[tuple] = []
    PLANS.append(plan)
    try:
        run(*args, **{**kwargs, "progress": False})
    except PlanDone:
        pass
    except Exception:
        pass
    finally:
        PLANS.pop()
    return [p for p in plan if p[0] != "pending"]


def run_probe(run: Callable[..., Any], *args: Any, executor: Any = None,
              make_scorer: Callable[[], Any] | None = None, **kwargs: Any) -> Any:
    """``run(*args, **kwargs)`` (a probe's runner) with its scorer's asks made on
    ``executor``'s workers first (:class:`rig.campaign.executors.ExecutorSpec`; None or
    serial: just ``run``). ``make_scorer()`` builds a worker's scorer (picklable; the same
    scorer as the one ``run`` gets: the asks' keys are the driver's).

    Raises: what ``run`` raises; :class:`RigError` from :func:`rig.jobs.run_items` (an ask
    that killed 3 workers, workers dying as they start)."""
    from rig.jobs import Item, JobSetup, run_items

    if executor is None or executor.in_driver() or make_scorer is None:
        return run(*args, **kwargs)
    setup = JobSetup(ask_worker, (make_scorer,))
    asked: set[str] = set()
    for _ in range(MAX_WAVES):
        planned = [p for p in _plan(run, args, kwargs) if p[1] not in asked]
        items, logs = {}, {}
        for log, key, system, user, grammar, parse, seed in planned:
            if key not in items and _picklable(parse):
                items[key] = Item(key, (key, system, user, grammar, parse, seed))
                logs[key] = log
        if not items:
            break
        asked |= set(items)

        def keep(key: str, row: dict, logs=logs) -> None:
            logs[key].append(row)
            FETCHED.add((str(logs[key].path), key))

        run_items(list(items.values()), setup, executor, keep)
    try:
        return run(*args, **kwargs)
    finally:
        FETCHED.clear()
