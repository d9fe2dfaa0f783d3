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
from rig.calls.interviewer.results import ResultStore
from rig.calls.interviewer.service import InterviewerService, ServiceThread
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
    # webhook records go to webhook.jsonl, apart from the interviewer's own results
    ext = ResultStore(store.path.with_name("webhook.jsonl"))
    assert ext.get("c1")["score"] == 72.5 and ext.get("c2")["score"] is None
    assert store.get("c1") is None
    bad = json.dumps({"call_id": "c3", "score": 140}).encode()
    status, text = http("POST", url + "/results", bad, ok)
    assert status == 422 and "score" in text
    auth = {"Authorization": "Bearer tok-123"}
    status, text = http("GET", url + "/results/c1/external", headers=auth)
    assert status == 200 and json.loads(text)["transcript"] == "hello"
    assert http("GET", url + "/results/c1/external")[0] == 401
    status, text = http("GET", url + "/results/c1", headers=auth)  # no interviewer result
    assert status == 404 and "/results/c1/external" in text
    assert http("GET", url + "/results/nope", headers=auth)[0] == 404


def test_a_webhook_result_never_replaces_the_interviewers_own(service):
    """POST /results on the reference interviewer's server for a call id the interviewer
    scored: GET returns the interviewer's result (questions, status) with the external
    record under `external`, in either order of writing."""
    url, store = service
    ok = {"Content-Type": "application/json", "Authorization": "Bearer tok-123"}
    own = {"call_id": "X", "status": "ok", "questions": [{"score": 80.0}]}
    store.put(own)
    assert http("POST", url + "/results", json.dumps({"call_id": "X", "score": 10}).encode(),
                ok)[0] == 200
    status, text = http("GET", url + "/results/X", headers=ok)
    got = json.loads(text)
    assert status == 200 and got["status"] == "ok" and got["questions"] == own["questions"]
    assert got["external"]["score"] == 10 and got["external"]["source"] == "webhook"
    assert store.get("X")["status"] == "ok"
    # the interviewer writing after the webhook keeps both
    assert http("POST", url + "/results", json.dumps({"call_id": "Y", "score": 5}).encode(),
                ok)[0] == 200
    store.put({"call_id": "Y", "status": "ok", "questions": []})
    got = json.loads(http("GET", url + "/results/Y", headers=ok)[1])
    assert got["status"] == "ok" and got["external"]["score"] == 5
    store.put({"call_id": "Z", "status": "ok", "questions": []})  # nothing posted for Z
    assert json.loads(http("GET", url + "/results/Z", headers=ok)[1])["external"] is None


def test_webhook_corrections_win_and_bad_bodies_are_refused(service, tmp_path):
    """The webhook log is time-ordered: a later POST for a call id corrects an earlier one,
    on GET and in import-scores of the webhook's own log; one body listing a call id twice
    with different contents is refused naming the call id; a non-JSON body, or one naming a
    key twice, is a 400."""
    from rig.cli import app

    url, store = service
    ok = {"Content-Type": "application/json", "Authorization": "Bearer tok-123"}
    for score in (42, 50):
        assert http("POST", url + "/results",
                    json.dumps({"call_id": "a", "score": score}).encode(), ok)[0] == 200
    got = json.loads(http("GET", url + "/results/a/external", headers=ok)[1])
    assert got["score"] == 50 and got["received_seq"] == 2 and got["received_at"] > 0
    status, text = http("POST", url + "/results", json.dumps(
        [{"call_id": "b", "score": 42}, {"call_id": "b", "score": 50}]).encode(), ok)
    assert status == 422 and "'b'" in text and "42" in text and "50" in text
    assert ResultStore(store.path.with_name("webhook.jsonl")).get("b") is None
    same = json.dumps([{"call_id": "c", "score": 7}, {"call_id": "c", "score": 7}]).encode()
    assert http("POST", url + "/results", same, ok) == (200, '{"accepted":1}')
    status, text = http("POST", url + "/results", b"not json{", ok)
    assert status == 400 and "not JSON" in text
    status, text = http("POST", url + "/results",
                        b'{"call_id": "d", "score": 42, "score": 50}', ok)
    assert status == 400 and "duplicate key 'score'" in text  # which score: unknowable
    assert ResultStore(store.path.with_name("webhook.jsonl")).get("d") is None
    status, text = http("POST", url + "/results", b"[1]", ok)
    assert status == 422 and "item 0" in text
    camp = tmp_path / "camp"
    camp.mkdir()
    pd.DataFrame({"call_id": ["a", "c"], "score": [1.0, 2.0]}).to_parquet(
        camp / "calls.parquet")
    res = CliRunner().invoke(app, ["interviewer", "import-scores", str(camp),
                                   str(store.path.with_name("webhook.jsonl"))])
    assert res.exit_code == 0, res.output
    out = pd.read_parquet(camp / "external_scores.parquet").set_index("call_id")
    assert out.loc["a", "external_score"] == 50 and out.loc["c", "external_score"] == 7


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
    many = pd.DataFrame({"call_id": ["a"] + [f"u{i:02d}" for i in range(12)],
                         "score": [1.0] * 13})
    many.to_csv(tmp_path / "many.csv", index=False)
    res = CliRunner().invoke(app, ["interviewer", "import-scores", str(camp),
                                   str(tmp_path / "many.csv")])
    assert res.exit_code == 0 and "12 unknown call ids" in res.output
    assert "unknown call id: u00" in res.output and "unknown call id: u09" in res.output
    assert "u10" not in res.output and "... and 2 more unknown call ids" in res.output


