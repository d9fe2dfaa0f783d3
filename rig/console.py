"""The console that command-line results (tables, "wrote ..." lines) are printed on, and the
progress bar of long runs (:func:`progress_bar`).

On a terminal, rich fits a table to the terminal's width. Piped or captured output (a log, a
CI job) has no width to fit: rich would assume 80 columns and cut cells to ``1.…``, so there
the console is :data:`WIDE` columns wide and a table's cells fold onto a second line instead
of being cut, and a sentence stays on one line (:class:`MessageConsole`).
"""

from __future__ import annotations

import datetime
import time

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

#: the width of results printed where stdout is not a terminal
WIDE = 200


class MessageConsole(Console):
    """A console for sentences (progress, warnings, errors, "wrote ..." lines): where it is
    not a terminal (a log, a CI job, a test) each ``print`` stays on one line however long,
    so a path or a figure is never broken across lines (rich would wrap at 80 columns); on
    a terminal, rich wraps as usual. ``print(..., soft_wrap=...)`` still decides per call."""

    def print(self, *objects, **kwargs) -> None:
        if kwargs.get("soft_wrap") is None:
            kwargs["soft_wrap"] = not self.is_terminal
        super().print(*objects, **kwargs)


def stdout_console(min_width: int = 0, **kwargs) -> Console:
    """A console on stdout: the terminal's width (at least ``min_width``) on a terminal,
    :data:`WIDE` columns (or ``min_width``, or ``COLUMNS`` if larger) otherwise. ``kwargs``
    go to :class:`rich.console.Console` (``highlight=False``, ...). A
    :class:`MessageConsole`: off a terminal, a sentence printed on it stays on one line."""
    out = MessageConsole(**kwargs)
    if out.is_terminal:
        return out if out.width >= min_width else MessageConsole(width=min_width, **kwargs)
    return MessageConsole(width=max(out.width, min_width, WIDE), **kwargs)


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


class _LoggedProgress(Progress):
    """rich's progress bar, which on a terminal redraws in place; where its console is not a
    terminal (output to a file or a CI log) rich draws nothing until the end, so this prints a
    plain line instead when a task is added and as it advances, at most every ``every_s``
    seconds (``"demo: calls: 12/30, 0:03:12"``); the finished bar is rich's own last line."""

    def __init__(self, *columns, every_s: float, **kwargs) -> None:
        super().__init__(*columns, **kwargs)
        self._every_s = every_s
        self._last: dict[TaskID, float] = {}

    def add_task(self, description: str, *args, **kwargs) -> TaskID:
        task_id = super().add_task(description, *args, **kwargs)
        if not (self.disable or self.console.is_terminal):
            self._line(task_id)  # the run has started (a first call can take minutes)
        return task_id

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        super().advance(task_id, advance)
        if self.disable or self.console.is_terminal:
            return
        task = self._tasks[task_id]
        if task.finished and not self.live.transient:
            return  # rich prints the finished bar itself
        if (time.monotonic() - self._last.get(task_id, -1e9) < self._every_s
                and not task.finished):
            return
        self._line(task_id)

    def _line(self, task_id: TaskID) -> None:
        task = self._tasks[task_id]
        self._last[task_id] = time.monotonic()
        elapsed = datetime.timedelta(seconds=int(task.elapsed or 0))
        total = "" if task.total is None else f"/{task.total:.0f}"
        self.console.print(f"{task.description}: {task.completed:.0f}{total}, {elapsed}",
                           markup=False, highlight=False)


def progress_bar(enabled: bool = True, *, console: Console | None = None,
                 transient: bool = False, every_s: float = 30.0) -> Progress:
    """The progress bar of rig's long runs (campaigns, sweeps, probes, scorer validation):
    description, bar, done of total, elapsed time; shown only when ``enabled``.
    Where the console is not a terminal, a plain line when the run starts, then as tasks
    advance at most every ``every_s`` seconds, and at the end, instead of a bar that would
    show only when the run ends. ``console``: default :func:`stdout_console` (off a terminal,
    :data:`WIDE` columns, so a long description is not cut)."""
    return _LoggedProgress(TextColumn("[bold]{task.description}"), BarColumn(),
                           MofNCompleteColumn(), TimeElapsedColumn(),
                           console=console or stdout_console(),
                           disable=not enabled, transient=transient, every_s=every_s)
