"""``rig monitor serve``: an HTTP endpoint that ingests calls pushed by the interviewer system.

FastAPI on uvicorn (both MIT/BSD, the ``monitor`` extra). Endpoints:

``POST /v1/calls`` (bearer token)
    JSON body ``{"metadata": {...}, "audio_base64": "...", "audio_format": "wav"|"mulaw"}``:
    the call's metadata (the fields of :mod:`rig.monitor.meta`; ``audio`` is ignored) and its
    recording, base64-encoded (a WAV file, or raw 8 kHz mu-law bytes). The call is measured
    and stored as ``rig monitor ingest`` does; its recording is saved under the recordings
    folder (named by a hash of the call id) only once it is measured. Answers ``201
    {"call_id", "status": "ingested"}``; ``200 {"status": "duplicate"}`` when the call is
    stored already with the same content; ``400`` for bad metadata or audio and ``409`` for a
    call id stored with other content (``{"detail": reason}``); ``401`` without a valid
    token; ``413`` over ``max_body_mb`` (from ``Content-Length`` before the body is read, or
    as soon as a chunked body passes it: :func:`rig.webguard.read_body`).
``GET /v1/alerts?week=2025-W03`` (bearer token)
    The alerts of a week (default the latest): the content of ``alerts.json``.
``GET /v1/health``
    ``{"status": "ok", "calls": n}`` without a token (for a load balancer's probe).

The token is read from the environment variable named by ``--token-env`` (default
``RIG_MONITOR_TOKEN``) when the server starts, compared in constant time, and never logged
(uvicorn's access log writes the method, path and status, not headers, and its query
strings are redacted: :func:`rig.webguard.redact_access_log`). Requests are
ingested one at a time (one DuckDB writer, and the ASR uses the machine's cores); bind to
loopback or put a TLS-terminating proxy in front: the token travels in clear over plain HTTP.
"""

# No ``from __future__ import annotations`` here: FastAPI reads the endpoint annotations at
# run time, and the request models are defined inside :func:`create_app` (FastAPI is optional).
import base64
import binascii
import contextlib
import hashlib
import hmac
import os
import threading
from pathlib import Path
from typing import Literal

from rig.errors import RigError
from rig.monitor.config import MonitorConfig
from rig.monitor.ingest import ConflictError, IngestError, ingest_one
from rig.monitor.meta import loads_strict, parse_meta
from rig.monitor.signals import SignalStages
from rig.monitor.store import MonitorStore
from rig.webguard import read_body, redact_access_log

MIN_TOKEN_CHARS = 16


def read_token(env_name: str) -> str:
    """The bearer token from the environment.

    Raises:
        RigError: unset or shorter than 16 characters (the value is never shown).
    """
    token = os.environ.get(env_name, "")
    if len(token) < MIN_TOKEN_CHARS:
        raise RigError(f"set the environment variable {env_name} to a random token of at "
                       f"least {MIN_TOKEN_CHARS} characters (e.g. from `openssl rand -hex 32`)")
    return token


