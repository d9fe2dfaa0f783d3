"""The console that command-line results (tables, "wrote ..." lines) are printed on, and the
progress bar of long runs (:func:`progress_bar`).

On a terminal, rich fits a table to the terminal's width. Piped or captured output (a log, a
CI job) has no width to fit: rich would assume 80 columns and cut cells to ``1.…``, so there
the console is :data:`WIDE` columns wide and a table's cells fold onto a second line instead
of being cut, and a sentence stays on one line (:class:`MessageConsole`).
"""

from __future__ import annotations

import datetime
import threading

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


#: the LOGURU_LEVEL :func:`quiet_pipecat_logs` last set (None: any value is the user's own)
_loguru_level_set: list[str | None] = [None]


def quiet_pipecat_logs(level: str | None = None) -> None:
    """Send loguru's records (pipecat's: its import banner at INFO, every frame link and ICE
    state at DEBUG) to stderr from ``level`` up only (default ``$RIG_LOG_LEVEL`` or WARNING),
    so a refusal on the command line stays one line. Process-wide: for the command line. No-op
    where loguru (pipecat's logger) is not installed.

    The processes this one starts (local workers, Ray's local head and actors, ``rig``
    subprocesses) get the level as ``LOGURU_LEVEL``, the level of loguru's default handler, so
    they do not print pipecat's import banner each; a ``LOGURU_LEVEL`` the user set is kept."""
    import os
    import sys

    chosen = level or os.environ.get("RIG_LOG_LEVEL") or "WARNING"
    try:
        from loguru import logger
    except ImportError:
        return
    if os.environ.get("LOGURU_LEVEL") in (None, _loguru_level_set[0]):
        os.environ["LOGURU_LEVEL"] = _loguru_level_set[0] = chosen
    logger.remove()
    # the stream is looked up at each record, so a test runner's swapped (and later closed)
    # stderr is never kept
    logger.add(lambda message: sys.stderr.write(message), level=chosen)


class _LoggedProgress(Progress):
    """rich's progress bar, which on a terminal redraws in place; where its console is not a
    terminal (output to a file or a CI log) rich draws nothing until the end, so this prints a
    plain line instead (``"demo: calls: 12/30, 0:03:12"``): when a task is added; when its
    count has changed and ``every_s`` seconds have passed since its last line, whether or
    not another call to ``advance`` comes (a ticker thread looks every second); at least
    every ``2 * every_s`` seconds while the count stands still (the run is alive); and at
    once when the task finishes, so the last line shows the final count (``30/30``).
    Off a terminal rich's live display is not started: its end-of-run bar, drawn only when
    the bar closes (after the workers have shut down), would repeat the last line.

    Issue 33: the throttled count was dropped, not deferred (84 s of silence between calls 4
    and 6 of a demo, none of calls 25-30 shown), and the final count was left to rich."""

    def __init__(self, *columns, every_s: float, **kwargs) -> None:
        super().__init__(*columns, **kwargs)
        self._every_s = every_s
        self._logging = not (self.disable or self.console.is_terminal)
        self._last: dict[TaskID, float] = {}  # when each task's last line was printed
        self._shown: dict[TaskID, float] = {}  # the count that line showed
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._ticker: threading.Thread | None = None

    def start(self) -> None:
        if not self._logging:
            super().start()
        elif self._ticker is None:
            self._stopping.clear()
            self._ticker = threading.Thread(target=self._tick_loop, name="rig-progress-lines",
                                            daemon=True)
            self._ticker.start()

    def stop(self) -> None:
        if not self._logging:
            super().stop()
            return
        if self._ticker is not None:
            self._stopping.set()
            self._ticker.join()
            self._ticker = None
        self.tick(final=True)  # a count not yet shown (a run stopped early) is shown

    def add_task(self, description: str, *args, **kwargs) -> TaskID:
        task_id = super().add_task(description, *args, **kwargs)
        if self._logging:
            with self._lock:
                self._line(task_id)  # the run has started (a first call can take minutes)
        return task_id

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        super().advance(task_id, advance)
        if self._logging:
            self.tick()

    def tick(self, final: bool = False) -> None:
        """Print the line of each task that is due (the class's rules); with ``final``, of
        each whose count has changed since its last line, however recent."""
        with self._lock:
            now = self.get_time()
            for task_id, task in list(self._tasks.items()):
                if task_id not in self._last:
                    continue
                since = now - self._last[task_id]
                changed = task.completed != self._shown.get(task_id)
                due = final or task.finished or since >= self._every_s
                alive = not (task.finished or final) and since >= 2 * self._every_s
                if (changed and due) or alive:
                    self._line(task_id)

    def _tick_loop(self) -> None:
        while not self._stopping.wait(min(1.0, max(self._every_s, 0.05))):
            self.tick()

    def _line(self, task_id: TaskID) -> None:
        task = self._tasks[task_id]
        self._last[task_id] = self.get_time()
        self._shown[task_id] = task.completed
        elapsed = datetime.timedelta(seconds=int(task.elapsed or 0))
        total = "" if task.total is None else f"/{task.total:.0f}"
        self.console.print(f"{task.description}: {task.completed:.0f}{total}, {elapsed}",
                           markup=False, highlight=False)


def progress_bar(enabled: bool = True, *, console: Console | None = None,
                 transient: bool = False, every_s: float = 30.0) -> Progress:
    """The progress bar of rig's long runs (campaigns, sweeps, probes, scorer validation):
    description, bar, done of total, elapsed time; shown only when ``enabled``.
    Where the console is not a terminal, plain lines instead of a bar that would show only
    when the run ends: when a task starts, as its count changes (at most every ``every_s``
    seconds, at least every ``2 * every_s`` while it stands still) and when it finishes.
    ``console``: default :func:`stdout_console` (off a terminal, :data:`WIDE` columns, so
    a long description is not cut)."""
    return _LoggedProgress(TextColumn("[bold]{task.description}"), BarColumn(),
                           MofNCompleteColumn(), TimeElapsedColumn(),
                           console=console or stdout_console(),
                           disable=not enabled, transient=transient, every_s=every_s)
