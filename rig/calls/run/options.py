"""The options of a campaign over a transport, checked together before any model loads.

:func:`transport_call_options` is what ``rig campaign run`` calls with its ``--transport``
and the options that only some transports use; it returns the keyword arguments of
:class:`rig.calls.run.caller.TransportCaller` or raises :class:`~rig.errors.ConfigError`
naming the option and the value. An option that the transport (or the absence of the option
it goes with) does not use is refused, never ignored. Importing this module needs no extra.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from rig.errors import ConfigError, RigError

#: ``sim`` (the simulated line) and the real transports
TRANSPORTS: tuple[str, ...] = ("sim", "webrtc", "twilio", "sip", "pipecat")
REAL_TRANSPORTS: tuple[str, ...] = ("webrtc", "twilio", "sip")
#: every transport that places a call to a bot (the real ones and the in-process one)
CALL_TRANSPORTS: tuple[str, ...] = (*REAL_TRANSPORTS, "pipecat")
#: the media-stream server's port when ``agent_port`` is not given (with ``twilio_to``)
DEFAULT_AGENT_PORT = 8770

#: The options that only some transports use: (option, the transports that use it, the
#: option without which it is not used either).
TRANSPORT_OPTIONS: tuple[tuple[str, tuple[str, ...], str | None], ...] = (
    ("--interviewer-url", REAL_TRANSPORTS, None),
    ("--results-token-env", REAL_TRANSPORTS, "--interviewer-url"),
    ("--twilio-to", ("twilio",), None),
    ("--twilio-from", ("twilio",), "--twilio-to"),
    ("--stream-url", ("twilio",), "--twilio-to"),
    ("--agent-port", ("twilio",), "--twilio-to"),
    ("--interviewer", ("pipecat",), None),
    ("--bot-clock", ("pipecat",), "--interviewer"),
    ("--score-source", CALL_TRANSPORTS, None),
    ("--result-wait-s", CALL_TRANSPORTS, None),
    ("--call-limit-s", CALL_TRANSPORTS, None),
    ("--answer-in-order", CALL_TRANSPORTS, None),
    ("--conduct", CALL_TRANSPORTS, None),
)


class OptionConflict(ConfigError):
    """An option given with a transport (or without an option) that does not use it;
    ``str(err)`` is one sentence that names both."""

    def __init__(self, option: str, message: str) -> None:
        self.path, self.field, self.problem, self.value = option, "", message, None
        RigError.__init__(self, f"{option} {message}")


@dataclass(frozen=True)
class TransportOptions:
    """The transport options of a campaign as given (None: not given)."""
    transport: str = "sim"
    interviewer_url: str | None = None
    results_token_env: str | None = None
    twilio_to: str | None = None
    twilio_from: str | None = None
    stream_url: str | None = None
    agent_port: int | None = None
    #: ``pipecat:PATH.py:FACTORY``: a pipecat bot run in-process (transport ``pipecat``)
    interviewer: str | None = None
    #: ``real`` or ``fast`` (with ``interviewer``)
    bot_clock: str | None = None
    score_source: str | None = None
    result_wait_s: float | None = None
    #: the caller agent hangs up after this long on a call, s
    call_limit_s: float | None = None
    #: True: the caller agent answers in the bank's order, without matching questions
    answer_in_order: bool | None = None
    #: a conduct list (YAML, as rig/data/conduct.yaml)
    conduct: str | None = None

    def given(self) -> dict[str, object]:
        """Option name (``--twilio-to``) -> value, for the options of
        :data:`TRANSPORT_OPTIONS`."""
        return {option: getattr(self, option[2:].replace("-", "_"))
                for option, _, _ in TRANSPORT_OPTIONS}


def check_transport_options(opts: TransportOptions) -> None:
    """Raise :class:`OptionConflict` for the first option given that ``opts.transport`` (or
    the absence of the option it goes with) does not use."""
    given = opts.given()
    for option, used_by, needs in TRANSPORT_OPTIONS:
        if given[option] is None:
            continue
        if opts.transport not in used_by:
            want = ("a real --transport (webrtc, twilio or sip)" if used_by == REAL_TRANSPORTS
                    else "a call to a bot (--transport webrtc, twilio, sip or pipecat)"
                    if used_by == CALL_TRANSPORTS else f"--transport {' or '.join(used_by)}")
            raise OptionConflict(option, f"needs {want}; --transport {opts.transport} does "
                                         "not use it")
        if needs and given[needs] is None:
            raise OptionConflict(option, f"needs {needs}; without it --transport "
                                         f"{opts.transport} does not use it")


def _check_twilio_account(opts: TransportOptions, env: Mapping[str, str]) -> None:
    """With ``twilio_to``: the account's credentials in ``env``, ``twilio_from`` and a
    public ``wss://`` ``stream_url``."""
    from rig.calls.transports.twilio import missing_credentials, stream_url_problem

    missing = missing_credentials(env)
    if missing:
        raise OptionConflict("--twilio-to", (
            f"places each call through a Twilio account: {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not set in the environment (set "
            "TWILIO_ACCOUNT_SID with TWILIO_AUTH_TOKEN, or with TWILIO_API_KEY_SID and "
            "TWILIO_API_KEY_SECRET)"))
    if not opts.twilio_from:
        raise OptionConflict("--twilio-to", "needs --twilio-from (the account's number to "
                                            "call from)")
    if not opts.stream_url:
        raise OptionConflict("--twilio-to", (
            "needs --stream-url: the public wss:// URL at which Twilio reaches the agent's "
            "media-stream server (--agent-port, e.g. behind a TLS-terminating proxy or "
            "tunnel)"))
    problem = stream_url_problem(opts.stream_url)
    if problem:
        shown = re.sub(r"//[^/@]*@", "//***@", opts.stream_url)  # no user:password echoed
        raise ConfigError("--stream-url", "", problem, shown)