def create_app(store: MonitorStore, config: MonitorConfig, token: str, recordings: Path,
               stages: SignalStages | None = None, max_body_mb: float = 64.0):
    """The FastAPI application (the caller runs it with uvicorn and closes ``store``)."""
    from fastapi import FastAPI, HTTPException, Request
    from fastapi.responses import JSONResponse
    from pydantic import BaseModel, ConfigDict

    class CallBody(BaseModel):
        model_config = ConfigDict(extra="forbid")
        metadata: dict
        audio_base64: str
        audio_format: Literal["wav", "mulaw"] = "wav"

    from fastapi.exceptions import RequestValidationError

    app = FastAPI(title="rig monitor", docs_url=None, redoc_url=None, openapi_url=None)
    lock = threading.Lock()

    @app.exception_handler(RequestValidationError)
    async def bad_request(_request: Request, exc: RequestValidationError):
        # the documented 400 for a malformed body (FastAPI's default is 422), naming the field
        err = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(x) for x in err.get("loc", ()) if x != "body") or "body"
        return JSONResponse({"detail": f"{where}: {err.get('msg')}"}, status_code=400)
    expected = token.encode()
    max_bytes = int(max_body_mb * 1024 * 1024)

    def authorised(request: Request) -> bool:
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(),
                                                                  expected)

    @app.middleware("http")
    async def guard(request: Request, call_next):
        # before the body is read: no token, no upload
        if request.url.path != "/v1/health" and not authorised(request):
            return JSONResponse({"detail": "missing or invalid bearer token"}, status_code=401,
                                headers={"WWW-Authenticate": "Bearer"})
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > max_bytes:
            return JSONResponse({"detail": f"body over {max_body_mb:g} MB"}, status_code=413)
        return await call_next(request)

    @app.get("/v1/health")
    def health() -> dict:
        with lock:
            return {"status": "ok", "calls": store.count()}

    @app.post("/v1/calls")
    async def post_call(request: Request):
        from pydantic import ValidationError
        from starlette.concurrency import run_in_threadpool

        raw = await read_body(request, max_bytes)  # 413 past the limit, chunked or not
        try:  # as a sidecar: a key named twice is refused, not the last value kept
            data = loads_strict(raw)
        except ValueError as exc:  # not JSON, not UTF-8, or a duplicate key
            return JSONResponse({"detail": f"body: {exc}"}, status_code=400)
        try:
            body = CallBody.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(x) for x in err.get("loc", ())) or "body"
            return JSONResponse({"detail": f"{where}: {err.get('msg')}"}, status_code=400)
        return await run_in_threadpool(ingest, body)

    def ingest(body: CallBody):
        try:
            meta = parse_meta(body.metadata, "request: metadata", config.score_range)
        except RigError as exc:
            raise HTTPException(400, str(exc)) from exc
        try:
            data = base64.b64decode(body.audio_base64, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise HTTPException(400, "audio_base64: not valid base64") from exc
        suffix = ".ulaw" if body.audio_format == "mulaw" else ".wav"
        name = hashlib.sha256(meta.call_id.encode()).hexdigest()[:24] + suffix
        path = recordings / name

        def save() -> None:
            recordings.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(path.suffix + ".tmp")
            tmp.write_bytes(data)
            tmp.replace(path)

        with lock:
            try:
                outcome, _ = ingest_one(store, meta, data, body.audio_format,
                                        str(path.resolve()), config, stages,
                                        source=f"call {meta.call_id!r}", before_insert=save)
            except IngestError as exc:
                code = 409 if isinstance(exc, ConflictError) else 400
                raise HTTPException(code, str(exc)) from exc
        if outcome == "duplicate":
            return JSONResponse({"call_id": meta.call_id, "status": "duplicate"}, 200)
        return JSONResponse({"call_id": meta.call_id, "status": "ingested"}, 201)

    @app.get("/v1/alerts")
    def alerts(week: str | None = None) -> dict:
        from rig.monitor.report import build_report, parse_week

        with lock:
            try:
                report = build_report(store, config, parse_week(week) if week else None)
            except RigError as exc:
                raise HTTPException(404, str(exc)) from exc
        return report.alerts_dict()

    return app


def serve(db: Path, config: MonitorConfig, token_env: str, host: str, port: int,
          recordings: Path | None = None, stages: SignalStages | None = None,
          max_body_mb: float = 64.0) -> None:
    """Run the endpoint until interrupted (uvicorn's access log on, query strings redacted:
    :func:`rig.webguard.redact_access_log`).

    Raises:
        RigError: no token, or the database cannot be opened.
        EngineUnavailable: FastAPI/uvicorn are not installed.
    """
    from rig.errors import EngineUnavailable

    token = read_token(token_env)
    try:
        import uvicorn
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise EngineUnavailable("rig monitor serve needs FastAPI and uvicorn: in rig's "
                                "clone, pip install -e '.[monitor]'") from exc
    with MonitorStore(db) as store:
        app = create_app(store, config, token, recordings or db.parent / "recordings", stages,
                         max_body_mb)
        server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="info"))
        redact_access_log()  # after uvicorn.Config, which sets up uvicorn's loggers
        # uvicorn re-raises the Ctrl-C it shut down on; uvicorn.run() swallows it, so here too
        with contextlib.suppress(KeyboardInterrupt):
            server.run()