def test_import_scores_reads_the_reference_interviewers_own_log(tmp_path):
    """The interviewer's results.jsonl holds the scores inside `questions`: the last
    question's score and transcript of a result with status ok (as a real-transport campaign
    maps it), no score for a failed call; the last record per call id wins."""
    from rig.cli import app

    camp = tmp_path / "camp"
    camp.mkdir()
    pd.DataFrame({"call_id": ["a", "b", "c"], "score": [70.0, 50.0, 20.0]}).to_parquet(
        camp / "calls.parquet")
    store = ResultStore(tmp_path / "interviewer" / "results.jsonl")

    def q(score, text):
        return {"question_id": "q1", "score": score, "transcript": text}

    store.put({"call_id": "a", "status": "ok", "attempt_id": "1", "questions": [q(10, "x")]})
    store.put({"call_id": "a", "status": "ok", "attempt_id": "2", "questions": [q(61, "hi")]})
    store.put({"call_id": "b", "status": "error", "error": "boom", "questions": []})
    res = CliRunner().invoke(app, ["interviewer", "import-scores", str(camp),
                                   str(store.path)])
    assert res.exit_code == 0, res.output
    assert "1 of 3 calls scored" in res.output and "no score: b" in res.output
    out = pd.read_parquet(camp / "external_scores.parquet").set_index("call_id")
    assert out.loc["a", "external_score"] == 61 and out.loc["a", "external_transcript"] == "hi"


def test_each_serve_transport_answers_only_its_own_call_endpoints(tmp_path):
    svc = InterviewerService(load_pipeline(ROOT / "pipelines" / "reference.yaml"),
                             load_bank(ROOT / "tests" / "data" / "calls_bank"), FakeScorer(),
                             ResultStore(tmp_path / "r.jsonl"))
    paths = {m: {getattr(r, "path", None) for r in svc.app(m).router.routes}
             for m in (("twilio",), ("webrtc",), ("twilio", "webrtc"))}
    assert "/api/offer" not in paths[("twilio",)] and "/twilio/media" in paths[("twilio",)]
    assert "/twilio/voice" not in paths[("webrtc",)] and "/api/offer" in paths[("webrtc",)]
    assert {"/api/offer", "/twilio/media", "/health"} <= paths[("twilio", "webrtc")]


def test_a_webhook_record_is_imported_as_posted_even_with_questions(tmp_path):
    """An external interviewer may post extra fields, `questions` among them: its posted
    score is the score (only the reference interviewer's own records are read by question)."""
    from rig.calls.interviewer.score_import import import_scores

    store = ResultStore(tmp_path / "webhook.jsonl")
    store.put({"call_id": "x", "score": 55, "status": "ok", "questions": [{"score": 1}],
               "source": "webhook"})
    (got,) = import_scores(store.path)
    assert got.call_id == "x" and got.score == 55


def test_a_refused_results_token_fails_the_wait_at_once(tmp_path, monkeypatch):
    """A 401 from GET /results is not 'not there yet': the wait stops and names the token."""
    import time

    from rig.calls.run.caller import TransportCaller

    svc = InterviewerService(load_pipeline(ROOT / "pipelines" / "reference.yaml"),
                             load_bank(ROOT / "tests" / "data" / "calls_bank"), FakeScorer(),
                             ResultStore(tmp_path / "r.jsonl"),
                             results_token_env="RIG_SERVE_TOKEN")
    monkeypatch.setenv("RIG_SERVE_TOKEN", "right-token")
    monkeypatch.setenv("RIG_TEST_TOKEN", "wrong-token")
    with ServiceThread(svc.app(("webrtc",)), "127.0.0.1", 0) as th:
        caller = TransportCaller("webrtc", tmp_path, tmp_path, interviewer_url=th.url,
                                 result_timeout_s=60.0, results_token_env="RIG_TEST_TOKEN")
        t0 = time.monotonic()
        with pytest.raises(RuntimeError, match=r"HTTP 401.*RIG_TEST_TOKEN"):
            caller._wait_result(th.url, "some-call", "attempt-1")
        assert time.monotonic() - t0 < 30


def test_a_bad_webrtc_offer_is_a_4xx_and_sets_nothing_up(tmp_path):
    svc = InterviewerService(load_pipeline(ROOT / "pipelines" / "reference.yaml"),
                             load_bank(ROOT / "tests" / "data" / "calls_bank"), FakeScorer(),
                             ResultStore(tmp_path / "r.jsonl"))
    with ServiceThread(svc.app(("webrtc",))) as th:
        for body, code in ((b"not json", 400), (b'{"sdp": "v=0", "type": "offer", '
                                                b'"question_ids": "no_such_question"}', 422)):
            req = urllib.request.Request(th.url + "/api/offer", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(req, timeout=10)
            e.value.close()
            assert e.value.code == code
        assert not svc.active
