"""`rig monitor serve` on loopback: a real uvicorn server, real VAD and ASR on a real call,
bearer-token auth, duplicates, conflicts, bad input, and a token that never reaches the log."""

from __future__ import annotations

import base64
import http.client
import json
import logging
import secrets
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from rig.audio import Audio, read_wav
from rig.channel.codecs import encode
from rig.monitor.config import MonitorConfig
from rig.monitor.store import MonitorStore

pytestmark = pytest.mark.integration
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture
def server(request, tmp_path, caplog, monkeypatch):
    """A served app; ``@pytest.mark.parametrize("server", [{...}], indirect=True)`` passes
    MonitorConfig fields."""
    import uvicorn

    from rig.monitor.serve import create_app

    caplog.set_level(logging.DEBUG)
    # an earlier uvicorn in this process (default log_config) leaves uvicorn's loggers not
    # propagating: let the access log reach caplog whatever ran before
    for name in ("uvicorn", "uvicorn.access", "uvicorn.error"):
        monkeypatch.setattr(logging.getLogger(name), "propagate", True)
        monkeypatch.setattr(logging.getLogger(name), "disabled", False)
    token = secrets.token_hex(24)
    store = MonitorStore(tmp_path / "monitor.duckdb")
    config = MonitorConfig(**getattr(request, "param", {}))
    app = create_app(store, config, token, tmp_path / "recordings", max_body_mb=1.0)
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None,
                                       log_level="debug"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 180  # a loaded CI machine starts uvicorn slowly
    while not srv.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert srv.started, "uvicorn did not start"
    port = srv.servers[0].sockets[0].getsockname()[1]
    yield {"url": f"http://127.0.0.1:{port}", "token": token, "store": store,
           "tmp": tmp_path}
    srv.should_exit = True
    thread.join(timeout=10)
    store.close()


def _call(url: str, method: str = "GET", body: dict | bytes | None = None,
          token: str | None = None, timeout_s: float = 120) -> tuple[int, dict]:
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def _oversized(url: str, token: str) -> int:
    """Announce a 2 MB body and send none: the server answers from the headers (sending the
    body would race the server's early close)."""
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=180)
    try:
        conn.putrequest("POST", "/v1/calls")
        conn.putheader("Authorization", f"Bearer {token}")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(2 * 1024 * 1024))
        conn.endheaders()
        return conn.getresponse().status
    finally:
        conn.close()


def test_serve_ingests_with_token_auth_on_loopback(server, caplog):
    url, token = server["url"], server["token"]
    clip = read_wav(DATA / "cmu_arctic_us_aew_a0003.wav", 8000)
    call = Audio.concat([Audio.silence(0.5, 8000), clip, Audio.silence(1.0, 8000)])
    audio = base64.b64encode(encode(call, "mulaw").tobytes()).decode()
    meta = {"call_id": "live-001", "timestamp": "2025-01-07T10:00:00Z", "employer": "acme",
            "job_family": "support", "score": 72, "decision": "advance",
            "candidate_name": "not stored"}
    body = {"metadata": meta, "audio_base64": audio, "audio_format": "mulaw"}

    assert _call(f"{url}/v1/health") == (200, {"status": "ok", "calls": 0})
    assert _call(f"{url}/v1/calls", "POST", body)[0] == 401
    assert _call(f"{url}/v1/calls", "POST", body, token="wrong" * 8)[0] == 401
    assert _call(f"{url}/v1/alerts", token=token[:-1])[0] == 401

    assert _call(f"{url}/v1/calls", "POST", body, token) == (
        201, {"call_id": "live-001", "status": "ingested"})
    assert _call(f"{url}/v1/calls", "POST", body, token) == (
        200, {"call_id": "live-001", "status": "duplicate"})
    code, err = _call(f"{url}/v1/calls", "POST",
                      {**body, "metadata": {**meta, "score": 10}}, token)
    assert code == 409 and "already stored with another metadata" in err["detail"]
    code, err = _call(f"{url}/v1/calls", "POST",
                      {**body, "metadata": {k: v for k, v in meta.items() if k != "employer"}},
                      token)
    assert code == 400 and "employer: Field required" in err["detail"]
    code, err = _call(f"{url}/v1/calls", "POST", {**body, "audio_base64": "%%%"}, token)
    assert code == 400 and "base64" in err["detail"]
    code, err = _call(f"{url}/v1/calls", "POST",
                      {**body, "metadata": {**meta, "call_id": "live-002"},
                       "audio_base64": base64.b64encode(b"RIFFjunk").decode(),
                       "audio_format": "wav"}, token)
    assert code == 400 and "cannot decode audio" in err["detail"]
    assert _oversized(url, token) == 413

    code, alerts = _call(f"{url}/v1/alerts", token=token)
    assert code == 200 and alerts["week"] == "2025-W02" and alerts["n_calls"] == 1
    assert _call(f"{url}/v1/health") == (200, {"status": "ok", "calls": 1})

    row = server["store"].con.execute(
        "SELECT audio_path, codec, snr_db, transcript FROM calls").fetchall()
    assert len(row) == 1
    path, codec, snr, transcript = row[0]
    assert Path(path).parent == (server["tmp"] / "recordings").resolve()
    assert Path(path).read_bytes() == base64.b64decode(audio) and "live-001" not in path
    assert codec == "mulaw" and snr > 20 and "twentieth" in transcript.lower().replace(
        "20th", "twentieth")
    assert not list((server["tmp"] / "recordings").glob("*.tmp"))
    assert "POST /v1/calls" in caplog.text  # the access log is there ...
    assert token not in caplog.text  # ... and the token is not


