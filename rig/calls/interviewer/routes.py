"""The interviewer service's call endpoints: one function per transport adds them to the app.

:func:`add_twilio_routes`: ``WS /twilio/media`` (a Twilio Media Streams websocket run through
pipecat's ``TwilioFrameSerializer``) and ``POST /twilio/voice`` (the voice webhook, answered
with TwiML ``<Connect><Stream>``). :func:`add_webrtc_routes`: ``POST /api/offer`` (signalling
for pipecat's ``SmallWebRTCTransport``). Each call runs its interview session through
``InterviewerService.run_pipeline``; :mod:`rig.calls.interviewer.service` describes every endpoint.

(FastAPI resolves endpoint annotations at import, so its names are imported at module level.)
"""

from __future__ import annotations

import asyncio
import json
import os
from urllib.parse import parse_qsl

from fastapi import FastAPI, HTTPException, Request, WebSocket
from fastapi.responses import JSONResponse, Response

from rig.calls.media import CALL_RATE_HZ
from rig.calls.transports.twilio import (
    parse_message,
    twiml_connect_stream,
    validate_signature,
)


def add_twilio_routes(app: FastAPI, service) -> None:
    """Add ``WS /twilio/media`` and ``POST /twilio/voice`` for ``service`` (an
    :class:`~rig.calls.interviewer.service.InterviewerService`: its sessions, pipeline and public
    URL)."""

    @app.websocket("/twilio/media")
    async def twilio_media(ws: WebSocket):
        from pipecat.serializers.twilio import TwilioFrameSerializer
        from pipecat.transports.websocket.fastapi import (
            FastAPIWebsocketParams,
            FastAPIWebsocketTransport,
        )

        await ws.accept()
        start = None
        while start is None:
            msg = parse_message(await ws.receive_text())
            if msg["event"] == "start":
                start = msg
        info = start["start"]
        serializer = TwilioFrameSerializer(
            stream_sid=start["streamSid"], call_sid=info.get("callSid"),
            params=TwilioFrameSerializer.InputParams(auto_hang_up=False))
        transport = FastAPIWebsocketTransport(ws, FastAPIWebsocketParams(
            audio_in_enabled=True, audio_out_enabled=True, add_wav_header=False,
            serializer=serializer, audio_in_sample_rate=CALL_RATE_HZ,
            audio_out_sample_rate=CALL_RATE_HZ))
        session = service.session(info.get("customParameters") or {}, "twilio")
        await service.run_pipeline(transport, session)

    @app.post("/twilio/voice")
    async def twilio_voice(request: Request):
        token = os.environ.get("TWILIO_AUTH_TOKEN")
        if not token:
            raise HTTPException(503, "TWILIO_AUTH_TOKEN is not set on the interviewer")
        # Twilio posts application/x-www-form-urlencoded (parsed here: no multipart dep)
        form = dict(parse_qsl((await request.body()).decode(), keep_blank_values=True))
        url = (service.public_url.rstrip("/") + request.url.path
               + (f"?{request.url.query}" if request.url.query else "")
               ) if service.public_url else str(request.url)
        if not validate_signature(url, form, request.headers.get("X-Twilio-Signature", ""),
                                  token):
            raise HTTPException(403, "invalid X-Twilio-Signature")
        base = service.public_url or f"{request.url.scheme}://{request.url.netloc}"
        ws_url = base.replace("https://", "wss://").replace("http://", "ws://")
        params = {k: request.query_params[k] for k in ("call_id", "question_ids", "seed",
                                                       "attempt_id")
                  if k in request.query_params}
        return Response(twiml_connect_stream(ws_url.rstrip("/") + "/twilio/media", params),
                        media_type="application/xml")


def add_webrtc_routes(app: FastAPI, service) -> None:
    """Add ``POST /api/offer`` for ``service`` (an
    :class:`~rig.calls.interviewer.service.InterviewerService`; its ``active`` holds the running
    calls)."""

    @app.post("/api/offer")
    async def offer(request: Request):
        from pipecat.transports.base_transport import TransportParams
        from pipecat.transports.smallwebrtc.connection import SmallWebRTCConnection
        from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport

        try:
            body = json.loads(await request.body())
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
            raise HTTPException(400, f"the offer is not JSON ({exc})") from None
        if not isinstance(body, dict) or "sdp" not in body or "type" not in body:
            raise HTTPException(422, "an offer needs 'sdp' and 'type'")
        try:  # before any connection is set up: a bad offer leaves nothing behind
            session = service.session(body, "webrtc")
        except (KeyError, ValueError, TypeError) as exc:
            raise HTTPException(422, f"offer: {exc}") from None
        conn = SmallWebRTCConnection(ice_servers=[])
        await conn.initialize(sdp=body["sdp"], type=body["type"])
        transport = SmallWebRTCTransport(conn, TransportParams(
            audio_in_enabled=True, audio_out_enabled=True,
            audio_in_sample_rate=CALL_RATE_HZ, audio_out_sample_rate=CALL_RATE_HZ))
        task = asyncio.ensure_future(service.run_pipeline(transport, session))
        service.active[session.call_id] = task
        task.add_done_callback(lambda _t, c=session.call_id: service.active.pop(c, None))
        return JSONResponse(conn.get_answer())
