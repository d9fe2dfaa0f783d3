"""Interviewer results keyed by the rig's call id: the records, the store, the HTTP poll.

An interviewer (the reference one in :mod:`rig.calls.interviewer.session`, or an external one under
test) returns what it decided for each call, keyed by the ``call_id`` the rig sent with the
call. The reference interviewer's record is an :class:`InterviewResult` (one
:class:`QuestionResult` per question asked). :class:`ResultStore` keeps them in
``results.jsonl``, a time-ordered log (appended and fsync'ed; each record is stamped with
``received_seq``, 1, 2, ... across restarts, and ``received_at``, epoch s): the last record
for a call id wins, so a later write is a correction. A waiting campaign picks them up
(from the store, or over HTTP with :func:`poll_result`).

External interviewers return scores in one of two ways:

* the results webhook, ``POST /results`` with ``Authorization: Bearer <token>`` (the token is
  read from the environment variable named at start-up, never logged), a JSON body
  ``{"call_id": ..., "score": 0-100 or null, "transcript": ..., "decision": ...}`` or a list
  of them (:func:`rig.calls.interviewer.webhook.results_router`); one body that lists a call
  id twice with different contents is refused;
* a CSV or Parquet file with at least ``call_id`` and ``score`` columns, or a JSONL file of
  the same records (:func:`rig.calls.interviewer.score_import.import_scores`, which also reads
  the logs :class:`ResultStore` writes; :func:`~rig.calls.interviewer.score_import.match_scores`
  joins them onto a campaign's calls).

A campaign waiting on an external interviewer polls ``GET /results/{call_id}``
(:func:`poll_result`); a 404 that is no results route's "not yet" (:func:`pending_404`) stops
the wait (:class:`NoResultsRoute`).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rig.config import DuplicateKeyError, loads_strict
from rig.errors import ConfigError, RigError


class ExternalScore(BaseModel):
    """One score returned by an external interviewer for one call."""
    model_config = ConfigDict(frozen=True, extra="allow")
    call_id: str = Field(min_length=1, max_length=200)
    score: float | None = Field(None, ge=0, le=100, allow_inf_nan=False)
    transcript: str | None = None
    decision: Literal["advance", "reject"] | None = None


class QuestionResult(BaseModel):
    """One question of a call, as the interviewer heard and scored it. Times: epoch s.

    ``question_end_epoch_s`` is when the question's audio ended; ``prompt_end_epoch_s`` when
    the last thing said before the graded turn ended (the question, or the last repeat
    request)."""
    model_config = ConfigDict(frozen=True, extra="forbid")
    question_id: str
    question_end_epoch_s: float
    prompt_end_epoch_s: float
    turn_speech_start_epoch_s: float | None
    turn_close_epoch_s: float
    turn_closed_by: str
    transcript: str
    asr_avg_logprob: float | None
    asr_no_speech_prob: float | None
    repeat_requests: int
    attempts: tuple[str, ...]
    score: float | None
    parse_status: str
    scorer_raw: str
    scorer_reason: str | None
    scorer_error: str | None
    seed: int
    t_asr_s: float
    t_scorer_s: float


class InterviewResult(BaseModel):
    """A whole call from the interviewer's side, keyed by the rig's ``call_id``."""
    model_config = ConfigDict(frozen=True, extra="forbid")
    call_id: str
    transport: str
    pipeline_version: str
    started_epoch_s: float
    ended_epoch_s: float
    questions: tuple[QuestionResult, ...]
    status: str = "ok"
    error: str | None = None
    #: the caller's id of this attempt at the call: a retried call has the same ``call_id``,
    #: and the caller takes only the result of its own attempt
    attempt_id: str | None = None


def result_is_attempt(row: dict, attempt_id: str | None) -> bool:
    """Whether a stored result belongs to the caller's attempt ``attempt_id``. A result with
    no ``attempt_id`` (an external interviewer that does not echo it) is accepted."""
    return attempt_id is None or row.get("attempt_id") in (None, attempt_id)


#: Fields :class:`ResultStore` stamps on every record it writes (the log's order).
LOG_FIELDS = ("received_seq", "received_at")


def _jsonl_records(path: Path) -> list[tuple[int, dict]]:
    """(line number, record) of each non-blank line of a JSONL file.

    Raises:
        ConfigError: a line is not a JSON object (names the file and the line).
    """
    out = []
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(path, "", f"cannot read: {exc}") from exc
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = loads_strict(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(path, f"line {n}", f"not JSON ({exc.msg} at column {exc.colno})"
                              ) from exc
        except DuplicateKeyError as exc:
            raise ConfigError(path, f"line {n}", str(exc)) from None
        if not isinstance(rec, dict):
            raise ConfigError(path, f"line {n}", "not a JSON object", type(rec).__name__)
        out.append((n, rec))
    return out


class ResultStore:
    """Results by call id, persisted as JSON lines in ``path``; thread-safe.

    ``put`` takes any pydantic model or dict with a ``call_id`` and stamps it with
    ``received_seq`` and ``received_at`` (:data:`LOG_FIELDS`); the last write for a call id
    wins, in memory and when the file is read back. ``wait`` blocks until one arrives for a
    call id (or the timeout passes, returning None).

    Raises:
        ConfigError: ``path`` holds a line that is not a JSON object with a ``call_id``.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._rows: dict[str, dict] = {}
        self._seq = 0
        self._cv = threading.Condition()
        if path is not None and path.is_file():
            for n, row in _jsonl_records(path):
                if not isinstance(row.get("call_id"), str):
                    raise ConfigError(path, f"line {n}: call_id", "missing or not a string",
                                      row.get("call_id"))
                self._rows[row["call_id"]] = row
                seq = row.get("received_seq")
                if isinstance(seq, int):
                    self._seq = max(self._seq, seq)

    def put(self, result: BaseModel | dict) -> dict:
        """Store (and append) ``result``; returns the record as written."""
        row = result.model_dump(mode="json") if isinstance(result, BaseModel) else dict(result)
        with self._cv:
            self._seq += 1
            row.update(received_seq=self._seq, received_at=round(time.time(), 3))
            self._rows[row["call_id"]] = row
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with open(self.path, "a") as f:
                    f.write(json.dumps(row) + "\n")
                    f.flush()
                    os.fsync(f.fileno())
            self._cv.notify_all()
        return row

    def get(self, call_id: str) -> dict | None:
        with self._cv:
            return self._rows.get(call_id)

    def wait(self, call_id: str, timeout_s: float, attempt_id: str | None = None,
             progress: Callable[[str], None] | None = None,
             progress_every_s: float = 10.0) -> dict | None:
        """The result for ``call_id`` (of attempt ``attempt_id`` when given: an earlier
        attempt's result is not this call's), or None after ``timeout_s``; ``progress`` is
        called with :func:`wait_message` every ``progress_every_s`` of waiting."""
        def ready() -> bool:
            row = self._rows.get(call_id)
            return row is not None and result_is_attempt(row, attempt_id)

        t_start = time.monotonic()
        t_end = t_start + timeout_s
        with self._cv:
            while True:
                left = t_end - time.monotonic()
                step = left if progress is None else min(left, progress_every_s)
                if self._cv.wait_for(ready, timeout=max(0.0, step)):
                    return self._rows[call_id]
                waited = time.monotonic() - t_start
                if waited >= timeout_s:
                    return None
                if progress is not None:
                    progress(wait_message(call_id, waited, timeout_s))

    def __len__(self) -> int:
        return len(self._rows)


