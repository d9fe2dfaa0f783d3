"""A pipecat bot that was never written for rig, called over WebRTC: the example interviewer
(examples/pipecat_interviewer/bot.py, unmodified) started as its own process with pipecat's
development runner the way its README says (``python bot.py -t webrtc --port P``, its LLM a
``llama_cpp.server``), and called with ``rig campaign run --transport webrtc
--interviewer-url http://127.0.0.1:P`` on one answer.

Every stage is real: the bot's Silero VAD, faster-whisper STT, OpenAI-compatible LLM and piper
TTS; SmallWebRTC (aiortc, Opus over DTLS-SRTP; each process gathers its own ICE candidates);
rig's caller agent (Silero VAD, faster-whisper, its brain) and rig's scorer grading what the
bot heard (the bot posts no score: ``--score-source rig``). What the bot said and heard comes
from its RTVI data-channel messages. About 1-2 minutes of real time for the call, plus the
servers' start (several minutes on a loaded 2-core machine).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pandas as pd
import pytest

from rig.answers import load_bank
from rig.asr.wer import wer

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]
BOT = ROOT / "examples" / "pipecat_interviewer" / "bot.py"
ANSWER_ID, QUESTION_ID = "q07_weak", "q07_improvement"  # the bank's shortest question/answer


@pytest.fixture(scope="module")
def bot_url(llama_server, tmp_path_factory):
    """The example bot under pipecat's development runner, its own process, on a free port."""
    from procs import free_port, served

    base, key = llama_server
    port = free_port()
    log_path = tmp_path_factory.mktemp("bot") / "bot.log"
    env = {**os.environ, "RIG_BOT_LLM_URL": base, "RIG_BOT_LLM_KEY": key}
    url = f"http://127.0.0.1:{port}"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def ready() -> bool:
        try:
            with opener.open(url + "/", timeout=5):
                return True
        except urllib.error.HTTPError as exc:  # the runner answers (404 without its web UI)
            exc.close()
            return True
        except OSError:
            return False

    with served([sys.executable, str(BOT), "-t", "webrtc", "--host", "127.0.0.1", "--port",
                 str(port)], log_path, ready, "the bot's runner", 180, env=env, cwd=ROOT):
        yield url, log_path


def test_an_unmodified_pipecat_bot_is_called_over_webrtc_and_the_row_says_what_it_said_and_heard(
        bot_url, tmp_path):
    url, bot_log = bot_url
    out = tmp_path / "c"
    cmd = [sys.executable, "-m", "rig.cli", "campaign", "run",
           "--answers", str(ROOT / "answer_bank" / "core"),
           "--profiles", str(ROOT / "profiles" / "demo"), "--profile", "baseline",
           "--answer-id", ANSWER_ID, "--pipeline", str(ROOT / "pipelines" / "reference.yaml"),
           "--transport", "webrtc", "--interviewer-url", url, "--score-source", "rig",
           "--result-wait-s", "5", "--n-boot", "200", "--no-progress", "--out", str(out)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=540, cwd=ROOT)
    assert run.returncode == 0, (run.stdout[-3000:] + run.stderr[-3000:]
                                 + "\nbot log:\n" + bot_log.read_text()[-3000:])
    (r,) = pd.read_parquet(out / "calls.parquet").to_dict("records")
    log = json.loads(Path(r["recording_path"]).with_suffix(".json").read_text())
    events = [(round(t, 2), k, d) for t, k, d in log["events"]]
    print("agent events:", *events, sep="\n  ")
    print({k: r[k] for k in ("interviewer_said", "interviewer_heard", "question_asked",
                             "score", "score_source", "transport_hung_up_by")})
    question = load_bank(ROOT / "answer_bank" / "core").question(QUESTION_ID)
    script = next(a for a in question.answers if a.answer_id == ANSWER_ID).clean_text

    # the call connected and the agent answered the bot's question, once, after it was asked
    assert r["status"] == "ok", r["error"]
    assert r["transport"] == "webrtc" and r["transport_codec"] == "opus/48000"
    assert [p["question_id"] for p in log["plays"]] == [QUESTION_ID], events
    # (before its words were transcribed when the utterance was as long as the question, else
    # after): not inside any utterance of the bot's, and its asked text is the question
    start = log["plays"][0]["start_epoch_s"] - log["t0_epoch_s"]
    assert not [(a, b) for a, b in log["utterances"] if a < start < b], (start, events)
    assert any(b <= start for _, b in log["utterances"]), events
    asked = log["plays"][0]["asked_text"].lower()
    assert asked.startswith("tell me about") and "initiative" in asked, events
    # the row records what the bot said (its RTVI text) and heard (its own STT)
    said = r["interviewer_said"] or ""
    assert "tell me about a time you noticed something at work" in said.lower(), said
    assert r["question_asked"] and r["question_match_similarity"] >= 0.3
    assert wer(script, r["interviewer_heard"] or "").wer < 0.3, r["interviewer_heard"]
    # what it heard, from its RTVI user-started/stopped-speaking messages (issue 27): it heard
    # the answer, and the turn ends where it took it (its user-stopped event before it
    # replied): no false truncation
    assert r["interviewer_heard_speech"] == True, r  # noqa: E712 - numpy bool
    assert r["turn_closed_by"] == "silence_timeout" and r["words_lost"] == 0, r
    # every decision of the agent's is in the report's drill-down of the call
    assert "Agent events (" in (out / "report.html").read_text(encoding="utf-8")
    # graded by rig on the bot's transcript (the bot posts no score), and labelled so
    assert r["score_source"] == "rig_grade_bot_transcript" and r["score"] is not None
    # the call ended on the bot's goodbye, or at the agent's limit if the bot's LLM is slow
    assert r["transport_hung_up_by"] in ("caller", "interviewer", "caller_time_limit")
    if r["transport_hung_up_by"] != "caller_time_limit":
        assert "goodbye" in said.lower()
