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
the reference interviewer (:class:`rig.calls.interviewer.session.InterviewSession`, pipecat's Silero
VAD inside) behind a UA on a UDP port. Any SIP UA that answers PCMU can be the far end
(Debian's ``baresip`` with ``answermode=auto`` is, in ``tests/test_calls_sip_integration.py``).
No authentication, no TLS/SRTP, no re-INVITE, no retransmission timers beyond resending the
INVITE: a loopback and lab tool, not a softphone.

Modules: ``rtp`` (RTP packets, loss and jitter, the 20 ms PCMU session, the UDP endpoint),
``message`` (SIP messages and SDP), ``caller`` (:class:`SipLink`), ``interviewer``
(:class:`SipInterviewerThread`). Everything public is importable from here.
"""

from rig.calls.transports.sip.caller import SipLink
from rig.calls.transports.sip.interviewer import SipInterviewerThread
from rig.calls.transports.sip.message import (
    SipMessage,
    build_sip,
    new_tag,
    parse_sip,
    sdp_media,
    sdp_offer,
    sip_response,
)
from rig.calls.transports.sip.rtp import (
    PCMU_PT,
    RTP_HEADER,
    RtpPacket,
    RtpReceiver,
    RtpSession,
    UdpProtocol,
    parse_rtp,
    rtp_packet,
)

__all__ = [
    "PCMU_PT",
    "RTP_HEADER",
    "RtpPacket",
    "RtpReceiver",
    "RtpSession",
    "SipInterviewerThread",
    "SipLink",
    "SipMessage",
    "UdpProtocol",
    "build_sip",
    "new_tag",
    "parse_rtp",
    "parse_sip",
    "rtp_packet",
    "sdp_media",
    "sdp_offer",
    "sip_response",
]
