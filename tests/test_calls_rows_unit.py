"""Rows of real-transport campaigns without a real call: the campaign's TransportCaller with
the call itself (the agent on a link) replaced by a fake, its interviewer result store filled
by the test. Checks the row schema against a simulated campaign's, the two delays, the stage
times, the interviewer's error on a failed call, credential scrubbing, the CLI's refusal of
options a transport does not use, and the talkspurt underrun count."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from rig.audio import Audio
from rig.calls.agent.loop import AgentResult, AnswerPlay
from rig.calls.interviewer.results import ResultStore
from rig.calls.media import FRAME_BYTES, PlayoutBuffer
from rig.calls.run.call_row import interviewer_gap_s
from rig.calls.run.caller import TransportCaller
from rig.calls.transports.twilio import TwilioCredentials, place_call, scrub_credentials
from rig.campaign.call import ROW_TYPES, TRANSPORT_COLUMNS
from rig.campaign.runner import CampaignSpec, run_campaign
from rig.scorer.fake import FakeScorer
from rig.stages import Stages
from rig.synth.base import RenderedAnswer, WordTiming

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "tests" / "data" / "calls_bank"
SR = 8000


def fake_render(script, profile, seed, *, answer_id="", resolve_path=None, cache_dir=None):
    from rig.script import reference_text

    words, t = [], profile.response_delay_s
    for w in reference_text(script).split():
        words.append(WordTiming(w, t, t + 0.25))
        t += 0.3
    audio = Audio(np.zeros(int((t + 1) * SR), np.float32), SR)
    return RenderedAnswer(audio=audio, words=tuple(words), speech_start_s=words[0].start_s,
                          speech_end_s=t, snr_db_measured=None, engine="fake", voice_id="x",
                          render_key="fake", engine_version="fake 1", rate=1.0,
                          wpm_measured=None, pauses_total_s=0.0)


def sim_stages() -> Stages:
    from rig.asr.whisper import Transcript
    from rig.vad import TurnResult

    return Stages(scorer=FakeScorer(), render=fake_render, caller_channel=lambda a, c, s: a,
                  telephony=lambda a, sr, codec: a,
                  detect_turn=lambda a, p: TurnResult(0.5, a.duration_s, "silence_timeout", ()),
                  transcribe=lambda a, o: Transcript("I was a shift lead", -0.2, 0.01, 1.0),
                  content_similarity=lambda ref, hyp: len(hyp.split()) / len(ref.split()))


def spec(out: Path, transport: str) -> CampaignSpec:
    return CampaignSpec(answers_path=BANK, profiles_path=ROOT / "profiles" / "demo",
                        pipeline_path=ROOT / "pipelines" / "reference.yaml", out_dir=out,
                        answer_ids=("qr_strong",), profile_ids=("baseline",), n_boot=100,
                        transport=transport)


def agent_result(t0: float, plays=(), utterances=()) -> AgentResult:
    silence = Audio(np.zeros(SR, np.float32), SR)
    return AgentResult(t0, 12.0, tuple(plays), 0, ((1.5, "What was your most recent job?"),),
                       (), "interviewer", silence, silence, 3, tuple(utterances), 400)


def question_result(qid: str, t0: float, **kw) -> dict:
    q = {"question_id": qid, "question_end_epoch_s": t0 + 1.8, "prompt_end_epoch_s": t0 + 1.8,
         "turn_speech_start_epoch_s": t0 + 2.45, "turn_close_epoch_s": t0 + 9.0,
         "turn_closed_by": "silence_timeout", "transcript": "I was a shift lead at a grocery "
         "store for two years", "asr_avg_logprob": -0.3, "asr_no_speech_prob": 0.01,
         "repeat_requests": 0, "attempts": ["x"], "score": 70.0, "parse_status": "ok",
         "scorer_raw": "{}", "scorer_reason": None, "scorer_error": None, "seed": 0,
         "t_asr_s": 3.6, "t_scorer_s": 48.9}
    q.update(kw)
    return q


def fake_caller(out: Path, place) -> TransportCaller:
    """A TransportCaller whose calls are ``place(params) -> (AgentResult, stats)`` (or raise)
    and whose interviewer is its result store."""
    caller = TransportCaller("webrtc", BANK, out, result_timeout_s=2.0)
    caller._thread = SimpleNamespace(url="http://127.0.0.1:9", stop=lambda: None)
    caller.store = ResultStore()

    async def _place(base, params, answer):
        return place(params)

    caller._place = _place
    return caller


STATS = {"codec": "opus/48000", "packet_unit": "rtp", "packets_sent": 600,
         "packets_received": 590, "packets_lost": 0, "jitter_ms": 1.5}


def ok_place(store_of):
    def place(params):
        import time

        t0 = time.time() - 20
        res = agent_result(t0, [AnswerPlay(params["question_ids"], t0 + 2.3, t0 + 1.8, False)],
                           [(0.2, 1.8)])
        store_of().put({"call_id": params["call_id"], "attempt_id": params["attempt_id"],
                        "status": "ok", "error": None,
                        "questions": [question_result(params["question_ids"], t0)]})
        return res, STATS
    return place


def test_sim_and_real_campaign_parquets_have_one_schema_and_read_together(tmp_path):
    """The transport columns are null on a simulated row: calls.parquet still types them, so
    a simulated and a real campaign's files have the same Arrow schema and read together."""
    sim_out, real_out = tmp_path / "sim", tmp_path / "web"
    run_campaign(spec(sim_out, "sim"), stages=sim_stages(), progress=False)
    holder: dict = {}
    caller_place = ok_place(lambda: holder["caller"].store)

    with fake_caller(real_out, caller_place) as caller:
        holder["caller"] = caller
        run_campaign(spec(real_out, "webrtc"), stages=sim_stages(), progress=False,
                     call_fn=caller)
    real = pd.read_parquet(real_out / "calls.parquet").iloc[0]
    assert real["status"] == "ok", real["error"]
    s_schema = pq.read_schema(sim_out / "calls.parquet")
    r_schema = pq.read_schema(real_out / "calls.parquet")
    assert {f.name: f.type for f in s_schema} == {f.name: f.type for f in r_schema}
    assert not [f.name for f in s_schema if str(f.type) == "null"]
    assert set(TRANSPORT_COLUMNS) <= set(ROW_TYPES) and set(s_schema.names) <= set(ROW_TYPES)
    files = [str(sim_out / "calls.parquet"), str(real_out / "calls.parquet")]
    import pyarrow.dataset as ds

    both = ds.dataset(files, format="parquet").to_table().to_pandas()
    assert sorted(both["transport"]) == ["sim", "webrtc"]
    assert both["transport_packets_sent"].notna().sum() == 1
    duckdb = pytest.importorskip("duckdb")
    got = duckdb.sql(f"select transport, transport_packets_sent, response_delay_measured_s "
                     f"from read_parquet({files}) order by transport").fetchall()
    assert got[0][0] == "sim" and got[0][1] is None and got[0][2] is None
    assert got[1][:2] == ("webrtc", 600) and got[1][2] == pytest.approx(0.5)


