"""The SIP user agents on loopback (INVITE/200/ACK, RTP both ways, BYE from the interviewer)
with a scripted interview session in place of the reference interviewer (no models)."""

from __future__ import annotations

import asyncio
import time

import pytest

from rig.calls.media import FRAME_BYTES
from rig.calls.transports.sip import SipInterviewerThread, SipLink

pytestmark = pytest.mark.unit


class ScriptedSession:
    """Says one second of audio, then ends the interview with what it was fed."""

    def __init__(self) -> None:
        self.fed_bytes = 0

    async def feed(self, pcm: bytes, sample_rate_hz: int) -> None:
        self.fed_bytes += len(pcm)

    async def run(self, say) -> dict:
        await say(b"\x10\x00" * 8000)
        return {"call_id": "c1", "fed_bytes": self.fed_bytes}


class Service:
    def __init__(self) -> None:
        self.asked: list[tuple[dict, str]] = []
        self.results: list[dict] = []
        self.store = self  # the thread calls service.store.put(result)

    def put(self, result: dict) -> None:
        self.results.append(result)

    def session(self, params: dict, transport: str) -> ScriptedSession:
        self.asked.append((params, transport))
        return ScriptedSession()


def test_a_sip_call_carries_the_parameters_and_media_and_the_interviewer_hangs_up() -> None:
    service = Service()
    thread = SipInterviewerThread(service).start()

    async def call() -> tuple[dict, bool]:
        link = SipLink(thread.url, {"call_id": "c1", "question_ids": "q1", "seed": "3",
                                    "attempt_id": "a1"})
        await link.connect()
        try:
            for _ in range(500):  # at most 10 s of 20 ms frames; the interview lasts about 1 s
                await link.send_frame(bytes(FRAME_BYTES))
                await asyncio.sleep(0.02)
                if link.closed.is_set():
                    break
            return await link.stats(), link.closed.is_set()
        finally:
            await link.hangup()

    try:
        stats, hung_up_by_far_end = asyncio.run(call())
        for _ in range(100):
            if service.results:
                break
            time.sleep(0.05)
    finally:
        thread.stop()
    assert service.asked == [({"call_id": "c1", "question_ids": "q1", "seed": "3",
                               "attempt_id": "a1"}, "sip")]
    assert len(service.results) == 1 and service.results[0]["fed_bytes"] > 0
    assert hung_up_by_far_end
    assert stats["codec"] == "PCMU/8000" and stats["packet_unit"] == "rtp"
    assert stats["packets_sent"] > 0 and stats["packets_received"] > 0
