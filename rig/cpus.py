"""How many CPUs this process may use: the one count every default thread and worker number
starts from (the runtime's split, the executors' default workers, llama.cpp's threads)."""

from __future__ import annotations

import os
import threading


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


_BLAS_LOCK = threading.Lock()
_BLAS_PINNED: list = []


def blas_one_thread() -> None:
    """Set numpy's BLAS (OpenBLAS, MKL) to one thread in this process, for the rest of its
    life (``threadpoolctl.threadpool_limits(1, "blas")``; idempotent).

    Why: faster-whisper computes its log-mel features with a numpy matrix product, and
    OpenBLAS's single-threaded kernel rounds differently from its threaded one (any pool of 2
    or more gives one result, a pool of 1 another). Whisper's beam search turns that last-bit
    difference into a different transcript now and then, so the same call gave a different
    row in a process with a 1-thread pool (a worker given one core, ``OMP_NUM_THREADS=1``, a
    test pinned to a core) than in one with more. Pinned to 1, the transcript no longer
    depends on the host's cores, the executor, or the user's environment. The product is
    small (80 mel bands x 201 bins per 10 ms frame), so one thread costs nothing measurable.
    Called where the ASR model loads (:func:`rig.asr.whisper.transcribe`).

    Raises:
        EngineUnavailable: threadpoolctl is not installed (it comes with ``rig[pipeline]``).
    """
    if _BLAS_PINNED:
        return
    with _BLAS_LOCK:
        if _BLAS_PINNED:
            return
        try:
            from threadpoolctl import threadpool_limits
        except ImportError as exc:  # pragma: no cover - a pipeline install has it
            from rig.errors import EngineUnavailable

            raise EngineUnavailable("ASR needs threadpoolctl: pip install 'threadpoolctl>=3.1'"
                                    " (or 'rig[pipeline]')") from exc
        _BLAS_PINNED.append(threadpool_limits(limits=1, user_api="blas"))