def test_a_real_row_has_the_agents_delay_the_interviewers_gap_and_its_stage_times(tmp_path):
    holder: dict = {}
    with fake_caller(tmp_path / "c", ok_place(lambda: holder["c"].store)) as caller:
        holder["c"] = caller
        run_campaign(spec(tmp_path / "c", "webrtc"), stages=sim_stages(), progress=False,
                     call_fn=caller)
    r = pd.read_parquet(tmp_path / "c" / "calls.parquet").iloc[0]
    assert r["status"] == "ok", r["error"]
    # the agent heard the question end at 1.8 s and started at 2.3 s: the profile's 0.5 s
    assert r["response_delay_measured_s"] == pytest.approx(0.5)
    # the interviewer: prompt end 1.8 s after t0, answer detected at 2.45 s
    assert r["interviewer_gap_s"] == pytest.approx(0.65)
    # stage times are the interviewer's, not the near-zero time of reading its result
    assert r["t_asr_s"] == 3.6 and r["t_scorer_s"] == 48.9 and pd.isna(r["t_vad_s"])
    assert r["transport_underruns"] == 3
    # content similarity of the interviewer's transcript to the script, by the campaign's stage
    heard = "I was a shift lead at a grocery store for two years"
    assert r["content_similarity"] == pytest.approx(len(heard.split()) / len(r["script"].split()))
    rec = json.loads(Path(r["recording_path"]).with_suffix(".json").read_text())
    assert rec["empty_ticks"] == 400 and rec["utterances"] == [[0.2, 1.8]]


