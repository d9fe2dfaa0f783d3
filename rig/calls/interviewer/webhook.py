"""The results webhook: ``POST /results``, where an external interviewer returns its scores.

``Authorization: Bearer <token>``, the token read from the environment variable named at
start-up (never logged); the body is one record or a list of them, each validated as
:class:`rig.calls.interviewer.results.ExternalScore` and stored with ``source: webhook``
(:mod:`rig.calls.interviewer.results` describes the store and the records).

(FastAPI resolves endpoint annotations at import, so its names are imported at module level.)
"""

from __future__ import annotations

import os

from fastapi import HTTPException, Request
from pydantic import ValidationError

from rig.calls.interviewer.results import ResultStore
from rig.config import DuplicateKeyError, loads_strict
from rig.errors import ConfigError
from rig.webguard import read_body


def _external_scores(body: object) -> list:
    """The :class:`~rig.calls.interviewer.results.ExternalScore` records of one ``POST /results``
    body.

    Raises:
        HTTPException: 422 when the body is not an object or a list of them, a record is
            invalid (names the item and the field), or one call id is listed twice with
            different contents (names the call id: which one is meant cannot be told).
    """
    from rig.calls.interviewer.results import LOG_FIELDS, ExternalScore

    items = body if isinstance(body, list) else [body]
    scores = []
    for i, x in enumerate(items):
        if not isinstance(x, dict):
            raise HTTPException(422, f"item {i}: expected a JSON object with call_id and "
                                f"score (got {type(x).__name__})")
        x = {k: v for k, v in x.items() if k not in LOG_FIELDS}  # the store stamps these
        try:
            scores.append(ExternalScore.model_validate(x))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "record"
            where = f"item {i}: " if isinstance(body, list) else ""
            raise HTTPException(422, f"{where}{field}: {err['msg']}") from exc
    seen: dict[str, object] = {}
    out = []
    for s in scores:
        prev = seen.setdefault(s.call_id, s)
        if prev is s:
            out.append(s)
        elif prev != s:
            raise HTTPException(422, f"call_id {s.call_id!r} is listed twice in one body with "
                                "different contents (score "
                                f"{prev.score} and {s.score}, decision {prev.decision} and "
                                f"{s.decision}); send one record per call id (a later POST "
                                "corrects an earlier one)")
    return out


def bearer_token(request) -> str:
    """The token of an ``Authorization: Bearer <token>`` header ("" without one: a header
    without the ``Bearer`` scheme is no token)."""
    auth = request.headers.get("Authorization", "")
    return auth[len("Bearer "):].strip() if auth.startswith("Bearer ") else ""


#: Default largest ``POST /results`` body, MB (a list of a few thousand records with
#: transcripts fits; ``rig interviewer results --max-body-mb`` sets another).
MAX_BODY_MB = 16.0


def results_router(store: ResultStore, token_env: str, max_body_mb: float = MAX_BODY_MB):
    """A FastAPI router with ``POST /results`` (Bearer token from env var ``token_env``,
    compared with ``hmac.compare_digest``: constant time).

    The body is one record or a list of them (:func:`_external_scores`); each is stored with
    ``source: webhook``. The store is a time-ordered log: a later POST for a call id
    corrects an earlier one. A body that is not JSON is answered 400; one over
    ``max_body_mb`` 413, from its ``Content-Length`` before it is read, or as soon as a
    chunked body passes the limit (:func:`rig.webguard.read_body`); the token is checked
    first, so without it nothing of the body is read.

    Raises:
        ConfigError: the environment variable is not set (the service refuses to start an
            unauthenticated results endpoint).
    """
    import hmac

    from fastapi import APIRouter

    token = os.environ.get(token_env)
    if not token:
        raise ConfigError(f"${token_env}", "", "the results webhook needs a token in this "
                          "environment variable")
    router = APIRouter()
    max_bytes = int(max_body_mb * 1024 * 1024)

    @router.post("/results")
    async def post_results(request: Request):
        given = bearer_token(request)
        if not hmac.compare_digest(given.encode(), token.encode()):
            raise HTTPException(status_code=401, detail="bad or missing bearer token")
        raw = await read_body(request, max_bytes)
        try:
            body = loads_strict(raw)
        except DuplicateKeyError as exc:
            raise HTTPException(400, f"the body names a key twice: {exc}") from None
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
            raise HTTPException(400, f"the body is not JSON ({exc}); send "
                                '{"call_id": ..., "score": ...} or a list of them') from None
        scores = _external_scores(body)
        for s in scores:
            store.put({**s.model_dump(mode="json"), "source": "webhook"})
        return {"accepted": len(scores)}

    return router
