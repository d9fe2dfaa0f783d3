"""Ctrl-C (SIGINT) held off around work that must not be cut, in the main thread.

Python runs signal handlers in the main thread only, and only there may a handler be
changed; elsewhere :func:`sigint_ignored` does nothing.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
    """SIGINT ignored inside (``SIG_IGN``), the handler before it restored on the way out.

    Used where a Ctrl-C would leave a traceback for nothing: starting a worker process (it
    inherits the ignored disposition through exec, so a Ctrl-C while it imports is not
    printed by it: :class:`rig.campaign.executors.local.LocalExecutor`) and freeing
    llama.cpp's models at exit (:func:`rig.scorer.llamacpp.close_models`). A Ctrl-C that
    arrives inside is dropped, not delivered later."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


#: set when SIGTERM arrived inside :func:`sigterm_as_interrupt` (read by :func:`interrupted_code`)
_terminated = threading.Event()


def _raise_interrupt(signum, frame) -> None:
    _terminated.set()
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM inside raises :class:`KeyboardInterrupt`, as Ctrl-C does, so a campaign, demo
    or sweep stopped by ``kill`` (or a scheduler) stops its workers and says how to resume;
    :func:`interrupted_code` then gives 143 (128 + SIGTERM), not Ctrl-C's 130. The handler
    before it is restored on the way out; outside the main thread it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _terminated.clear()
    old = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def interrupted_code() -> int:
    """The exit status of an interrupted run: 143 after SIGTERM, else 130 (Ctrl-C)."""
    return 128 + signal.SIGTERM if _terminated.is_set() else 130
