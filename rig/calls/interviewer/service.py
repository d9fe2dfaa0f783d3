"""The reference interviewer served over real transports (FastAPI + uvicorn + pipecat).

Endpoints of :meth:`InterviewerService.app`:

``WS /twilio/media``
    A Twilio Media Streams websocket. The service reads ``connected`` and ``start`` (its
    ``customParameters`` carry ``call_id``, ``question_ids`` (comma-separated) and ``seed``),
    then runs a pipecat pipeline ``FastAPIWebsocketTransport(serializer=
    TwilioFrameSerializer) -> InterviewerProcessor -> output``.
``POST /twilio/voice``
    Twilio's voice webhook for calls to the interviewer's number: checks
    ``X-Twilio-Signature`` with ``$TWILIO_AUTH_TOKEN`` and answers TwiML ``<Connect><Stream>``
    to ``/twilio/media`` (query parameters ``call_id``, ``question_ids``, ``seed`` passed on).
``POST /api/offer``
    WebRTC signalling for pipecat's ``SmallWebRTCTransport``: JSON ``{"sdp", "type",
    "call_id", "question_ids", "seed"}`` in, the SDP answer out.
``GET /results/{call_id}``
    The interviewer's own result of one call (a campaign with ``--interviewer-url`` polls
    it; bearer token when ``results_token_env`` is set), with ``external``: the record an
    external interviewer posted for the call id, or null. 404 until the interviewer has one,
    with ``{"detail": "no interviewer result for call X"}`` and ``X-Rig-Result: pending``,
    so a campaign tells it from a server with no results route
    (:func:`rig.calls.interviewer.results.pending_404`).
``GET /results/{call_id}/external``
    The record an external interviewer posted for the call id (404 when none).
``POST /results``
    The results webhook (when a token variable is configured; :mod:`rig.calls.interviewer.webhook`).
    Its records are stored apart from the interviewer's own (``webhook.jsonl`` beside
    ``results.jsonl``), so they never replace what the reference interviewer wrote.

The call endpoints are added per transport (:mod:`rig.calls.interviewer.routes`). (FastAPI
resolves endpoint annotations at import, so its names are imported at module level.)

Results are written to the :class:`~rig.calls.interviewer.results.ResultStore` keyed by call id.
:class:`ServiceThread` runs the app on a loopback port in a background thread (tests and
``rig campaign run --transport`` without ``--interviewer-url``).
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from fastapi import FastAPI, HTTPException, Request

from rig.answers import AnswerBank, Question
from rig.calls.interviewer.results import ResultStore
from rig.calls.interviewer.routes import add_twilio_routes, add_webrtc_routes
from rig.calls.interviewer.session import InterviewerSettings, InterviewSession, make_processor
from rig.calls.interviewer.webhook import bearer_token, results_router
from rig.calls.media import CALL_RATE_HZ
from rig.errors import ConfigError
from rig.pipeline import PipelineConfig, pipeline_version
from rig.scorer.base import Scorer
from rig.webguard import BodyLimit, redact_access_log


def quiet_logs(level: str = "WARNING") -> None:
    """Send loguru's records (pipecat logs every frame link and ICE state at DEBUG) to stderr
    from ``level`` up only (:func:`rig.console.quiet_pipecat_logs`). Process-wide."""
    from rig.console import quiet_pipecat_logs

    quiet_pipecat_logs(level)


def restrict_ice_to(host: str) -> None:
    """Gather ICE host candidates on ``host`` only (aioice leaves loopback out by default, so
    a loopback call never connects otherwise). Process-wide; for loopback tests and
    single-host deployments."""
    import aioice.ice

    aioice.ice.get_host_addresses = lambda use_ipv4=True, use_ipv6=True: [host]


def check_public_url(url: str) -> str:
    """``url`` if it is an ``https://`` URL with a host (``http://`` only for 127.0.0.1,
    localhost or ::1: loopback tests); Twilio signs and fetches the public URL over https.

    Raises:
        ConfigError: another scheme, no host, or plain http to a non-loopback host.
    """
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
    if not parts.hostname or parts.scheme not in ("https", "http"):
        raise ConfigError("--public-url", "", "an https:// URL with a host", url)
    if parts.scheme == "http" and not loopback:
        raise ConfigError("--public-url", "", "must be https:// (http:// only for 127.0.0.1 "
                          "or localhost)", url)
    return url


@dataclass
class InterviewerService:
    """The reference interviewer behind real transports.

    Args:
        pipeline: VAD, endpointing and ASR settings; ``pipeline_version`` is stamped on results.
        bank: the question set (questions looked up by id).
        scorer: grades transcripts (shared with the campaign's oracle on loopback).
        store: where results go.
        settings: TTS voice and repair loop.
        public_url: the ``https://`` base URL Twilio reaches the service at (TwiML and
            signature checks); default: the request's own URL.
        results_token_env: enable ``POST /results`` with this env variable's token.
        external: where ``POST /results`` stores an external interviewer's results; default
            ``webhook.jsonl`` beside ``store``'s file (in memory when ``store`` has none).
            Kept apart from ``store``: a webhook record never replaces a result the
            reference interviewer wrote for the same call id; ``GET /results/{call_id}``
            returns the interviewer's own result with the external one under ``external``.
        max_body_mb: the largest request body any HTTP endpoint takes (413 above it:
            :class:`rig.webguard.BodyLimit`, and the results webhook's own limit).
        results_route: serve ``GET /results/{call_id}`` (and ``/external``); False stands in
            for a bot that serves no scores (its 404 is then "no route").
    """
    pipeline: PipelineConfig
    bank: AnswerBank
    scorer: Scorer
    store: ResultStore
    settings: InterviewerSettings = field(default_factory=InterviewerSettings)
    public_url: str | None = None
    results_token_env: str | None = None
    transcribe: Callable | None = None
    external: ResultStore | None = None
    max_body_mb: float = 16.0
    #: serve ``GET /results/...`` (False: a bot that serves no scores; its results are still
    #: kept in ``store``)
    results_route: bool = True

    def __post_init__(self) -> None:
        self.version = pipeline_version(self.pipeline)
        if self.external is None:
            self.external = ResultStore(self.store.path.with_name("webhook.jsonl")
                                        if self.store.path is not None else None)
        self.active: dict[str, asyncio.Task] = {}

    def questions(self, question_ids: str | None) -> list[Question]:
        """The questions named (comma-separated ids), or the whole set.

        Raises:
            KeyError: an id is not in the bank.
        """
        if not question_ids:
            return list(self.bank.questions)
        out = []
        for qid in question_ids.split(","):
            try:
                out.append(self.bank.question(qid.strip()))
            except KeyError:
                raise KeyError(f"{self.bank.path}: no question {qid.strip()!r}") from None
        return out

    def session(self, params: dict, transport: str) -> InterviewSession:
        return InterviewSession(
            call_id=str(params.get("call_id") or "unnamed"),
            questions=self.questions(params.get("question_ids")), pipeline=self.pipeline,
            pipeline_version=self.version, scorer=self.scorer, settings=self.settings,
            seed=int(params.get("seed") or 0), transport=transport, transcribe=self.transcribe,
            attempt_id=str(params["attempt_id"]) if params.get("attempt_id") else None)

    async def run_pipeline(self, transport, session: InterviewSession) -> None:
        """Run ``transport.input() -> interviewer -> transport.output()`` until the script
        ends (then an EndFrame is queued from outside) or the caller hangs up (cancel)."""
        from pipecat.frames.frames import EndFrame
        from pipecat.pipeline.pipeline import Pipeline
        from pipecat.pipeline.worker import PipelineParams, PipelineWorker
        from pipecat.workers.runner import WorkerRunner

        holder: dict = {}

        async def on_done(result) -> None:
            self.store.put(result)
            worker = holder.get("worker")
            if worker is not None and not worker.has_finished():
                await worker.queue_frame(EndFrame())

        proc = make_processor(session, on_done)
        pipeline = Pipeline([transport.input(), proc, transport.output()])
        worker = PipelineWorker(
            pipeline, enable_rtvi=False, cancel_on_idle_timeout=False, idle_timeout_secs=None,
            enable_turn_tracking=False, check_dangling_tasks=False,
            params=PipelineParams(audio_in_sample_rate=CALL_RATE_HZ,
                                  audio_out_sample_rate=CALL_RATE_HZ))
        holder["worker"] = worker

        @transport.event_handler("on_client_disconnected")
        async def _gone(_transport, _client) -> None:
            if not worker.has_finished():
                await worker.cancel(reason="caller hung up")

        runner = WorkerRunner(handle_sigint=False)
        await runner.add_workers(worker)
        await runner.run()

    def app(self, media: tuple[str, ...] = ("twilio", "webrtc")):
        """The FastAPI application (see the module docstring for the endpoints); ``media``
        names the call endpoints served: ``twilio`` (``/twilio/media``, ``/twilio/voice``)
        and/or ``webrtc`` (``/api/offer``) (:mod:`rig.calls.interviewer.routes`). Health and
        results are always served."""
        app = FastAPI(title="rig reference interviewer")
        app.add_middleware(BodyLimit, max_bytes=int(self.max_body_mb * 1024 * 1024))

        @app.get("/health")
        async def health():
            return {"ok": True, "pipeline_version": self.version, "results": len(self.store)}

        def check_token(request: Request) -> None:
            import hmac

            token = os.environ.get(self.results_token_env) if self.results_token_env else None
            given = bearer_token(request)
            if token and not hmac.compare_digest(given.encode(), token.encode()):
                raise HTTPException(401, "bad or missing bearer token")

        if not self.results_route:  # a bot that serves no scores (tests, docs/bots.md)
            return self._call_routes(app, media)

        @app.get("/results/{call_id}")
        async def result(call_id: str, request: Request):
            check_token(request)
            row, ext = self.store.get(call_id), self.external.get(call_id)
            if row is None:
                more = (f"; an external interviewer's result was posted: GET /results/"
                        f"{call_id}/external" if ext is not None else "")
                raise HTTPException(404, f"no interviewer result for call {call_id}{more}",
                                    headers={"X-Rig-Result": "pending"})  # not "no route"
            return {**row, "external": ext}

        @app.get("/results/{call_id}/external")
        async def external_result(call_id: str, request: Request):
            check_token(request)
            ext = self.external.get(call_id)
            if ext is None:
                raise HTTPException(404, f"no external result posted for call {call_id}")
            return ext

        if self.results_token_env:
            app.include_router(results_router(self.external, self.results_token_env,
                                              self.max_body_mb))
        return self._call_routes(app, media)

    def _call_routes(self, app: FastAPI, media: tuple[str, ...]) -> FastAPI:
        if "twilio" in media:
            add_twilio_routes(app, self)
        if "webrtc" in media:
            add_webrtc_routes(app, self)
        return app


class ServiceThread:
    """Serve an ASGI app with uvicorn on ``host`` (an ephemeral port by default) in a
    background thread. ``url`` is ``http://host:port``. ``log_level`` "info" turns uvicorn's
    access log on (its query strings redacted: :func:`rig.webguard.redact_access_log`)."""

    def __init__(self, app, host: str = "127.0.0.1", port: int = 0,
                 log_level: str = "warning") -> None:
        import uvicorn

        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._sock.bind((host, port))
        except OSError:
            self._sock.close()
            raise
        self.host, self.port = host, self._sock.getsockname()[1]
        self._server = uvicorn.Server(uvicorn.Config(app, log_level=log_level, lifespan="off",
                                                     ws="websockets-sansio"))
        redact_access_log()  # query strings never reach the access log (rig.webguard)
        self._thread = threading.Thread(target=self._serve, name="rig-interviewer",
                                        daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _serve(self) -> None:
        asyncio.run(self._server.serve(sockets=[self._sock]))

    def start(self, timeout_s: float = 10.0) -> ServiceThread:
        self._thread.start()
        import time

        t_end = time.monotonic() + timeout_s
        while not self._server.started:
            if time.monotonic() > t_end or not self._thread.is_alive():
                raise RuntimeError("the interviewer service did not start")
            time.sleep(0.02)
        return self

    def join(self) -> None:
        """Wait until the server stops (Ctrl-C raises KeyboardInterrupt here)."""
        while self._thread.is_alive():
            self._thread.join(0.5)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def __enter__(self) -> ServiceThread:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
