"""A scorer backend for any OpenAI-compatible chat endpoint (``POST {base_url}/chat/completions``).

Production interviewers often call a hosted model; this backend grades with the same prompts
through such an endpoint. ``llama_cpp.server`` serves rig's embedded GGUF behind the same API,
which is how the backend is tested on loopback.

* The base URL and model come from the configuration; the API key only from the environment
  variable the configuration names (``api_key_env``). The key is read at each request and kept
  in no attribute, so it cannot reach a file, a log, a repr or a pickle; every error message
  and every reply is scrubbed of it before it leaves the backend.
* The GBNF grammar is not sent (the API has no such field): a reply can fail to parse, and the
  caller's parser counts it as a failure, never as a score.
* Standard library HTTP only (``urllib``). Loopback endpoints bypass any configured proxy.

Errors::

    RigError
    └── ScorerBackendError   the endpoint failed; ``retryable`` for timeouts, 429 and 5xx
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request

from rig.errors import ConfigError, RigError
from rig.scorer.base import (
    LevelsReply,
    ModeUnsupported,
    Scorer,
    ScoringMode,
    TranscriptTooLong,
)
from rig.scorer.openai_levels import TOP_LOGPROBS, levels_from_logprobs

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_LOOPBACK = {"localhost", "127.0.0.1", "::1"}
#: an endpoint's refusal of a prompt over its context (OpenAI and vLLM: "maximum context
#: length", ``context_length_exceeded``; llama.cpp's server: "exceeds the available context
#: size"): the grading is ``too_long``, not a backend error
_CONTEXT_ERROR = re.compile(r"context[ _](length|size|window)|maximum context", re.IGNORECASE)
_CONVENTIONAL_ENV = re.compile(r"^[A-Z][A-Z0-9_]*$")
#: a key shorter than this (``EMPTY``, ``x``: what local servers take) is not scrubbed from
#: replies, where replacing it would corrupt ordinary text; it is still never written by rig
MIN_SCRUB_KEY_CHARS = 8


class ScorerBackendError(RigError):
    """The endpoint failed. ``retryable``: a timeout, a refused connection, 429 or 5xx."""

    def __init__(self, message: str, *, status: int | None = None,
                 retryable: bool = False) -> None:
        self.status, self.retryable = status, retryable
        super().__init__(message)


def redact_url(url: str) -> str:
    """``url`` without user:password and without query parameters (either may hold secrets)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class OpenAICompatScorer(Scorer):
    """Chat completions from an OpenAI-compatible endpoint.

    Args:
        base_url: the API root, e.g. ``http://127.0.0.1:8080/v1`` or
            ``https://api.openai.com/v1`` (``/chat/completions`` is appended).
        model: the model name the endpoint expects.
        api_key_env: the NAME of the environment variable holding the key (e.g.
            ``OPENAI_API_KEY``), or None for an endpoint without authentication. The variable
            must be set when the scorer is built.
        temperature: 0 asks for greedy decoding; ``seed`` is sent with every request.
        max_tokens: cap on the reply.
        timeout_s: per request; max_retries: further tries after a retryable failure, with
            1 s, 2 s, ... pauses.
        json_mode: also send ``response_format: {"type": "json_object"}`` (not every endpoint
            supports it; off by default, so the prompt alone asks for JSON).
        with_reason: for :meth:`score`, ask for a one-sentence reason with the points.

    Raises:
        ConfigError: ``api_key_env`` is not a variable name, or the variable is unset (the
            message names the variable, never a value).
    """

    name = "openai"
    reproducible_at_zero = False  # an endpoint promises no determinism at temperature 0

    def __init__(self, base_url: str, model: str, api_key_env: str | None = None, *,
                 temperature: float = 0.0, max_tokens: int = 256, timeout_s: float = 120.0,
                 max_retries: int = 2, json_mode: bool = False,
                 with_reason: bool = False, mode: ScoringMode = "argmax",
                 budget_s: float | None = None) -> None:
        if not base_url or urllib.parse.urlsplit(base_url).scheme not in ("http", "https"):
            raise ConfigError("scorer", "base_url", "must be an http:// or https:// URL")
        if api_key_env is not None:
            if not _ENV_NAME.match(api_key_env):
                # never echo the value: a key pasted here by mistake must not reach a log
                raise ConfigError("scorer", "api_key_env",
                                  "must be the NAME of an environment variable (letters, "
                                  "digits, underscore), not the key itself; value not shown")
            if not os.environ.get(api_key_env):
                # a lower-case "name" may be a key pasted by mistake (sk_live_...): not echoed
                shown = (api_key_env if _CONVENTIONAL_ENV.match(api_key_env)
                         else "it names (not shown: not an upper-case variable name)")
                raise ConfigError("scorer", "api_key_env",
                                  f"the environment variable {shown} is not set")
        self.base_url = base_url.rstrip("/")
        self.model, self.api_key_env = model, api_key_env
        self.temperature, self.max_tokens = temperature, max_tokens
        self.timeout_s, self.max_retries = timeout_s, max_retries
        self.json_mode, self.with_reason = json_mode, with_reason
        self.mode, self.budget_s = mode, budget_s

    def __repr__(self) -> str:
        return (f"OpenAICompatScorer(base_url={redact_url(self.base_url)!r}, "
                f"model={self.model!r}, api_key_env={self.api_key_env!r})")

    def describe(self) -> dict:
        """What identifies this scorer in outputs: never the key, only the variable's name."""
        return {"backend": "openai", "base_url": redact_url(self.base_url),
                "model": self.model, "api_key_env": self.api_key_env,
                "temperature": self.temperature, "max_tokens": self.max_tokens,
                "json_mode": self.json_mode, "grammar_sent": False}

    # -- the key: read on use, scrubbed from everything that leaves -------------------------

    def _headers(self) -> dict[str, str]:
        h = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key_env:
            h["Authorization"] = "Bearer " + os.environ.get(self.api_key_env, "")
        return h

    def _scrub(self, text: str) -> str:
        """``text`` with the key's exact value replaced by ``[redacted]``. Only the value is
        matched: ordinary words ("a bearer of good news") are left alone."""
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else ""
        if len(key) >= MIN_SCRUB_KEY_CHARS:
            text = text.replace(key, "[redacted]")
        return text

    # -- the request ------------------------------------------------------------------------

    def _opener(self) -> urllib.request.OpenerDirector:
        host = urllib.parse.urlsplit(self.base_url).hostname or ""
        if host in _LOOPBACK or host.startswith("127."):
            return urllib.request.build_opener(urllib.request.ProxyHandler({}))
        return urllib.request.build_opener()

    def _post_once(self, body: bytes) -> dict:
        url = self.base_url + "/chat/completions"
        shown = redact_url(url)
        try:
            with self._opener().open(urllib.request.Request(
                    url, data=body, headers=self._headers(), method="POST"),
                    timeout=self.timeout_s) as resp:
                payload = resp.read()
        except urllib.error.HTTPError as exc:
            try:
                text = exc.read().decode("utf-8", "replace")[:300]
            except Exception:
                text = ""
            code = exc.code
            msg = self._scrub(f"POST {shown}: HTTP {code}: {text}".strip())
            if code in (400, 413) and _CONTEXT_ERROR.search(text):
                raise TranscriptTooLong(msg) from None  # never cut to fit: recorded as such
            raise ScorerBackendError(msg, status=code,
                                     retryable=code == 429 or code >= 500) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            msg = self._scrub(f"POST {shown}: {type(exc).__name__}: {reason}")
            raise ScorerBackendError(msg, retryable=True) from None
        try:
            return json.loads(payload)
        except json.JSONDecodeError:
            raise ScorerBackendError(self._scrub(
                f"POST {shown}: the endpoint did not return JSON: "
                f"{payload[:200].decode('utf-8', 'replace')}")) from None

    def _complete(self, system: str, user: str, grammar: str, seed: int, *, head: str = "",
                  deadline: float | None = None) -> str:
        out = self._chat(system, user, seed)
        try:
            content = out["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ScorerBackendError(self._scrub(
                "the endpoint's reply has no choices[0].message.content: "
                f"{json.dumps(out)[:200]}")) from None
        # scrubbed too: an endpoint (or a proxy) that echoes the request must not carry the
        # key into the raw replies that rig stores
        return self._scrub(content or "")

    def _complete_levels(self, system: str, head: str, tail: str,
                         criterion_ids: list[str], seed: int, *,
                         deadline: float | None = None) -> LevelsReply:
        """``expected`` mode through ``logprobs``/``top_logprobs`` (the OpenAI chat API's
        token log-probabilities): see :func:`rig.scorer.openai_levels.levels_from_logprobs`.

        Raises:
            ModeUnsupported: the endpoint returned no ``top_logprobs``.
        """
        out = self._chat(system, head + tail, seed, top_logprobs=TOP_LOGPROBS)
        try:
            content = out["choices"][0]["logprobs"]["content"]
        except (KeyError, IndexError, TypeError):
            content = None
        if (not content or not isinstance(content, list) or not isinstance(content[0], dict)
                or "top_logprobs" not in content[0]):
            raise ModeUnsupported(
                "scorer mode expected needs token log-probabilities, and "
                f"{redact_url(self.base_url)} (model {self.model!r}) returned no "
                "choices[0].logprobs.content[].top_logprobs; use mode: argmax with this "
                "endpoint")
        return levels_from_logprobs(content, criterion_ids)

    def _chat(self, system: str, user: str, seed: int, top_logprobs: int | None = None
              ) -> dict:
        request = {"model": self.model,
                   "messages": [{"role": "system", "content": system},
                                {"role": "user", "content": user}],
                   "temperature": self.temperature, "max_tokens": self.max_tokens,
                   "seed": int(seed)}
        if top_logprobs:
            request.update(logprobs=True, top_logprobs=top_logprobs)
        if self.json_mode:
            request["response_format"] = {"type": "json_object"}
        body = json.dumps(request).encode("utf-8")
        for attempt in range(self.max_retries + 1):
            try:
                out = self._post_once(body)
                break
            except ScorerBackendError as exc:
                if not exc.retryable or attempt == self.max_retries:
                    raise
                time.sleep(1.0 * (attempt + 1))
        return out
