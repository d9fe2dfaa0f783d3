"""rig.console.progress_bar: a bar on a terminal; where output goes to a file or a CI log (no
terminal, where rich would draw nothing until the end), plain lines as the run goes."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from rig.console import progress_bar

pytestmark = pytest.mark.unit


def _run(console: Console, every_s: float, n: int = 3, transient: bool = False) -> None:
    with progress_bar(True, console=console, every_s=every_s, transient=transient) as bar:
        task = bar.add_task("demo: calls", total=n, completed=0)
        for _ in range(n):
            bar.advance(task)


def test_a_file_gets_a_line_per_advance_ending_with_the_final_count_once():
    buf = io.StringIO()
    _run(Console(file=buf, width=120), every_s=0.0)
    assert buf.getvalue().splitlines() == [  # no rich bar after it: the last line is ours
        "demo: calls: 0/3, 0:00:00", "demo: calls: 1/3, 0:00:00",
        "demo: calls: 2/3, 0:00:00", "demo: calls: 3/3, 0:00:00"]


def test_lines_are_spaced_by_every_s_and_a_transient_bar_still_ends_with_one():
    buf = io.StringIO()
    _run(Console(file=buf, width=120), every_s=3600.0, n=5, transient=True)
    assert [x for x in buf.getvalue().splitlines() if x] == [
        "demo: calls: 0/5, 0:00:00", "demo: calls: 5/5, 0:00:00"]


def test_a_terminal_gets_no_extra_lines_and_disabled_prints_nothing():
    buf = io.StringIO()
    _run(Console(file=buf, width=120, force_terminal=True), every_s=0.0)
    assert "demo: calls: 1/3" not in buf.getvalue()
    buf = io.StringIO()
    with progress_bar(False, console=Console(file=buf, width=120), every_s=0.0) as bar:
        bar.advance(bar.add_task("x", total=1))
    assert buf.getvalue() == ""


def test_a_sentence_stays_on_one_line_off_a_terminal_and_a_table_still_folds():
    from rich.table import Table

    from rig.console import MessageConsole

    buf = io.StringIO()
    c = MessageConsole(file=buf, width=80)
    c.print("wrote " + ", ".join(f"/tmp/a-long-folder/{i}/report.html" for i in range(6)))
    assert len(buf.getvalue().splitlines()) == 1
    buf = io.StringIO()
    MessageConsole(file=buf, width=80, force_terminal=True).print("word " * 40)
    assert len(buf.getvalue().splitlines()) == 3  # a terminal wraps as rich does
    t = Table()
    t.add_column("a", no_wrap=False, overflow="fold")
    t.add_row("x" * 200)
    buf = io.StringIO()
    MessageConsole(file=buf, width=80).print(t)
    assert max(len(x) for x in buf.getvalue().splitlines()) <= 80


class _Clock:
    """A clock the test moves by hand (rich's ``get_time``)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _fake(every_s: float = 30.0):
    """A progress bar on a file console with a fake clock, not started (no ticker thread,
    no rich refresh thread): the test calls ``advance`` and ``tick`` itself."""
    from rig.console import _LoggedProgress

    buf, clock = io.StringIO(), _Clock()
    bar = _LoggedProgress(console=Console(file=buf, width=120), every_s=every_s,
                          get_time=clock, auto_refresh=False)
    return bar, buf, clock


def _lines(buf: io.StringIO) -> list[str]:
    return [x for x in buf.getvalue().splitlines() if x]


def test_a_count_held_back_by_the_interval_is_shown_when_it_is_due_without_another_advance():
    bar, buf, clock = _fake()
    task = bar.add_task("demo: calls", total=30)
    clock.now += 31
    bar.advance(task)  # call 1: due, shown
    clock.now += 10
    bar.advance(task)  # call 2: 10 s after the last line: held back
    assert _lines(buf)[-1] == "demo: calls: 1/30, 0:00:31"
    clock.now += 19
    bar.tick()  # 29 s: not yet
    assert len(_lines(buf)) == 2
    clock.now += 1
    bar.tick()  # 30 s after the last line: the ticker shows call 2 (issue 33: it waited
    assert _lines(buf)[-1] == "demo: calls: 2/30, 0:01:01"  # for call 3, 84 s later)
    bar.tick()
    assert len(_lines(buf)) == 3  # nothing new, not due again


def test_a_count_standing_still_is_repeated_every_two_intervals():
    bar, buf, clock = _fake()
    task = bar.add_task("demo: calls", total=30)
    bar.advance(task, 0)
    clock.now += 59
    bar.tick()
    assert len(_lines(buf)) == 1
    clock.now += 1
    bar.tick()
    assert _lines(buf) == ["demo: calls: 0/30, 0:00:00", "demo: calls: 0/30, 0:01:00"]


def test_the_final_count_is_shown_at_once_even_inside_the_interval():
    bar, buf, clock = _fake()
    task = bar.add_task("demo: calls", total=3)
    for _ in range(3):
        clock.now += 1
        bar.advance(task)
    assert _lines(buf) == ["demo: calls: 0/3, 0:00:00", "demo: calls: 3/3, 0:00:03"]
    clock.now += 600
    bar.tick()  # a finished task is not repeated
    bar.stop()
    assert _lines(buf)[-1] == "demo: calls: 3/3, 0:00:03" and len(_lines(buf)) == 2


def test_stopping_early_shows_the_count_not_yet_shown():
    bar, buf, clock = _fake()
    task = bar.add_task("demo: calls", total=30)
    clock.now += 5
    bar.advance(task, 7)
    assert len(_lines(buf)) == 1
    bar.stop()  # Ctrl-C, or an error: the last line is the count reached
    assert _lines(buf)[-1] == "demo: calls: 7/30, 0:00:05"


def test_the_ticker_thread_runs_only_while_the_bar_is_open():
    buf = io.StringIO()
    with progress_bar(True, console=Console(file=buf, width=120), every_s=3600.0) as bar:
        assert bar._ticker is not None and bar._ticker.is_alive()
        ticker = bar._ticker
    assert not ticker.is_alive()