class NoResultsRoute(RigError):
    """The interviewer answered ``GET {base}/results/{call_id}`` with a 404 that is no
    results route's "not yet" (:func:`pending_404`): it has no such route, and waiting will not
    help. ``url`` is the URL asked."""

    def __init__(self, url: str) -> None:
        self.url = url
        super().__init__(
            f"GET {url}: HTTP 404 from a server with no results route (not the results "
            "route's 'no result yet'): this interviewer does not serve its scores; use "
            "--score-source rig (the rig grades what the bot received) or --score-source "
            "extractor:MODULE:FUNCTION (read the score from the bot's messages or log), or "
            "a chain such as --score-source interviewer,rig (docs/bots.md, \"Where the score "
            "comes from\")")


#: Starlette's and FastAPI's body of a 404 for a path no route serves
_NO_ROUTE_DETAILS = frozenset({"not found", "404 not found", "404: not found"})


def pending_404(body: bytes, headers: object = None) -> bool:
    """Whether a 404 from ``GET /results/{call_id}`` means "the route exists, no result for
    this call yet" (keep waiting) rather than "no such route" (stop waiting).

    The results route says so (rig's own:
    :meth:`rig.calls.interviewer.service.InterviewerService.app`): a header ``X-Rig-Result:
    pending``, or a JSON object body whose ``detail`` (or ``error`` or ``message``) is a string
    other than the web framework's bare "Not Found" (FastAPI's route answers ``{"detail": "no
    interviewer result for call X"}``; a path with no route ``{"detail": "Not Found"}``). Anything
    else (an HTML or empty body, a bare "Not Found") is no route.

    Args:
        body: the response body (bytes).
        headers: the response headers (a mapping with ``get``), or None.
    """
    if headers is not None and str(headers.get("X-Rig-Result") or "").lower() == "pending":
        return True
    try:
        data = loads_strict(body or b"null")
    except (ValueError, UnicodeDecodeError):
        return False
    if not isinstance(data, dict):
        return False
    for key in ("detail", "error", "message"):
        v = data.get(key)
        if isinstance(v, str) and v.strip():
            return v.strip().lower() not in _NO_ROUTE_DETAILS
    return False


