"""WebRTC: the caller agent as an aiortc peer against pipecat's SmallWebRTC endpoint.

Signalling is one HTTP exchange (pipecat's SmallWebRTC convention): the agent POSTs its SDP
offer with the rig's call parameters as JSON ``{"sdp", "type", "call_id", "question_ids",
"seed", ..., "request_data": {the same parameters}}`` to the interviewer's ``/api/offer`` and
applies the SDP answer. The same body serves rig's own interviewer (which reads the top-level
fields) and pipecat's development runner (``pipecat.runner.run``: its ``SmallWebRTCRequest``
takes ``sdp``, ``type``, ``pc_id``, ``restart_pc`` and ``request_data``, ignores other fields,
and hands ``request_data`` to the bot as ``runner_args.body``), so a bot that was never written
for rig is called unchanged. Each peer gathers its own ICE candidates (host candidates in the
SDP; no trickle).

The agent opens a data channel before its offer. On it a pipecat bot's RTVI processor sends
what the bot said and heard (:mod:`rig.calls.bots.rtvi`); the agent announces itself with RTVI
``client-ready`` when the channel opens (bots that wait for it start then) and keeps every
message with its arrival time: :meth:`WebRTCLink.bot_record`. Media is Opus at
48 kHz over DTLS-SRTP (RFC 7874 requires Opus and G.711 for WebRTC audio; aiortc offers Opus
first). The agent's 20 ms 8 kHz frames go out through :class:`PcmTrack` (aiortc resamples and
encodes them); received audio frames are resampled to 8 kHz mono into the playout buffer.

Loss and jitter come from aiortc's RTCP receiver statistics (``RTCInboundRtpStreamStats``:
``packetsLost``; ``jitter`` in RTP timestamp units, converted to ms with the codec's clock
rate, RFC 3550 section 6.4.1).

ICE: aioice gathers no loopback candidates; on one host call
:func:`rig.calls.interviewer.service.restrict_ice_to` with ``127.0.0.1`` on both peers (tests do).
"""

from __future__ import annotations

import asyncio
import fractions
import json
import re
from collections.abc import Mapping

import numpy as np

from rig.calls.media import CALL_RATE_HZ, FRAME_SAMPLES, PlayoutBuffer


def _pcm_track_class():
    from aiortc.mediastreams import MediaStreamError, MediaStreamTrack

    class PcmTrack(MediaStreamTrack):
        """An outgoing audio track fed 20 ms frames of 8 kHz int16 PCM from a queue (the
        agent's clock paces it)."""

        kind = "audio"

        def __init__(self) -> None:
            super().__init__()
            self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
            self._pts = 0

        async def recv(self):
            import av

            pcm = await self.queue.get()
            if pcm is None:
                self.stop()
                raise MediaStreamError
            frame = av.AudioFrame.from_ndarray(np.frombuffer(pcm, np.int16).reshape(1, -1),
                                               format="s16", layout="mono")
            frame.sample_rate = CALL_RATE_HZ
            frame.pts = self._pts
            frame.time_base = fractions.Fraction(1, CALL_RATE_HZ)
            self._pts += FRAME_SAMPLES
            return frame

    return PcmTrack


def negotiated_codec(sdp: str) -> str:
    """The first audio codec of an SDP answer's ``m=audio`` line, as ``name/clockrate``
    (``opus/48000``), or ``unknown``."""
    m = re.search(r"^m=audio \d+ \S+ (\d+)", sdp, re.MULTILINE)
    if not m:
        return "unknown"
    r = re.search(rf"^a=rtpmap:{m.group(1)} ([^/\s]+)/(\d+)", sdp, re.MULTILINE)
    return f"{r.group(1)}/{r.group(2)}" if r else "unknown"


