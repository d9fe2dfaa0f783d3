"""How many CPUs this process may use: the one count every default thread and worker number
starts from (the runtime's split, the executors' default workers, llama.cpp's threads)."""

from __future__ import annotations

import os


def usable_cpus() -> int:
    """CPUs this process may run on: its CPU affinity (``os.sched_getaffinity``; ``taskset``,
    a container's cpuset, a test worker pinned to one core), else :func:`os.cpu_count`;
    at least 1. ``os.cpu_count`` alone counts the machine's CPUs, so a process pinned to
    one core would start as many threads as the machine has, and llama.cpp's spinning
    threads then wait on each other on that one core."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)
