"""The path of a call placed through a Twilio account, with Twilio emulated on loopback.

The rig places the call with the REST API (the ``twilio`` package, with an HTTP client that
stands in for api.twilio.com); "Twilio" reads the TwiML ``<Connect><Stream>`` from the
request, connects to the rig's media-stream server (the caller agent's side) and to the
reference interviewer's ``/twilio/media`` (pipecat's TwilioFrameSerializer), sending each
``connected`` and ``start`` with the custom parameters, and bridges the two legs' ``media``
both ways (mu-law, 20 ms), as a real call between two Media Streams would. Everything else is
real: the campaign, the agent's media-stream server, the interviewer (VAD, ASR, scorer) as a
separate service whose result the campaign fetches by call id, the websockets. About 40 s.
"""

from __future__ import annotations

import asyncio
import json
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest

from rig.answers import load_bank
from rig.calls.interviewer.results import ResultStore
from rig.calls.interviewer.service import InterviewerService, ServiceThread
from rig.calls.run.caller import TransportCaller
from rig.calls.transports.twilio import MediaStreamWriter, StreamIds, parse_message
from rig.campaign.runner import CampaignSpec, run_campaign
from rig.pipeline import load_pipeline
from rig.scorer.factory import build_scorer

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]


class EmulatedTwilio:
    """An HTTP client for the twilio package: ``POST .../Calls.json`` "answers" the call by
    bridging the TwiML's stream to the interviewer's media-stream endpoint."""

    def __init__(self, interviewer_ws: str) -> None:
        self.interviewer_ws = interviewer_ws
        self.is_async = False
        self.last_response = None
        self.threads: list[threading.Thread] = []
        self.calls: list[dict] = []

    def request(self, method, uri, params=None, data=None, headers=None, auth=None,
                timeout=None, allow_redirects=False):
        from twilio.http.response import Response

        assert method == "POST" and uri.endswith("/Calls.json")
        self.calls.append(data)
        stream = ET.fromstring(data["Twiml"]).find("./Connect/Stream")
        custom = {p.get("name"): p.get("value") for p in stream}
        t = threading.Thread(target=lambda: asyncio.run(self._bridge(stream.get("url"), custom)),
                             daemon=True)
        t.start()
        self.threads.append(t)
        self.last_response = Response(201, json.dumps({"sid": "CAemulated"}))
        return self.last_response

    async def _bridge(self, agent_url: str, custom: dict) -> None:
        import websockets

        legs = []
        for url in (agent_url, self.interviewer_ws):
            ws = await websockets.connect(url, proxy=None)
            w = MediaStreamWriter(StreamIds.new())
            await ws.send(json.dumps(w.connected()))
            await ws.send(json.dumps(w.start(custom)))
            legs.append((ws, w))

        async def pump(src, dst) -> None:
            (ws_in, _), (ws_out, w_out) = src, dst
            try:
                async for raw in ws_in:
                    msg = parse_message(raw)
                    if msg["event"] == "media":
                        out = w_out.media(b"", 0)
                        out["media"]["payload"] = msg["media"]["payload"]
                        await ws_out.send(json.dumps(out))
            except websockets.ConnectionClosed:
                pass
            finally:  # one leg hung up: Twilio stops the other stream
                try:
                    await ws_out.send(json.dumps(w_out.stop()))
                    await ws_out.close()
                except websockets.ConnectionClosed:
                    pass

        await asyncio.gather(pump(legs[0], legs[1]), pump(legs[1], legs[0]))


def test_a_call_placed_through_the_rest_api_reaches_the_interviewer(tmp_path, monkeypatch):
    monkeypatch.setenv("TWILIO_ACCOUNT_SID", "AC" + "1" * 32)
    monkeypatch.setenv("TWILIO_AUTH_TOKEN", "not-a-real-token")
    pipeline = load_pipeline(ROOT / "pipelines" / "reference.yaml")
    bank_path = ROOT / "tests" / "data" / "calls_bank"
    svc = InterviewerService(pipeline, load_bank(bank_path), build_scorer(pipeline.scorer),
                             ResultStore())
    out = tmp_path / "c"
    spec = CampaignSpec(answers_path=bank_path, profiles_path=ROOT / "profiles" / "demo",
                        pipeline_path=ROOT / "pipelines" / "reference.yaml", out_dir=out,
                        answer_ids=("qr_strong",), profile_ids=("baseline",), n_boot=200,
                        transport="twilio")
    with ServiceThread(svc.app()) as th:  # the interviewer, reached only through "Twilio"
        twilio = EmulatedTwilio(th.url.replace("http://", "ws://") + "/twilio/media")
        with TransportCaller("twilio", bank_path, out, interviewer_url=th.url,
                             twilio_to="+15550100000", twilio_from="+15550199999",
                             http_client=twilio) as caller:
            run_campaign(spec, progress=False, call_fn=caller)
    assert len(twilio.calls) == 1  # one REST request: the call placed
    r = pd.read_parquet(out / "calls.parquet").iloc[0]
    assert r["status"] == "ok", r["error"]
    assert r["transport"] == "twilio" and r["transport_codec"] == "PCMU/8000"
    assert r["transport_packets_received"] > 50 and r["repeat_requests"] == 0
    print(f"twilio account path: wer {r['wer']:.3f}: {r['transcript']!r}")
    assert r["wer"] <= 0.1 and r["parse_status"] == "ok" and not r["truncated"]
