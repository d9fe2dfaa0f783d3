"""Fake job workers for the tests of :mod:`rig.jobs` and the commands on it, at module level so
that spawned workers and Ray actors can import them.

:func:`square_worker` SIGKILLs its own process on the item named by a file in ``kill_dir``
whose count is above zero, decrementing it first (``1``: one worker dies once), as
``executor_fakes.FakeLine`` does.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from rig.scorer.fake import FakeScorer

BUILT: list[int] = []  # builds in this process (the serial path)


def square_worker(kill_dir: str | None = None):
    BUILT.append(os.getpid())
    pid = os.getpid()

    def fn(x: int) -> dict:
        if kill_dir is not None:
            f = Path(kill_dir) / str(x)
            if f.exists() and int(f.read_text()) > 0:
                f.write_text(str(int(f.read_text()) - 1))
                os.kill(os.getpid(), signal.SIGKILL)
        return {"x": x, "y": x * x, "pid": pid}

    return fn


def failing_worker():
    def fn(x: int) -> dict:
        raise ValueError(f"bad item {x}")

    return fn


def fake_scorer(mode: str) -> FakeScorer:
    """``make_scorer`` of ``rig.scorer.validate.validate_bank`` (picklable)."""
    return FakeScorer(mode=mode)  # type: ignore[arg-type]


class SweepStages:
    """``stages_for`` of a sweep on workers (picklable): the executor fakes' stages, whose
    ASR SIGKILLs its process per ``kill_dir`` (``executor_fakes.FakeLine``)."""

    def __init__(self, kill_dir: str | None = None) -> None:
        self.kill_dir = kill_dir

    def __call__(self, pipeline):
        from executor_fakes import make_stages

        return make_stages(Path(self.kill_dir) if self.kill_dir else None)


def _killing_reply(kill_dir: str | None, user: str, seed: int) -> str:
    from test_probes_unit import style_biased_reply

    f = Path(kill_dir) / "ask" if kill_dir else None
    if f is not None and f.exists() and int(f.read_text()) > 0 and "final decision" not in user:
        f.write_text(str(int(f.read_text()) - 1))
        os.kill(os.getpid(), signal.SIGKILL)
    return style_biased_reply(user, seed)


def probe_fake(kill_dir: str | None = None):
    """``make_scorer`` of :func:`rig.probes.parallel.run_probe` (picklable through
    ``functools.partial``): ``test_probes_unit.ProbeFake`` with its style-biased reply; with
    ``kill_dir``, the first rating ask SIGKILLs its process while ``kill_dir/ask`` > 0."""
    from functools import partial

    from test_probes_unit import ProbeFake

    return ProbeFake(partial(_killing_reply, kill_dir))
