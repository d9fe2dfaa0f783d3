"""A call through a Twilio account: TwiML, stream URLs, webhook signatures, credentials, REST.

With an account, :func:`place_call` creates the call with the REST API and TwiML
``<Connect><Stream>`` (:func:`twiml_connect_stream`); Twilio then connects the answered call's
audio to the rig's media-stream server (``links.AgentStreamServer``) at a public ``wss://``
URL (:func:`stream_url_problem` says why one would not do).

Credentials come from the environment only (``TWILIO_ACCOUNT_SID`` with
``TWILIO_AUTH_TOKEN``, or ``TWILIO_API_KEY_SID`` with ``TWILIO_API_KEY_SECRET``) and are never
logged or written (:func:`scrub_credentials`). Webhooks are checked with
:func:`validate_signature` (``X-Twilio-Signature``, Twilio docs "Webhooks security":
HMAC-SHA1, keyed by the auth token, of the full URL followed by each POST parameter name and
value sorted by name, base64-encoded).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import quoteattr

from rig.errors import ConfigError


def twiml_connect_stream(stream_url: str, parameters: Mapping[str, str]) -> str:
    """TwiML that connects the call's audio to a bidirectional Media Stream at ``stream_url``
    (``wss://...``), passing ``parameters`` as ``<Parameter>`` (they arrive in
    ``start.customParameters``). Twilio docs: TwiML ``<Connect><Stream>``.

    Raises:
        ValueError: the URL is not ``wss://`` or ``ws://``.
    """
    if not stream_url.startswith(("wss://", "ws://")):
        raise ValueError(f"a media stream URL must start with wss:// (got {stream_url!r})")
    params = "".join(f"<Parameter name={quoteattr(str(k))} value={quoteattr(str(v))}/>"
                     for k, v in parameters.items())
    return (f'<?xml version="1.0" encoding="UTF-8"?><Response><Connect>'
            f"<Stream url={quoteattr(stream_url)}>{params}</Stream></Connect></Response>")


def stream_url_problem(url: str) -> str | None:
    """Why Twilio could not connect a call's media stream to ``url``, or None. Twilio
    connects to ``wss://`` URLs only, and from the internet: a loopback, unspecified
    (``0.0.0.0``), private or link-local address cannot be reached."""
    import ipaddress
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018  (raises on a port out of range)
    except ValueError as exc:
        return f"not a URL ({exc})"
    if parts.scheme != "wss":
        return "Twilio connects media streams to wss:// URLs only"
    if not host:
        return "a wss:// URL needs a host"
    host = host.rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return f"{host} is this machine, which Twilio cannot reach"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        if not re.fullmatch(r"[0-9.]+|0x[0-9a-f.x]+", host, re.I):
            return None  # a host name
        try:  # the short and numeric IPv4 forms resolvers accept: 127.1, 2130706433
            ip = ipaddress.ip_address(socket.inet_aton(host))
        except OSError:
            return f"{host} is not an address"
    if not ip.is_global:  # loopback, 0.0.0.0, private, link-local, shared (100.64/10), ...
        return f"{host} is not a public address; Twilio cannot reach it"
    return None


def compute_signature(url: str, params: Mapping[str, str], auth_token: str) -> str:
    """``X-Twilio-Signature`` of a webhook request: base64(HMAC-SHA1(auth_token, url +
    concatenation of name + value for each POST parameter sorted by name)). For a GET or a
    JSON body, ``params`` is empty and the URL carries the query."""
    payload = url + "".join(f"{k}{params[k]}" for k in sorted(params))
    digest = hmac.new(auth_token.encode(), payload.encode("utf-8"), hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def validate_signature(url: str, params: Mapping[str, str], signature: str,
                       auth_token: str) -> bool:
    """True when ``signature`` is the request's valid ``X-Twilio-Signature`` (constant-time
    comparison). Twilio signs the URL it called, as configured (scheme, host, port, path and
    query)."""
    if not signature:
        return False
    return hmac.compare_digest(compute_signature(url, params, auth_token), signature)


def missing_credentials(env: Mapping[str, str] | None = None) -> list[str]:
    """The names of the environment variables a Twilio REST call still needs (empty when
    :meth:`TwilioCredentials.from_env` would succeed): ``TWILIO_ACCOUNT_SID``, and
    ``TWILIO_AUTH_TOKEN`` unless an API key is being used, in which case both
    ``TWILIO_API_KEY_SID`` and ``TWILIO_API_KEY_SECRET``. Never reads out a value."""
    env = os.environ if env is None else env
    missing = [] if env.get("TWILIO_ACCOUNT_SID") else ["TWILIO_ACCOUNT_SID"]
    if env.get("TWILIO_API_KEY_SID") or env.get("TWILIO_API_KEY_SECRET"):
        missing += [n for n in ("TWILIO_API_KEY_SID", "TWILIO_API_KEY_SECRET")
                    if not env.get(n)]
    elif not env.get("TWILIO_AUTH_TOKEN"):
        missing.append("TWILIO_AUTH_TOKEN")
    return missing


@dataclass(frozen=True)
class TwilioCredentials:
    """Account SID and a secret, from the environment. ``repr`` never shows the secret."""
    account_sid: str
    username: str
    password: str

    def __repr__(self) -> str:
        return f"TwilioCredentials(account_sid={self.account_sid!r}, secret=***)"

    @staticmethod
    def from_env(env: Mapping[str, str] | None = None) -> TwilioCredentials:
        """``TWILIO_ACCOUNT_SID`` plus ``TWILIO_AUTH_TOKEN``, or plus ``TWILIO_API_KEY_SID`` and
        ``TWILIO_API_KEY_SECRET``.

        Raises:
            ConfigError: a variable is missing (names it, never shows a value).
        """
        env = os.environ if env is None else env
        sid = env.get("TWILIO_ACCOUNT_SID")
        if not sid:
            raise ConfigError("$TWILIO_ACCOUNT_SID", "", "not set; Twilio calls need the "
                              "account SID in the environment")
        if env.get("TWILIO_API_KEY_SID") or env.get("TWILIO_API_KEY_SECRET"):
            key, secret = env.get("TWILIO_API_KEY_SID"), env.get("TWILIO_API_KEY_SECRET")
            if not key or not secret:
                raise ConfigError("$TWILIO_API_KEY_SID/$TWILIO_API_KEY_SECRET", "",
                                  "set both or neither")
            return TwilioCredentials(sid, key, secret)
        token = env.get("TWILIO_AUTH_TOKEN")
        if not token:
            raise ConfigError("$TWILIO_AUTH_TOKEN", "", "not set (or set TWILIO_API_KEY_SID "
                              "and TWILIO_API_KEY_SECRET)")
        return TwilioCredentials(sid, sid, token)


#: The environment variables whose values :func:`scrub_credentials` removes.
CREDENTIAL_VARIABLES = ("TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_API_KEY_SID",
                        "TWILIO_API_KEY_SECRET")
_ACCOUNT_PATH = re.compile(r"(/Accounts/)[^/\s?#'\"]+")
_TWILIO_SIDS = re.compile(r"\b(AC|SK)[0-9a-fA-F]{32}\b")


def scrub_credentials(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with Twilio credentials replaced by ``***``: the values of the
    :data:`CREDENTIAL_VARIABLES` set in ``env`` (default: the environment), the account in a
    REST URL (``/Accounts/AC.../Calls.json``, as the twilio package's and requests' errors
    show it) and anything shaped like an account or API key SID (``AC``/``SK`` and 32 hex
    digits). For error texts that are printed or stored in rows."""
    env = os.environ if env is None else env
    for name in CREDENTIAL_VARIABLES:
        value = env.get(name) or ""
        if len(value) >= 4:
            text = text.replace(value, "***")
    text = _ACCOUNT_PATH.sub(r"\1***", text)
    return _TWILIO_SIDS.sub(r"\1***", text)


