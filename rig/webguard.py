"""Guards shared by rig's HTTP services (``rig monitor serve``, the results webhook, the
reference interviewer): a request body read with a size limit, and an access log that never
holds a query string.

* :func:`read_body` answers 413 from the ``Content-Length`` header before reading anything,
  and stops a body sent without one (chunked) as soon as it passes the limit, so a client
  cannot make the server hold more than ``max_bytes`` (plus one chunk) of a body in memory.
* :class:`BodyLimit` does the same for every HTTP endpoint of an app (the reference
  interviewer's Twilio and WebRTC signalling endpoints read their bodies whole otherwise).
* :func:`redact_access_log` rewrites uvicorn's access log records (``uvicorn.access``: client,
  method, path with query string, HTTP version, status) so that the query string is replaced
  by ``?[redacted]``: a token sent as ``?token=...`` (a client that cannot set headers) never
  reaches the log. Headers (``Authorization``) are not in uvicorn's access log at all.

``tests/test_services_load_integration.py`` checks both on loopback, with the log captured.
"""

from __future__ import annotations

import json
import logging

#: What replaces a query string in the access log.
REDACTED = "?[redacted]"


async def read_body(request, max_bytes: int) -> bytes:
    """The body of a Starlette ``request``, at most ``max_bytes`` bytes.

    Raises:
        fastapi.HTTPException: 413 when ``Content-Length`` says more than ``max_bytes`` (no
            byte of the body is read) or the body streamed passes ``max_bytes`` (reading
            stops there); 400 when ``Content-Length`` is not a number.
    """
    from fastapi import HTTPException

    too_big = HTTPException(413, f"body over the limit of {max_bytes} bytes")
    length = request.headers.get("content-length")
    if length is not None:
        if not length.strip().isdigit():
            raise HTTPException(400, "Content-Length is not a number")
        if int(length) > max_bytes:
            raise too_big
    parts, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise too_big
        parts.append(chunk)
    return b"".join(parts)


class BodyLimit:
    """ASGI middleware: every HTTP request body of the wrapped app limited to ``max_bytes``.

    A ``Content-Length`` over the limit is answered 413 before the app runs (no byte of the
    body read); a body streamed without one makes the app's next read raise a 413
    ``HTTPException`` once it passes the limit (answered by Starlette's exception handling).
    Websockets pass unchanged. Add it with ``app.add_middleware(BodyLimit, max_bytes=N)``.
    """

    def __init__(self, app, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = int(max_bytes)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        detail = f"body over the limit of {self.max_bytes} bytes"
        length = dict(scope.get("headers") or ()).get(b"content-length", b"").strip()
        if length.isdigit() and int(length) > self.max_bytes:
            body = json.dumps({"detail": detail}).encode()
            await send({"type": "http.response.start", "status": 413,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode()),
                                    (b"connection", b"close")]})
            await send({"type": "http.response.body", "body": body})
            return
        seen = 0

        async def limited():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    from starlette.exceptions import HTTPException

                    raise HTTPException(413, detail)
            return message

        await self.app(scope, limited, send)


class RedactQuery(logging.Filter):
    """A logging filter for ``uvicorn.access`` records: the path argument loses its query
    string (``/v1/alerts?token=abc`` -> ``/v1/alerts?[redacted]``). Other records pass
    unchanged; no record is dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str) \
                and "?" in args[2]:
            path = args[2].split("?", 1)[0] + REDACTED
            record.args = (*args[:2], path, *args[3:])
        return True


def redact_access_log() -> None:
    """Install :class:`RedactQuery` on the ``uvicorn.access`` logger (once; call it after
    ``uvicorn.Config`` is made, which configures uvicorn's logging)."""
    logger = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactQuery) for f in logger.filters):
        logger.addFilter(RedactQuery())


def serve_loopback(app, port: int, on_ready=None, what: str = "this command") -> None:
    """Serve the ASGI ``app`` with uvicorn on 127.0.0.1:``port`` until Ctrl-C, with
    :func:`redact_access_log`; ``on_ready(url)`` is called once the socket listens.

    Raises:
        RigError: the port is taken (names it and says to pass another ``--port``).
        EngineUnavailable: uvicorn is not installed (``what`` names the command).
    """
    import contextlib
    import socket

    from rig.errors import EngineUnavailable, RigError

    try:
        import uvicorn
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise EngineUnavailable(f"{what} needs FastAPI and uvicorn: in rig's clone, "
                                "pip install -e '.[monitor]'") from exc

    class _Server(uvicorn.Server):
        async def startup(self, sockets=None) -> None:
            await super().startup(sockets)
            if on_ready is not None and self.started:
                on_ready(f"http://127.0.0.1:{port}/")

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise RigError(f"port {port} on 127.0.0.1: {exc.strerror or exc}; pass another "
                       "--port") from None
    server = _Server(uvicorn.Config(app, log_level="warning"))
    redact_access_log()
    try:
        with contextlib.suppress(KeyboardInterrupt):
            server.run(sockets=[sock])
    finally:
        sock.close()
