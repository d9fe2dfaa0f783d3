"""Mounting a command group whose module may need a package that is not installed.

A group that cannot be imported because a third-party package is missing is still listed
(``rig --help``), and running it, ``--help`` included, exits 2 naming what to install: the
extra of rig that brings the package (``pip install -e '.[monitor]'``), or the package itself
when rig depends on it directly. Any other import error (a bug in rig) is raised as it is.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
from typing import Any

from rig.cli.common import RigTyper, fail

#: import names whose distribution is named differently (most are the same, ``_`` for ``-``)
_DISTRIBUTIONS = {"yaml": "pyyaml", "llama_cpp": "llama-cpp-python", "pipecat": "pipecat-ai",
                  "hibari": "hibari-tts", "piper": "piper-tts", "webrtcvad": "webrtcvad-wheels",
                  "sklearn": "scikit-learn"}


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements() -> list[tuple[str, str, str | None]]:
    """rig's declared requirements: (canonical distribution name, requirement, extra or
    None); empty when rig's metadata is not installed (a bare source tree)."""
    try:
        declared = importlib.metadata.requires("rig") or []
    except importlib.metadata.PackageNotFoundError:
        return []
    out = []
    for req in declared:
        spec, _, marker = req.partition(";")
        name = re.match(r"\s*([A-Za-z0-9._-]+)", spec)
        extra = re.search(r"extra\s*==\s*[\"']([^\"']+)[\"']", marker)
        if name:
            out.append((_canonical(name.group(1)), spec.strip(), extra and extra.group(1)))
    return out


def missing_package_message(what: str, module: str, extra: str | None = None) -> str:
    """What to install for ``what`` (e.g. ``rig stats``) when the module ``module`` cannot be
    imported: ``rig[EXTRA]`` when an extra of rig brings it (``extra``, the group's own, is
    named first when it lists the package), or the requirement rig declares for it."""
    top = module.split(".")[0]
    dist = _canonical(_DISTRIBUTIONS.get(top, top))
    found = [(req, x) for name, req, x in _requirements() if name == dist]
    core = [req for req, x in found if x is None]
    extras = sorted({x for _, x in found if x is not None}, key=lambda x: x != extra)
    if core:
        return (f"{what} needs {top}, a dependency of rig that is not installed: "
                f"pip install '{core[0]}'")
    if extras:
        return (f"{what} needs the '{extras[0]}' extra ({top} is not installed): "
                f"pip install -e '.[{extras[0]}]'")
    return f"{what} needs the Python package {top!r}, which is not installed"


def load(module: str, attr: str) -> tuple[Any, str | None]:
    """``module.attr``, or None and the name of the missing third-party module that stopped
    the import. Raises the ImportError when rig's own code is at fault."""
    try:
        return getattr(importlib.import_module(module), attr), None
    except ModuleNotFoundError as exc:
        if not exc.name or exc.name.split(".")[0] == "rig":
            raise
        return None, exc.name


def _unavailable(app: RigTyper, name: str, message: str) -> None:
    """Mount ``name`` as a command that exits 2 with ``message`` whatever it is given."""

    def command() -> None:
        fail(message)

    app.command(name, help=f"(not available: {message})", add_help_option=False,
                context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                  "help_option_names": []})(command)


def mount_group(app: RigTyper, name: str, module: str, attr: str,
                extra: str | None = None) -> None:
    """Add the typer app ``module.attr`` to ``app`` as ``rig NAME``; when a package it needs
    is missing, ``rig NAME`` says what to install instead (exit 2)."""
    group, missing = load(module, attr)
    if missing is None:
        app.add_typer(group, name=name)
    else:
        _unavailable(app, name, missing_package_message(f"rig {name}", missing, extra))


def mount_command(app: RigTyper, name: str, module: str, attr: str,
                  extra: str | None = None) -> None:
    """Add the function ``module.attr`` to ``app`` as the command ``rig NAME``; when a
    package it needs is missing, ``rig NAME`` says what to install instead (exit 2)."""
    command, missing = load(module, attr)
    if missing is None:
        app.command(name)(command)
    else:
        _unavailable(app, name, missing_package_message(f"rig {name}", missing, extra))

