"""The result wait: progress lines, a 404 from a server with no results route taken as an
answer (learned once per campaign, then the chain's next source, or a clear stop), the
results route's own "no result yet" told apart from it, and the CLI options. Small local
HTTP servers and short timeouts: nothing waits long."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from test_score_sources_unit import fake_caller, spec, stages

from rig.calls.interviewer.results import (
    NoResultsRoute,
    ResultStore,
    pending_404,
    poll_result,
    wait_message,
)
from rig.calls.run.options import OptionConflict, TransportOptions, transport_call_options
from rig.errors import ConfigError

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]


class Server:
    """A local HTTP server answering ``GET /results/...`` with ``answer(n) -> (status, body,
    headers)`` for its n-th request (1, 2, ...); counts the requests."""

    def __init__(self, answer) -> None:
        self.hits = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                outer.hits += 1
                status, body, headers = answer(outer.hits)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}"

    def close(self) -> None:
        self.srv.shutdown()
        self.srv.server_close()


@pytest.fixture
def no_route():
    s = Server(lambda n: (404, b'{"detail":"Not Found"}', {"Content-Type": "application/json"}))
    yield s
    s.close()


def test_wait_message_reads_as_the_issue_asks():
    assert wait_message("c1", 40.2, 300) == \
        "waiting for the interviewer's result for call c1: 40 s of 300"


@pytest.mark.parametrize("body, headers, pending", [
    (b'{"detail":"Not Found"}', {}, False),               # FastAPI/Starlette: no route
    (b"<html><h1>404 Not Found</h1></html>", {}, False),  # an HTML 404
    (b"", {}, False),
    (b'{"detail":"no interviewer result for call c1"}', {}, True),  # rig's route
    (b'{"error":"no result yet"}', {}, True),
    (b"", {"X-Rig-Result": "pending"}, True),
])
def test_a_404_is_pending_only_when_the_route_says_so(body, headers, pending):
    assert pending_404(body, headers) is pending


def test_a_404_from_a_server_with_no_route_is_an_answer_at_once(no_route):
    lines: list[str] = []
    with pytest.raises(NoResultsRoute) as err:
        poll_result(no_route.url, "c1", "a1", 30.0, progress=lines.append)
    assert no_route.hits == 1 and lines == []  # one request, no waiting
    msg = str(err.value)
    assert f"{no_route.url}/results/c1" in msg
    assert "--score-source rig" in msg and "extractor:MODULE:FUNCTION" in msg


def test_pending_404_is_waited_out_with_progress_lines():
    pending = (404, b'{"detail":"no interviewer result for call c1"}', {})
    done = (200, json.dumps({"call_id": "c1", "attempt_id": "a1", "status": "ok"}).encode(),
            {})
    s = Server(lambda n: pending if n < 6 else done)
    try:
        lines: list[str] = []
        row = poll_result(s.url, "c1", "a1", 30.0, progress=lines.append,
                          progress_every_s=0.05, poll_s=0.03)
        assert row["status"] == "ok" and s.hits == 6
        assert lines and all(x.startswith("waiting for the interviewer's result for call c1:")
                             and x.endswith("of 30") for x in lines)
    finally:
        s.close()


def test_route_known_takes_every_404_as_not_yet(no_route):
    assert poll_result(no_route.url, "c1", None, 0.1, route_known=True, poll_s=0.03) is None
    assert no_route.hits >= 2


def test_the_store_wait_says_so_too():
    lines: list[str] = []
    assert ResultStore().wait("c9", 0.25, progress=lines.append, progress_every_s=0.05) is None
    assert lines and lines[0].startswith("waiting for the interviewer's result for call c9: ")


def test_rigs_own_results_route_is_pending_and_switched_off_is_no_route():
    from rig.answers import load_bank
    from rig.calls.interviewer.service import InterviewerService, ServiceThread
    from rig.pipeline import load_pipeline
    from rig.scorer.fake import FakeScorer

    pipe = load_pipeline(ROOT / "pipelines" / "reference.yaml")
    bank = load_bank(ROOT / "tests" / "data" / "calls_bank")
    for route, expect in ((True, None), (False, NoResultsRoute)):
        svc = InterviewerService(pipe, bank, FakeScorer(), ResultStore(), results_route=route)
        with ServiceThread(svc.app()) as th:
            if expect is None:  # the route exists: "not yet", waited out to the timeout
                assert poll_result(th.url, "c1", None, 0.1, poll_s=0.03) is None
            else:
                with pytest.raises(expect):
                    poll_result(th.url, "c1", None, 5.0)


def two_answer_spec(out: Path):
    from dataclasses import replace

    return replace(spec(out), answer_ids=("qr_strong", "qr_border"))


def test_a_campaign_learns_no_route_once_and_falls_back(tmp_path, no_route):
    from rig.campaign.runner import run_campaign

    lines: list[str] = []
    out = tmp_path / "c"
    with fake_caller(out, None, "interviewer,rig", interviewer_url=no_route.url,
                     progress=lines.append) as caller:
        run_campaign(two_answer_spec(out), stages=stages([]), progress=False, call_fn=caller)
        assert caller.no_results_route == f"{no_route.url}/results/" + \
            caller.placed[0]["call_id"]
    rows = [json.loads(x) for x in (out / "calls.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and {r["score_source"] for r in rows} == {"rig_grade_sent_audio"}
    assert all(r["status"] == "ok" for r in rows)
    assert no_route.hits == 1  # learned on the first call: the second never asks
    notices = [x for x in lines if "no results route" in x]
    assert len(notices) == 1 and "scores come from rig" in notices[0]


def test_interviewer_only_with_no_route_stops_the_campaign_with_a_clear_error(tmp_path,
                                                                             no_route):
    from rig.campaign.runner import run_campaign

    out = tmp_path / "c"
    with fake_caller(out, None, "interviewer", interviewer_url=no_route.url,
                     progress=lambda m: None) as caller, \
            pytest.raises(NoResultsRoute, match="--score-source rig"):
        run_campaign(two_answer_spec(out), stages=stages([]), progress=False, call_fn=caller)
    assert len(caller.placed) == 1 and no_route.hits == 1  # the second call is not placed


def test_cli_options_are_checked_with_the_transport():
    got = transport_call_options(TransportOptions("webrtc", score_source="interviewer,rig",
                                                  result_wait_s=30))
    assert got["result_timeout_s"] == 30.0 and len(got["score_sources"]) == 2
    with pytest.raises(OptionConflict, match="--score-source needs a call to a bot"):
        transport_call_options(TransportOptions("sim", score_source="rig"))
    with pytest.raises(OptionConflict, match="--result-wait-s needs a call to a bot"):
        transport_call_options(TransportOptions("sim", result_wait_s=10))
    with pytest.raises(ConfigError, match="--result-wait-s"):
        transport_call_options(TransportOptions("webrtc", result_wait_s=0))
    with pytest.raises(ConfigError, match="unknown score source"):
        transport_call_options(TransportOptions("webrtc", score_source="bot"))


def test_call_limit_reaches_the_agent_and_is_checked():
    got = transport_call_options(TransportOptions("sip", call_limit_s=45))
    assert got["agent"].time_limit_s == 45.0
    assert "agent" not in transport_call_options(TransportOptions("sip"))  # default: 120 s
    with pytest.raises(OptionConflict, match="--call-limit-s needs a call to a bot"):
        transport_call_options(TransportOptions("sim", call_limit_s=45))
    for bad in (-1, float("inf"), float("nan")):  # inf: a call that never hangs up
        with pytest.raises(ConfigError, match="--call-limit-s"):
            transport_call_options(TransportOptions("webrtc", call_limit_s=bad))
    with pytest.raises(ConfigError, match="--result-wait-s"):
        transport_call_options(TransportOptions("webrtc", result_wait_s=float("inf")))


@pytest.mark.parametrize("extra, text", [
    (["--transport", "sim", "--score-source", "rig"], "--score-source needs a call to a bot"),
    (["--transport", "webrtc", "--score-source", "extractor:no_such_mod_xyz:f"],
     "no_such_mod_xyz"),
    (["--transport", "twilio", "--result-wait-s", "-5"], "--result-wait-s"),
    (["--transport", "webrtc", "--call-limit-s", "0"], "--call-limit-s"),
])
def test_cli_refuses_bad_score_options_before_any_call(tmp_path, extra, text):
    from typer.testing import CliRunner

    from rig.cli import app

    res = CliRunner().invoke(app, [
        "campaign", "run", "--answers", str(ROOT / "tests" / "data" / "calls_bank"),
        "--profiles", str(ROOT / "profiles" / "demo"), "--pipeline",
        str(ROOT / "pipelines" / "reference.yaml"), "--out", str(tmp_path / "c"),
        "--no-progress", *extra])
    assert res.exit_code == 2 and text in res.stderr, res.stderr
    assert not (tmp_path / "c" / "calls.jsonl").exists()
