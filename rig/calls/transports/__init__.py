"""The transports of a real call, each with the caller agent's link and its wire format:
``twilio`` (Media Streams over a websocket; a package: messages, links, account),
``webrtc`` (pipecat's SmallWebRTC signalling, aiortc), ``sip`` (a small SIP user agent and RTP
PCMU; a package: rtp, message, caller, and the interviewer behind a UA)."""
