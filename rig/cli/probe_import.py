"""``rig probe import``: a published probe set run as it is (a thin layer over
:mod:`rig.probes.replicate`), registered on ``rig probe`` by :mod:`rig.cli.probe`.

Exit codes: 0 success, 2 bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from rig.cli.common import console, fail, probe_scorer
from rig.console import print_table, stdout_console
from rig.errors import RigError
from rig.probes.schema import ImportedSummary


def _columns(values: list[str] | None) -> dict[str, str]:
    from rig.probes.replicate.read import COLUMN_ROLES

    out: dict[str, str] = {}
    for v in values or []:
        role, sep, header = v.partition("=")
        if not sep or role.strip() not in COLUMN_ROLES or not header.strip():
            fail(RigError(f"--column {v!r}: write ROLE=HEADER with ROLE one of "
                          f"{', '.join(COLUMN_ROLES)} (e.g. --column hedged='Hedged answer')"))
        out[role.strip()] = header.strip()
    return out


def print_import(s: ImportedSummary, out: Path) -> None:
    """The pairs' score gaps beside their content gaps, and the gap over pairs that pass
    rig's checks and pairs that do not."""
    t = Table(title=f"{s.source_file}: score gap beside content gap")
    for c in ("pair", "score gap", "content similarity", "confident-only words", "checks"):
        t.add_column(c, justify="right" if c in ("score gap", "content similarity") else
                     "left")
    for p in s.pairs:
        t.add_row(p.pair_id, "n/a" if p.score_gap is None else f"{p.score_gap:+.0f}",
                  "n/a" if p.content_similarity is None else f"{p.content_similarity:.3f}",
                  _first_words(p.reference_only_words),
                  f"{len(p.warnings)} warning(s)" if p.warnings else "passes")
    print_table(t)
    out_console = stdout_console()
    for what, pc in (("all pairs", s.paired), ("passing rig's checks", s.paired_passing),
                     ("with warnings", s.paired_warned)):
        gap = pc.get("mean_diff")
        out_console.print(f"mean score gap (hedged - confident), {what}: "
                          f"{'n/a' if gap is None else f'{gap:+.2f}'} over "
                          f"{pc.get('n_pairs', 0)} pairs")
    if s.content_similarity_note:
        out_console.print(s.content_similarity_note)
    out_console.print(f"report: {out / 'report.html'}")


def _scorer(spec: str):
    """The scorer of ``--scorer`` (:func:`rig.cli.common.probe_scorer`)."""
    return probe_scorer(spec)


def _first_words(words: list[str], k: int = 6) -> str:
    """The first ``k`` words, and how many more there are (summary.json has them all)."""
    more = f", ... (+{len(words) - k} more)" if len(words) > k else ""
    return ", ".join(words[:k]) + more if words else "none"


def import_cmd(
    source: Annotated[Path, typer.Argument(help="the published set: a CSV (hedging-benchmark) "
                                                "or rig's YAML layout (rig-pairs)")],
    layout: Annotated[str, typer.Option(help="hedging-benchmark (CSV of question, confident "
                                             "and hedged answers) or rig-pairs")]
    = "hedging-benchmark",
    column: Annotated[list[str] | None, typer.Option(
        help="ROLE=HEADER for a CSV header rig does not recognise; ROLE: id, question, "
             "category, confident, hedged (repeatable)")] = None,
    language: Annotated[str | None, typer.Option(
        help="language of the checks' hedge markers and stop words: en, es, fr, de "
             "(default: the set's hedges.yaml language:, else en)")] = None,
    scorer: Annotated[str, typer.Option(
        help="'embedded' or a YAML file (a pipeline, or scorer settings)")] = "embedded",
    seed: Annotated[int, typer.Option(help="seed of the asks")] = 0,
    out: Annotated[Path, typer.Option(help="output folder (resumes)")]
    = Path("reports/probe-import"),
    progress: Annotated[bool, typer.Option(help="show a progress bar")] = True,
) -> None:
    """Run a published probe set as it is: rig's equivalence checks become warnings per
    pair, and each pair's score gap is shown beside its content gap."""
    from rig.probes.core import check_run_folder
    from rig.probes.languages import set_language
    from rig.probes.replicate import ImportSpec, run_import

    try:
        lang = set_language(source, language)
    except RigError as exc:
        fail(exc)
    spec = ImportSpec(source=source, out_dir=out, layout=layout, columns=_columns(column),
                      language=lang, seed=seed)
    try:  # the folder first: a refused one costs no judge or similarity model
        check_run_folder(out, {"probe": "imported", "language": lang})
    except RigError as exc:
        fail(exc)
    sc = _scorer(scorer)
    try:
        res = run_import(spec, sc, progress=progress)
    except RigError as exc:
        fail(exc)
    console.print(f"{res.n_backend_calls} scorer calls, {res.seconds:.0f} s")
    print_import(res.summary, res.out_dir)  # type: ignore[arg-type]
