"""The OpenAI-compatible backend against a fake endpoint on loopback (stdlib http.server):
the request it sends, retries, parse failures, and API-key hygiene (the key never appears in
outputs, logs, reprs or error messages)."""

from __future__ import annotations

import json
import logging
import pickle
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rig.errors import ConfigError
from rig.pipeline import PipelineConfig, ScorerSettings
from rig.probes import ProbeSpec, build_scorer, parse_rating, run_probe
from rig.probes.core import scorer_settings
from rig.scorer.factory import build_scorer as build_pipeline_scorer
from rig.scorer.openai_compat import OpenAICompatScorer, redact_url

pytestmark = pytest.mark.unit
KEY = "sk-test-7f3a9c1e5b2d4f6a8c0e"
ENV = "RIG_TEST_PROBE_KEY"


class Endpoint:
    """A fake chat-completions endpoint. ``script`` maps a request number to (status, body)
    for special answers; otherwise it replies with ``content(request_json)``."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.script: dict[int, tuple[int, str]] = {}
        self.content = lambda req: '{"score": 4, "reasoning": "clear example"}'
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep the test output quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                outer.headers.append(dict(self.headers))
                n = len(outer.requests)
                if n in outer.script:
                    status, text = outer.script[n]
                    # a hostile endpoint: echoes the Authorization header in its error
                    text = text.replace("{auth}", self.headers.get("Authorization", ""))
                else:
                    status = 200
                    text = json.dumps({"choices": [{"message": {
                        "role": "assistant", "content": outer.content(body)}}]})
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def endpoint():
    ep = Endpoint()
    yield ep
    ep.close()


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv(ENV, KEY)
    # a proxy for everything: loopback requests must bypass it
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    return ENV


def test_the_request_carries_model_messages_seed_and_the_key_but_no_grammar(endpoint,
                                                                            key_env):
    sc = OpenAICompatScorer(endpoint.base_url, "qwen-test", key_env, max_tokens=99)
    res = sc.complete("sys", "user", grammar="root ::= [1-5]", parse=parse_rating, seed=7)
    assert res.ok and res.value.score == 4
    req = endpoint.requests[0]
    assert req["model"] == "qwen-test" and req["seed"] == 7 and req["max_tokens"] == 99
    assert req["temperature"] == 0.0
    assert req["messages"] == [{"role": "system", "content": "sys"},
                               {"role": "user", "content": "user"}]
    assert "grammar" not in req and "response_format" not in req
    assert endpoint.headers[0]["Authorization"] == f"Bearer {KEY}"


def test_a_reply_without_json_is_a_counted_failure(endpoint, key_env):
    endpoint.content = lambda req: "Sure! I'd rate this answer a solid four out of five."
    sc = OpenAICompatScorer(endpoint.base_url, "m", key_env)
    res = sc.complete("s", "u", grammar="", parse=parse_rating, seed=0)
    assert res.parse_status == "invalid_json" and res.value is None
    assert res.raw.startswith("Sure!")


def test_retryable_errors_are_retried_and_others_are_not(endpoint, key_env, monkeypatch):
    monkeypatch.setattr("rig.scorer.openai_compat.time.sleep", lambda s: None)
    endpoint.script = {1: (503, "busy"), 2: (500, "oops")}
    sc = OpenAICompatScorer(endpoint.base_url, "m", key_env, max_retries=2)
    assert sc.complete("s", "u", grammar="", parse=parse_rating, seed=0).ok
    assert len(endpoint.requests) == 3
    endpoint.script = {4: (400, "bad request")}
    res = sc.complete("s", "u2", grammar="", parse=parse_rating, seed=0)
    assert res.parse_status == "error" and "HTTP 400" in res.error
    assert len(endpoint.requests) == 4


def test_the_key_never_appears_in_errors_reprs_or_state(endpoint, key_env, caplog):
    caplog.set_level(logging.DEBUG)
    endpoint.script = {1: (401, '{"error": "invalid key {auth}"}')}
    sc = OpenAICompatScorer(endpoint.base_url, "m", key_env, max_retries=0)
    res = sc.complete("s", "u", grammar="", parse=parse_rating, seed=0)
    assert res.parse_status == "error" and "HTTP 401" in res.error
    assert "[redacted]" in res.error
    for text in (res.error, repr(sc), str(sc.describe()), json.dumps(vars(sc), default=str),
                 caplog.text):
        assert KEY not in text
    assert KEY.encode() not in pickle.dumps(sc)
    assert sc.describe()["api_key_env"] == ENV


def test_key_configuration_errors_name_the_variable_not_a_value(monkeypatch, endpoint):
    monkeypatch.delenv(ENV, raising=False)
    with pytest.raises(ConfigError, match=f"{ENV} is not set"):
        OpenAICompatScorer(endpoint.base_url, "m", ENV)
    with pytest.raises(ConfigError, match="value not shown") as err:
        OpenAICompatScorer(endpoint.base_url, "m", KEY)  # the key pasted by mistake
    assert KEY not in str(err.value)
    with pytest.raises(ConfigError, match="base_url"):
        OpenAICompatScorer("127.0.0.1:8080", "m")


def test_redact_url_drops_credentials_and_query():
    assert redact_url("https://user:pw@api.example.com:8443/v1?key=abc") == \
        "https://api.example.com:8443/v1"


def test_a_probe_run_through_the_endpoint_never_writes_the_key(endpoint, key_env, tmp_path,
                                                             capsys, caplog, monkeypatch):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setattr("rig.scorer.openai_compat.time.sleep", lambda s: None)

    def content(req):
        user = req["messages"][1]["content"]
        if "final decision" in user:
            # a reply that echoes the request's key: it must not reach the outputs
            return json.dumps({"decision": "advance", "reasoning": f"solid answers {KEY}"})
        return '{"score": 3, "reasoning": "adequate"}'

    endpoint.content = content
    endpoint.script = {2: (500, "server error for {auth}"), 3: (500, "again {auth}"),
                       4: (500, "and again {auth}")}
    cfg = tmp_path / "scorer.yaml"
    cfg.write_text(f"backend: openai\nbase_url: {endpoint.base_url}\nmodel: test-model\n"
                   f"api_key_env: {ENV}\n")
    scorer = build_scorer(cfg)
    assert scorer.max_retries == 2
    out = tmp_path / "run"
    res = run_probe(ProbeSpec("hedging", out, n_sessions=2, questions_per_session=3,
                              conditions=("plain",)), scorer)
    assert res.decisions["reasoning"].str.contains("[redacted]", regex=False).all()
    errors = res.ratings[res.ratings["parse_status"] == "error"]
    assert len(errors) == 1 and "[redacted]" in errors["error"].iloc[0]
    assert res.summary.scorer["backend"] == "openai"
    assert res.summary.scorer["grammar_sent"] is False
    captured = capsys.readouterr()
    for f in out.iterdir():
        assert KEY.encode() not in f.read_bytes(), f.name
    assert KEY not in captured.out + captured.err + caplog.text
    assert all(h["Authorization"] == f"Bearer {KEY}" for h in endpoint.headers)


def test_scorer_settings_accept_the_openai_backend(endpoint, key_env, tmp_path):
    s = ScorerSettings(backend="openai", base_url=endpoint.base_url, model="gpt-x",
                       api_key_env=ENV)
    p = PipelineConfig(name="hosted", scorer=s)
    sc = build_pipeline_scorer(p.scorer)
    assert isinstance(sc, OpenAICompatScorer) and sc.model == "gpt-x"
    with pytest.raises(ValueError, match="needs base_url"):
        ScorerSettings(backend="openai", model="gpt-x")
    with pytest.raises(ValueError, match="verified GGUF"):
        ScorerSettings(backend="llamacpp", model="gpt-x")
    # unset openai fields stay out of the dump that pipeline_version hashes; the scoring
    # mode and the grading budget are in it (issue 13: part of the pipeline version), and
    # the style-criteria lever (issue 16)
    dumped = PipelineConfig(name="x").model_dump(exclude_none=True)["scorer"]
    assert set(dumped) == {"backend", "model", "mode", "temperature", "budget_s",
                           "max_tokens", "reason", "style_criteria"}
    pipe = tmp_path / "pipe.yaml"
    pipe.write_text(f"name: hosted\nscorer:\n  backend: openai\n  base_url: "
                    f"{endpoint.base_url}\n  model: m\n  api_key_env: {ENV}\n")
    assert scorer_settings(pipe).model == "m"
    assert scorer_settings("embedded") == ScorerSettings()


def test_an_unusable_endpoint_stops_the_run_with_finished_asks_kept(tmp_path, key_env,
                                                                    monkeypatch):
    from rig.probes.core import AskLog, ScorerUnavailable

    monkeypatch.setattr("rig.scorer.openai_compat.time.sleep", lambda s: None)
    with ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler) as srv:
        dead = f"http://127.0.0.1:{srv.server_address[1]}/v1"  # closed when the block ends
    sc = OpenAICompatScorer(dead, "m", key_env, max_retries=0, timeout_s=5)
    log = AskLog(tmp_path / "asks.jsonl", sc)
    with pytest.raises(ScorerUnavailable, match="no reply to 3 asks in a row"):
        for i in range(10):
            log.ask("s", f"u{i}", "", parse_rating, 0)
    assert log.n_backend_calls == 3  # stopped at the third, not after all ten


def test_an_unreachable_scorer_exits_2_from_the_cli(tmp_path):
    from typer.testing import CliRunner

    from rig.cli import app

    with ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler) as srv:
        dead = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    cfg = tmp_path / "s.yaml"
    cfg.write_text(f"backend: openai\nbase_url: {dead}\nmodel: m\ntimeout_s: 5\n")
    res = CliRunner().invoke(app, ["probe", "hedging", "--scorer", str(cfg), "--sessions", "2",
                                   "--questions-per-session", "3", "--mitigation", "none",
                                   "--out", str(tmp_path / "o"), "--no-progress"])
    assert res.exit_code == 2 and "in a row" in res.stderr


def test_a_short_run_against_an_unreachable_scorer_exits_2_keeping_its_outputs(tmp_path,
                                                                              monkeypatch):
    from typer.testing import CliRunner

    from rig.cli import app

    monkeypatch.setattr("rig.scorer.openai_compat.time.sleep", lambda s: None)
    with ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler) as srv:
        dead = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    cfg = tmp_path / "s.yaml"
    cfg.write_text(f"backend: openai\nbase_url: {dead}\nmodel: m\ntimeout_s: 5\n")
    out = tmp_path / "o"
    res = CliRunner().invoke(app, ["probe", "name-swap", "--scorer", str(cfg), "--name-set",
                                   "gendered", "--kind", "resume", "--items", "1",
                                   "--names-per-group", "1", "--feature", "hire",
                                   "--mitigation", "none", "--out", str(out), "--no-progress"])
    assert res.exit_code == 2 and "no reply to any of the 2 asks" in res.stderr
    assert (out / "scores.parquet").is_file() and (out / "asks.jsonl").is_file()


def test_scrubbing_replaces_the_key_only_not_ordinary_words(endpoint, key_env):
    endpoint.content = lambda req: ('{"score": 4, "reasoning": "fixed an expired bearer token '
                                    'bug; a bearer of good news"}')
    sc = OpenAICompatScorer(endpoint.base_url, "m", key_env)
    res = sc.complete("s", "u", grammar="", parse=parse_rating, seed=0)
    assert res.ok and "expired bearer token bug" in res.raw


def test_a_short_local_key_is_not_scrubbed_from_replies(endpoint, monkeypatch):
    monkeypatch.setenv("RIG_TEST_SHORT_KEY", "x")
    endpoint.content = lambda req: '{"score": 4, "reasoning": "explains x and y"}'
    sc = OpenAICompatScorer(endpoint.base_url, "m", "RIG_TEST_SHORT_KEY")
    assert sc.complete("s", "u", grammar="", parse=parse_rating, seed=0).raw.endswith(
        'x and y"}')


def test_a_key_shaped_variable_name_is_not_echoed(monkeypatch, endpoint):
    secret = "sk_live_abc123secret"
    monkeypatch.delenv(secret, raising=False)
    with pytest.raises(ConfigError, match="not shown") as err:
        OpenAICompatScorer(endpoint.base_url, "m", secret)
    assert secret not in str(err.value)


def test_the_openai_backend_needs_a_model_name(tmp_path):
    """Without ``model:`` the embedded model's default name would be sent to the endpoint."""
    from rig.pipeline import load_pipeline

    cfg = tmp_path / "scorer.yaml"
    cfg.write_text("backend: openai\nbase_url: http://127.0.0.1:1/v1\n")
    with pytest.raises(ConfigError, match=r"scorer\.yaml: model: required by the openai "
                                          r"backend"):
        scorer_settings(cfg)
    pipe = tmp_path / "pipe.yaml"
    pipe.write_text("name: hosted\nscorer:\n  backend: openai\n  base_url: "
                    "http://127.0.0.1:1/v1\n")
    with pytest.raises(ConfigError, match=r"pipe\.yaml: scorer\.model: required by the "
                                          r"openai backend"):
        scorer_settings(pipe)
    with pytest.raises(ValueError, match="required by the openai backend"):
        ScorerSettings(backend="openai", base_url="http://127.0.0.1:1/v1")
    cfg.write_text("backend: openai\nbase_url: http://127.0.0.1:1/v1\nmodel: '  '\n")
    with pytest.raises(ConfigError, match=r"scorer\.yaml: model: a model name, not an empty"):
        scorer_settings(cfg)
    # the embedded default and every shipped pipeline still load
    assert ScorerSettings().model == "qwen2.5-coder-1.5b-instruct-q4_k_m"
    for p in sorted((Path(__file__).resolve().parents[1] / "pipelines").glob("*.yaml")):
        load_pipeline(p)
