"""The last lines of ``rig campaign run`` and ``rig demo``: the total wall time, the caller
audio processed per wall second, and the report's path, last (where a reader looks)."""

from __future__ import annotations

from pathlib import Path

from rig.console import stdout_console


def clock(seconds: float) -> str:
    """``seconds`` as H:MM:SS."""
    s = round(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def finish_lines(wall_s: float, audio_s: float, calls_s: float, report: Path) -> list[str]:
    """The closing lines: wall time of the whole command (``wall_s``), ``audio_s`` seconds of
    caller audio run through the calls in ``calls_s`` seconds and their rate, the report."""
    line = f"done in {clock(wall_s)} wall time"
    if audio_s > 0 and calls_s > 0:
        line += (f"; {audio_s:.0f} s of caller audio in {clock(calls_s)} of calls: "
                 f"{audio_s / calls_s:.2f} audio s per wall s")
    else:
        line += "; no new calls run (every call was already logged)"
    return [line, f"report: {report}"]


def print_finish(wall_s: float, audio_s: float, calls_s: float, report: Path) -> None:
    """Print :func:`finish_lines` to stdout, the report's path last."""
    for line in finish_lines(wall_s, audio_s, calls_s, report):
        stdout_console().print(line, markup=False, highlight=False, soft_wrap=True)