def test_the_agents_delay_is_on_its_own_clock_and_negative_on_a_barge_in():
    t0 = 1000.0
    plays = [AnswerPlay("q", t0 + 5.0, t0 + 4.5, False)]
    # a pause inside the question: the last utterance before the answer is its end
    assert agent_result(t0, plays, [(1.0, 2.0), (2.4, 4.5)]).response_delay_s == \
        pytest.approx(0.5)
    # barge-in: the answer started inside the question, 1.2 s before its end
    barge = [AnswerPlay("q", t0 + 3.3, t0 + 3.3, False)]
    assert agent_result(t0, barge, [(1.0, 4.5)]).response_delay_s == pytest.approx(-1.2)
    assert agent_result(t0, [], [(1.0, 4.5)]).response_delay_s is None
    assert agent_result(t0, plays, []).response_delay_s is None
    assert interviewer_gap_s({"prompt_end_epoch_s": 10.0,
                              "turn_speech_start_epoch_s": 10.7}) == pytest.approx(0.7)
    assert interviewer_gap_s({"prompt_end_epoch_s": 10.0,
                              "turn_speech_start_epoch_s": None}) is None
    assert interviewer_gap_s(None) is None


def test_a_call_the_agent_never_answered_carries_the_interviewers_error(tmp_path):
    """The interviewer failed (a bogus TTS voice): the agent heard nothing and never answered,
    and the row says why from the interviewer's result, not only that nobody answered."""
    holder: dict = {}

    def place(params):
        holder["c"].store.put({"call_id": params["call_id"], "attempt_id": params["attempt_id"],
                               "status": "error", "questions": [],
                               "error": "ValueError: no synthesis engine 'bogus'"})
        r = agent_result(1000.0)
        return AgentResult(r.t0_epoch_s, r.duration_s, (), 0, (), (), "interviewer", r.sent,
                           r.received, 0), STATS

    with fake_caller(tmp_path / "c", place) as caller:
        holder["c"] = caller
        run_campaign(spec(tmp_path / "c", "webrtc"), stages=sim_stages(), progress=False,
                     call_fn=caller)
    r = pd.read_parquet(tmp_path / "c" / "calls.parquet").iloc[0]
    assert r["status"] == "error"
    assert "never answered" in r["error"]
    assert "interviewer: error: ValueError: no synthesis engine 'bogus'" in r["error"]
    assert r["interviewer_status"] == "error"


def test_a_call_that_could_not_connect_carries_the_interviewers_error_scrubbed(
        tmp_path, monkeypatch):
    monkeypatch.setenv("TWILIO_ACCOUNT_SID", "ACsecretsid123")
    holder: dict = {}

    def place(params):
        holder["c"].store.put({"call_id": params["call_id"], "attempt_id": params["attempt_id"],
                               "status": "hung_up", "questions": [],
                               "error": "the call ended before the interview did"})
        raise ConnectionError("Max retries exceeded with url: /2010-04-01/Accounts/"
                              "ACsecretsid123/Calls.json")

    with fake_caller(tmp_path / "c", place) as caller:
        holder["c"] = caller
        run_campaign(spec(tmp_path / "c", "webrtc"), stages=sim_stages(), progress=False,
                     call_fn=caller)
    r = pd.read_parquet(tmp_path / "c" / "calls.parquet").iloc[0]
    assert "ConnectionError: Max retries" in r["error"]
    assert "; interviewer: hung_up: the call ended before the interview did" in r["error"]
    assert "secretsid" not in r["error"] and "secretsid" not in r["traceback"]
    assert "/Accounts/***/Calls.json" in r["error"]


