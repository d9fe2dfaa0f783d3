"""Twilio: Media Streams messages, TwiML, REST call placement, webhook signatures.

Media Streams (Twilio docs, "Media Streams - WebSocket Messages"): over one websocket, Twilio
sends JSON text messages ``connected`` (``protocol``, ``version``), ``start`` (``streamSid``,
``start.callSid``, ``start.accountSid``, ``start.tracks``, ``start.customParameters``,
``start.mediaFormat`` = ``{"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}``),
``media`` (``media.track``, ``media.chunk``, ``media.timestamp`` in ms from the stream start,
``media.payload`` = base64 of mu-law bytes), ``mark`` (``mark.name``, echoed when audio sent
before it has played) and ``stop``; every message after ``connected`` has a
``sequenceNumber`` (a string) and the ``streamSid``. The server sends back ``media`` (payload
only), ``mark`` and ``clear``. Audio is G.711 mu-law, 8 kHz, mono: 160 bytes per 20 ms
(ITU-T G.711; rig's codec in :mod:`rig.channel.g711`).

On loopback, :class:`TwilioLoopbackLink` plays Twilio's part for the caller agent: it opens the
websocket to the interviewer (whose pipecat pipeline decodes it with ``TwilioFrameSerializer``)
and sends exactly what Twilio would. With an account, :func:`place_call` creates the call with
the REST API and TwiML ``<Connect><Stream>`` (:func:`twiml_connect_stream`).

Credentials come from the environment only (``TWILIO_ACCOUNT_SID`` with
``TWILIO_AUTH_TOKEN``, or ``TWILIO_API_KEY_SID`` with ``TWILIO_API_KEY_SECRET``) and are never
logged or written. Webhooks are checked with :func:`validate_signature` (``X-Twilio-Signature``,
Twilio docs "Webhooks security": HMAC-SHA1, keyed by the auth token, of the full URL followed by
each POST parameter name and value sorted by name, base64-encoded).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import os
import re
import socket
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import quoteattr

import numpy as np

from rig.calls.media import CALL_RATE_HZ, FRAME_BYTES, JitterMeter, PlayoutBuffer, now_s
from rig.channel.g711 import mulaw_decode, mulaw_encode
from rig.errors import ConfigError

#: Media format of every Twilio media stream.
MEDIA_FORMAT = {"encoding": "audio/x-mulaw", "sampleRate": CALL_RATE_HZ, "channels": 1}
#: mu-law bytes per 20 ms media message.
MULAW_FRAME_BYTES = FRAME_BYTES // 2


def pcm_to_payload(pcm: bytes) -> str:
    """8 kHz int16 PCM -> base64 of G.711 mu-law (a ``media.payload``)."""
    codes = mulaw_encode(np.frombuffer(pcm, np.int16))
    return base64.b64encode(codes.tobytes()).decode("ascii")


def payload_to_pcm(payload: str) -> bytes:
    """A ``media.payload`` (base64 mu-law) -> 8 kHz int16 PCM.

    Raises:
        ValueError: the payload is not valid base64.
    """
    codes = base64.b64decode(payload, validate=True)
    return mulaw_decode(codes).astype(np.int16).tobytes()


@dataclass(frozen=True)
class StreamIds:
    """The ids Twilio assigns: stream ``MZ...``, call ``CA...``, account ``AC...``."""
    stream_sid: str
    call_sid: str
    account_sid: str

    @staticmethod
    def new() -> StreamIds:
        return StreamIds("MZ" + uuid.uuid4().hex, "CA" + uuid.uuid4().hex,
                         "AC" + uuid.uuid4().hex)


class MediaStreamWriter:
    """Builds the messages Twilio sends on a media stream, numbering them in order."""

    def __init__(self, ids: StreamIds) -> None:
        self.ids = ids
        self._seq = 0
        self._chunk = 0

    def _next(self) -> str:
        self._seq += 1
        return str(self._seq)

    @staticmethod
    def connected() -> dict:
        return {"event": "connected", "protocol": "Call", "version": "1.0.0"}

    def start(self, custom_parameters: Mapping[str, str]) -> dict:
        return {"event": "start", "sequenceNumber": self._next(), "streamSid": self.ids.stream_sid,
                "start": {"accountSid": self.ids.account_sid, "streamSid": self.ids.stream_sid,
                          "callSid": self.ids.call_sid, "tracks": ["inbound"],
                          "customParameters": dict(custom_parameters),
                          "mediaFormat": dict(MEDIA_FORMAT)}}

    def media(self, pcm: bytes, timestamp_ms: int) -> dict:
        self._chunk += 1
        return {"event": "media", "sequenceNumber": self._next(),
                "streamSid": self.ids.stream_sid,
                "media": {"track": "inbound", "chunk": str(self._chunk),
                          "timestamp": str(int(timestamp_ms)), "payload": pcm_to_payload(pcm)}}

    def mark(self, name: str) -> dict:
        return {"event": "mark", "sequenceNumber": self._next(),
                "streamSid": self.ids.stream_sid, "mark": {"name": name}}

    def stop(self) -> dict:
        return {"event": "stop", "sequenceNumber": self._next(), "streamSid": self.ids.stream_sid,
                "stop": {"accountSid": self.ids.account_sid, "callSid": self.ids.call_sid}}


def parse_message(text: str | bytes) -> dict:
    """A media-stream message as a dict, checked for the fields its event needs.

    Raises:
        ValueError: not JSON, no ``event``, or an event without its fields (names them).
    """
    try:
        msg = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"media stream: not JSON ({exc})") from exc
    if not isinstance(msg, dict) or "event" not in msg:
        raise ValueError(f"media stream: message without 'event': {str(msg)[:80]}")
    need = {"start": ("streamSid", "start"), "media": ("media",), "mark": ("mark",),
            "stop": ("streamSid",), "clear": ("streamSid",)}.get(msg["event"], ())
    missing = [k for k in need if k not in msg]
    if missing:
        raise ValueError(f"media stream: {msg['event']!r} message lacks {missing}")
    if msg["event"] == "media" and "payload" not in msg["media"]:
        raise ValueError("media stream: 'media' message lacks media.payload")
    return msg


def _take_media(link, msg: dict) -> None:
    """One ``media`` message into a link's playout buffer, its jitter meter (media time from
    the audio carried, RFC 3550 6.4.1) and its count of media messages received."""
    pcm = payload_to_pcm(msg["media"]["payload"])
    link.jitter.add(link._media_s, now_s())
    link._media_s += len(pcm) / 2 / CALL_RATE_HZ
    link.received += 1
    link.playout.push(pcm)


class TwilioLoopbackLink:
    """The caller agent's side of a loopback Twilio call: plays Twilio's part of a media
    stream against a websocket server (the interviewer).

    Sends ``connected`` and ``start`` (with ``custom_parameters``: the rig's ``call_id``,
    ``question_ids``, ``seed``), one ``media`` message per 20 ms frame, and ``stop`` on hang-up;
    receives ``media`` (any length; mu-law decoded into the playout buffer), ``mark`` (echoed
    back, as Twilio does once the audio before it has played) and ``clear`` (empties the
    buffer). Jitter is measured on the received media (RFC 3550, media time = payload
    samples received so far).
    """

    transport = "twilio"

    def __init__(self, url: str, custom_parameters: Mapping[str, str]) -> None:
        self.url = url
        self.params = dict(custom_parameters)
        self.ids = StreamIds.new()
        self.writer = MediaStreamWriter(self.ids)
        self.playout = PlayoutBuffer()
        self.closed = asyncio.Event()
        self.jitter = JitterMeter()
        self.sent = 0
        self.received = 0
        self.marks: list[str] = []
        self._ws = None
        self._rx_task: asyncio.Task | None = None
        self._media_s = 0.0
        self._t_connect = 0.0

    async def connect(self) -> None:
        import websockets

        # proxy=None: a loopback or lab call never goes through an HTTP(S)_PROXY
        self._ws = await websockets.connect(self.url, max_size=2**22, proxy=None)
        self._t_connect = now_s()
        await self._ws.send(json.dumps(self.writer.connected()))
        await self._ws.send(json.dumps(self.writer.start(self.params)))
        self._rx_task = asyncio.ensure_future(self._receive())

    async def _receive(self) -> None:
        import websockets

        try:
            async for raw in self._ws:
                msg = parse_message(raw)
                if msg["event"] == "media":
                    _take_media(self, msg)
                elif msg["event"] == "mark":
                    self.marks.append(msg["mark"].get("name", ""))
                    await self._ws.send(json.dumps(self.writer.mark(msg["mark"].get("name", ""))))
                elif msg["event"] == "clear":
                    self.playout.clear()
        except websockets.ConnectionClosed:
            pass
        finally:
            self.closed.set()

    async def send_frame(self, pcm: bytes) -> None:
        if self.closed.is_set() or self._ws is None:
            return
        import websockets

        ts = round((now_s() - self._t_connect) * 1000)
        try:
            await self._ws.send(json.dumps(self.writer.media(pcm, ts)))
            self.sent += 1
        except websockets.ConnectionClosed:
            self.closed.set()

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

    async def stats(self) -> dict:
        return {"codec": "PCMU/8000", "packet_unit": "media_message",
                "packets_sent": self.sent,
                "packets_received": self.received, "packets_lost": 0,
                "jitter_ms": self.jitter.jitter_ms}


class TwilioStreamLink:
    """The caller agent's side of a call placed through a Twilio account: Twilio connected
    the answered call's audio to the rig's websocket (TwiML ``<Connect><Stream>``), so here
    the rig is the media-stream *server*. Received ``media`` (the called party: the
    interviewer) goes to the playout buffer; each agent frame goes out as a ``media``
    message with the ``streamSid``; ``stop`` or a closed socket ends the call; hanging up
    closes the socket (Twilio then moves past ``<Connect>`` and the call ends).
    """

    transport = "twilio"

    def __init__(self, ws, start: dict) -> None:
        self._ws = ws
        self.stream_sid = start["streamSid"]
        self.call_sid = start["start"].get("callSid")
        self.params = dict(start["start"].get("customParameters") or {})
        self.playout = PlayoutBuffer()
        self.closed = asyncio.Event()
        self.done = asyncio.Event()
        self.jitter = JitterMeter()
        self.sent = 0
        self.received = 0
        self._media_s = 0.0
        self._rx = asyncio.ensure_future(self._receive())

    async def _receive(self) -> None:
        import websockets

        try:
            async for raw in self._ws:
                msg = parse_message(raw)
                if msg["event"] == "media":
                    _take_media(self, msg)
                elif msg["event"] == "stop":
                    break
        except websockets.ConnectionClosed:
            pass
        finally:
            self.closed.set()

    async def send_frame(self, pcm: bytes) -> None:
        if self.closed.is_set():
            return
        import websockets

        try:
            await self._ws.send(json.dumps({"event": "media", "streamSid": self.stream_sid,
                                            "media": {"payload": pcm_to_payload(pcm)}}))
            self.sent += 1
        except websockets.ConnectionClosed:
            self.closed.set()

    async def hangup(self) -> None:
        import websockets

        with contextlib.suppress(websockets.ConnectionClosed):
            await self._ws.close()
        await asyncio.wait([self._rx], timeout=2.0)
        self.closed.set()
        self.done.set()

    async def stats(self) -> dict:
        return {"codec": "PCMU/8000", "packet_unit": "media_message",
                "packets_sent": self.sent,
                "packets_received": self.received, "packets_lost": 0,
                "jitter_ms": self.jitter.jitter_ms}


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


# --- TwiML, webhooks, REST -------------------------------------------------------------------
def twiml_connect_stream(stream_url: str, parameters: Mapping[str, str]) -> str:
    """TwiML that connects the call's audio to a bidirectional Media Stream at ``stream_url``
    (``wss://...``), passing ``parameters`` as ``<Parameter>`` (they arrive in
    ``start.customParameters``). Twilio docs: TwiML ``<Connect><Stream>``.

    Raises:
        ValueError: the URL is not ``wss://`` or ``ws://``.
    """
    if not stream_url.startswith(("wss://", "ws://")):
        raise ValueError(f"a media stream URL must start with wss:// (got {stream_url!r})")
    params = "".join(f"<Parameter name={quoteattr(str(k))} value={quoteattr(str(v))}/>"
                     for k, v in parameters.items())
    return (f'<?xml version="1.0" encoding="UTF-8"?><Response><Connect>'
            f"<Stream url={quoteattr(stream_url)}>{params}</Stream></Connect></Response>")


def stream_url_problem(url: str) -> str | None:
    """Why Twilio could not connect a call's media stream to ``url``, or None. Twilio
    connects to ``wss://`` URLs only, and from the internet: a loopback, unspecified
    (``0.0.0.0``), private or link-local address cannot be reached."""
    import ipaddress
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018  (raises on a port out of range)
    except ValueError as exc:
        return f"not a URL ({exc})"
    if parts.scheme != "wss":
        return "Twilio connects media streams to wss:// URLs only"
    if not host:
        return "a wss:// URL needs a host"
    host = host.rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return f"{host} is this machine, which Twilio cannot reach"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        if not re.fullmatch(r"[0-9.]+|0x[0-9a-f.x]+", host, re.I):
            return None  # a host name
        try:  # the short and numeric IPv4 forms resolvers accept: 127.1, 2130706433
            ip = ipaddress.ip_address(socket.inet_aton(host))
        except OSError:
            return f"{host} is not an address"
    if not ip.is_global:  # loopback, 0.0.0.0, private, link-local, shared (100.64/10), ...
        return f"{host} is not a public address; Twilio cannot reach it"
    return None


def compute_signature(url: str, params: Mapping[str, str], auth_token: str) -> str:
    """``X-Twilio-Signature`` of a webhook request: base64(HMAC-SHA1(auth_token, url +
    concatenation of name + value for each POST parameter sorted by name)). For a GET or a
    JSON body, ``params`` is empty and the URL carries the query."""
    payload = url + "".join(f"{k}{params[k]}" for k in sorted(params))
    digest = hmac.new(auth_token.encode(), payload.encode("utf-8"), hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def validate_signature(url: str, params: Mapping[str, str], signature: str,
                       auth_token: str) -> bool:
    """True when ``signature`` is the request's valid ``X-Twilio-Signature`` (constant-time
    comparison). Twilio signs the URL it called, as configured (scheme, host, port, path and
    query)."""
    if not signature:
        return False
    return hmac.compare_digest(compute_signature(url, params, auth_token), signature)


def missing_credentials(env: Mapping[str, str] | None = None) -> list[str]:
    """The names of the environment variables a Twilio REST call still needs (empty when
    :meth:`TwilioCredentials.from_env` would succeed): ``TWILIO_ACCOUNT_SID``, and
    ``TWILIO_AUTH_TOKEN`` unless an API key is being used, in which case both
    ``TWILIO_API_KEY_SID`` and ``TWILIO_API_KEY_SECRET``. Never reads out a value."""
    env = os.environ if env is None else env
    missing = [] if env.get("TWILIO_ACCOUNT_SID") else ["TWILIO_ACCOUNT_SID"]
    if env.get("TWILIO_API_KEY_SID") or env.get("TWILIO_API_KEY_SECRET"):
        missing += [n for n in ("TWILIO_API_KEY_SID", "TWILIO_API_KEY_SECRET")
                    if not env.get(n)]
    elif not env.get("TWILIO_AUTH_TOKEN"):
        missing.append("TWILIO_AUTH_TOKEN")
    return missing


@dataclass(frozen=True)
class TwilioCredentials:
    """Account SID and a secret, from the environment. ``repr`` never shows the secret."""
    account_sid: str
    username: str
    password: str

    def __repr__(self) -> str:
        return f"TwilioCredentials(account_sid={self.account_sid!r}, secret=***)"

    @staticmethod
    def from_env(env: Mapping[str, str] | None = None) -> TwilioCredentials:
        """``TWILIO_ACCOUNT_SID`` plus ``TWILIO_AUTH_TOKEN``, or plus ``TWILIO_API_KEY_SID`` and
        ``TWILIO_API_KEY_SECRET``.

        Raises:
            ConfigError: a variable is missing (names it, never shows a value).
        """
        env = os.environ if env is None else env
        sid = env.get("TWILIO_ACCOUNT_SID")
        if not sid:
            raise ConfigError("$TWILIO_ACCOUNT_SID", "", "not set; Twilio calls need the "
                              "account SID in the environment")
        if env.get("TWILIO_API_KEY_SID") or env.get("TWILIO_API_KEY_SECRET"):
            key, secret = env.get("TWILIO_API_KEY_SID"), env.get("TWILIO_API_KEY_SECRET")
            if not key or not secret:
                raise ConfigError("$TWILIO_API_KEY_SID/$TWILIO_API_KEY_SECRET", "",
                                  "set both or neither")
            return TwilioCredentials(sid, key, secret)
        token = env.get("TWILIO_AUTH_TOKEN")
        if not token:
            raise ConfigError("$TWILIO_AUTH_TOKEN", "", "not set (or set TWILIO_API_KEY_SID "
                              "and TWILIO_API_KEY_SECRET)")
        return TwilioCredentials(sid, sid, token)


#: The environment variables whose values :func:`scrub_credentials` removes.
CREDENTIAL_VARIABLES = ("TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_API_KEY_SID",
                        "TWILIO_API_KEY_SECRET")
_ACCOUNT_PATH = re.compile(r"(/Accounts/)[^/\s?#'\"]+")
_TWILIO_SIDS = re.compile(r"\b(AC|SK)[0-9a-fA-F]{32}\b")


def scrub_credentials(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with Twilio credentials replaced by ``***``: the values of the
    :data:`CREDENTIAL_VARIABLES` set in ``env`` (default: the environment), the account in a
    REST URL (``/Accounts/AC.../Calls.json``, as the twilio package's and requests' errors
    show it) and anything shaped like an account or API key SID (``AC``/``SK`` and 32 hex
    digits). For error texts that are printed or stored in rows."""
    env = os.environ if env is None else env
    for name in CREDENTIAL_VARIABLES:
        value = env.get(name) or ""
        if len(value) >= 4:
            text = text.replace(value, "***")
    text = _ACCOUNT_PATH.sub(r"\1***", text)
    return _TWILIO_SIDS.sub(r"\1***", text)


