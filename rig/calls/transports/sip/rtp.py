"""RTP (RFC 3550) over UDP: packets, the receiver's loss and jitter, a 20 ms PCMU session.

Media is RTP payload type 0, PCMU (G.711 mu-law, 8000 Hz clock, RFC 3551 section 4.5.14), 160
samples per 20 ms packet; the receiver counts lost packets from sequence gaps (RFC 3550
appendix A.3) and measures interarrival jitter in timestamp units (appendix A.8), reported in
ms. :class:`UdpProtocol` carries the SIP signalling too.
"""

from __future__ import annotations

import asyncio
import random
import struct
from dataclasses import dataclass

import numpy as np

from rig.calls.media import CALL_RATE_HZ, JitterMeter
from rig.channel.codecs import get_codec

#: The codec SIP calls carry (payload type 0, PCMU): its registry entry.
CODEC = get_codec("mulaw", carrier="sip")
PCMU_PT = 0
RTP_HEADER = struct.Struct("!BBHII")


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


class UdpProtocol(asyncio.DatagramProtocol):
    """A datagram endpoint that hands each datagram to ``on_datagram(data, addr)``."""

    def __init__(self, on_datagram) -> None:
        self.on_datagram = on_datagram
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport

    def datagram_received(self, data, addr) -> None:
        self.on_datagram(data, addr)


class RtpSession:
    """Send 20 ms PCMU packets to a peer; receive into a playout buffer or a callback."""

    def __init__(self, on_pcm) -> None:
        self.ssrc = random.getrandbits(32)
        self.seq = random.getrandbits(16)
        self.ts = random.getrandbits(32)
        self.sent = 0
        self.rx = RtpReceiver()
        self.peer: tuple[str, int] | None = None
        self.proto: UdpProtocol | None = None
        self._on_pcm = on_pcm
        self._first = True

    async def open(self, host: str) -> int:
        loop = asyncio.get_running_loop()
        _t, self.proto = await loop.create_datagram_endpoint(
            lambda: UdpProtocol(self._datagram), local_addr=(host, 0))
        return self.proto.transport.get_extra_info("sockname")[1]

    def _datagram(self, data: bytes, _addr) -> None:
        try:
            pkt = parse_rtp(data)
        except ValueError:
            return
        if pkt.payload_type != PCMU_PT:
            return
        self.rx.add(pkt, asyncio.get_running_loop().time())
        self._on_pcm(CODEC.decode_pcm16(pkt.payload).astype(np.int16).tobytes())

    def send(self, pcm: bytes) -> None:
        if self.peer is None or self.proto is None or self.proto.transport is None:
            return
        payload = CODEC.encode_pcm16(np.frombuffer(pcm, np.int16)).tobytes()
        self.proto.transport.sendto(rtp_packet(self.seq, self.ts, self.ssrc, payload,
                                               marker=self._first), self.peer)
        self._first = False
        self.seq = (self.seq + 1) & 0xFFFF
        self.ts = (self.ts + len(payload)) & 0xFFFFFFFF
        self.sent += 1

    def close(self) -> None:
        if self.proto is not None and self.proto.transport is not None:
            self.proto.transport.close()
