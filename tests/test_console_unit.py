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


def test_a_file_gets_a_line_per_advance_and_rich_its_finished_bar():
    buf = io.StringIO()
    _run(Console(file=buf, width=120), every_s=0.0)
    lines = buf.getvalue().splitlines()
    assert lines[:3] == ["demo: calls: 0/3, 0:00:00", "demo: calls: 1/3, 0:00:00",
                         "demo: calls: 2/3, 0:00:00"]
    assert len(lines) == 4 and "3/3" in lines[3]  # rich's own last line, not ours twice


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