def transport_call_options(opts: TransportOptions,
                           environ: Mapping[str, str] | None = None) -> dict[str, object]:
    """Check the transport options of a campaign together; return the keyword arguments of
    :class:`rig.calls.run.caller.TransportCaller` besides the transport and the paths
    (``interviewer_url``, and ``results_token_env``, ``twilio_to``, ``twilio_from``,
    ``stream_url``, ``agent_port``, ``agent_host``, ``score_sources``
    (:func:`rig.calls.bots.score_sources.parse_score_sources`) and ``result_timeout_s``
    (``--result-wait-s``) and ``agent`` (an
    :class:`rig.calls.agent.loop.AgentSettings` with ``--call-limit-s``) when given).

    Args:
        opts: the options as given.
        environ: where ``results_token_env`` and the Twilio credentials are looked up
            (default ``os.environ``).

    Raises:
        ConfigError: an unknown transport; an option the transport does not use; a SIP
            interviewer URL that is not a ``sip:`` URI; a ``ws://``/``wss://`` interviewer URL
            (any case; a Media Streams websocket, used as given) without ``--transport
            twilio``, without a host, with ``results_token_env`` or with only the interviewer
            as score source; with ``twilio_to``, missing Twilio
            credentials, no ``twilio_from`` or ``stream_url``, or a stream URL Twilio cannot
            reach; an empty ``interviewer_url`` or one with blanks in it;
            ``results_token_env`` naming an unset variable; a bad ``--score-source``
            or a ``--result-wait-s`` or ``--call-limit-s`` not above 0. The message names the
            option and the value (a password in the stream URL is not shown).
    """
    env = os.environ if environ is None else environ
    if opts.transport not in TRANSPORTS:
        raise ConfigError("--transport", "", f"one of {', '.join(TRANSPORTS)}", opts.transport)
    check_transport_options(opts)
    url = opts.interviewer_url
    # "" is most often an unset variable ("$BOT_URL"): starting rig's own interviewer
    # instead would measure the wrong one; a URL holds no blanks (RFC 3986, 2)
    if url is not None and not url.strip():
        raise ConfigError("--interviewer-url", "", "is empty: leave the option out to start "
                          "rig's interviewer", url)
    if url is not None and any(c.isspace() for c in url):
        raise ConfigError("--interviewer-url", "", "a URL holds no spaces, tabs or line "
                          "breaks (a copy-paste?)", url)
    if opts.transport == "sip" and url and not url.startswith("sip:"):
        raise ConfigError("--interviewer-url", "", "a SIP interviewer is a sip:user@host:port "
                                                   "URI", url)
    media_ws = is_media_stream_url(url)
    if media_ws and opts.transport != "twilio":
        raise ConfigError("--interviewer-url", "", "a ws:// or wss:// URL is a Media Streams "
                          "websocket: it goes with --transport twilio", url)
    if media_ws:
        try:
            parts = urlsplit(url)
            host = parts.hostname
        except ValueError:  # e.g. an unclosed [IPv6 literal
            host = None
        if not host:
            raise ConfigError("--interviewer-url", "", "a Media Streams websocket is "
                              "ws://HOST:PORT/PATH", url)
        url = parts.scheme + url[len(parts.scheme):]  # WS:// is ws:// (urlsplit lowers it)
        if opts.results_token_env:
            raise OptionConflict("--results-token-env", f"{opts.results_token_env}: a bare "
                                 f"Media Streams websocket ({url}) serves no GET /results "
                                 "to send a token to")
    if media_ws and all(s.kind == "interviewer" for s in _sources(opts.score_source)):
        raise ConfigError("--score-source", "", "a bare Media Streams websocket serves no "
                          "results: give --score-source rig (or a chain ending in it)",
                          opts.score_source or "interviewer")
    if opts.twilio_to:
        _check_twilio_account(opts, env)
    if opts.transport == "pipecat":
        if not opts.interviewer:
            raise OptionConflict("--transport pipecat", "needs --interviewer "
                                                        "pipecat:PATH.py:FACTORY")
        from rig.calls.bots.app import load_bot

        load_bot(opts.interviewer)  # the file, the factory and its signature, before any call
    token_env = opts.results_token_env
    if token_env and not env.get(token_env):
        raise ConfigError("--results-token-env", "", f"the environment variable {token_env} "
                          "is not set (or empty): it must hold the interviewer's results token")
    out: dict[str, object] = {"interviewer_url": url}
    if media_ws:  # the bot's own websocket (pipecat's runner: /ws): no GET /results to ask
        out["no_results_route"] = url
    if opts.interviewer:
        out["bot"] = opts.interviewer
    if opts.bot_clock:
        if opts.bot_clock not in ("real", "fast"):
            raise ConfigError("--bot-clock", "", "real or fast", opts.bot_clock)
        out["bot_clock"] = opts.bot_clock
    if opts.score_source is not None:
        from rig.calls.bots.score_sources import parse_score_sources

        out["score_sources"] = parse_score_sources(opts.score_source)
    if opts.result_wait_s is not None:
        if not 0 < opts.result_wait_s < math.inf:
            raise ConfigError("--result-wait-s", "", "must be > 0 and finite (seconds)",
                              opts.result_wait_s)
        out["result_timeout_s"] = float(opts.result_wait_s)
    agent: dict[str, object] = {}
    if opts.call_limit_s is not None:
        if not 0 < opts.call_limit_s < math.inf:
            raise ConfigError("--call-limit-s", "", "must be > 0 and finite (seconds)",
                              opts.call_limit_s)
        agent["time_limit_s"] = float(opts.call_limit_s)
    if opts.answer_in_order:
        agent["match_questions"] = False
    if agent:
        from rig.calls.agent.loop import AgentSettings

        out["agent"] = AgentSettings(**agent)
    if opts.conduct is not None:
        from rig.calls.conduct import load_conduct

        load_conduct(opts.conduct)  # the file and its patterns, before any call
        out["conduct"] = opts.conduct
    if token_env:
        out["results_token_env"] = token_env
    if opts.twilio_to:
        out.update(twilio_to=opts.twilio_to, twilio_from=opts.twilio_from,
                   stream_url=opts.stream_url, agent_host="0.0.0.0",
                   agent_port=DEFAULT_AGENT_PORT if opts.agent_port is None
                   else opts.agent_port)
    return out


def is_media_stream_url(url: str | None) -> bool:
    """Whether ``--interviewer-url`` is a bot's own Media Streams websocket (``ws://`` or
    ``wss://``, any case), dialled as given, rather than rig's interviewer (``http://``)."""
    return bool(url) and url.lower().startswith(("ws://", "wss://"))


def _sources(spec: str | None):
    """The ``--score-source`` chain (the default: the interviewer's result)."""
    from rig.calls.bots.score_sources import DEFAULT_SCORE_SOURCES, parse_score_sources

    return parse_score_sources(spec) if spec is not None else DEFAULT_SCORE_SOURCES
