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
