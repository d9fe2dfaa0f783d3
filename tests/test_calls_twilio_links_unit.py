"""The rig's two Twilio media-stream links over a loopback websocket (no models): what each
receives into its playout buffer, what it echoes or ends on, and what it sends."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from rig.calls.media import FRAME_BYTES
from rig.calls.transports.twilio import (
    AgentStreamServer,
    MediaStreamWriter,
    StreamIds,
    TwilioLoopbackLink,
    parse_message,
    payload_to_pcm,
    pcm_to_payload,
)

pytestmark = pytest.mark.unit

TONE = (np.sin(np.arange(FRAME_BYTES // 2) / 3) * 8000).astype(np.int16).tobytes()


async def until(condition, timeout_s: float = 5.0) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), timeout_s)


def test_the_loopback_link_plays_twilios_part() -> None:
    import websockets

    async def main() -> None:
        got: list[dict] = []
        ready = asyncio.Event()

        async def interviewer(ws) -> None:  # sends what pipecat's TwilioFrameSerializer would
            async for raw in ws:
                msg = parse_message(raw)
                got.append(msg)
                if msg["event"] == "start":
                    sid = msg["streamSid"]
                    await ws.send(json.dumps({"event": "media", "streamSid": sid,
                                              "media": {"payload": pcm_to_payload(TONE * 2)}}))
                    await ws.send(json.dumps({"event": "mark", "streamSid": sid,
                                              "mark": {"name": "m1"}}))
                    ready.set()

        async with websockets.serve(interviewer, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            link = TwilioLoopbackLink(f"ws://127.0.0.1:{port}", {"call_id": "c1"})
            await link.connect()
            await ready.wait()
            await until(lambda: link.marks and any(m["event"] == "mark" for m in got))
            assert link.received == 1 and link.playout.buffered_s == pytest.approx(0.04)
            assert link.playout.read_frame() == payload_to_pcm(pcm_to_payload(TONE))
            await link.send_frame(TONE)
            await link.hangup()
            await until(lambda: got and got[-1]["event"] == "stop")
        assert [m["event"] for m in got] == ["connected", "start", "mark", "media", "stop"]
        assert got[1]["start"]["customParameters"] == {"call_id": "c1"}
        assert got[2]["mark"]["name"] == "m1"  # echoed, as Twilio does once it has played
        assert got[3]["media"]["payload"] == pcm_to_payload(TONE)
        assert link.closed.is_set()
        assert (await link.stats())["packets_sent"] == 1

    asyncio.run(main())


def test_the_loopback_link_empties_its_buffer_on_clear() -> None:
    import websockets

    async def main() -> None:
        async def interviewer(ws) -> None:
            async for raw in ws:
                if parse_message(raw)["event"] == "start":
                    await ws.send(json.dumps({"event": "media", "streamSid": "MZ1",
                                              "media": {"payload": pcm_to_payload(TONE)}}))
                    await ws.send(json.dumps({"event": "clear", "streamSid": "MZ1"}))

        async with websockets.serve(interviewer, "127.0.0.1", 0) as server:
            link = TwilioLoopbackLink(f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}",
                                      {})
            await link.connect()
            await until(lambda: link.received == 1)
            await until(lambda: link.playout.buffered_s == 0)
            await link.hangup()

    asyncio.run(main())


def test_the_stream_server_hands_over_the_call_and_stop_ends_it() -> None:
    import websockets

    async def main() -> None:
        server = await AgentStreamServer().start()
        try:
            ids = StreamIds.new()
            writer = MediaStreamWriter(ids)
            async with websockets.connect(server.url, proxy=None) as twilio:
                await twilio.send(json.dumps(writer.connected()))
                await twilio.send(json.dumps(writer.start({"call_id": "c7"})))
                link = await server.accept("c7", timeout_s=5)
                assert (link.stream_sid, link.call_sid) == (ids.stream_sid, ids.call_sid)
                await twilio.send(json.dumps(writer.media(TONE, 0)))
                await until(lambda: link.received == 1)
                await link.send_frame(TONE)
                sent = json.loads(await twilio.recv())
                assert sent == {"event": "media", "streamSid": ids.stream_sid,
                                "media": {"payload": pcm_to_payload(TONE)}}
                await twilio.send(json.dumps(writer.stop()))
                await until(link.closed.is_set)
                await link.hangup()
            stats = await link.stats()
            assert (stats["packets_sent"], stats["packets_received"]) == (1, 1)
        finally:
            await server.close()

    asyncio.run(main())
