"""K calls placed through a Twilio account at once share the agent's one media-stream server.

Twilio reaches the rig at one public ``stream_url``, so the agent's server listens on one
fixed port (``--agent-port``, 8770 by default) for every call in flight; each stream is handed
to the call whose ``call_id`` it carries. Twilio is emulated on loopback as in
test_calls_twilio_account_integration.py (its REST API and its two media-stream legs); the
interviewer,
the agent and the websockets are real. Three short calls at once: about a minute.
"""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from test_calls_twilio_account_integration import EmulatedTwilio  # Twilio's part, on loopback

from rig.answers import load_bank
from rig.calls.interviewer.results import ResultStore
from rig.calls.interviewer.service import InterviewerService, ServiceThread
from rig.calls.run.caller import TransportCaller
from rig.campaign.runner import CampaignSpec, OracleCache, plan_campaign
from rig.pipeline import load_pipeline, pipeline_version
from rig.profiles import load_profiles
from rig.scorer.factory import build_scorer
from rig.stages import Stages

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "tests" / "data" / "calls_bank"
K = 3


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_k_account_calls_at_once_share_one_stream_server_on_a_fixed_port(tmp_path,
                                                                         monkeypatch):
    monkeypatch.setenv("TWILIO_ACCOUNT_SID", "AC" + "1" * 32)
    monkeypatch.setenv("TWILIO_AUTH_TOKEN", "not-a-real-token")
    pipeline = load_pipeline(ROOT / "pipelines" / "reference.yaml")
    version = pipeline_version(pipeline)
    bank, profiles = load_bank(BANK), load_profiles(ROOT / "profiles" / "demo")
    stages = Stages(scorer=build_scorer(pipeline.scorer))
    spec = CampaignSpec(answers_path=BANK, profiles_path=ROOT / "profiles" / "demo",
                        pipeline_path=ROOT / "pipelines" / "reference.yaml",
                        out_dir=tmp_path / "c", profile_ids=("baseline",), transport="twilio")
    plan = plan_campaign(spec, bank, profiles, version, pipeline, 0.0).calls
    assert len(plan) == K
    oracle = OracleCache(tmp_path / "oracle.jsonl", stages.scorer, version)
    port = free_port()  # fixed for the campaign, as --agent-port is
    svc = InterviewerService(pipeline, bank, stages.scorer, ResultStore())
    with ServiceThread(svc.app()) as th:
        twilio = EmulatedTwilio(th.url.replace("http://", "ws://") + "/twilio/media")
        with TransportCaller("twilio", BANK, spec.out_dir, interviewer_url=th.url,
                             twilio_to="+15550100000", twilio_from="+15550199999",
                             agent_port=port, http_client=twilio) as caller:
            def place(c):
                return caller(question=c.question, answer=c.answer, profile=c.profile,
                              repeat=c.repeat, seed=c.seed, pipeline=pipeline,
                              pipeline_version=version, campaign_id="c", stages=stages,
                              oracle=oracle.get(c.question, c.answer, c.seed),
                              resolve_path=lambda rel, p=c.profile: profiles.resolve_path(
                                  p, rel))

            with ThreadPoolExecutor(K) as pool:
                rows = list(pool.map(place, plan))
    assert len(twilio.calls) == K  # K REST requests, all streamed to the one server
    placed = caller.placed
    assert max(p["started_epoch_s"] for p in placed) < min(p["ended_epoch_s"] for p in placed)
    for r in rows:
        assert r["status"] == "ok", r["error"]
        assert r["transport_packets_received"] > 50 and r["parse_status"] == "ok"
        assert r["wer"] <= 0.1
    assert {r["answer_id"] for r in rows} == {c.answer.answer_id for c in plan}
    print(f"account path, {K} at once on port {port}: "
          f"{[(r['answer_id'], round(r['wer'], 3)) for r in rows]}")
