"""``rig ratings ...``: human ratings of a campaign's or replay's calls (a thin layer over
:mod:`rig.ratings`).

``import`` (ratings from any tool, CSV or JSON lines, into the folder's ``ratings.jsonl``).

Exit codes: 0 success, 2 bad input (the message names the file, line, field and value).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rig.cli.common import JsonOpt, RigTyper, or_fail, print_json
from rig.console import stdout_console

ratings_app = RigTyper(no_args_is_help=True, help="Human ratings of calls and answers.")


@ratings_app.command("import")
def ratings_import(
    file: Annotated[Path, typer.Argument(help="ratings as .csv or .jsonl (docs/ratings.md)")],
    folder: Annotated[Path, typer.Option("--into", help="the campaign or replay folder")],
    as_json: JsonOpt = False,
) -> None:
    """Check every rating in FILE (call_id or answer_id, rater, points per criterion or a
    total) against the folder's calls and rubrics, then append them all to its
    ratings.jsonl at once; the first problem stops the import and nothing is written.
    `rig campaign summarize` then adds judge-human agreement to the summary and report."""
    from rig.ratings.importer import import_ratings

    added = or_fail(lambda: import_ratings(file, folder))
    raters = sorted({r.rater_id for r in added})
    if as_json:
        print_json({"added": len(added), "raters": raters,
                    "ratings_file": str(folder / "ratings.jsonl")})
        return
    stdout_console().print(f"{len(added)} rating(s) from {len(raters)} rater(s) added to "
                           f"{folder / 'ratings.jsonl'}", highlight=False)
