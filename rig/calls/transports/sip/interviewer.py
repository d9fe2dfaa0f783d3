"""The reference interviewer behind a SIP user agent on a UDP port.

It answers an INVITE with PCMU, builds the interview session from the ``X-Rig-*`` headers
(:class:`rig.calls.interviewer.session.InterviewSession`, pipecat's Silero VAD inside), streams RTP
both ways and sends BYE when the interview ends; results go to the service's store.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading

from rig.calls.media import CALL_RATE_HZ, FRAME_BYTES, FRAME_MS, now_s
from rig.calls.transports.sip.message import (
    SipMessage,
    build_sip,
    new_tag,
    parse_sip,
    sdp_media,
    sdp_offer,
    sip_response,
)
from rig.calls.transports.sip.rtp import PCMU_PT, RtpSession, UdpProtocol


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
            lambda: UdpProtocol(self._datagram), local_addr=(self.host, self._port))
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
            self._sip.transport.sendto(sip_response(msg, "200 OK", []), addr)
            call = self._calls.get(cid)
            if call is not None and call["task"] is not None:
                call["bye_received"] = True
                call["task"].cancel()
        else:
            self._sip.transport.sendto(sip_response(msg, "200 OK", []), addr)

    async def _answer(self, invite: SipMessage, addr) -> None:
        cid = invite.header("call-id")
        try:
            host, port, pts = sdp_media(invite.body)
        except ValueError:
            self._calls.pop(cid, None)
            self._sip.transport.sendto(sip_response(invite, "400 Bad Request", []), addr)
            return
        if PCMU_PT not in pts:
            self._calls.pop(cid, None)
            self._sip.transport.sendto(sip_response(invite, "488 Not Acceptable Here", []), addr)
            return
        params = {"call_id": invite.header("x-rig-call-id") or cid,
                  "question_ids": invite.header("x-rig-question-ids") or None,
                  "seed": invite.header("x-rig-seed") or "0",
                  "attempt_id": invite.header("x-rig-attempt-id") or None}
        try:
            session = self.service.session(params, "sip")
        except KeyError as exc:
            self._calls.pop(cid, None)
            self._sip.transport.sendto(sip_response(invite, "404 Not Found", [("Warning",
                                       f'399 rig "{exc}"')]), addr)
            return
        feed_q: asyncio.Queue[bytes] = asyncio.Queue()
        rtp = RtpSession(feed_q.put_nowait)
        rtp_port = await rtp.open(self.host)
        rtp.peer = (host, port)
        tag = new_tag()
        ok = sip_response(invite, "200 OK", [("Contact", f"<sip:interviewer@{self.host}:"
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
                ("Via", f"SIP/2.0/UDP {self.host}:{self.port};branch=z9hG4bK{new_tag()}"),
                ("Max-Forwards", "70"), ("From", from_hdr), ("To", invite.header("from")),
                ("Call-ID", cid), ("CSeq", "1 BYE")])
            self._sip.transport.sendto(bye, addr)

    async def _media(self, session, rtp: RtpSession, feed_q: asyncio.Queue, call: dict) -> None:
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
