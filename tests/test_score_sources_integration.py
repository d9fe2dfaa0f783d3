"""Score sources on real calls (Twilio Media Streams on loopback, the fastest link; every
stage real: hibari TTS, the caller agent's VAD and ASR, the reference interviewer on pipecat,
faster-whisper, the llama.cpp judge).

1. One real call to the loopback reference interviewer, scored as today (``interviewer``),
   captured, then graded again from its capture by each other source: an extractor reading
   the interviewer's final JSON message, the rig grading the interviewer's own transcript
   (``rig_grade_bot_transcript``) and the rig's own ASR of the interviewer-side audio
   (``rig:asr``: ``rig_grade_sent_audio``, the audio the rig sent: Twilio shows no bot
   input). Each row says which.
2. A campaign with ``interviewer_url`` (``--interviewer-url``) against a reference interviewer
   serving no results route, score sources ``interviewer,rig``: the first poll's 404 is taken
   as an answer (no 300 s wait), the row is the rig's grade, and the notice says why.

The real stages are built once for the module.

Two real-time calls of about 20 s each (one short answer, tests/data/calls_bank).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rig.calls.bots.score_sources import parse_score_sources
from rig.calls.run.caller import TransportCaller
from rig.campaign.runner import CampaignSpec, run_campaign

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "tests" / "data" / "calls_bank"


def spec(out: Path) -> CampaignSpec:
    return CampaignSpec(answers_path=BANK, profiles_path=ROOT / "profiles" / "demo",
                        pipeline_path=ROOT / "pipelines" / "reference.yaml", out_dir=out,
                        answer_ids=("qr_strong",), profile_ids=("baseline",), n_boot=100,
                        transport="twilio")


def rows(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "calls.jsonl").read_text().splitlines()]


def final_message_score(record):
    """An extractor: the score in the bot's last JSON message (the loopback reference
    interviewer's record of the call)."""
    for msg in reversed(record.messages):
        qs = msg.get("questions") if isinstance(msg, dict) else None
        if qs:
            return {"score": qs[-1]["score"], "reason": "final message"}
    return None


@pytest.fixture(scope="module")
def stages():
    """The real stages, built once for the module (the judge's grading cache is shared: an
    oracle or a transcript graded once is not graded again)."""
    from rig.pipeline import load_pipeline
    from rig.runtime import build_stages

    return build_stages(load_pipeline(ROOT / "pipelines" / "reference.yaml"))


@pytest.fixture(scope="module")
def graded(tmp_path_factory, stages) -> dict[str, dict]:
    """source -> the row of the same real call graded by it."""
    base = tmp_path_factory.mktemp("sources")
    out = base / "interviewer"
    with TransportCaller("twilio", BANK, out, keep_calls=True) as caller:
        run_campaign(spec(out), progress=False, call_fn=caller, stages=stages)
        captured = dict(caller.captured)
    got = {"interviewer": rows(out)[0]}
    for name, source, replay in (
            ("extractor", f"extractor:{__name__}:final_message_score", captured),
            ("rig_bot", "rig", captured), ("rig_asr", "rig:asr", captured)):
        o = base / name
        with TransportCaller("twilio", BANK, o, replay=replay,
                             score_sources=parse_score_sources(source)) as c:
            run_campaign(spec(o), progress=False, call_fn=c, stages=stages)
        got[name] = rows(o)[0]
    return got


def test_each_source_grades_the_same_call_and_the_row_says_which(graded):
    for name, r in graded.items():
        print(f"{name}: {r['score_source']} score {r['score']} transcript {r['transcript']!r}")
        assert r["status"] == "ok", (name, r["error"])
        assert r["score"] is not None and r["parse_status"] == "ok", name
    assert {n: r["score_source"] for n, r in graded.items()} == {
        "interviewer": "interviewer", "extractor": "extractor",
        "rig_bot": "rig_grade_bot_transcript", "rig_asr": "rig_grade_sent_audio"}
    assert len({r["call_id"] for r in graded.values()}) == 1  # one call, four gradings


def test_extractor_reads_the_interviewers_own_score(graded):
    assert graded["extractor"]["score"] == graded["interviewer"]["score"]
    assert graded["extractor"]["scorer_reason"] == "final message"


def test_rig_grades_what_the_bot_heard_and_what_its_own_asr_hears(graded):
    i, bot, asr = graded["interviewer"], graded["rig_bot"], graded["rig_asr"]
    # the bot's transcript, graded by the same (campaign) scorer: the interviewer's grade
    assert bot["transcript"] == i["transcript"] == bot["interviewer_heard"]
    assert bot["score"] == pytest.approx(i["score"], abs=1e-6)
    # the rig's ASR of the interviewer-side audio of the answer, up to the interviewer's
    # own turn close, hears the same answer
    assert asr["wer"] <= 0.2, asr["transcript"]
    assert asr["turn_close_s"] == pytest.approx(i["turn_close_s"])
    assert abs(asr["score"] - i["score"]) <= 25


def test_rows_record_what_the_bot_said_and_the_question_it_asked(graded):
    for r in graded.values():
        assert "most recent job" in r["question_asked"].lower(), r["question_asked"]
        assert r["question_match_similarity"] > 0.5
        assert "most recent job" in r["interviewer_said"].lower()


def test_no_results_route_is_learned_from_the_first_poll_and_the_rig_grades(tmp_path,
                                                                           stages):
    from rig.answers import load_bank
    from rig.calls.interviewer.results import ResultStore
    from rig.calls.interviewer.service import InterviewerService, ServiceThread
    from rig.calls.interviewer.session import InterviewerSettings, warm_tts
    from rig.pipeline import load_pipeline
    from rig.scorer.fake import FakeScorer

    bank = load_bank(BANK)
    warm_tts(InterviewerSettings(), bank.questions)
    # a bot that scores for itself (here: a fake judge) and serves no results route
    svc = InterviewerService(load_pipeline(ROOT / "pipelines" / "reference.yaml"), bank,
                             FakeScorer(), ResultStore(), results_route=False)
    out = tmp_path / "c"
    lines: list[str] = []
    with ServiceThread(svc.app()) as th, TransportCaller(
            "twilio", BANK, out, interviewer_url=th.url, result_timeout_s=120,
            score_sources=parse_score_sources("interviewer,rig"),
            progress=lines.append) as caller:
        run_campaign(spec(out), progress=False, call_fn=caller, stages=stages)
    notices = [x for x in lines if "has no results route" in x]
    assert len(notices) == 1 and "scores come from rig" in notices[0], lines
    assert not [x for x in lines if x.startswith("waiting")]  # the 404 was an answer
    (r,) = rows(out)
    assert r["status"] == "ok", r["error"]
    assert r["score_source"] == "rig_grade_sent_audio" and r["score"] is not None
    assert r["wer"] <= 0.2, r["transcript"]
    interview = json.loads((out / "recordings" / f"{r['call_id']}.interview.json").read_text())
    assert interview["no_results_route"].startswith(th.url + "/results/")
