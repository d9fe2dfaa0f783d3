"""Twilio Media Streams on the wire: the messages, their payloads, and their parsing.

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
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from rig.calls.media import CALL_RATE_HZ, FRAME_BYTES
from rig.channel.codecs import get_codec

#: The codec of every Twilio media stream: its registry entry.
CODEC = get_codec("mulaw", carrier="twilio")

#: Media format of every Twilio media stream.
MEDIA_FORMAT = {"encoding": "audio/x-mulaw", "sampleRate": CALL_RATE_HZ, "channels": 1}
#: mu-law bytes per 20 ms media message.
MULAW_FRAME_BYTES = FRAME_BYTES // 2


def pcm_to_payload(pcm: bytes) -> str:
    """8 kHz int16 PCM -> base64 of G.711 mu-law (a ``media.payload``)."""
    codes = CODEC.encode_pcm16(np.frombuffer(pcm, np.int16))
    return base64.b64encode(codes.tobytes()).decode("ascii")


def payload_to_pcm(payload: str) -> bytes:
    """A ``media.payload`` (base64 mu-law) -> 8 kHz int16 PCM.

    Raises:
        ValueError: the payload is not valid base64.
    """
    codes = base64.b64decode(payload, validate=True)
    return CODEC.decode_pcm16(codes).astype(np.int16).tobytes()


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
