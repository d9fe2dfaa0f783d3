"""Shared fixtures. Every test module declares ``pytestmark`` = unit or integration."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
SHARED_SPEECH = ROOT.parent / "shared" / "data" / "speech"
#: The GGUF that the loopback OpenAI-compatible server serves in the probe tests.
SERVER_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"


def pytest_collection_modifyitems(config, items):
    for item in items:
        if not ({"unit", "integration"} & {m.name for m in item.iter_markers()}):
            raise pytest.UsageError(f"{item.nodeid}: mark the module unit or integration")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    # synthesized audio goes to a per-session temp folder; models stay in the user cache
    monkeypatch.setenv("RIG_AUDIO_CACHE", str(tmp_path_factory.getbasetemp() / "audio-cache"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """``python -m llama_cpp.server`` on a free loopback port with an API key, stopped after
    the module. Waits for readiness at most 240 s."""
    pytest.importorskip("llama_cpp.server", reason="needs 'llama-cpp-python[server]'")
    from rig.models import ensure_model

    key = "sk-" + secrets.token_hex(16)
    port = _free_port()
    log_path = tmp_path_factory.mktemp("server") / "server.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(ensure_model(SERVER_MODEL)),
         "--n_threads", "2", "--n_ctx", "4096", "--host", "127.0.0.1", "--port", str(port),
         "--api_key", key, "--verbose", "False"],
        stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + 240
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {log_path.read_text()[-2000:]}")
            try:
                req = urllib.request.Request(f"{base}/models",
                                             headers={"Authorization": f"Bearer {key}"})
                with opener.open(req, timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server not ready within 240 s")
            time.sleep(1.0)
        yield base, key
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