def test_twilio_rest_errors_never_show_the_account_or_secrets():
    env = {"TWILIO_ACCOUNT_SID": "AC" + "ab" * 16, "TWILIO_AUTH_TOKEN": "tok-s3cret"}
    text = (f"POST https://api.twilio.com/2010-04-01/Accounts/{env['TWILIO_ACCOUNT_SID']}/"
            "Calls.json failed, auth tok-s3cret, key SK" + "0" * 32)
    clean = scrub_credentials(text, env)
    assert "abab" not in clean and "s3cret" not in clean and "SK000" not in clean
    assert "/Accounts/***/Calls.json" in clean
    assert scrub_credentials("/Accounts/ACshort/Calls.json", {}) == "/Accounts/***/Calls.json"

    class Refusing:
        is_async = False
        last_response = None

        def request(self, method, uri, **kw):
            from twilio.http.response import Response

            self.last_response = Response(401, json.dumps(
                {"code": 20003, "message": "Authenticate", "status": 401}))
            return self.last_response

    from rig.calls.transports.twilio import TwilioRestError

    with pytest.raises(TwilioRestError) as err:
        place_call(to="+15551230000", from_="+15559870000", stream_url="wss://rig.example/m",
                   parameters={"call_id": "c"}, http_client=Refusing(),
                   credentials=TwilioCredentials.from_env(env))
    assert "HTTP 401" in str(err.value) and "abab" not in str(err.value)
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_stream_urls_twilio_cannot_reach_are_refused():
    from rig.calls.transports.twilio import stream_url_problem

    assert stream_url_problem("wss://rig.example.org/twilio") is None
    assert stream_url_problem("wss://8.8.8.8:8443") is None
    for bad in ("ws://rig.example.org", "ws://0.0.0.0:8770", "wss://0.0.0.0:8770",
                "wss://127.0.0.1:8770", "wss://localhost", "wss://10.1.2.3", "wss://[::1]:1",
                "https://rig.example.org", "wss://"):
        assert stream_url_problem(bad), bad


BASE = ["campaign", "run", "--answers", "answer_bank/core", "--profiles", "profiles/demo",
        "--pipeline", "pipelines/reference.yaml"]


@pytest.mark.parametrize("extra, says", [
    (["--stream-url", "wss://x.example"], "--stream-url needs --transport twilio; "
     "--transport sim does not use it"),
    (["--twilio-from", "+1555"], "--twilio-from needs --transport twilio; --transport sim"),
    (["--agent-port", "9999"], "--agent-port needs --transport twilio; --transport sim"),
    (["--interviewer-url", "http://127.0.0.1:9"], "--interviewer-url needs a real --transport"),
    (["--transport", "webrtc", "--twilio-from", "+1555", "--stream-url", "wss://x.example"],
     "--twilio-from needs --transport twilio; --transport webrtc does not use it"),
    (["--transport", "twilio", "--stream-url", "wss://x.example"],
     "--stream-url needs --twilio-to; without it --transport twilio does not use it"),
    (["--transport", "twilio", "--agent-port", "9999"], "--agent-port needs --twilio-to"),
    (["--transport", "sip", "--results-token-env", "T"],
     "--results-token-env needs --interviewer-url"),
    (["--transport", "twilio", "--twilio-to", "+15550100000", "--twilio-from", "+1555"],
     "--twilio-to needs --stream-url"),
    (["--transport", "twilio", "--twilio-to", "+15550100000", "--twilio-from", "+1555",
      "--stream-url", "ws://0.0.0.0:8770"], "--stream-url: Twilio connects media streams to "
     "wss:// URLs only"),
    (["--transport", "twilio", "--twilio-to", "+15550100000", "--twilio-from", "+1555",
      "--stream-url", "wss://127.0.0.1:8770"], "--stream-url: 127.0.0.1 is not a public"),
    (["--transport", "twilio", "--twilio-to", "+15550100000", "--twilio-from", "+1555",
      "--stream-url", "wss://user:hunter22@127.0.0.1/s"], "(got 'wss://***@127.0.0.1/s')"),
    (["--transport", "webrtc", "--interviewer-url", "http://127.0.0.1:9",
      "--results-token-env", "RIG_SURELY_UNSET_TOKEN"],
     "--results-token-env: the environment variable RIG_SURELY_UNSET_TOKEN is not set"),
])
def test_options_a_transport_does_not_use_exit_2_before_anything_runs(tmp_path, monkeypatch,
                                                                       extra, says):
    from typer.testing import CliRunner

    import rig.campaign.runner
    from rig.cli import app

    def must_not_run(*a, **k):
        raise AssertionError("the campaign started")

    monkeypatch.setattr(rig.campaign.runner, "run_campaign", must_not_run)
    monkeypatch.setenv("TWILIO_ACCOUNT_SID", "AC" + "1" * 32)
    monkeypatch.setenv("TWILIO_AUTH_TOKEN", "not-a-token")
    out = tmp_path / "c"
    res = CliRunner().invoke(app, [*BASE, "--out", str(out), *extra])
    err = " ".join(res.stderr.split())
    assert res.exit_code == 2 and says in err, err
    assert not out.exists()