class WebRTCLink:
    """The caller agent's side of a WebRTC call (aiortc), one peer connection per call."""

    transport = "webrtc"

    def __init__(self, offer_url: str, params: Mapping[str, str],
                 connect_timeout_s: float = 60.0) -> None:
        self.offer_url, self.params = offer_url, dict(params)
        self.playout = PlayoutBuffer()
        self.closed = asyncio.Event()
        self.codec = "unknown"
        self.sent = 0
        self._timeout = connect_timeout_s
        self._pc = None
        self._out = None
        self._rx: asyncio.Task | None = None
        self._stats: dict | None = None
        self._t0: float | None = None
        self.messages: list[tuple[float, object]] = []  # (loop time, JSON message)

    async def connect(self) -> None:
        """Offer, answer, and wait until the peer connection is connected.

        Raises:
            ConnectionError: the interviewer refused the offer or ICE/DTLS did not complete.
        """
        import aiohttp
        from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription

        pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self._pc = pc
        self._out = _pcm_track_class()()
        pc.addTrack(self._out)
        connected = asyncio.Event()
        self._open_data_channel(pc)

        @pc.on("track")
        def _on_track(track) -> None:
            if track.kind == "audio":
                self._rx = asyncio.ensure_future(self._receive(track))

        @pc.on("connectionstatechange")
        async def _on_state() -> None:
            if pc.connectionState == "connected":
                connected.set()
            elif pc.connectionState in ("failed", "closed"):
                self.closed.set()
                connected.set()

        await pc.setLocalDescription(await pc.createOffer())
        body = self.offer_body(pc.localDescription.sdp, pc.localDescription.type)
        async with aiohttp.ClientSession(trust_env=False) as http, \
                http.post(self.offer_url, json=body) as r:
            if r.status != 200:
                raise ConnectionError(f"{self.offer_url}: offer refused, HTTP {r.status}: "
                                      f"{(await r.text())[:200]}")
            answer = await r.json()
        self.codec = negotiated_codec(answer["sdp"])
        await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"],
                                                            type=answer["type"]))
        try:
            await asyncio.wait_for(connected.wait(), self._timeout)
        except TimeoutError:
            raise ConnectionError(f"{self.offer_url}: WebRTC did not connect within "
                                  f"{self._timeout:g} s (ICE on loopback needs "
                                  "restrict_ice_to('127.0.0.1'))") from None
        if pc.connectionState != "connected":
            raise ConnectionError(f"{self.offer_url}: WebRTC connection {pc.connectionState}")
        self._t0 = asyncio.get_running_loop().time()  # the bot record's clock: from connected

    def offer_body(self, sdp: str, type_: str) -> dict:
        """The JSON body of the offer: the SDP, the call's parameters at the top level (rig's
        interviewer) and again as ``request_data`` (pipecat's runner: the bot's
        ``runner_args.body``)."""
        return {"sdp": sdp, "type": type_, **self.params, "request_data": dict(self.params)}

    def _open_data_channel(self, pc) -> None:
        from rig.calls.bots.rtvi import client_ready_message

        channel = pc.createDataChannel("rig", ordered=True)

        @channel.on("open")
        def _on_open() -> None:
            channel.send(json.dumps(client_ready_message()))

        @channel.on("message")
        def _on_message(message) -> None:
            t = asyncio.get_running_loop().time()  # loop time; from connected in bot_record
            try:
                self.messages.append((t, json.loads(message)))
            except (TypeError, ValueError):
                self.messages.append((t, {"raw": str(message)}))

    def bot_record(self):
        """What the bot said and heard, from its RTVI data-channel messages
        (:func:`rig.calls.bots.rtvi.bot_record`; times in seconds from the connection, as the
        caller agent's clock nearly is; messages before it are negative): a
        :class:`rig.calls.bots.record.BotRecord` whose ``said`` is empty when the bot sent no text
        (the caller fills it from its own ASR) and whose ``heard`` is empty when it sent no
        transcripts."""
        from rig.calls.bots.rtvi import bot_record

        t0 = self._t0 if self._t0 is not None else 0.0
        return bot_record([(t - t0, m) for t, m in self.messages])

    def local_ports(self) -> dict:
        """This call's own UDP ports: ``{"ice": [...]}``, the ports of the ICE host candidates
        its peer connection gathered (ephemeral, one set per call)."""
        ports: list[int] = []
        for t in self._pc.getTransceivers() if self._pc is not None else ():
            dtls = t.sender.transport
            if dtls is not None:
                ports += [c.port for c in dtls.transport.iceGatherer.getLocalCandidates()]
        return {"ice": sorted(set(ports))}

    async def _receive(self, track) -> None:
        import av
        from aiortc.mediastreams import MediaStreamError

        resampler = av.AudioResampler(format="s16", layout="mono", rate=CALL_RATE_HZ)
        try:
            while True:
                frame = await track.recv()
                for out in resampler.resample(frame):
                    self.playout.push(out.to_ndarray().astype(np.int16).tobytes())
        except MediaStreamError:
            pass
        finally:
            self.closed.set()

    async def send_frame(self, pcm: bytes) -> None:
        if self._out is not None and not self.closed.is_set():
            self._out.queue.put_nowait(pcm)
            self.sent += 1

    async def _snapshot(self) -> None:
        if self._pc is None or self._stats is not None:
            return
        lost, jitter, received, sent = None, None, 0, self.sent
        clock = int(self.codec.split("/")[1]) if "/" in self.codec else 48000
        for s in (await self._pc.getStats()).values():
            if s.type == "inbound-rtp":
                lost, received = s.packetsLost, s.packetsReceived
                jitter = s.jitter / clock * 1000.0
            elif s.type == "outbound-rtp":
                sent = s.packetsSent
        self._stats = {"codec": self.codec, "packet_unit": "rtp", "packets_sent": sent,
                       "packets_received": received, "packets_lost": lost, "jitter_ms": jitter}

    async def hangup(self) -> None:
        if self._pc is None:
            return
        await self._snapshot()
        await self._pc.close()
        if self._rx is not None:
            await asyncio.wait([self._rx], timeout=2.0)
        self.closed.set()

    async def stats(self) -> dict:
        await self._snapshot()
        return dict(self._stats or {})
