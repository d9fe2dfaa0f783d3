"""rig's HTTP services under load and attack, on loopback: ``rig monitor serve`` and the
interviewer results webhook (``rig interviewer results``).

Each takes ``RIG_LOAD_POSTS`` POSTs (default 2,000) from 20 concurrent keep-alive clients and
must store every one it accepted (stored count = accepted count = posted count); the
throughput is measured and printed by ``benchmarks/reliability.py``, never asserted. A body
over the configured limit gets 413 before it is read whole (a client announcing a 10 GB
``Content-Length`` and sending none of it; a chunked body that never ends); a wrong token gets
401 through ``hmac.compare_digest``; no token, header or query-string secret reaches any log
(uvicorn's access log on, rig's and loguru's logs and the process's stdout/stderr captured).

Real components: uvicorn, FastAPI, DuckDB and the JSONL result store. The monitor's two model
stages (VAD turns, ASR) are fakes here (:class:`rig.monitor.signals.SignalStages`): 2,000
Whisper runs would measure the ASR, not the service;
``tests/test_monitor_serve_integration.py`` runs the
real ones through the same endpoint.
"""

from __future__ import annotations

import base64
import contextlib
import hmac
import http.client
import io
import json
import logging
import os
import queue
import secrets
import socket
import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.integration

N_POSTS = int(os.environ.get("RIG_LOAD_POSTS", "2000"))
N_CLIENTS = 20
LIMIT_MB = 0.5  # the body limit both services are started with here


# --- capture every log a service can write -------------------------------------------------
class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.name} {record.getMessage()} {record.args!r}")


@contextlib.contextmanager
def captured_logs():
    """Every record of uvicorn's loggers (its access log included), rig's and the root
    logger, and loguru's, as text: ``yield``s a list filled until the block ends."""
    from loguru import logger as loguru

    cap = _Capture()
    names = ["", "uvicorn", "uvicorn.access", "uvicorn.error", "rig", "fastapi"]
    for n in names:
        logging.getLogger(n).addHandler(cap)
    sink = loguru.add(lambda m: cap.lines.append(str(m)), level="DEBUG")
    try:
        yield cap.lines
    finally:
        loguru.remove(sink)
        for n in names:
            logging.getLogger(n).removeHandler(cap)


