"""The console that command-line results (tables, "wrote ..." lines) are printed on.

On a terminal, rich fits a table to the terminal's width. Piped or captured output (a log, a
CI job) has no width to fit: rich would assume 80 columns and cut cells to ``1.…``, so there
the console is :data:`WIDE` columns wide and a table's cells fold onto a second line instead
of being cut.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

#: the width of results printed where stdout is not a terminal
WIDE = 200


def stdout_console(min_width: int = 0, **kwargs) -> Console:
    """A console on stdout: the terminal's width (at least ``min_width``) on a terminal,
    :data:`WIDE` columns (or ``min_width``, or ``COLUMNS`` if larger) otherwise. ``kwargs``
    go to :class:`rich.console.Console` (``highlight=False``, ...)."""
    out = Console(**kwargs)
    if out.is_terminal:
        return out if out.width >= min_width else Console(width=min_width, **kwargs)
    return Console(width=max(out.width, min_width, WIDE), **kwargs)


def print_table(table: Table, min_width: int = 0) -> None:
    """Print ``table`` on :func:`stdout_console`; where stdout is not a terminal, no cell is
    cut: a cell too wide for its column folds onto the next line."""
    out = stdout_console(min_width)
    if not out.is_terminal:
        for col in table.columns:
            col.no_wrap, col.overflow = False, "fold"
    out.print(table)


def quiet_pipecat_logs(level: str | None = None) -> None:
    """Send loguru's records (pipecat's: its import banner at INFO, every frame link and ICE
    state at DEBUG) to stderr from ``level`` up only (default ``$RIG_LOG_LEVEL`` or WARNING),
    so a refusal on the command line stays one line. Process-wide: for the command line. No-op
    where loguru (pipecat's logger) is not installed."""
    import os
    import sys

    try:
        from loguru import logger
    except ImportError:
        return
    logger.remove()
    # the stream is looked up at each record, so a test runner's swapped (and later closed)
    # stderr is never kept
    logger.add(lambda message: sys.stderr.write(message),
               level=level or os.environ.get("RIG_LOG_LEVEL") or "WARNING")
