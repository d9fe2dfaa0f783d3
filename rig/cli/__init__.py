"""The ``rig`` command line: a thin layer over the library, one module per command group.

Modules: ``common`` (the error console, ``fail``, the ``--json`` option, the Typer classes
that suggest only close options), ``mount`` (a group whose package is missing says what to
install), ``campaign`` (``rig campaign run|summarize|export``), ``demo`` (``rig demo``), ``models``
(``rig models``), ``profiles`` (``rig profiles list|check|render``), ``stats``
(``rig stats ...``), ``gate`` (``rig gate``), ``probe`` and ``probe_tables``
(``rig probe ...``), ``scorer`` (``rig scorer validate``), ``interviewer``
(``rig interviewer ...``), ``monitor`` (``rig monitor ...``), ``sweep`` (``rig sweep``),
``replay`` (``rig replay``), ``voices`` (``rig voices ...``), ``ratings``
(``rig ratings import``).

Exit codes: 0 success or pass, 1 a threshold was breached (``rig gate``, ``rig stats``,
``rig monitor report --fail-on-alert``), 2 bad input, a package that is not installed, or a
campaign in which every call failed.
"""

from __future__ import annotations

from typing import Annotated

import typer

from rig.cli.campaign import campaign_app
from rig.cli.common import RigTyper
from rig.cli.demo import demo
from rig.cli.models import models
from rig.cli.mount import mount_command, mount_group
from rig.cli.profiles import profiles_app

app = RigTyper(no_args_is_help=True, add_completion=False, pretty_exceptions_show_locals=False,
               help="rig: a voice-channel test rig for AI phone interviewers.")
app.add_typer(campaign_app, name="campaign")
app.add_typer(profiles_app, name="profiles")
app.command("demo")(demo)
app.command("models")(models)
mount_group(app, "stats", "rig.cli.stats", "stats_app")
mount_command(app, "gate", "rig.cli.gate", "gate_command")
mount_command(app, "sweep", "rig.cli.sweep", "sweep_command")
mount_command(app, "replay", "rig.cli.replay", "replay_command", extra="monitor")
mount_group(app, "probe", "rig.cli.probe", "probe_app", extra="probes")
mount_group(app, "monitor", "rig.cli.monitor", "monitor_app", extra="monitor")
mount_group(app, "scorer", "rig.cli.scorer", "scorer_app", extra="pipeline")
mount_group(app, "interviewer", "rig.cli.interviewer", "interviewer_app", extra="calls")
mount_group(app, "voices", "rig.cli.voices", "voices_app")
mount_group(app, "ratings", "rig.cli.ratings", "ratings_app")


def _print_version(value: bool) -> None:
    """``rig --version``: rig's version from its installed package metadata, then exit 0."""
    if value:
        from importlib.metadata import version

        print(f"rig {version('rig')}")
        raise typer.Exit(0)


@app.callback()
def _quiet(version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=_print_version,
        help="print rig's version and exit")] = False) -> None:
    """rig: a voice-channel test rig for AI phone interviewers."""
    from rig.console import quiet_pipecat_logs

    quiet_pipecat_logs()  # pipecat's import banner and DEBUG lines off stderr (RIG_LOG_LEVEL)


def main() -> None:  # pragma: no cover - the console script is ``app`` itself
    """Run ``rig`` (``python -m rig.cli``)."""
    app(prog_name="rig")


__all__ = ["app", "main"]