#: Seconds between two "waiting for the interviewer's result" progress lines
PROGRESS_EVERY_S = 10.0


def wait_message(call_id: str, waited_s: float, timeout_s: float) -> str:
    """The progress line of a result wait: ``waiting for the interviewer's result for call X:
    40 s of 300``."""
    return (f"waiting for the interviewer's result for call {call_id}: {waited_s:.0f} s of "
            f"{timeout_s:g}")


def poll_result(base: str, call_id: str, attempt_id: str | None, timeout_s: float,
                token_env: str | None = None, *, route_known: bool = False,
                progress: Callable[[str], None] | None = None,
                progress_every_s: float = PROGRESS_EVERY_S, poll_s: float = 1.0
                ) -> dict | None:
    """The result of attempt ``attempt_id`` of ``call_id`` from an interviewer serving
    ``GET {base}/results/{call_id}`` (a ``sip:`` base: HTTP on the same host and port
    number), polled every ``poll_s`` (1 s); None after ``timeout_s``. A retried call's earlier
    result, stored under the same call id, is skipped. Safe from several threads at once.

    A 404 is the results route's "no result yet" only when it says so (:func:`pending_404`);
    any other 404 means the interviewer has no results route, and is an answer at once
    (:class:`NoResultsRoute`), unless ``route_known`` (the route answered before in this
    campaign: every 404 is then "not yet").

    Args:
        token_env: NAME of the environment variable holding the bearer token (read on use).
        route_known: the route is known to exist (a 404 is never "no route").
        progress: called with :func:`wait_message` every ``progress_every_s`` of waiting.

    Raises:
        NoResultsRoute: a 404 from a server with no results route (``route_known`` False).
        RuntimeError: the interviewer refused the token (HTTP 401 or 403).
    """
    import re
    import urllib.error
    import urllib.request

    sip = re.match(r"^sip:(?:[^@]+@)?([^:;/]+):(\d+)", base)
    if sip:  # a SIP interviewer serves its results over HTTP on the same port number
        base = f"http://{sip.group(1)}:{sip.group(2)}"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    headers = {}
    if token_env:
        headers["Authorization"] = "Bearer " + os.environ.get(token_env, "")
    t_start = time.monotonic()
    t_end = t_start + timeout_s
    next_progress = t_start + progress_every_s
    url = f"{base}/results/{call_id}"
    while True:
        try:
            req = urllib.request.Request(url, headers=headers)
            with opener.open(req, timeout=10) as r:
                row = json.loads(r.read())
            if result_is_attempt(row, attempt_id):
                return row
        except urllib.error.HTTPError as exc:
            try:
                body = exc.read()
            except OSError:  # a body cut short: judged as none
                body = b""
            exc.close()
            if exc.code in (401, 403):  # waiting will not help: say so now
                raise RuntimeError(
                    f"GET {base}/results: HTTP {exc.code}: the interviewer refused the "
                    "results token (" + (f"--results-token-env {token_env}" if token_env
                                         else "none given: use --results-token-env") + ")"
                ) from None
            if exc.code == 404 and not route_known and not pending_404(body, exc.headers):
                raise NoResultsRoute(url) from None
        except Exception:  # the service is busy or not reachable yet
            pass
        now = time.monotonic()
        if progress is not None and now >= next_progress:
            progress(wait_message(call_id, now - t_start, timeout_s))
            next_progress += progress_every_s
        if now + poll_s > t_end:
            return None
        time.sleep(poll_s)
