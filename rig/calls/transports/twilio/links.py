"""The rig's side of a Twilio media stream: on loopback, and behind a Twilio account.

On loopback, :class:`TwilioLoopbackLink` plays Twilio's part for the caller agent: it opens the
websocket to the interviewer (whose pipecat pipeline decodes it with ``TwilioFrameSerializer``)
and sends exactly what Twilio would. With an account, Twilio connects the answered call's audio
to :class:`AgentStreamServer`, and :class:`TwilioStreamLink` is the caller agent's side of it.
Both links receive with one loop (:class:`_MediaStreamLink`): ``media`` into the playout
buffer and the jitter meter (RFC 3550 6.4.1, media time = payload samples received so far),
the other events to the link.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping

from rig.calls.media import CALL_RATE_HZ, JitterMeter, PlayoutBuffer, now_s
from rig.calls.transports.twilio.stream import (
    CODEC,
    MediaStreamWriter,
    StreamIds,
    parse_message,
    payload_to_pcm,
    pcm_to_payload,
)


class _MediaStreamLink:
    """What both links share: the playout buffer, the jitter meter, the message counts, the
    receive loop and sending one 20 ms frame as a ``media`` message."""

    transport = "twilio"

    def __init__(self, ws=None) -> None:
        self._ws = ws
        self.playout = PlayoutBuffer()
        self.closed = asyncio.Event()
        self.jitter = JitterMeter()
        self.sent = 0
        self.received = 0
        self._media_s = 0.0

    async def _receive(self) -> None:
        """Read the websocket until it closes or :meth:`_on_event` says the stream ended."""
        import websockets

        try:
            async for raw in self._ws:
                msg = parse_message(raw)
                if msg["event"] == "media":
                    self._take_media(msg)
                elif await self._on_event(msg):
                    break
        except websockets.ConnectionClosed:
            pass
        finally:
            self.closed.set()

    def _take_media(self, msg: dict) -> None:
        """One ``media`` message into the playout buffer, the jitter meter (media time from the
        audio carried, RFC 3550 6.4.1) and the count of media messages received."""
        pcm = payload_to_pcm(msg["media"]["payload"])
        self.jitter.add(self._media_s, now_s())
        self._media_s += len(pcm) / 2 / CALL_RATE_HZ
        self.received += 1
        self.playout.push(pcm)

    async def _on_event(self, msg: dict) -> bool:
        """A message other than ``media``; True ends the stream."""
        return False

    def _media_message(self, pcm: bytes) -> dict:
        raise NotImplementedError

    async def send_frame(self, pcm: bytes) -> None:
        if self.closed.is_set() or self._ws is None:
            return
        import websockets

        message = self._media_message(pcm)
        try:
            await self._ws.send(json.dumps(message))
            self.sent += 1
        except websockets.ConnectionClosed:
            self.closed.set()

    def local_ports(self) -> dict:
        """This call's own socket: ``{"ws": port}``, the websocket's local TCP port."""
        addr = getattr(self._ws, "local_address", None)
        return {"ws": addr[1] if addr else None}

    async def stats(self) -> dict:
        return {"codec": CODEC.wire_name, "packet_unit": "media_message",
                "packets_sent": self.sent,
                "packets_received": self.received, "packets_lost": 0,
                "jitter_ms": self.jitter.jitter_ms}


class TwilioLoopbackLink(_MediaStreamLink):
    """The caller agent's side of a loopback Twilio call: plays Twilio's part of a media
    stream against a websocket server (the interviewer).

    Sends ``connected`` and ``start`` (with ``custom_parameters``: the rig's ``call_id``,
    ``question_ids``, ``seed``), one ``media`` message per 20 ms frame, and ``stop`` on hang-up;
    receives ``media`` (any length; mu-law decoded into the playout buffer), ``mark`` (echoed
    back, as Twilio does once the audio before it has played) and ``clear`` (empties the
    buffer). Jitter is measured on the received media (RFC 3550, media time = payload
    samples received so far).
    """

    def __init__(self, url: str, custom_parameters: Mapping[str, str]) -> None:
        super().__init__()
        self.url = url
        self.params = dict(custom_parameters)
        self.ids = StreamIds.new()
        self.writer = MediaStreamWriter(self.ids)
        self.marks: list[str] = []
        self._rx_task: asyncio.Task | None = None
        self._t_connect = 0.0

    async def connect(self) -> None:
        import websockets

        # proxy=None: a loopback or lab call never goes through an HTTP(S)_PROXY
        self._ws = await websockets.connect(self.url, max_size=2**22, proxy=None)
        self._t_connect = now_s()
        await self._ws.send(json.dumps(self.writer.connected()))
        await self._ws.send(json.dumps(self.writer.start(self.params)))
        self._rx_task = asyncio.ensure_future(self._receive())

    async def _on_event(self, msg: dict) -> bool:
        if msg["event"] == "mark":
            self.marks.append(msg["mark"].get("name", ""))
            await self._ws.send(json.dumps(self.writer.mark(msg["mark"].get("name", ""))))
        elif msg["event"] == "clear":
            self.playout.clear()
        return False

    def _media_message(self, pcm: bytes) -> dict:
        return self.writer.media(pcm, round((now_s() - self._t_connect) * 1000))

    async def hangup(self) -> None:
        import websockets

        if self._ws is not None:
            try:
                await self._ws.send(json.dumps(self.writer.stop()))
                await self._ws.close()
            except websockets.ConnectionClosed:
                pass
        if self._rx_task is not None:
            await asyncio.wait([self._rx_task], timeout=2.0)
        self.closed.set()


class TwilioStreamLink(_MediaStreamLink):
    """The caller agent's side of a call placed through a Twilio account: Twilio connected
    the answered call's audio to the rig's websocket (TwiML ``<Connect><Stream>``), so here
    the rig is the media-stream *server*. Received ``media`` (the called party: the
    interviewer) goes to the playout buffer; each agent frame goes out as a ``media``
    message with the ``streamSid``; ``stop`` or a closed socket ends the call; hanging up
    closes the socket (Twilio then moves past ``<Connect>`` and the call ends).
    """

    def __init__(self, ws, start: dict) -> None:
        super().__init__(ws)
        self.stream_sid = start["streamSid"]
        self.call_sid = start["start"].get("callSid")
        self.params = dict(start["start"].get("customParameters") or {})
        self.done = asyncio.Event()
        self._rx = asyncio.ensure_future(self._receive())

    async def _on_event(self, msg: dict) -> bool:
        return msg["event"] == "stop"

    def _media_message(self, pcm: bytes) -> dict:
        return {"event": "media", "streamSid": self.stream_sid,
                "media": {"payload": pcm_to_payload(pcm)}}

    async def hangup(self) -> None:
        import websockets

        with contextlib.suppress(websockets.ConnectionClosed):
            await self._ws.close()
        await asyncio.wait([self._rx], timeout=2.0)
        self.closed.set()
        self.done.set()


class AgentStreamServer:
    """The rig's media-stream websocket server for calls placed through a Twilio account.

    Twilio connects to ``ws://host:port`` (behind a public ``wss://`` URL), sends
    ``connected`` and ``start``; :meth:`accept` returns the link whose
    ``start.customParameters.call_id`` is the one asked for. Runs in the agent's event loop.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host, self.port = host, port
        self._server = None
        self._waiting: dict[str, asyncio.Future] = {}

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    async def start(self) -> AgentStreamServer:
        import websockets

        self._server = await websockets.serve(self._handle, self.host, self.port,
                                              max_size=2**22)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def _handle(self, ws) -> None:
        start = None
        async for raw in ws:
            msg = parse_message(raw)
            if msg["event"] == "start":
                start = msg
                break
        if start is None:
            return
        cid = str((start["start"].get("customParameters") or {}).get("call_id", ""))
        fut = self._waiting.get(cid)
        if fut is None or fut.done():
            await ws.close(code=1008, reason=f"no call {cid!r} is waiting")
            return
        link = TwilioStreamLink(ws, start)
        fut.set_result(link)
        await link.done.wait()  # the connection lives as long as this handler

    async def accept(self, call_id: str, timeout_s: float = 60.0) -> TwilioStreamLink:
        """Wait for Twilio's stream of ``call_id``.

        Raises:
            TimeoutError: no stream arrived in time.
        """
        fut = asyncio.get_running_loop().create_future()
        self._waiting[call_id] = fut
        try:
            return await asyncio.wait_for(fut, timeout_s)
        finally:
            self._waiting.pop(call_id, None)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


class SharedStreamServer:
    """One :class:`AgentStreamServer` for every call a campaign places through its Twilio
    account, in a background thread with its own event loop.

    Twilio reaches the rig at one public ``stream_url`` (one port behind it), so K calls in
    flight at once share the server, which hands each stream to the call whose ``call_id``
    it carries. A call's agent runs on the server's loop (:meth:`run`), where its stream's
    websocket lives.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        import threading

        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever,
                                        name="rig-agent-streams", daemon=True)
        self._thread.start()
        self.server = self.run(AgentStreamServer(host, port).start())

    def run(self, coro):
        """Run ``coro`` on the server's loop; block until it returns (its result or its
        exception)."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def close(self) -> None:
        if self._loop.is_closed():
            return
        with contextlib.suppress(Exception):
            self.run(self.server.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

