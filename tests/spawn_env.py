"""What a spawned child process sees of its environment: a target for ``multiprocessing``
tests, in a module that imports nothing heavy (the child imports only this)."""

from __future__ import annotations

import os


def env_of(q, keys) -> None:
    """Put this process's values of the environment variables ``keys`` on ``q``."""
    q.put({k: os.environ.get(k) for k in keys})