def test_a_malformed_body_is_a_400_naming_the_field(server):
    url, token = server["url"], server["token"]
    code, err = _call(f"{url}/v1/calls", "POST", {"metadata": {}, "audio_base64": "",
                                                  "audio_format": "mp3"}, token)
    assert code == 400 and "audio_format" in err["detail"]
    code, err = _call(f"{url}/v1/calls", "POST", b"not json", token)
    assert code == 400
    # a key named twice: refused, as in a sidecar (JSON would keep the last value silently)
    twice = b'{"metadata": {}, "metadata": {}, "audio_base64": "", "audio_format": "wav"}'
    code, err = _call(f"{url}/v1/calls", "POST", twice, token)
    assert code == 400 and "duplicate key 'metadata'" in err["detail"]


@pytest.mark.parametrize("server", [{"score_range": [0, 100]}], indirect=True)
def test_a_score_outside_the_configs_score_range_is_a_400_and_nothing_is_stored(server):
    url, token = server["url"], server["token"]
    meta = {"call_id": "live-009", "timestamp": "2025-01-07T10:00:00Z", "employer": "acme",
            "job_family": "support", "score": 150, "decision": "advance"}
    silence = base64.b64encode(encode(Audio.silence(0.5, 8000), "mulaw").tobytes()).decode()
    body = {"metadata": meta, "audio_base64": silence, "audio_format": "mulaw"}
    code, err = _call(f"{url}/v1/calls", "POST", body, token)
    assert code == 400 and "score" in err["detail"] and "[0, 100]" in err["detail"]
    assert _call(f"{url}/v1/health") == (200, {"status": "ok", "calls": 0})
    assert not list((server["tmp"] / "recordings").glob("*"))


def test_a_score_sent_as_text_is_a_400_as_in_a_sidecar(server):
    url, token = server["url"], server["token"]
    meta = {"call_id": "live-010", "timestamp": "2025-01-07T10:00:00Z", "employer": "acme",
            "job_family": "support", "score": "71.5", "decision": "advance"}
    silence = base64.b64encode(encode(Audio.silence(0.5, 8000), "mulaw").tobytes()).decode()
    body = {"metadata": meta, "audio_base64": silence, "audio_format": "mulaw"}
    code, err = _call(f"{url}/v1/calls", "POST", body, token)
    assert code == 400 and "score: score must be a number (or null), not text" in err["detail"]
    assert "'71.5'" in err["detail"]
    assert _call(f"{url}/v1/health") == (200, {"status": "ok", "calls": 0})
