"""The interviewer service's HTTP endpoints on a real uvicorn server on 127.0.0.1: the
results webhook (bearer token), result look-up by call id, and Twilio's voice webhook
(X-Twilio-Signature checked, TwiML <Connect><Stream> answered); and the import of external
scores onto a campaign's calls. No call is placed, so nothing is scored here."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from rig.answers import load_bank
from rig.calls.results import ResultStore
from rig.calls.service import InterviewerService, ServiceThread
from rig.calls.transports.twilio import compute_signature
from rig.pipeline import load_pipeline
from rig.scorer.fake import FakeScorer

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]


def http(method: str, url: str, body: bytes | None = None, headers: dict | None = None):
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


@pytest.fixture
def service(tmp_path, monkeypatch):
    monkeypatch.setenv("RIG_TEST_RESULTS_TOKEN", "tok-123")
    monkeypatch.setenv("TWILIO_AUTH_TOKEN", "twilio-secret")
    store = ResultStore(tmp_path / "results.jsonl")
    svc = InterviewerService(load_pipeline(ROOT / "pipelines" / "reference.yaml"),
                             load_bank(ROOT / "tests" / "data" / "calls_bank"), FakeScorer(),
                             store, results_token_env="RIG_TEST_RESULTS_TOKEN")
    with ServiceThread(svc.app()) as th:
        yield th.url, store


def test_results_webhook_needs_the_token_and_stores_by_call_id(service):
    url, store = service
    body = json.dumps([{"call_id": "c1", "score": 72.5, "transcript": "hello"},
                       {"call_id": "c2", "score": None}]).encode()
    json_h = {"Content-Type": "application/json"}
    assert http("POST", url + "/results", body, json_h)[0] == 401
    assert http("POST", url + "/results", body,
                {**json_h, "Authorization": "Bearer wrong"})[0] == 401
    ok = {**json_h, "Authorization": "Bearer tok-123"}
    assert http("POST", url + "/results", body, ok) == (200, '{"accepted":2}')
    assert store.get("c1")["score"] == 72.5 and store.get("c2")["score"] is None
    bad = json.dumps({"call_id": "c3", "score": 140}).encode()
    assert http("POST", url + "/results", bad, ok)[0] == 422
    status, text = http("GET", url + "/results/c1", headers={"Authorization": "Bearer tok-123"})
    assert status == 200 and json.loads(text)["transcript"] == "hello"
    assert http("GET", url + "/results/c1")[0] == 401
    assert http("GET", url + "/results/nope", headers={"Authorization": "Bearer tok-123"}
                )[0] == 404


def test_twilio_voice_webhook_checks_the_signature_and_answers_twiml(service):
    url, _ = service
    hook = url + "/twilio/voice?call_id=abc&question_ids=q_recent_role"
    form = {"CallSid": "CA1", "From": "+15550001111", "To": "+15552223333"}
    body = urllib.parse.urlencode(form).encode()
    h = {"Content-Type": "application/x-www-form-urlencoded"}
    assert http("POST", hook, body, {**h, "X-Twilio-Signature": "AAAA"})[0] == 403
    sig = compute_signature(hook, form, "twilio-secret")
    status, xml = http("POST", hook, body, {**h, "X-Twilio-Signature": sig})
    assert status == 200
    stream = ET.fromstring(xml).find("./Connect/Stream")
    assert stream.get("url") == url.replace("http://", "ws://") + "/twilio/media"
    assert {p.get("name"): p.get("value") for p in stream} == {
        "call_id": "abc", "question_ids": "q_recent_role"}


def test_import_scores_keeps_calls_with_no_returned_score(tmp_path):
    from rig.cli import app

    camp = tmp_path / "camp"
    camp.mkdir()
    pd.DataFrame({"call_id": ["a", "b", "c"], "answer_id": ["x", "y", "z"],
                  "profile_id": ["baseline"] * 3, "repeat": [0, 0, 0],
                  "score": [70.0, 50.0, 20.0]}).to_parquet(camp / "calls.parquet")
    pd.DataFrame({"call_id": ["a", "c", "zz"], "score": [65.0, 30.0, 1.0]}).to_csv(
        tmp_path / "ext.csv", index=False)
    res = CliRunner().invoke(app, ["interviewer", "import-scores", str(camp),
                                   str(tmp_path / "ext.csv")])
    assert res.exit_code == 0, res.output
    assert "2 of 3 calls scored" in res.output and "no score: b" in res.output
    out = pd.read_parquet(camp / "external_scores.parquet").set_index("call_id")
    assert len(out) == 3 and not out.loc["b", "returned"]
    assert out.loc["a", "external_score"] == 65.0 and pd.isna(out.loc["b", "external_score"])
    bad = CliRunner().invoke(app, ["interviewer", "import-scores", str(camp),
                                   str(tmp_path / "missing.csv")])
    assert bad.exit_code == 2 and "scores file not found" in bad.output


def test_each_serve_transport_answers_only_its_own_call_endpoints(tmp_path):
    svc = InterviewerService(load_pipeline(ROOT / "pipelines" / "reference.yaml"),
                             load_bank(ROOT / "tests" / "data" / "calls_bank"), FakeScorer(),
                             ResultStore(tmp_path / "r.jsonl"))
    paths = {m: {getattr(r, "path", None) for r in svc.app(m).router.routes}
             for m in (("twilio",), ("webrtc",), ("twilio", "webrtc"))}
    assert "/api/offer" not in paths[("twilio",)] and "/twilio/media" in paths[("twilio",)]
    assert "/twilio/voice" not in paths[("webrtc",)] and "/api/offer" in paths[("webrtc",)]
    assert {"/api/offer", "/twilio/media", "/health"} <= paths[("twilio", "webrtc")]
