"""Logic of the real-call parts: the agent's decisions, media framing and jitter, Twilio
messages, TwiML, webhook signatures, REST placement (the request built, no account), results
import and matching."""

from __future__ import annotations

import base64
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rig.audio import Audio
from rig.calls.interviewer.results import ResultStore
from rig.calls.interviewer.score_import import import_scores, match_scores
from rig.calls.media import (
    FRAME_BYTES,
    JitterMeter,
    PlayoutBuffer,
    TransportFacts,
    audio_to_frames,
    frames_to_audio,
)
from rig.calls.transports.twilio import (
    MEDIA_FORMAT,
    MediaStreamWriter,
    StreamIds,
    TwilioCredentials,
    compute_signature,
    parse_message,
    payload_to_pcm,
    place_call,
    twiml_connect_stream,
    validate_signature,
)
from rig.calls.transports.webrtc import negotiated_codec
from rig.campaign.call import TRANSPORT_COLUMNS
from rig.errors import ConfigError

pytestmark = pytest.mark.unit

# the agent's decisions: tests/test_agent_brain_unit.py


# --- media ------------------------------------------------------------------------------------
def test_frames_are_20_ms_of_8_khz_pcm():
    a = Audio(np.sin(np.arange(16000) / 10).astype(np.float32) * 0.5, 16000)  # 1 s at 16 kHz
    frames = audio_to_frames(a)
    assert len(frames) == 50 and {len(f) for f in frames} == {FRAME_BYTES}
    back = frames_to_audio(frames)
    assert back.sample_rate_hz == 8000 and back.duration_s == pytest.approx(1.0)


def test_playout_buffer_pads_underruns_and_keeps_order():
    p = PlayoutBuffer()
    p.push(b"\x01\x00" * 200)  # 1.25 frames
    assert p.read_frame() == b"\x01\x00" * 160
    tail = p.read_frame()
    assert tail[:80] == b"\x01\x00" * 40 and tail[80:] == bytes(240)
    assert p.read_frame() == bytes(FRAME_BYTES)
    assert p.underruns == 2


def test_a_backlog_is_worked_off_by_skipping_silence_never_speech():
    p = PlayoutBuffer(max_delay_s=0.2)
    speech = (np.ones(160, np.int16) * 3000).tobytes()
    p.push(bytes(FRAME_BYTES) * 30 + speech * 3)  # a 0.66 s burst after a stall
    assert p.read_frame() == bytes(FRAME_BYTES)
    # silent frames skipped down to 0.2 s + one frame, then one read: 0.2 s left
    assert p.skipped_frames == 22 and p.buffered_s == pytest.approx(0.2)
    p.push(speech * 20)
    frames = [p.read_frame() for _ in range(32)]
    assert frames.count(speech) == 23  # every speech frame is heard


def test_jitter_is_zero_on_a_regular_stream_and_follows_rfc3550():
    m = JitterMeter()
    for i in range(50):
        m.add(i * 0.02, 100 + i * 0.02)
    assert m.jitter_ms == pytest.approx(0.0, abs=1e-9)
    m = JitterMeter()
    arrivals = [0.0, 0.025, 0.040, 0.065, 0.080]  # |D| = 5 ms each step
    expect = 0.0
    for i, r in enumerate(arrivals):
        m.add(i * 0.02, r)
        if i:
            expect += (0.005 - expect) / 16
    assert m.jitter_ms == pytest.approx(expect * 1000)


def test_transport_facts_fill_the_transport_columns():
    f = TransportFacts("twilio", "PCMU/8000", 10, 9, 0, 1.5, 3.0, 2, "caller")
    assert set(f.to_row()) <= set(TRANSPORT_COLUMNS)