class TwilioRestError(RuntimeError):
    """A REST call to Twilio failed; the message has the credentials scrubbed."""


def place_call(*, to: str, from_: str, stream_url: str, parameters: Mapping[str, str],
               credentials: TwilioCredentials | None = None, http_client: Any = None,
               status_callback: str | None = None, time_limit_s: int = 600) -> str:
    """Place an outbound call with the Twilio REST API (``POST /2010-04-01/Accounts/{sid}/
    Calls.json``, through the ``twilio`` package) whose TwiML connects the answered call's
    audio to the rig's media-stream websocket. Returns the call SID.

    Args:
        to: the interviewer's number (E.164, e.g. ``+15551234567``) or a SIP URI.
        from_: a Twilio number of the account (E.164).
        stream_url: ``wss://`` URL of the rig's media-stream endpoint.
        parameters: passed to the stream as custom parameters (the rig's ``call_id``...).
        credentials: default :meth:`TwilioCredentials.from_env`.
        http_client: a ``twilio.http.HttpClient`` (tests pass one that records the request).
        time_limit_s: Twilio ends the call after this many seconds.

    Raises:
        TwilioRestError: the request failed (the twilio package's or the HTTP library's
            error, its text with the account SID and secrets scrubbed, no traceback chained).
    """
    from twilio.rest import Client

    creds = credentials or TwilioCredentials.from_env()
    client = Client(creds.username, creds.password, account_sid=creds.account_sid,
                    http_client=http_client)
    kwargs: dict[str, Any] = {"to": to, "from_": from_, "time_limit": time_limit_s,
                              "twiml": twiml_connect_stream(stream_url, parameters)}
    if status_callback:
        kwargs["status_callback"] = status_callback
    try:
        return client.calls.create(**kwargs).sid
    except Exception as exc:
        env = {"TWILIO_ACCOUNT_SID": creds.account_sid, "TWILIO_API_KEY_SID": creds.username,
               "TWILIO_AUTH_TOKEN": creds.password}
        if hasattr(exc, "status") and hasattr(exc, "msg"):  # TwilioRestException: plain text
            code = getattr(exc, "code", None)
            text = f"HTTP {exc.status} error: {exc.msg}" + (f" (Twilio error {code})"
                                                             if code else "")
        else:
            text = str(exc)
        msg = scrub_credentials(scrub_credentials(f"{type(exc).__name__}: {text}", env))
        # from None: the chained errors repeat the URL with the account SID in it
        raise TwilioRestError(f"placing the call failed: {msg}") from None