# --- the load ------------------------------------------------------------------------------
def post_all(url: str, path: str, bodies: list[bytes], headers: dict[str, str],
             n_clients: int = N_CLIENTS) -> tuple[Counter, list[dict], float]:
    """POST every body from ``n_clients`` threads, each on its own keep-alive connection.

    Returns:
        (statuses, JSON replies of the 2xx answers, wall seconds).
    """
    host, port = url.removeprefix("http://").split(":")
    work: queue.Queue = queue.Queue()
    for b in bodies:
        work.put(b)
    statuses: Counter = Counter()
    replies: list[dict] = []
    lock = threading.Lock()

    def client() -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=120)
        try:
            while True:
                try:
                    body = work.get_nowait()
                except queue.Empty:
                    return
                try:
                    conn.request("POST", path, body, {**headers,
                                                      "Content-Type": "application/json"})
                    resp = conn.getresponse()
                    data = resp.read()
                    status = resp.status
                except (OSError, http.client.HTTPException):
                    conn.close()
                    status, data = "connection error", b""
                with lock:
                    statuses[status] += 1
                    if isinstance(status, int) and 200 <= status < 300:
                        replies.append(json.loads(data))
        finally:
            conn.close()

    threads = [threading.Thread(target=client) for _ in range(n_clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses, replies, time.perf_counter() - t0


def announce_huge_body(url: str, path: str, headers: dict[str, str]) -> int:
    """Send only the headers of a POST announcing a 10 GB body; the status the server gives
    without receiving it (a server that waited for the body would time out here)."""
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        conn.putrequest("POST", path)
        for k, v in {**headers, "Content-Type": "application/json",
                     "Content-Length": str(10 * 1024**3)}.items():
            conn.putheader(k, v)
        conn.endheaders()
        return conn.getresponse().status
    finally:
        conn.close()


def stream_endless_body(url: str, path: str, headers: dict[str, str],
                        limit_bytes: int) -> tuple[int | None, int]:
    """Send a chunked body (no Content-Length) in 64 KiB chunks, up to 20 x the limit or
    until the server answers; (status or None, bytes sent)."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=60)
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    sock.sendall((f"POST {path} HTTP/1.1\r\nHost: {host}\r\n{head}"
                  "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                  ).encode())
    chunk = b"[" + b" " * (64 * 1024 - 1)
    sent = 0
    sock.setblocking(False)
    try:
        while sent < 20 * limit_bytes:
            try:
                sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                time.sleep(0.01)
            else:
                sent += len(chunk)
                chunk = b" " * len(chunk)
            with contextlib.suppress(BlockingIOError):
                data = sock.recv(65536)
                if data:
                    return int(data.split(b" ", 2)[1]), sent
        sock.setblocking(True)
        sock.settimeout(30)
        data = sock.recv(65536)
        return (int(data.split(b" ", 2)[1]) if data else None), sent
    except (ConnectionResetError, BrokenPipeError):
        return None, sent
    finally:
        sock.close()


def _mulaw_clip(seconds: float = 0.3) -> str:
    from rig.audio import Audio
    from rig.channel.codecs import encode

    rng = np.random.default_rng(7)
    audio = Audio((0.05 * rng.standard_normal(int(8000 * seconds))).astype(np.float32), 8000)
    return base64.b64encode(encode(audio, "mulaw").tobytes()).decode()


def _fake_stages():
    from rig.asr.whisper import AsrSegment, Transcript
    from rig.monitor.signals import SignalStages
    from rig.vad import Turn

    def turns(audio, params):
        return (Turn(0.0, audio.duration_s * 0.8, audio.duration_s, "end_of_audio"),)

    def asr(audio, options):
        seg = AsrSegment(0.0, audio.duration_s, "one two three", -0.3, 0.05)
        return Transcript(seg.text, -0.3, 0.05, audio.duration_s, (seg,), "en")

    return SignalStages(turns, asr)


@contextlib.contextmanager
def _uvicorn(app, log_level: str = "info"):
    """``app`` on an ephemeral loopback port with uvicorn's access log on; yields the URL."""
    from rig.calls.interviewer.service import ServiceThread

    thread = ServiceThread(app, log_level=log_level).start(timeout_s=180)
    try:
        yield thread.url
    finally:
        thread.stop()


class _Spy:
    """Counts calls of ``hmac.compare_digest`` (the constant-time comparison) and passes them
    on to the real one."""

    def __init__(self) -> None:
        self.calls = 0
        self.real = hmac.compare_digest

    def __call__(self, a, b) -> bool:
        self.calls += 1
        return self.real(a, b)


# --- one service each ----------------------------------------------------------------------
def monitor_load(tmp: Path, n_posts: int = N_POSTS, n_clients: int = N_CLIENTS) -> dict:
    """Start ``rig monitor serve``'s app, post ``n_posts`` calls, attack it; the figures."""
    from rig.monitor.config import MonitorConfig
    from rig.monitor.serve import create_app
    from rig.monitor.store import MonitorStore

    token, header_secret, query_secret = (secrets.token_hex(24) for _ in range(3))
    audio = _mulaw_clip()
    bodies = [json.dumps({"metadata": {"call_id": f"load-{i:05d}",
                                       "timestamp": "2025-01-07T10:00:00Z",
                                       "employer": "acme", "job_family": "support",
                                       "score": i % 101, "decision": "advance"},
                          "audio_base64": audio, "audio_format": "mulaw"}).encode()
              for i in range(n_posts)]
    auth = {"Authorization": f"Bearer {token}", "X-Api-Key": header_secret}
    spy = _Spy()
    with MonitorStore(tmp / "monitor.duckdb") as store, _patched(hmac, "compare_digest", spy):
        app = create_app(store, MonitorConfig(), token, tmp / "recordings", _fake_stages(),
                         max_body_mb=LIMIT_MB)
        # capture once uvicorn has configured its loggers (that drops handlers added before)
        with _uvicorn(app) as url, captured_logs() as logs:
            statuses, replies, wall_s = post_all(url, f"/v1/calls?api_key={query_secret}",
                                                 bodies, auth, n_clients)
            wrong = post_all(url, "/v1/calls", bodies[:5],
                             {"Authorization": "Bearer " + secrets.token_hex(24)}, 5)[0]
            huge = announce_huge_body(url, "/v1/calls", auth)
            chunked, chunked_sent = stream_endless_body(
                url, "/v1/calls", auth, int(LIMIT_MB * 1024 * 1024))
            stored = store.count()
            text = "\n".join(logs)
    accepted = sum(1 for r in replies if r.get("status") == "ingested")
    return {"service": "rig monitor serve", "posted": n_posts, "clients": n_clients,
            "accepted": accepted, "stored": stored, "lost": accepted - stored,
            "statuses": dict(statuses), "wall_s": wall_s, "per_s": accepted / wall_s,
            "wrong_token": dict(wrong), "huge_content_length": huge,
            "chunked_over_limit": chunked, "chunked_sent": chunked_sent,
            "compare_digest_calls": spy.calls,
            "secrets_in_logs": sum(s in text for s in (token, header_secret, query_secret)),
            "access_log_lines": text.count("POST /v1/calls")}


def results_load(tmp: Path, n_posts: int = N_POSTS, n_clients: int = N_CLIENTS) -> dict:
    """Start ``rig interviewer results``'s app, post ``n_posts`` scores, attack it."""
    from fastapi import FastAPI

    from rig.calls.interviewer.results import ResultStore
    from rig.calls.interviewer.webhook import results_router

    token, header_secret, query_secret = (secrets.token_hex(24) for _ in range(3))
    env = "RIG_LOAD_TEST_RESULTS_TOKEN"
    bodies = [json.dumps({"call_id": f"call-{i:05d}", "score": i % 101,
                          "transcript": "an answer", "decision": "advance"}).encode()
              for i in range(n_posts)]
    auth = {"Authorization": f"Bearer {token}", "X-Api-Key": header_secret}
    spy = _Spy()
    path = tmp / "results.jsonl"
    with _patched(hmac, "compare_digest", spy), _env(env, token):
        store = ResultStore(path)
        app = FastAPI()
        app.include_router(results_router(store, env, max_body_mb=LIMIT_MB))
        with _uvicorn(app) as url, captured_logs() as logs:
            statuses, replies, wall_s = post_all(url, f"/results?token={query_secret}",
                                                 bodies, auth, n_clients)
            wrong = post_all(url, "/results", bodies[:5],
                             {"Authorization": "Bearer " + secrets.token_hex(24)}, 5)[0]
            huge = announce_huge_body(url, "/results", auth)
            chunked, chunked_sent = stream_endless_body(url, "/results", auth,
                                                        int(LIMIT_MB * 1024 * 1024))
            text = "\n".join(logs)
    accepted = sum(r.get("accepted", 0) for r in replies)
    on_disk = {json.loads(line)["call_id"] for line in io.StringIO(path.read_text())}
    return {"service": "rig interviewer results", "posted": n_posts, "clients": n_clients,
            "accepted": accepted, "stored": len(on_disk), "stored_in_memory": len(store),
            "lost": accepted - len(on_disk), "statuses": dict(statuses), "wall_s": wall_s,
            "per_s": accepted / wall_s, "wrong_token": dict(wrong),
            "huge_content_length": huge, "chunked_over_limit": chunked,
            "chunked_sent": chunked_sent, "compare_digest_calls": spy.calls,
            "secrets_in_logs": sum(s in text for s in (token, header_secret, query_secret)),
            "access_log_lines": text.count("POST /results")}


@contextlib.contextmanager
def _patched(obj, name: str, value):
    old = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield value
    finally:
        setattr(obj, name, old)


@contextlib.contextmanager
def _env(name: str, value: str):
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def _check(fig: dict) -> None:
    n = fig["posted"]
    assert fig["statuses"] == {201 if fig["service"].startswith("rig monitor") else 200: n}
    assert fig["accepted"] == n and fig["stored"] == n and fig["lost"] == 0
    assert fig["wrong_token"] == {401: 5}
    assert fig["compare_digest_calls"] >= n + 5  # every request's token, constant time
    assert fig["huge_content_length"] == 413
    assert fig["chunked_over_limit"] == 413
    assert fig["chunked_sent"] < 20 * LIMIT_MB * 1024 * 1024  # answered before the end
    assert fig["access_log_lines"] >= n  # the access log was on and captured ...
    assert fig["secrets_in_logs"] == 0  # ... and holds no token, header or query secret


def test_monitor_serve_stores_every_accepted_post_under_load(tmp_path):
    _check(monitor_load(tmp_path))


def test_results_webhook_stores_every_accepted_post_under_load(tmp_path):
    fig = results_load(tmp_path)
    _check(fig)
    assert fig["stored_in_memory"] == fig["posted"]


def test_access_log_query_strings_are_redacted():
    from rig.webguard import REDACTED, RedactQuery

    rec = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1,
                            '%s - "%s %s HTTP/%s" %d',
                            ("127.0.0.1:5", "GET", "/v1/alerts?token=abc", "1.1", 200), None)
    assert RedactQuery().filter(rec)
    assert rec.getMessage() == f'127.0.0.1:5 - "GET /v1/alerts{REDACTED} HTTP/1.1" 200'



def test_interviewer_endpoints_refuse_bodies_over_the_limit(tmp_path, monkeypatch):
    """The reference interviewer's unauthenticated endpoints (Twilio's voice webhook, WebRTC
    signalling) get the same 413 as the results webhook (:class:`rig.webguard.BodyLimit`)."""
    from rig.answers import load_bank
    from rig.calls.interviewer.results import ResultStore
    from rig.calls.interviewer.service import InterviewerService
    from rig.pipeline import load_pipeline
    from rig.scorer.fake import FakeScorer

    root = Path(__file__).resolve().parents[1]
    monkeypatch.setenv("TWILIO_AUTH_TOKEN", secrets.token_hex(16))
    svc = InterviewerService(load_pipeline(root / "pipelines" / "reference.yaml"),
                             load_bank(root / "tests" / "data" / "calls_bank"), FakeScorer(),
                             ResultStore(tmp_path / "results.jsonl"), max_body_mb=LIMIT_MB)
    with _uvicorn(svc.app(), log_level="warning") as url:
        for path in ("/twilio/voice", "/api/offer"):
            assert announce_huge_body(url, path, {}) == 413, path
            status, sent = stream_endless_body(url, path, {}, int(LIMIT_MB * 1024 * 1024))
            assert status == 413 and sent < 20 * LIMIT_MB * 1024 * 1024, path
        conn = http.client.HTTPConnection(*url.removeprefix("http://").split(":"), timeout=60)
        conn.request("GET", "/health")  # the service goes on serving
        assert conn.getresponse().status == 200
        conn.close()