# --- Twilio media streams ---------------------------------------------------------------------
def test_media_stream_messages_follow_twilio_schema():
    w = MediaStreamWriter(StreamIds("MZ1", "CA1", "AC1"))
    start = w.start({"call_id": "abc"})
    assert start["event"] == "start" and start["sequenceNumber"] == "1"
    assert start["start"]["mediaFormat"] == MEDIA_FORMAT == {
        "encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}
    assert start["start"]["customParameters"] == {"call_id": "abc"}
    pcm = (np.sin(np.arange(160) / 5) * 8000).astype(np.int16).tobytes()
    media = w.media(pcm, 20)
    assert media["sequenceNumber"] == "2" and media["media"]["chunk"] == "1"
    assert len(base64.b64decode(media["media"]["payload"])) == 160  # 160 bytes per 20 ms
    assert parse_message(json.dumps(w.stop()))["event"] == "stop"
    assert parse_message(json.dumps(w.mark("q1")))["mark"]["name"] == "q1"


def test_payload_is_g711_mulaw_as_audioop_encodes_it():
    import audioop

    pcm = (np.sin(np.arange(160) / 3) * 20000).astype(np.int16).tobytes()
    w = MediaStreamWriter(StreamIds.new())
    payload = w.media(pcm, 0)["media"]["payload"]
    assert base64.b64decode(payload) == audioop.lin2ulaw(pcm, 2)
    assert payload_to_pcm(payload) == audioop.ulaw2lin(audioop.lin2ulaw(pcm, 2), 2)


@pytest.mark.parametrize("raw,msg", [
    ("not json", "not JSON"), ('{"x": 1}', "without 'event'"),
    ('{"event": "media"}', r"lacks \['media'\]"), ('{"event": "media", "media": {}}', "payload"),
])
def test_bad_media_stream_messages_are_named(raw, msg):
    with pytest.raises(ValueError, match=msg):
        parse_message(raw)


def test_twiml_connects_a_stream_with_parameters():
    xml = twiml_connect_stream("wss://rig.example/twilio/media", {"call_id": 'a"b<c',
                                                                  "seed": "0"})
    root = ET.fromstring(xml)
    stream = root.find("./Connect/Stream")
    assert stream is not None and stream.get("url") == "wss://rig.example/twilio/media"
    assert {p.get("name"): p.get("value") for p in stream} == {"call_id": 'a"b<c', "seed": "0"}
    with pytest.raises(ValueError, match="wss://"):
        twiml_connect_stream("https://x", {})


def test_signature_matches_twilios_own_validator():
    from twilio.request_validator import RequestValidator

    token = "12345"
    url = "https://mycompany.com/myapp.php?foo=1&bar=2"
    params = {"CallSid": "CA1234567890ABCDE", "Caller": "+12349013030", "Digits": "1234",
              "From": "+12349013030", "To": "+18005551212"}
    sig = compute_signature(url, params, token)
    assert sig == RequestValidator(token).compute_signature(url, params)
    assert RequestValidator(token).validate(url, params, sig)
    assert validate_signature(url, params, sig, token)
    assert not validate_signature(url, {**params, "Digits": "9"}, sig, token)
    assert not validate_signature(url, params, sig, "other-token")
    assert not validate_signature(url, params, "", token)


class RecordingHttp:
    """A twilio HttpClient that records the request instead of sending it."""

    def __init__(self):
        self.requests = []
        self.last_response = None
        self.is_async = False

    def request(self, method, uri, params=None, data=None, headers=None, auth=None,
                timeout=None, allow_redirects=False):
        from twilio.http.response import Response

        self.requests.append({"method": method, "uri": uri, "data": data, "auth": auth})
        self.last_response = Response(201, json.dumps({"sid": "CAfeed", "status": "queued"}))
        return self.last_response


def test_rest_placement_builds_the_documented_request_from_env_credentials():
    env = {"TWILIO_ACCOUNT_SID": "AC" + "0" * 32, "TWILIO_AUTH_TOKEN": "s3cret-token"}
    creds = TwilioCredentials.from_env(env)
    assert "s3cret" not in repr(creds)
    http = RecordingHttp()
    sid = place_call(to="+15551230000", from_="+15559870000",
                     stream_url="wss://rig.example/twilio/media",
                     parameters={"call_id": "c0ffee"}, credentials=creds, http_client=http)
    assert sid == "CAfeed"
    (req,) = http.requests
    assert req["method"] == "POST"
    assert req["uri"] == f"https://api.twilio.com/2010-04-01/Accounts/{'AC' + '0' * 32}/Calls.json"
    assert req["auth"] == (env["TWILIO_ACCOUNT_SID"], "s3cret-token")
    assert req["data"]["To"] == "+15551230000" and req["data"]["From"] == "+15559870000"
    stream = ET.fromstring(req["data"]["Twiml"]).find("./Connect/Stream")
    assert stream.get("url") == "wss://rig.example/twilio/media"
    assert stream.find("Parameter").get("value") == "c0ffee"


def test_missing_credentials_name_the_variable_not_a_value():
    with pytest.raises(ConfigError, match="TWILIO_ACCOUNT_SID"):
        TwilioCredentials.from_env({})
    with pytest.raises(ConfigError, match="TWILIO_AUTH_TOKEN"):
        TwilioCredentials.from_env({"TWILIO_ACCOUNT_SID": "AC1"})
    with pytest.raises(ConfigError, match="both or neither"):
        TwilioCredentials.from_env({"TWILIO_ACCOUNT_SID": "AC1", "TWILIO_API_KEY_SID": "SK1"})


def test_negotiated_codec_is_read_from_the_sdp_answer():
    sdp = ("v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 96 0 8\r\na=rtpmap:96 opus/48000/2\r\n"
           "a=rtpmap:0 PCMU/8000\r\n")
    assert negotiated_codec(sdp) == "opus/48000"
    assert negotiated_codec("v=0\r\n") == "unknown"


# --- results ----------------------------------------------------------------------------------
def test_result_store_persists_and_waits(tmp_path):
    s = ResultStore(tmp_path / "r.jsonl")
    assert s.wait("x", 0.01) is None
    s.put({"call_id": "x", "score": 50})
    s.put({"call_id": "x", "score": 60})
    back = ResultStore(tmp_path / "r.jsonl")
    assert back.get("x")["score"] == 60 and back.get("x")["received_seq"] == 2
    assert back.put({"call_id": "y"})["received_seq"] == 3  # the order goes on after a restart
    (tmp_path / "bad.jsonl").write_text('{"call_id": "x"}\nnot json\n')
    with pytest.raises(ConfigError, match=r"bad\.jsonl: line 2: not JSON"):
        ResultStore(tmp_path / "bad.jsonl")


def test_scores_import_from_csv_and_parquet_and_missing_calls_are_listed(tmp_path):
    df = pd.DataFrame({"call_id": ["a", "b", "zz"], "score": [80.0, None, 10.0],
                       "note": ["x", "y", "z"]})
    df.to_csv(tmp_path / "s.csv", index=False)
    df.to_parquet(tmp_path / "s.parquet")
    for f in ("s.csv", "s.parquet"):
        scores = import_scores(tmp_path / f)
        got, missing, unknown = match_scores(["a", "b", "c"], scores)
        assert got["a"].score == 80.0 and "b" not in got  # an empty score is not a return
        assert missing == ["b", "c"] and unknown == ["zz"]


def test_a_call_returned_twice_with_different_scores_is_an_error(tmp_path):
    from rig.calls.interviewer.results import ExternalScore

    same = [ExternalScore(call_id="a", score=50), ExternalScore(call_id="a", score=50)]
    assert match_scores(["a"], same)[0]["a"].score == 50
    with pytest.raises(ConfigError, match=r"ext\.csv: call_id: returned twice with different "
                       r"scores \(50 and 90\) \(got 'a'\)"):
        match_scores(["a"], [ExternalScore(call_id="a", score=50),
                             ExternalScore(call_id="a", score=90)], source="ext.csv")
    with pytest.raises(ConfigError, match=r"different decisions \(advance and reject\)"):
        match_scores(["a"], [ExternalScore(call_id="a", score=90, decision="advance"),
                             ExternalScore(call_id="a", score=90, decision="reject")])
    # an empty score is no score returned: a real score for the same call is taken
    got, missing, _ = match_scores(["a"], [ExternalScore(call_id="a", score=None),
                                           ExternalScore(call_id="a", score=70)])
    assert got["a"].score == 70 and missing == []
    with pytest.raises(ValueError):
        ExternalScore(call_id="a", score=50, decision="maybe")


def test_bad_score_files_name_file_row_and_field(tmp_path):
    pd.DataFrame({"call_id": ["a"], "score": [120]}).to_csv(tmp_path / "s.csv", index=False)
    with pytest.raises(ConfigError, match=r"s\.csv: row 1: score: .*100"):
        import_scores(tmp_path / "s.csv")
    pd.DataFrame({"id": ["a"]}).to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(ConfigError, match=r"t\.csv: call_id: missing column"):
        import_scores(tmp_path / "t.csv")
    with pytest.raises(ConfigError, match=r"csv, \.parquet or \.jsonl"):
        (tmp_path / "u.txt").write_text("x")
        import_scores(tmp_path / "u.txt")
    (tmp_path / "e.csv").write_text("")
    with pytest.raises(ConfigError, match=r"e\.csv: empty file"):
        import_scores(tmp_path / "e.csv")
    (tmp_path / "b.jsonl").write_text('{"call_id": "a", "score": 1}\n\n'
                                      '{"call_id": "b", "score": "zz"}\n')
    with pytest.raises(ConfigError, match=r"b\.jsonl: line 3: score: .*number.*'zz'") as e:
        import_scores(tmp_path / "b.jsonl")
    assert "pydantic" not in str(e.value)
    (tmp_path / "n.jsonl").write_text('{"call_id": "a", "score": 1}\nnope\n')
    with pytest.raises(ConfigError, match=r"n\.jsonl: line 2: not JSON"):
        import_scores(tmp_path / "n.jsonl")


def test_jsonl_scores_a_webhook_log_is_time_ordered_a_plain_export_is_not(tmp_path):
    """A results.jsonl the webhook wrote: the last record per call id wins (a correction,
    also when it takes the score back); a JSONL of plain records has no order, so a conflict
    there is an error, as in a CSV."""
    store = ResultStore(tmp_path / "results.jsonl")
    for rec in ({"call_id": "a", "score": 42}, {"call_id": "b", "score": 10},
                {"call_id": "a", "score": 50}, {"call_id": "b", "score": None}):
        store.put({**rec, "source": "webhook"})
    got, missing, _ = match_scores(["a", "b"], import_scores(store.path))
    assert got["a"].score == 50 and missing == ["b"]
    (tmp_path / "plain.jsonl").write_text('{"call_id": "a", "score": 42}\n'
                                          '{"call_id": "a", "score": 50}\n')
    with pytest.raises(ConfigError, match=r"different scores \(42 and 50\) \(got 'a'\)"):
        match_scores(["a"], import_scores(tmp_path / "plain.jsonl"),
                     source=tmp_path / "plain.jsonl")


def test_an_interviewer_record_maps_as_the_campaign_maps_it():
    from rig.calls.interviewer.score_import import interviewer_record_score

    ok = {"call_id": "a", "status": "ok", "attempt_id": "t",
          "questions": [{"score": 1, "transcript": "x"}, {"score": 77, "transcript": "y"}]}
    assert interviewer_record_score(ok) | {} == {
        "call_id": "a", "score": 77, "transcript": "y", "decision": None,
        "interviewer_status": "ok", "interviewer_error": None, "attempt_id": "t"}
    failed = interviewer_record_score({"call_id": "a", "status": "error", "error": "tts",
                                       "questions": [{"score": 5, "transcript": ""}]})
    assert failed["score"] is None and failed["interviewer_error"] == "tts"


def test_serve_settings_are_checked_before_serving(tmp_path, monkeypatch):
    """A bad --voice, --public-url or --ice-host, or a port in use, exits 2 naming the
    option and the value before anything serves."""
    import socket

    from typer.testing import CliRunner

    from rig.calls.interviewer.service import check_public_url
    from rig.cli import app

    assert check_public_url("https://rig.example.org") == "https://rig.example.org"
    assert check_public_url("http://127.0.0.1:8765")
    for bad in ("http://x", "ftp://rig.example.org", "rig.example.org"):
        with pytest.raises(ConfigError, match="--public-url"):
            check_public_url(bad)
    base = ["interviewer", "serve", "--transport", "twilio-ws", "--pipeline",
            "pipelines/reference.yaml", "--answers", "tests/data/calls_bank",
            "--results", str(tmp_path / "r")]
    for extra, text in ((["--voice", "bogus"], "--voice: engine:voice_id"),
                        (["--voice", "hibari:no-such-voice"], "--voice: "),
                        (["--voice", "nope:x"], "no synthesis engine 'nope'"),
                        (["--public-url", "http://x"], "--public-url: must be https://"),
                        (["--ice-host", "my-host"], "--ice-host: an IP address")):
        res = CliRunner().invoke(app, base + extra)
        assert res.exit_code == 2 and text in res.stderr, (extra, res.stderr)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        monkeypatch.setenv("RIG_TEST_TOKEN", "t0k")
        res = CliRunner().invoke(app, ["interviewer", "results", "--token-env",
                                       "RIG_TEST_TOKEN", "--out", str(tmp_path / "w"),
                                       "--port", str(port)])
        assert res.exit_code == 2 and f"--port {port}: cannot listen on 127.0.0.1:{port} (TCP"\
            in res.stderr, res.stderr
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as busy:
        busy.bind(("127.0.0.1", 0))
        port = busy.getsockname()[1]
        import typer

        from rig.cli.interviewer import _check_udp_port

        with pytest.raises(typer.Exit):
            _check_udp_port("127.0.0.1", port, port)


# --- SIP and RTP ------------------------------------------------------------------------------
def test_rtp_header_round_trips_rfc3550_fields():
    from rig.calls.transports.sip import parse_rtp, rtp_packet

    pkt = parse_rtp(rtp_packet(65535, 2**32 - 160, 0xDEADBEEF, b"\xff" * 160, marker=True))
    assert (pkt.payload_type, pkt.marker, pkt.seq, pkt.timestamp, pkt.ssrc) == (
        0, True, 65535, 2**32 - 160, 0xDEADBEEF)
    assert pkt.payload == b"\xff" * 160
    with pytest.raises(ValueError, match="version"):
        parse_rtp(b"\x00" * 12)


def test_rtp_receiver_counts_sequence_gaps_across_wraparound_as_lost():
    from rig.calls.transports.sip import RtpPacket, RtpReceiver

    rx = RtpReceiver()
    seqs = [65533, 65534, 0, 1, 3, 4]  # 65535 and 2 missing, sequence wraps
    for i, s in enumerate(seqs):
        rx.add(RtpPacket(0, False, s, i * 160, 1, b""), i * 0.02)
    assert rx.expected == 8 and rx.received == 6 and rx.lost == 2


def test_sip_messages_parse_with_compact_headers_and_sdp():
    from rig.calls.transports.sip import build_sip, parse_sip, sdp_media, sdp_offer

    raw = build_sip("INVITE sip:interviewer@127.0.0.1:5070 SIP/2.0", [
        ("v", "SIP/2.0/UDP 127.0.0.1:5080;branch=z9hG4bKx"), ("i", "abc@rig"),
        ("CSeq", "1 INVITE"), ("X-Rig-Call-Id", "c0ffee")], sdp_offer("127.0.0.1", 40000, 7))
    msg = parse_sip(raw)
    assert msg.is_request and msg.method == "INVITE"
    assert msg.header("call-id") == "abc@rig" and msg.header("x-rig-call-id") == "c0ffee"
    assert int(msg.header("content-length")) == len(msg.body.encode())
    assert sdp_media(msg.body) == ("127.0.0.1", 40000, [0])
    with pytest.raises(ValueError, match="blank line"):
        parse_sip(b"SIP/2.0 200 OK\r\nCSeq: 1 INVITE")


def test_a_campaign_folder_never_mixes_transports(tmp_path):
    import json as _json

    from rig.campaign.runner import CampaignSpec, run_campaign

    root = Path(__file__).resolve().parents[1]
    (tmp_path / "campaign.json").write_text(_json.dumps({"transport": "sim"}))
    spec = CampaignSpec(answers_path=root / "tests" / "data" / "calls_bank",
                        profiles_path=root / "profiles" / "demo",
                        pipeline_path=root / "pipelines" / "reference.yaml", out_dir=tmp_path,
                        transport="webrtc")
    with pytest.raises(ConfigError, match="holds a 'sim' campaign"):
        run_campaign(spec, progress=False)


def test_a_retried_call_waits_for_its_own_attempts_result(tmp_path) -> None:
    from rig.calls.interviewer.results import ResultStore

    store = ResultStore(tmp_path / "results.jsonl")
    store.put({"call_id": "c1", "attempt_id": "old", "status": "ok"})
    assert store.wait("c1", 0.2, "new") is None  # an earlier attempt's result is not taken
    store.put({"call_id": "c1", "attempt_id": "new", "status": "ok"})
    assert store.wait("c1", 0.2, "new")["attempt_id"] == "new"
    store.put({"call_id": "c2", "status": "ok"})  # an interviewer that does not echo it
    assert store.wait("c2", 0.2, "x") is not None
    reloaded = ResultStore(tmp_path / "results.jsonl")  # the last row per call id wins
    assert reloaded.wait("c1", 0.1, "old") is None


def test_campaign_options_that_need_a_real_transport_exit_2(tmp_path):
    from typer.testing import CliRunner

    from rig.cli import app

    base = ["campaign", "run", "--answers", "answer_bank/core", "--profiles", "profiles/demo",
            "--pipeline", "pipelines/reference.yaml", "--out", str(tmp_path / "c")]
    for extra, text in ((["--twilio-to", "+15550000000"], "needs --transport twilio; --"
                         "transport sim does not use it"),
                        (["--transport", "sip", "--interviewer-url", "http://127.0.0.1:9"],
                         "sip:user@host:port"),
                        (["--transport", "webrtc", "--twilio-to", "+15550000000"],
                         "--twilio-to needs --transport twilio"),
                        # a bot's own Media Streams websocket: Twilio only, and no results
                        (["--transport", "webrtc", "--interviewer-url", "ws://127.0.0.1:9/ws",
                          "--score-source", "rig"], "it goes with --transport twilio"),
                        (["--transport", "twilio", "--interviewer-url", "ws://127.0.0.1:9/ws"],
                         "serves no results: give --score-source rig")):
        res = CliRunner().invoke(app, base + extra)
        assert res.exit_code == 2 and text in res.stderr, res.stderr


def test_results_are_fetched_with_the_bearer_token(tmp_path, monkeypatch):
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from rig.calls.run.caller import TransportCaller

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            ok = self.headers.get("Authorization") == "Bearer tok-123456789"
            body = json.dumps({"call_id": "c1", "attempt_id": "a1", "status": "ok"}).encode()
            self.send_response(200 if ok else 401)
            self.send_header("Content-Length", str(len(body) if ok else 0))
            self.end_headers()
            if ok:
                self.wfile.write(body)

    monkeypatch.setenv("RIG_TEST_RESULTS_TOKEN", "tok-123456789")
    with ThreadingHTTPServer(("127.0.0.1", 0), Handler) as srv:
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{srv.server_address[1]}"
        with_token = TransportCaller("webrtc", Path("answer_bank/core"), tmp_path,
                                     interviewer_url=url, result_timeout_s=5,
                                     results_token_env="RIG_TEST_RESULTS_TOKEN")
        assert with_token._wait_result(url, "c1", "a1")["status"] == "ok"
        without = TransportCaller("webrtc", Path("answer_bank/core"), tmp_path,
                                  interviewer_url=url, result_timeout_s=1.5)
        with pytest.raises(RuntimeError, match="HTTP 401"):  # refused: no waiting it out
            without._wait_result(url, "c1", "a1")
        srv.shutdown()


def test_missing_twilio_credentials_exit_2_before_anything_runs(tmp_path, monkeypatch):
    """`--transport twilio --twilio-to` checks the account's environment variables first:
    exit 2 naming every missing one (never a value), before any model loads or call."""
    from typer.testing import CliRunner

    import rig.campaign.runner
    from rig.calls.transports.twilio import missing_credentials
    from rig.cli import app

    def must_not_run(*a, **k):
        raise AssertionError("the campaign started")

    monkeypatch.setattr(rig.campaign.runner, "run_campaign", must_not_run)
    for name in ("TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_API_KEY_SID",
                 "TWILIO_API_KEY_SECRET"):
        monkeypatch.delenv(name, raising=False)
    out = tmp_path / "c"
    base = ["campaign", "run", "--answers", "answer_bank/core", "--profiles", "profiles/demo",
            "--pipeline", "pipelines/reference.yaml", "--out", str(out), "--transport",
            "twilio", "--twilio-to", "+15550100000", "--twilio-from", "+15550199999"]

    def run() -> tuple[int, str]:
        res = CliRunner().invoke(app, base)
        return res.exit_code, " ".join(res.stderr.split())

    code, err = run()
    assert code == 2 and "TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN are not set" in err, err
    monkeypatch.setenv("TWILIO_ACCOUNT_SID", "AC-secret-sid-value")
    code, err = run()
    assert code == 2 and "TWILIO_AUTH_TOKEN is not set" in err and "secret-sid" not in err
    monkeypatch.setenv("TWILIO_API_KEY_SECRET", "key-secret-value")
    code, err = run()
    assert code == 2 and "TWILIO_API_KEY_SID is not set" in err and "key-secret" not in err
    assert not out.exists()  # nothing was started
    assert missing_credentials({"TWILIO_ACCOUNT_SID": "AC1", "TWILIO_AUTH_TOKEN": "t"}) == []
    assert missing_credentials({"TWILIO_ACCOUNT_SID": "AC1", "TWILIO_API_KEY_SID": "SK1",
                                "TWILIO_API_KEY_SECRET": "s"}) == []
    # with credentials the check passes and the next one (no --twilio-from) speaks
    monkeypatch.setenv("TWILIO_API_KEY_SID", "SK1")
    res = CliRunner().invoke(app, base[:-2])
    assert res.exit_code == 2 and "--twilio-from" in res.stderr, res.stderr
    # the loopback Twilio path (no --twilio-to) needs no account
    import rig.calls.interviewer.service
    from rig.errors import RigError

    def reached(*a, **k):
        raise RigError("reached the campaign")

    monkeypatch.delenv("TWILIO_ACCOUNT_SID")
    monkeypatch.setattr(rig.campaign.runner, "run_campaign", reached)
    monkeypatch.setattr(rig.calls.interviewer.service, "quiet_logs", lambda *a: None)
    res = CliRunner().invoke(app, base[:-4])
    assert res.exit_code == 2 and "reached the campaign" in res.stderr, res.stderr


def test_packet_counts_name_their_unit():
    f = TransportFacts("twilio", "PCMU/8000", 10, 9, 0, 1.5, 3.0, 2, "caller",
                       "media_message")
    assert f.to_row()["transport_packet_unit"] == "media_message"


def _sim_row(**extra) -> dict:
    return {"campaign_id": "c", "call_id": "x", "answer_id": "a", "question_id": "q",
            "tier": "strong", "profile_id": "baseline", "repeat": 0, "seed": 0,
            "status": "ok", "parse_status": "ok", "score": 70.0, "truncated": False,
            "wer": 0.0, "pipeline_version": "v", **extra}


def test_simulated_rows_have_the_transport_columns_and_old_rows_read_as_sim(tmp_path):
    """Sim rows carry every transport column (transport 'sim', the facts null), so a sim and a
    real-transport campaign write the same columns; a row logged before the columns existed
    (resuming an older run, `rig campaign summarize`) is given them as a sim row."""
    from rig.campaign.call import with_transport_columns
    from rig.campaign.runner import write_outputs

    row = with_transport_columns(_sim_row())
    assert set(TRANSPORT_COLUMNS) <= set(row) and row["transport"] == "sim"
    assert all(row[c] is None for c in TRANSPORT_COLUMNS if c != "transport")
    assert with_transport_columns(_sim_row(transport="webrtc"))["transport"] == "webrtc"
    old = [_sim_row(), _sim_row(call_id="y", profile_id="p1", score=60.0)]
    write_outputs(tmp_path, old, campaign_id="c", version="v", baseline="baseline", n_boot=100)
    df = pd.read_parquet(tmp_path / "calls.parquet")
    assert set(TRANSPORT_COLUMNS) <= set(df.columns) and set(df["transport"]) == {"sim"}
    assert df["transport_packets_received"].isna().all()
    from rig.stats.rows import read_rows

    assert len(read_rows(tmp_path / "calls.parquet")) == 2
    # an older calls.parquet without the column: import-scores treats its calls as sim
    from typer.testing import CliRunner

    from rig.cli import app

    df.drop(columns=list(TRANSPORT_COLUMNS)).to_parquet(tmp_path / "calls.parquet")
    pd.DataFrame({"call_id": ["x"], "score": [65.0]}).to_csv(tmp_path / "ext.csv", index=False)
    res = CliRunner().invoke(app, ["interviewer", "import-scores", str(tmp_path),
                                   str(tmp_path / "ext.csv")])
    assert res.exit_code == 0, res.output
    assert set(pd.read_parquet(tmp_path / "external_scores.parquet")["transport"]) == {"sim"}


def test_a_media_streams_websocket_url_is_dialled_as_given():
    """``--interviewer-url ws://HOST:PORT/ws`` (pipecat's runner) is the stream's URL itself;
    an http URL is rig's interviewer, whose stream is at ``/twilio/media``."""
    from rig.calls.run.options import TransportOptions, transport_call_options
    from rig.calls.run.place import CallPlacing

    class Host(CallPlacing):
        transport = "twilio"

    params = {"call_id": "c", "question_ids": "q", "seed": "0", "attempt_id": "a"}
    assert Host()._link("ws://127.0.0.1:7860/ws", params).url == "ws://127.0.0.1:7860/ws"
    assert Host()._link("http://127.0.0.1:7860", params).url == (
        "ws://127.0.0.1:7860/twilio/media")
    opts = transport_call_options(TransportOptions(
        transport="twilio", interviewer_url="ws://127.0.0.1:7860/ws", score_source="rig"), {})
    assert opts["no_results_route"] == "ws://127.0.0.1:7860/ws"  # never asked for results


def test_a_media_streams_websocket_url_is_checked_whatever_the_schemes_case(monkeypatch):
    """``WS://`` is ``ws://`` (URL schemes ignore case): refused with webrtc and with only the
    interviewer's score, as the lower-case one is, and dialled as given (not as rig's
    interviewer, ``.../twilio/media``); a ws URL without a host, and a results token that a
    bare websocket never uses, are refused before any call."""
    from rig.calls.run.options import TransportOptions, transport_call_options
    from rig.errors import ConfigError

    monkeypatch.setenv("RIG_TEST_TOKEN", "x")
    for kw, text in (({"transport": "webrtc", "interviewer_url": "WS://127.0.0.1:9/ws"},
                      "it goes with --transport twilio"),
                     ({"transport": "twilio", "interviewer_url": "Wss://127.0.0.1:9/ws"},
                      "serves no results"),
                     ({"transport": "twilio", "interviewer_url": "ws://", "score_source": "rig"},
                      "--interviewer-url: a Media Streams websocket is ws://HOST:PORT/PATH"),
                     ({"transport": "twilio", "interviewer_url": "ws://[::1/ws",
                       "score_source": "rig"}, "ws://HOST:PORT/PATH"),
                     ({"transport": "twilio", "interviewer_url": "ws://127.0.0.1:9/ws",
                       "score_source": "rig", "results_token_env": "RIG_TEST_TOKEN"},
                      "--results-token-env RIG_TEST_TOKEN: a bare")):
        with pytest.raises(ConfigError, match=re.escape(text)):
            transport_call_options(TransportOptions(**kw))
    opts = transport_call_options(TransportOptions(
        transport="twilio", interviewer_url="WS://127.0.0.1:7860/ws", score_source="rig"), {})
    assert opts["interviewer_url"] == opts["no_results_route"] == "ws://127.0.0.1:7860/ws"


def test_answer_in_order_turns_off_question_matching_for_calls_to_a_bot():
    """``--answer-in-order``: the agent's settings say so (every question gets the next answer
    of the bank); only a call to a bot uses it, and the call limit combines with it."""
    from typer.testing import CliRunner

    from rig.calls.agent.brain import AgentAnswer, AgentBrain
    from rig.calls.run.options import TransportOptions, transport_call_options
    from rig.cli import app

    opts = transport_call_options(TransportOptions(
        transport="webrtc", interviewer_url="http://127.0.0.1:9", call_limit_s=30,
        answer_in_order=True), {})
    assert opts["agent"].match_questions is False and opts["agent"].time_limit_s == 30
    assert "agent" not in transport_call_options(TransportOptions(transport="webrtc"), {})
    res = CliRunner().invoke(app, ["campaign", "run", "--answers", "answer_bank/core",
                                   "--profiles", "profiles/demo", "--pipeline",
                                   "pipelines/reference.yaml", "--out", "/tmp/unused-rig-out",
                                   "--answer-in-order"])
    assert res.exit_code == 2 and "--answer-in-order needs a call to a bot" in res.stderr
    # what run_agent hands the brain without matching: no question texts, answers in order
    quiet = Audio(np.zeros(800, np.float32), 8000)
    answers = [AgentAnswer(q, quiet, 0.5, 0.0, 3.0, f"Tell me about {q}?") for q in "ab"]
    brain = AgentBrain(answers, 0.3, 6.0, 20.0, {})
    assert brain.questions == {}
    idx, sim, _ = brain._match("What would you like to talk about?", 1.0)
    assert idx == 0 and sim is None


def test_interviewer_url_keeps_a_media_stream_path_as_given(tmp_path):
    """An http interviewer's base URL loses its trailing slash (paths are joined to it); a
    bot's own Media Streams websocket is dialled exactly as given, trailing slash included."""
    from rig.calls.run.caller import TransportCaller

    def base(url):
        caller = TransportCaller("twilio", Path("answer_bank/core"), tmp_path,
                                 interviewer_url=url)
        return caller._ensure_interviewer(None, None)

    assert base("http://127.0.0.1:8770/") == "http://127.0.0.1:8770"
    assert base("ws://127.0.0.1:7860/ws/") == "ws://127.0.0.1:7860/ws/"
    assert base("WSS://bot.example/media/") == "WSS://bot.example/media/"


@pytest.mark.parametrize(("url", "problem"), [
    ("", "--interviewer-url: is empty: leave the option out to start rig's interviewer (got '')"),
    ("  ", "is empty"),
    (" ws://127.0.0.1:7860/ws", "a URL holds no spaces, tabs or line breaks (a copy-paste?) "
                                "(got ' ws://127.0.0.1:7860/ws')"),
    ("http://127.0.0.1:8770\n", "(got 'http://127.0.0.1:8770\\n')"),
    ("http://127.0.0.1:8770/a b", "no spaces"),
])
def test_an_empty_or_blank_holding_interviewer_url_is_refused_with_its_value(url, problem):
    """``--interviewer-url "$BOT_URL"`` with the variable unset must not start rig's own
    interviewer (the wrong one measured), and a pasted URL with a blank is named as given,
    before any model loads or call is placed."""
    from rig.calls.run.options import TransportOptions, transport_call_options
    from rig.errors import ConfigError

    for transport in ("webrtc", "twilio"):
        with pytest.raises(ConfigError, match=re.escape(problem)):
            transport_call_options(TransportOptions(transport=transport, interviewer_url=url,
                                                    score_source="rig"), {})
