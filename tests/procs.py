"""A server a test runs as its own process: a free loopback port, started, polled until it
answers, stopped (terminate, then kill). The llama server fixture (conftest.py) and the
scaffolded bots (test_bot_scaffolded_integration.py) use it."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def served(cmd: Sequence[str], log_path: Path, ready: Callable[[], bool], what: str,
           timeout_s: float, **popen) -> Iterator[subprocess.Popen]:
    """Run ``cmd`` (stdout and stderr to ``log_path``) until ``ready()`` is true, checked
    once a second; the test fails, with the log's tail, if the process exits first or
    ``timeout_s`` passes. Stopped on exit."""
    with log_path.open("wb") as log:
        proc = subprocess.Popen(list(cmd), stdout=log, stderr=subprocess.STDOUT, **popen)
    deadline = time.monotonic() + timeout_s
    try:
        while not ready():
            if proc.poll() is not None:
                pytest.fail(f"{what} exited: {log_path.read_text(errors='replace')[-2000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"{what} not ready within {timeout_s:.0f} s")
            time.sleep(1.0)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
