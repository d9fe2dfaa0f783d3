"""What a spawned child process sees of its environment: a target for ``multiprocessing``
tests, in a module that imports nothing heavy (the child imports only this)."""

from __future__ import annotations

import os

POOL_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def pool_env(q) -> None:
    """Put the thread-pool variables of this process's environment on ``q``."""
    q.put({k: os.environ.get(k) for k in POOL_ENV})
