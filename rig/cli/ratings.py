"""``rig ratings ...``: human ratings of a campaign's or replay's calls (a thin layer over
:mod:`rig.ratings`).

``import`` (ratings from any tool, CSV or JSON lines, into the folder's ``ratings.jsonl``),
``collect`` (a local page where raters grade a blind, stratified sample of the folder's calls).

Exit codes: 0 success, 2 bad input (the message names the file, line, field and value).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rig.cli.common import JsonOpt, RigTyper, console, fail, or_fail, print_json
from rig.console import stdout_console
from rig.errors import RigError

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
    `rig campaign summarize` then adds judge-human agreement to the summary and report (for
    a replay folder: the same `rig replay` command again, which reuses every logged row)."""
    from rig.ratings.importer import import_ratings

    added = or_fail(lambda: import_ratings(file, folder))
    raters = sorted({r.rater_id for r in added})
    if as_json:
        print_json({"added": len(added), "raters": raters,
                    "ratings_file": str(folder / "ratings.jsonl")})
        return
    stdout_console().print(f"{len(added)} rating(s) from {len(raters)} rater(s) added to "
                           f"{folder / 'ratings.jsonl'}", highlight=False)


@ratings_app.command("collect")
def ratings_collect(
    folder: Annotated[Path, typer.Argument(help="the campaign or replay folder")],
    per_stratum: Annotated[int, typer.Option(
        min=1, help="calls drawn per profile (a replay: per question)")] = 20,
    double_share: Annotated[float, typer.Option(
        min=0.0, max=1.0, help="share of the sample rated by two raters")] = 0.2,
    seed: Annotated[int, typer.Option(help="seed of the draw")] = 0,
    port: Annotated[int, typer.Option(min=1, max=65535, help="port on 127.0.0.1")] = 8781,
    open_browser: Annotated[bool, typer.Option("--open/--no-open",
                                               help="open the page in the browser")] = False,
) -> None:
    """Serve a local rating page (http://127.0.0.1:PORT): raters grade a stratified random
    sample of FOLDER's calls, blind to profile, version and judge score, one at a time,
    on the rubric's criteria; ratings are appended to FOLDER/ratings.jsonl. The sample is
    kept in FOLDER/ratings_sample.json; run it again to go on. Ctrl-C stops it."""
    from rig.ratings.collect import create_app, serve

    or_fail(lambda: create_app(folder, per_stratum=per_stratum, double_share=double_share,
                               seed=seed))  # bad input: exit 2 before serving

    def ready(url: str) -> None:
        console.print(f"rating page for {folder}: {url}  (Ctrl-C to stop)", highlight=False)
        if open_browser:
            import webbrowser

            webbrowser.open(url)

    try:
        serve(folder, port, per_stratum=per_stratum, double_share=double_share, seed=seed,
              on_ready=ready)
    except (RigError, OSError) as exc:
        fail(exc)
