"""Guards shared by rig's HTTP services (``rig monitor serve``, the results webhook, the
reference interviewer): a request body read with a size limit, and an access log that never
holds a query string.

* :func:`read_body` answers 413 from the ``Content-Length`` header before reading anything,
  and stops a body sent without one (chunked) as soon as it passes the limit, so a client
  cannot make the server hold more than ``max_bytes`` (plus one chunk) of a body in memory.
* :func:`redact_access_log` rewrites uvicorn's access log records (``uvicorn.access``: client,
  method, path with query string, HTTP version, status) so that the query string is replaced
  by ``?[redacted]``: a token sent as ``?token=...`` (a client that cannot set headers) never
  reaches the log. Headers (``Authorization``) are not in uvicorn's access log at all.

``tests/test_services_load.py`` checks both on loopback, with the log captured.
"""

from __future__ import annotations

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