class TwilioRestError(RuntimeError):
    """A REST call to Twilio failed; the message has the credentials scrubbed."""


def place_call(*, to: str, from_: str, stream_url: str, parameters: Mapping[str, str],
               credentials: TwilioCredentials | None = None, http_client: Any = None,
               status_callback: str | None = None, time_limit_s: int = 600) -> str:
    """Place an outbound call with the Twilio REST API (``POST /2010-04-01/Accounts/{sid}/
    Calls.json``, through the ``twilio`` package) whose TwiML connects the answered call's
    audio to the rig's media-stream websocket. Returns the call SID.

    Args:
        to: the interviewer's number (E.164, e.g. ``+15551234567``) or a SIP URI.
        from_: a Twilio number of the account (E.164).
        stream_url: ``wss://`` URL of the rig's media-stream endpoint.
        parameters: passed to the stream as custom parameters (the rig's ``call_id``...).
        credentials: default :meth:`TwilioCredentials.from_env`.
        http_client: a ``twilio.http.HttpClient`` (tests pass one that records the request).
        time_limit_s: Twilio ends the call after this many seconds.

    Raises:
        TwilioRestError: the request failed (the twilio package's or the HTTP library's
            error, its text with the account SID and secrets scrubbed, no traceback chained).
    """
    from twilio.rest import Client

    creds = credentials or TwilioCredentials.from_env()
    client = Client(creds.username, creds.password, account_sid=creds.account_sid,
                    http_client=http_client)
    kwargs: dict[str, Any] = {"to": to, "from_": from_, "time_limit": time_limit_s,
                              "twiml": twiml_connect_stream(stream_url, parameters)}
    if status_callback:
        kwargs["status_callback"] = status_callback
    try:
        return client.calls.create(**kwargs).sid
    except Exception as exc:
        env = {"TWILIO_ACCOUNT_SID": creds.account_sid, "TWILIO_API_KEY_SID": creds.username,
               "TWILIO_AUTH_TOKEN": creds.password}
        if hasattr(exc, "status") and hasattr(exc, "msg"):  # TwilioRestException: plain text
            code = getattr(exc, "code", None)
            text = f"HTTP {exc.status} error: {exc.msg}" + (f" (Twilio error {code})"
                                                             if code else "")
        else:
            text = str(exc)
        msg = scrub_credentials(scrub_credentials(f"{type(exc).__name__}: {text}", env))
        # from None: the chained errors repeat the URL with the account SID in it
        raise TwilioRestError(f"placing the call failed: {msg}") from None
