"""``rig gate``: the release gate, a thin command-line wrapper over :mod:`rig.gate`.

Exit codes: 0 pass, 1 the gate blocked, 2 bad input (the message names the file, the field
and the value).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from rig.cli.common import JsonOpt, fail, or_fail, print_json
from rig.console import stdout_console
from rig.gate import GateResult, run_gate


def _gate_output(res: GateResult, path: Path) -> None:
    out = stdout_console(highlight=False)
    t = Table(title=f"Release gate: {res.verdict.upper()}")
    for h in ("check", "subject", "value", "previous", "threshold", "p", "Holm p", "blocks",
              "reason"):
        t.add_column(h, overflow="fold")

    def v(x: object) -> str:
        return "n/a" if x is None else (f"{x:.3f}" if isinstance(x, float) else str(x))

    for c in res.checks:
        t.add_row(c.check, escape(c.subject), v(c.value), v(c.previous), v(c.threshold),
                  v(c.p_value), v(c.p_adjusted), "BLOCK" if c.blocked else "",
                  escape(c.reason if c.computable else "not computable: " + c.reason))
    out.print(t)
    for note in res.notes:
        out.print(f"note: {escape(note)}")
    for r in res.reasons:  # a subject such as [snr_db=>=30 dB] is text, not markup
        out.print(f"[bold red]blocked[/bold red]: {escape(r)}")
    out.print(f"wrote {path}")


def gate_command(
    candidate_dir: Annotated[Path, typer.Argument(
        help="Campaign folder of the candidate, or a replay folder (rig replay).")],
    baseline: Annotated[Path | None, typer.Option(
        "--baseline", help="Campaign folder of the previous release (not with a replay "
        "folder: version A is its baseline).")] = None,
    policy: Annotated[Path | None, typer.Option(help="Gate policy YAML.")] = None,
    out: Annotated[Path | None, typer.Option(
        help="Where to write gate.json (default CANDIDATE_DIR/gate.json).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Release gate: compare a candidate campaign with the previous release's.

    Blocks when a profile's flip rate rose beyond the noise floor, significantly.

    Blocks when an impact ratio fell below 0.8 with volume and significance.

    Blocks when the pipeline changed in a way the policy forbids.

    A replay folder: blocks when version B lowers any segment's mean score, or flips its
    decisions, beyond the policy's replay limits.

    Writes gate.json (CANDIDATE_DIR/gate.json by default); exit 0 pass, 1 blocked, 2 bad input.
    """
    from rig.gate.replay import is_replay_folder, run_replay_gate

    if is_replay_folder(candidate_dir):
        if baseline is not None:
            fail(f"--baseline: {candidate_dir} is a replay folder, whose baseline is its "
                 "version A; give no --baseline")
        res: GateResult = or_fail(lambda: run_replay_gate(candidate_dir, policy, out))
    elif baseline is None:
        fail("--baseline: missing (the previous release's campaign folder)")
    else:
        res = or_fail(lambda: run_gate(candidate_dir, baseline, policy, out))
    path = out if out is not None else candidate_dir / "gate.json"
    if json_out:
        print_json(res.to_dict())
    else:
        _gate_output(res, path)
    raise typer.Exit(res.exit_code)
