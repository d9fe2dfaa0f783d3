"""Twilio: Media Streams messages, the rig's links, TwiML, REST call placement, webhooks.

Modules: ``stream`` (the Media Streams messages and their mu-law payloads), ``links`` (the
caller agent's side of a stream: :class:`TwilioLoopbackLink` plays Twilio's part against the
interviewer on loopback; :class:`AgentStreamServer` and :class:`TwilioStreamLink` take the
stream Twilio connects for a call placed through an account, :class:`SharedStreamServer`
one server for all of a campaign's calls at once), ``account`` (TwiML
``<Connect><Stream>``, stream URL checks, ``X-Twilio-Signature``, credentials from the
environment, :func:`place_call` through the REST API). Everything public is importable from
here.
"""

from rig.calls.transports.twilio.account import (
    CREDENTIAL_VARIABLES,
    TwilioCredentials,
    TwilioRestError,
    compute_signature,
    missing_credentials,
    place_call,
    scrub_credentials,
    stream_url_problem,
    twiml_connect_stream,
    validate_signature,
)
from rig.calls.transports.twilio.links import (
    AgentStreamServer,
    SharedStreamServer,
    TwilioLoopbackLink,
    TwilioStreamLink,
)
from rig.calls.transports.twilio.stream import (
    MEDIA_FORMAT,
    MULAW_FRAME_BYTES,
    MediaStreamWriter,
    StreamIds,
    parse_message,
    payload_to_pcm,
    pcm_to_payload,
)

__all__ = [
    "CREDENTIAL_VARIABLES",
    "MEDIA_FORMAT",
    "MULAW_FRAME_BYTES",
    "AgentStreamServer",
    "MediaStreamWriter",
    "SharedStreamServer",
    "StreamIds",
    "TwilioCredentials",
    "TwilioLoopbackLink",
    "TwilioRestError",
    "TwilioStreamLink",
    "compute_signature",
    "missing_credentials",
    "parse_message",
    "payload_to_pcm",
    "pcm_to_payload",
    "place_call",
    "scrub_credentials",
    "stream_url_problem",
    "twiml_connect_stream",
    "validate_signature",
]
