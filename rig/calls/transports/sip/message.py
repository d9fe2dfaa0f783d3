"""SIP messages (an RFC 3261 subset) and their SDP bodies (RFC 4566, offer/answer per RFC 3264).

Enough for a direct call between two user agents over UDP: parsing a datagram into a
:class:`SipMessage` (compact header forms expanded), building requests and responses, and an
SDP offer of PCMU at 20 ms.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from rig.calls.media import FRAME_MS


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


def new_tag() -> str:
    """A fresh tag or branch suffix (10 hex digits)."""
    return uuid.uuid4().hex[:10]


def sip_response(req: SipMessage, status: str, extra: list[tuple[str, str]], body: str = "",
                 to_tag: str | None = None) -> bytes:
    """The response ``status`` (``"200 OK"``) to ``req``: its Via, From, To (with ``to_tag``
    added), Call-ID and CSeq, then ``extra`` headers."""
    to = req.header("to")
    if to_tag and ";tag=" not in to:
        to = f"{to};tag={to_tag}"
    hs = [("Via", v) for v in req.all("via")]
    hs += [("From", req.header("from")), ("To", to), ("Call-ID", req.header("call-id")),
           ("CSeq", req.header("cseq")), *extra]
    return build_sip(f"SIP/2.0 {status}", hs, body)
