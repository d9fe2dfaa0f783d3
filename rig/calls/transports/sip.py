"""SIP: a call with RTP PCMU to a SIP URI, and the reference interviewer behind a SIP UA.

A deliberately small user agent over UDP, enough for a direct call between two agents with no
registrar or proxy (RFC 3261): the caller sends ``INVITE`` with an SDP offer (RFC 4566, offer/
answer per RFC 3264) of PCMU only, the callee answers ``200 OK`` with its SDP, the caller
sends ``ACK``; either side ends with ``BYE`` / ``200 OK``. Media is RTP (RFC 3550) payload
type 0, PCMU (G.711 mu-law, 8000 Hz clock, RFC 3551 section 4.5.14), 160 samples per 20 ms
packet; the receiver counts lost packets from sequence gaps (RFC 3550 appendix A.3) and
measures interarrival jitter in timestamp units (appendix A.8), reported in ms.

The rig's call parameters travel as SIP headers ``X-Rig-Call-Id``, ``X-Rig-Question-Ids`` and
``X-Rig-Seed``. :class:`SipLink` is the caller agent's UA; :class:`SipInterviewerThread` puts
the reference interviewer (:class:`rig.calls.interviewer.InterviewSession`, pipecat's Silero
VAD inside) behind a UA on a UDP port. Any SIP UA that answers PCMU can be the far end
(Debian's ``baresip`` with ``answermode=auto`` is, in ``tests/test_calls_sip.py``).
No authentication, no TLS/SRTP, no re-INVITE, no retransmission timers beyond resending the
INVITE: a loopback and lab tool, not a softphone.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import struct
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from rig.calls.media import (
    CALL_RATE_HZ,
    FRAME_BYTES,
    FRAME_MS,
    JitterMeter,
    PlayoutBuffer,
    now_s,
)
from rig.channel.g711 import mulaw_decode, mulaw_encode

PCMU_PT = 0
RTP_HEADER = struct.Struct("!BBHII")


# --- RTP (RFC 3550) ---------------------------------------------------------------------------
def rtp_packet(seq: int, timestamp: int, ssrc: int, payload: bytes, marker: bool = False,
               payload_type: int = PCMU_PT) -> bytes:
    """An RTP packet: version 2, no padding, extension or CSRC (RFC 3550 section 5.1)."""
    return RTP_HEADER.pack(0x80, (0x80 if marker else 0) | payload_type, seq & 0xFFFF,
                           timestamp & 0xFFFFFFFF, ssrc) + payload


@dataclass(frozen=True)
class RtpPacket:
    payload_type: int
    marker: bool
    seq: int
    timestamp: int
    ssrc: int
    payload: bytes


def parse_rtp(data: bytes) -> RtpPacket:
    """Parse an RTP packet (CSRCs and a header extension skipped).

    Raises:
        ValueError: shorter than a header or not version 2.
    """
    if len(data) < RTP_HEADER.size:
        raise ValueError(f"RTP: {len(data)} bytes is shorter than a header")
    b0, b1, seq, ts, ssrc = RTP_HEADER.unpack_from(data)
    if b0 >> 6 != 2:
        raise ValueError(f"RTP: version {b0 >> 6}, expected 2")
    off = RTP_HEADER.size + 4 * (b0 & 0x0F)
    if b0 & 0x10 and len(data) >= off + 4:
        off += 4 + 4 * struct.unpack_from("!H", data, off + 2)[0]
    end = len(data) - (data[-1] if b0 & 0x20 else 0)
    return RtpPacket(b1 & 0x7F, bool(b1 & 0x80), seq, ts, ssrc, data[off:end])


class RtpReceiver:
    """Loss and jitter of one incoming RTP stream (RFC 3550 appendix A.3 and A.8)."""

    def __init__(self) -> None:
        self.received = 0
        self._base: int | None = None
        self._max_ext = 0
        self._cycles = 0
        self.jitter = JitterMeter(talkspurt_gap_s=1e9)

    def add(self, pkt: RtpPacket, arrival_s: float) -> None:
        if self._base is None:
            self._base = self._max_ext = pkt.seq
        else:
            delta = (pkt.seq - (self._max_ext & 0xFFFF)) & 0xFFFF
            if delta < 0x8000:  # in order (possibly with a gap); older packets are late
                if pkt.seq < (self._max_ext & 0xFFFF):
                    self._cycles += 0x10000
                self._max_ext = self._cycles + pkt.seq
        self.received += 1
        self.jitter.add(pkt.timestamp / CALL_RATE_HZ, arrival_s)

    @property
    def expected(self) -> int:
        return 0 if self._base is None else self._max_ext - self._base + 1

    @property
    def lost(self) -> int:
        return max(0, self.expected - self.received)


# --- SIP messages (RFC 3261 subset) -----------------------------------------------------------
@dataclass(frozen=True)
class SipMessage:
    """A parsed SIP request or response. Header names are lower-cased; compact forms
    (``i``, ``f``, ``t``, ``v``, ``l``, ``c``, ``m``) are expanded."""
    start_line: str
    headers: tuple[tuple[str, str], ...]
    body: str

    @property
    def is_request(self) -> bool:
        return not self.start_line.startswith("SIP/2.0")

    @property
    def method(self) -> str:
        return self.start_line.split()[0] if self.is_request else self.header("cseq").split()[1]

    @property
    def status(self) -> int | None:
        return None if self.is_request else int(self.start_line.split()[1])

    def header(self, name: str, default: str = "") -> str:
        name = name.lower()
        for k, v in self.headers:
            if k == name:
                return v
        return default

    def all(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k == name.lower()]


_COMPACT = {"i": "call-id", "f": "from", "t": "to", "v": "via", "l": "content-length",
            "c": "content-type", "m": "contact"}


def parse_sip(data: bytes) -> SipMessage:
    """Parse one SIP message from a UDP datagram.

    Raises:
        ValueError: no blank line after the headers, or a header line without a colon.
    """
    text = data.decode("utf-8", errors="replace")
    head, sep, body = text.partition("\r\n\r\n")
    if not sep:
        raise ValueError("SIP: no blank line after the headers")
    lines = head.split("\r\n")
    headers = []
    for line in lines[1:]:
        if ":" not in line:
            raise ValueError(f"SIP: bad header line {line[:60]!r}")
        k, v = line.split(":", 1)
        k = k.strip().lower()
        headers.append((_COMPACT.get(k, k), v.strip()))
    return SipMessage(lines[0], tuple(headers), body)


def build_sip(start_line: str, headers: list[tuple[str, str]], body: str = "") -> bytes:
    hs = [*headers, ("Content-Length", str(len(body.encode())))]
    return ("\r\n".join([start_line, *(f"{k}: {v}" for k, v in hs)]) + "\r\n\r\n"
            + body).encode()


def sdp_offer(host: str, rtp_port: int, session_id: int) -> str:
    """An SDP (RFC 4566) offering PCMU at 20 ms, send and receive."""
    return (f"v=0\r\no=rig {session_id} {session_id} IN IP4 {host}\r\ns=rig\r\n"
            f"c=IN IP4 {host}\r\nt=0 0\r\nm=audio {rtp_port} RTP/AVP 0\r\n"
            f"a=rtpmap:0 PCMU/8000\r\na=ptime:{FRAME_MS}\r\na=sendrecv\r\n")


def sdp_media(sdp: str) -> tuple[str, int, list[int]]:
    """(connection address, audio port, payload types) of an SDP body.

    Raises:
        ValueError: no ``c=`` or ``m=audio`` line.
    """
    c = re.search(r"^c=IN IP4 (\S+)", sdp, re.MULTILINE)
    m = re.search(r"^m=audio (\d+) RTP/AVP ([\d ]+)", sdp, re.MULTILINE)
    if not c or not m:
        raise ValueError("SDP: no c=IN IP4 or m=audio line")
    return c.group(1), int(m.group(1)), [int(x) for x in m.group(2).split()]


def _tag() -> str:
    return uuid.uuid4().hex[:10]


def _response(req: SipMessage, status: str, extra: list[tuple[str, str]], body: str = "",
              to_tag: str | None = None) -> bytes:
    to = req.header("to")
    if to_tag and ";tag=" not in to:
        to = f"{to};tag={to_tag}"
    hs = [("Via", v) for v in req.all("via")]
    hs += [("From", req.header("from")), ("To", to), ("Call-ID", req.header("call-id")),
           ("CSeq", req.header("cseq")), *extra]
    return build_sip(f"SIP/2.0 {status}", hs, body)


class _Udp(asyncio.DatagramProtocol):
    def __init__(self, on_datagram) -> None:
        self.on_datagram = on_datagram
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport

    def datagram_received(self, data, addr) -> None:
        self.on_datagram(data, addr)


class _RtpSession:
    """Send 20 ms PCMU packets to a peer; receive into a playout buffer or a callback."""

    def __init__(self, on_pcm) -> None:
        self.ssrc = random.getrandbits(32)
        self.seq = random.getrandbits(16)
        self.ts = random.getrandbits(32)
        self.sent = 0
        self.rx = RtpReceiver()
        self.peer: tuple[str, int] | None = None
        self.proto: _Udp | None = None
        self._on_pcm = on_pcm
        self._first = True

    async def open(self, host: str) -> int:
        loop = asyncio.get_running_loop()
        _t, self.proto = await loop.create_datagram_endpoint(
            lambda: _Udp(self._datagram), local_addr=(host, 0))
        return self.proto.transport.get_extra_info("sockname")[1]

    def _datagram(self, data: bytes, _addr) -> None:
        try:
            pkt = parse_rtp(data)
        except ValueError:
            return
        if pkt.payload_type != PCMU_PT:
            return
        self.rx.add(pkt, asyncio.get_running_loop().time())
        self._on_pcm(mulaw_decode(pkt.payload).astype(np.int16).tobytes())

    def send(self, pcm: bytes) -> None:
        if self.peer is None or self.proto is None or self.proto.transport is None:
            return
        payload = mulaw_encode(np.frombuffer(pcm, np.int16)).tobytes()
        self.proto.transport.sendto(rtp_packet(self.seq, self.ts, self.ssrc, payload,
                                               marker=self._first), self.peer)
        self._first = False
        self.seq = (self.seq + 1) & 0xFFFF
        self.ts = (self.ts + len(payload)) & 0xFFFFFFFF
        self.sent += 1

    def close(self) -> None:
        if self.proto is not None and self.proto.transport is not None:
            self.proto.transport.close()


class SipLink:
    """The caller agent's SIP user agent: INVITE ``sip:interviewer@host:port``, RTP PCMU.

    Args:
        target: ``sip:user@host:port`` (or ``host:port``, or ``udp://host:port``).
        params: the rig's call parameters, sent as ``X-Rig-*`` headers.
        local_host: the address to bind SIP and RTP on (127.0.0.1 on loopback).
    """

    transport = "sip"

    def __init__(self, target: str, params: Mapping[str, str], local_host: str = "127.0.0.1",
                 answer_timeout_s: float = 10.0) -> None:
        m = re.match(r"^(?:sip:|udp://)?(?:([^@]+)@)?([^:;/]+):(\d+)", target)
        if not m:
            raise ValueError(f"SIP target must be sip:user@host:port, got {target!r}")
        self.user, self.host, self.port = m.group(1) or "interviewer", m.group(2), int(m.group(3))
        self.params, self.local = dict(params), local_host
        self.playout = PlayoutBuffer()
        self.closed = asyncio.Event()
        self.codec = "PCMU/8000"
        self._rtp = _RtpSession(self.playout.push)
        self._sip: _Udp | None = None
        self._responses: asyncio.Queue[SipMessage] = asyncio.Queue()
        self._call_id = uuid.uuid4().hex + "@rig"
        self._tag = _tag()
        self._to = ""
        self._cseq = 1
        self._timeout = answer_timeout_s

    def _datagram(self, data: bytes, addr) -> None:
        try:
            msg = parse_sip(data)
        except ValueError:
            return
        if msg.is_request:
            if msg.method == "BYE":
                self._sip.transport.sendto(_response(msg, "200 OK", []), addr)
                self.closed.set()
            elif msg.method not in ("ACK",):
                self._sip.transport.sendto(_response(msg, "200 OK", []), addr)
            return
        self._responses.put_nowait(msg)

    def _request(self, method: str, cseq: int, body: str = "",
                 extra: list[tuple[str, str]] | None = None) -> bytes:
        lport = self._sip.transport.get_extra_info("sockname")[1]
        uri = f"sip:{self.user}@{self.host}:{self.port}"
        hs = [("Via", f"SIP/2.0/UDP {self.local}:{lport};branch=z9hG4bK{_tag()};rport"),
              ("Max-Forwards", "70"), ("From", f"<sip:rig@{self.local}:{lport}>;tag={self._tag}"),
              ("To", self._to or f"<{uri}>"), ("Call-ID", self._call_id),
              ("CSeq", f"{cseq} {method}"), ("Contact", f"<sip:rig@{self.local}:{lport}>"),
              ("User-Agent", "rig"), *(extra or [])]
        return build_sip(f"{method} {uri} SIP/2.0", hs, body)

    async def connect(self) -> None:
        """INVITE, wait for 200 OK, ACK, start RTP.

        Raises:
            ConnectionError: the far end declined, or did not answer in time.
        """
        loop = asyncio.get_running_loop()
        _t, self._sip = await loop.create_datagram_endpoint(
            lambda: _Udp(self._datagram), local_addr=(self.local, 0))
        rtp_port = await self._rtp.open(self.local)
        extra = [("Content-Type", "application/sdp"),
                 ("X-Rig-Call-Id", self.params.get("call_id", "")),
                 ("X-Rig-Question-Ids", self.params.get("question_ids", "")),
                 ("X-Rig-Seed", self.params.get("seed", "0")),
                 ("X-Rig-Attempt-Id", self.params.get("attempt_id", ""))]
        invite = self._request("INVITE", 1, sdp_offer(self.local, rtp_port,
                                                      random.getrandbits(31)), extra)
        t_end = loop.time() + self._timeout
        ok = None
        while ok is None:
            self._sip.transport.sendto(invite, (self.host, self.port))
            try:
                while True:
                    msg = await asyncio.wait_for(self._responses.get(), 0.5)
                    if msg.header("call-id") != self._call_id or msg.method != "INVITE":
                        continue
                    if msg.status is not None and msg.status >= 300:
                        raise ConnectionError(f"SIP {self.host}:{self.port}: {msg.start_line}")
                    if msg.status == 200:
                        ok = msg
                        break
            except TimeoutError:
                if loop.time() > t_end:
                    raise ConnectionError(f"SIP {self.host}:{self.port}: no answer within "
                                          f"{self._timeout:g} s") from None
        self._to = ok.header("to")
        self._sip.transport.sendto(self._request("ACK", 1), (self.host, self.port))
        host, port, pts = sdp_media(ok.body)
        if PCMU_PT not in pts:
            raise ConnectionError(f"SIP: the answer offers payload types {pts}, not PCMU (0)")
        self._rtp.peer = (host, port)

    async def send_frame(self, pcm: bytes) -> None:
        if not self.closed.is_set():
            self._rtp.send(pcm)

    async def hangup(self) -> None:
        if self._sip is not None and not self.closed.is_set():
            self._cseq += 1
            self._sip.transport.sendto(self._request("BYE", self._cseq),
                                       (self.host, self.port))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._responses.get(), 1.0)
        self.closed.set()
        self._rtp.close()
        if self._sip is not None:
            self._sip.transport.close()

    async def stats(self) -> dict:
        return {"codec": self.codec, "packet_unit": "rtp",
                "packets_sent": self._rtp.sent,
                "packets_received": self._rtp.rx.received, "packets_lost": self._rtp.rx.lost,
                "jitter_ms": self._rtp.rx.jitter.jitter_ms}


class SipInterviewerThread:
    """The reference interviewer behind a SIP UA on ``host:port`` (UDP), in a background
    thread with its own event loop. ``url`` is ``sip:interviewer@host:port``.

    On INVITE it answers PCMU, builds the session from the ``X-Rig-*`` headers, streams RTP
    both ways (20 ms packets, silence when the interviewer is quiet), and sends BYE when the
    interview ends; results go to the service's store.
    """

    def __init__(self, service, host: str = "127.0.0.1", port: int = 0) -> None:
        self.service, self.host, self._port = service, host, port
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="rig-sip-interviewer",
                                        daemon=True)
        self._calls: dict[str, dict] = {}
        self._tasks: set[asyncio.Task] = set()

    @property
    def url(self) -> str:
        return f"sip:interviewer@{self.host}:{self.port}"

    def start(self, timeout_s: float = 10.0) -> SipInterviewerThread:
        self._thread.start()
        if not self._ready.wait(timeout_s):
            raise RuntimeError("the SIP interviewer did not start")
        return self

    def join(self) -> None:
        while self._thread.is_alive():
            self._thread.join(0.5)

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=10)

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        _t, self._sip = await self._loop.create_datagram_endpoint(
            lambda: _Udp(self._datagram), local_addr=(self.host, self._port))
        self.port = self._sip.transport.get_extra_info("sockname")[1]
        self._ready.set()
        await self._stop.wait()
        for call in list(self._calls.values()):
            if call["task"] is not None:
                call["task"].cancel()
        self._sip.transport.close()

    def _datagram(self, data: bytes, addr) -> None:
        try:
            msg = parse_sip(data)
        except ValueError:
            return
        cid = msg.header("call-id")
        if not msg.is_request:
            return
        if msg.method == "INVITE":
            if cid in self._calls:  # a resent INVITE: answer again (once answered)
                if self._calls[cid]["ok"] is not None:
                    self._sip.transport.sendto(self._calls[cid]["ok"], addr)
                return
            self._calls[cid] = {"ok": None, "acked": asyncio.Event(), "task": None}
            task = asyncio.ensure_future(self._answer(msg, addr))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif msg.method == "ACK" and cid in self._calls:
            self._calls[cid]["acked"].set()
        elif msg.method == "BYE":
            self._sip.transport.sendto(_response(msg, "200 OK", []), addr)
            call = self._calls.get(cid)
            if call is not None and call["task"] is not None:
                call["bye_received"] = True
                call["task"].cancel()
        else:
            self._sip.transport.sendto(_response(msg, "200 OK", []), addr)

    async def _answer(self, invite: SipMessage, addr) -> None:
        cid = invite.header("call-id")
        try:
            host, port, pts = sdp_media(invite.body)
        except ValueError:
            self._calls.pop(cid, None)
            self._sip.transport.sendto(_response(invite, "400 Bad Request", []), addr)
            return
        if PCMU_PT not in pts:
            self._calls.pop(cid, None)
            self._sip.transport.sendto(_response(invite, "488 Not Acceptable Here", []), addr)
            return
        params = {"call_id": invite.header("x-rig-call-id") or cid,
                  "question_ids": invite.header("x-rig-question-ids") or None,
                  "seed": invite.header("x-rig-seed") or "0",
                  "attempt_id": invite.header("x-rig-attempt-id") or None}
        try:
            session = self.service.session(params, "sip")
        except KeyError as exc:
            self._calls.pop(cid, None)
            self._sip.transport.sendto(_response(invite, "404 Not Found", [("Warning",
                                       f'399 rig "{exc}"')]), addr)
            return
        feed_q: asyncio.Queue[bytes] = asyncio.Queue()
        rtp = _RtpSession(feed_q.put_nowait)
        rtp_port = await rtp.open(self.host)
        rtp.peer = (host, port)
        tag = _tag()
        ok = _response(invite, "200 OK", [("Contact", f"<sip:interviewer@{self.host}:"
                                                      f"{self.port}>"),
                                          ("Content-Type", "application/sdp")],
                       sdp_offer(self.host, rtp_port, random.getrandbits(31)), to_tag=tag)
        call = self._calls[cid]
        call["ok"] = ok
        call["task"] = asyncio.ensure_future(self._media(session, rtp, feed_q, call))
        self._sip.transport.sendto(ok, addr)
        try:
            await call["task"]
        except asyncio.CancelledError:
            pass
        finally:
            rtp.close()
            self._calls.pop(cid, None)
        if not call.get("bye_received", False):
            to_tag = f";tag={tag}"
            from_hdr = invite.header("to").split(";tag=")[0] + to_tag
            bye = build_sip(f"BYE {invite.header('contact').strip('<>') or 'sip:rig@x'} SIP/2.0", [
                ("Via", f"SIP/2.0/UDP {self.host}:{self.port};branch=z9hG4bK{_tag()}"),
                ("Max-Forwards", "70"), ("From", from_hdr), ("To", invite.header("from")),
                ("Call-ID", cid), ("CSeq", "1 BYE")])
            self._sip.transport.sendto(bye, addr)

    async def _media(self, session, rtp: _RtpSession, feed_q: asyncio.Queue, call: dict) -> None:
        out = bytearray()
        loop = asyncio.get_running_loop()
        done = asyncio.Event()

        async def say(pcm: bytes) -> float:
            out.extend(pcm)
            while out:
                await asyncio.sleep(FRAME_MS / 1000)
            return now_s()

        async def pump() -> None:  # RTP out every 20 ms, audio in to the session
            t0, k = loop.time(), 0
            while not done.is_set():
                k += 1
                delay = t0 + k * FRAME_MS / 1000 - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                frame = bytes(out[:FRAME_BYTES]).ljust(FRAME_BYTES, b"\0")
                del out[:FRAME_BYTES]
                rtp.send(frame)
                while not feed_q.empty():
                    await session.feed(feed_q.get_nowait(), CALL_RATE_HZ)

        pumper = asyncio.ensure_future(pump())
        try:
            with contextlib.suppress(TimeoutError):  # without an ACK media may flow anyway
                await asyncio.wait_for(call["acked"].wait(), 5.0)
            result = await session.run(say)
        finally:
            done.set()
            await pumper
        self.service.store.put(result)
