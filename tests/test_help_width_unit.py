"""Every option name of every ``rig`` command's ``--help`` appears whole at 80 columns
(issue 33: rich had cut ``--run-deterministic-repeats`` to ``--run-deterministic-r…``)."""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from rig.cli import app

pytestmark = pytest.mark.unit


def _commands(command, path: tuple[str, ...] = ()):
    """(path, command) for ``command`` and every command under it, depth first (typer
    carries its own copy of click, so groups are told by their ``commands``)."""
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        if not getattr(sub, "hidden", False):
            yield from _commands(sub, (*path, name))


def _long_names(command) -> list[str]:
    """Every ``--name`` the command declares (``--x/--no-x`` gives both)."""
    return [name for param in command.params if param.param_type_name == "option"
            and not getattr(param, "hidden", False) for name in (*param.opts, *param.secondary_opts)
            if name.startswith("--")]


_COMMANDS = list(_commands(typer.main.get_command(app)))


def test_the_walk_finds_the_nested_commands():
    paths = {" ".join(path) for path, _ in _COMMANDS}
    assert {"", "demo", "campaign run", "probe"} <= paths


@pytest.mark.parametrize("path,command", _COMMANDS,
                         ids=[" ".join(path) or "rig" for path, _ in _COMMANDS])
def test_help_shows_every_option_name_whole_at_80_columns(path, command):
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
    out = result.stdout
    assert result.exit_code == 0, out
    assert max(len(line) for line in out.splitlines()) <= 80, out
    cut = re.findall(r"--[\w-]*…", out)
    assert not cut, (cut, out)
    for name in _long_names(command):
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", out), (name, out)