def test_underruns_count_stalls_inside_a_talkspurt_not_a_senders_silence():
    speech = (np.ones(160, np.int16) * 3000).tobytes()
    p = PlayoutBuffer()
    for _ in range(5):  # before any audio: the call has not started talking
        p.read_frame()
    p.push(speech * 2)
    p.read_frame(), p.read_frame()
    for _ in range(3):  # a 60 ms stall mid-utterance...
        assert p.read_frame() == bytes(FRAME_BYTES)
    p.push(speech)  # ...and the audio comes back: 3 underruns
    assert p.talkspurt_underruns == 3
    p.read_frame()
    for _ in range(100):  # 2 s of a sender sending nothing while silent (pipecat to Twilio)
        p.read_frame()
    p.push(speech)
    assert p.talkspurt_underruns == 3  # the silence between utterances is not an underrun
    assert p.underruns == 5 + 3 + 100  # every padded tick
    p.read_frame()
    p.push(speech * 3)
    p.clear()  # a Media Streams clear drops the audio, not the counts
    assert p.buffered_s == 0 and p.talkspurt_underruns == 3


def test_a_campaign_whose_calls_all_failed_has_every_column_typed_and_in_order(tmp_path):
    """Failed rows lack the measured columns: calls.parquet adds them as typed nulls, in the
    same order as a full row's file, so the two files still read together."""
    from rig.campaign.store import write_parquet

    sim_out = tmp_path / "sim"
    run_campaign(spec(sim_out, "sim"), stages=sim_stages(), progress=False)
    failed = write_parquet([{"call_id": "x", "transport": "webrtc", "status": "error",
                             "error": "RuntimeError: no interviewer", "traceback": "..."}],
                           tmp_path / "failed.parquet", types=ROW_TYPES)
    s_schema, f_schema = pq.read_schema(sim_out / "calls.parquet"), pq.read_schema(failed)
    assert list(f_schema.names) == list(ROW_TYPES)
    assert [(f.name, f.type) for f in s_schema] == [(f.name, f.type) for f in f_schema]
    duckdb = pytest.importorskip("duckdb")
    files = [str(sim_out / "calls.parquet"), str(failed)]
    ((n, mean_wer),) = duckdb.sql(f"select count(*), avg(wer) from read_parquet({files})"
                                  ).fetchall()
    assert n == len(pd.read_parquet(sim_out / "calls.parquet")) + 1 and mean_wer is not None


@pytest.mark.parametrize("url", ["wss://100.64.0.1/s", "wss://127.1/s", "wss://2130706433/s",
                                 "wss://localhost./s", "wss://example.com:99999/s",
                                 "wss://10.1/s"])
def test_stream_urls_in_shared_short_or_numeric_forms_are_refused(url):
    from rig.calls.transports.twilio import stream_url_problem

    assert stream_url_problem(url)
    assert stream_url_problem("wss://8.8.8.8:443/s") is None
