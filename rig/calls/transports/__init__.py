"""Caller-side links (and wire formats) per transport: ``twilio``, ``webrtc``, ``sip``."""
