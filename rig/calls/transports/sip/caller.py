"""The caller agent's SIP user agent: INVITE with an SDP offer of PCMU, ACK, RTP, BYE.

The rig's call parameters travel as SIP headers ``X-Rig-Call-Id``, ``X-Rig-Question-Ids``,
``X-Rig-Seed`` and ``X-Rig-Attempt-Id``. The INVITE is resent every 0.5 s until answered or
``answer_timeout_s`` passes; there is no other retransmission timer.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import uuid
from collections.abc import Mapping

from rig.calls.media import PlayoutBuffer
from rig.calls.transports.sip.message import (
    SipMessage,
    build_sip,
    new_tag,
    parse_sip,
    sdp_media,
    sdp_offer,
    sip_response,
)
from rig.calls.transports.sip.rtp import CODEC, PCMU_PT, RtpSession, UdpProtocol


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
        self.codec = CODEC.wire_name
        self._rtp = RtpSession(self.playout.push)
        self._sip: UdpProtocol | None = None
        self._responses: asyncio.Queue[SipMessage] = asyncio.Queue()
        self._call_id = uuid.uuid4().hex + "@rig"
        self._tag = new_tag()
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
                self._sip.transport.sendto(sip_response(msg, "200 OK", []), addr)
                self.closed.set()
            elif msg.method not in ("ACK",):
                self._sip.transport.sendto(sip_response(msg, "200 OK", []), addr)
            return
        self._responses.put_nowait(msg)

    def _request(self, method: str, cseq: int, body: str = "",
                 extra: list[tuple[str, str]] | None = None) -> bytes:
        lport = self._sip.transport.get_extra_info("sockname")[1]
        uri = f"sip:{self.user}@{self.host}:{self.port}"
        hs = [("Via", f"SIP/2.0/UDP {self.local}:{lport};branch=z9hG4bK{new_tag()};rport"),
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
            lambda: UdpProtocol(self._datagram), local_addr=(self.local, 0))
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

    def local_ports(self) -> dict:
        """This call's own UDP ports: ``{"sip": signalling, "rtp": media}`` (ephemeral)."""
        sip = self._sip.transport.get_extra_info("sockname")[1] if self._sip else None
        rtp = self._rtp.proto
        return {"sip": sip,
                "rtp": rtp.transport.get_extra_info("sockname")[1] if rtp else None}

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
