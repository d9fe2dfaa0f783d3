"""What every command group of the CLI shares: the error console, :func:`fail` (exit 2),
:class:`RigTyper` (a ``typer.Typer`` whose commands suggest an option only when it is close
to the one typed), and the ``--json`` option with :func:`print_json`."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from difflib import get_close_matches
from functools import cache
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

from rig.console import MessageConsole
from rig.errors import RigError

#: stderr: progress lines, warnings and errors, one line each off a terminal (results go to
#: :func:`rig.console.stdout_console`)
console = MessageConsole(stderr=True)


def fail(exc: Exception | str) -> NoReturn:
    """Print ``error: <message>`` on stderr and exit 2 (bad input). A ``KeyError``'s message
    is its key's text, not its repr. Where stderr is not a terminal (a log, a test) the
    message stays on one line."""
    msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
    console.print(Text("error: ", style="red") + Text(str(msg)), highlight=False)
    raise typer.Exit(2)


def close_options(option: str, candidates: Iterable[str] | None) -> list[str]:
    """The options of ``candidates`` that ``option`` is a likely typo of: difflib's ratio of
    at least 0.6 (:func:`difflib.get_close_matches`) between the names without their dashes.

    Click compares them with the dashes, and the ``--`` that every long option shares made
    ``--out`` look close to ``--bogus``."""
    bare = {c.lstrip("-"): c for c in candidates or ()}
    return [bare[m] for m in get_close_matches(option.lstrip("-"), list(bare), cutoff=0.6)]


class _CloseOptions:
    """Keeps only the close matches in an unknown option's ``Possible options``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)  # type: ignore[misc]
        except Exception as exc:  # click's NoSuchOption (typer vendors click: no public name)
            if getattr(exc, "option_name", None) and getattr(exc, "possibilities", None):
                exc.possibilities = close_options(exc.option_name, exc.possibilities)
            raise


def one_line_paragraphs(text: str | None) -> str | None:
    """``text`` (a docstring) with each paragraph on one line, so ``--help`` wraps it to the
    terminal (typer keeps the line breaks of every paragraph after the first: ``rig demo
    --help`` broke lines mid-sentence at 80 columns). A paragraph starting with ``\\b``
    (click's keep-as-is mark) is kept."""
    if not text:
        return text
    paras = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(p if p.startswith("\b") else " ".join(p.split("\n")) for p in paras)


class _Paragraphs:
    """Help text with one line per paragraph (:func:`one_line_paragraphs`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self.help = one_line_paragraphs(self.help)  # type: ignore[has-type]


@cache
def _option_names_table() -> type:
    """A ``rich.table.Table`` whose columns of single words (the option names, ``--x`` and
    ``--no-x``, and short types like ``<bool>``) never wrap, so rich narrows the help and
    type columns instead. Rich sizes the options panel by narrowing the widest columns
    first, down to the others' widths: at 80 columns a long name beside a wide type
    (``<float range> [0.0<=x<=20.0]``) was cut, ``--run-deterministic-r…`` (issue 33)."""
    from rich.table import Table

    class OptionNamesTable(Table):
        def __rich_console__(self, console: Any, options: Any) -> Any:
            for column in self.columns[:-1]:  # the last holds the help text
                cells = list(column.cells)
                column.no_wrap = column.no_wrap or (bool(cells) and all(
                    isinstance(c, Text) and not any(ch.isspace() for ch in c.plain)
                    for c in cells))
            return super().__rich_console__(console, options)

    return OptionNamesTable


@contextmanager
def _whole_option_names() -> Iterator[None]:
    """Typer's help panels drawn with :func:`_option_names_table`'s table (typer builds its
    tables from ``typer.rich_utils.Table``; ``tests/test_help_width_unit.py`` checks every
    command at 80 columns, so a typer that stops doing so is caught)."""
    from typer import rich_utils

    table = rich_utils.Table
    rich_utils.Table = _option_names_table()
    try:
        yield
    finally:
        rich_utils.Table = table


class _WholeOptionNames:
    """``--help`` with every option name whole (:func:`_whole_option_names`)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        with _whole_option_names():
            super().format_help(ctx, formatter)  # type: ignore[misc]


class RigCommand(_WholeOptionNames, _Paragraphs, _CloseOptions, TyperCommand):
    """A command whose unknown-option error suggests only close matches."""


class RigGroup(_WholeOptionNames, _Paragraphs, _CloseOptions, TyperGroup):
    """A command group whose unknown-option error suggests only close matches."""


class RigTyper(typer.Typer):
    """``typer.Typer`` with :class:`RigGroup` and :class:`RigCommand` as its classes."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("cls", RigGroup)
        super().__init__(**kwargs)

    def command(self, name: str | None = None, *, cls: type[TyperCommand] | None = None,
                **kwargs: Any):
        return super().command(name, cls=cls or RigCommand, **kwargs)


T = TypeVar("T")

#: ``--json``: print the result as JSON instead of a table
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def or_fail(fn: Callable[[], T]) -> T:
    """Call ``fn``; bad input (a ``RigError`` or ``ValueError``) exits 2 with its message."""
    try:
        return fn()
    except (RigError, ValueError) as exc:
        fail(exc)


def print_json(obj: dict) -> None:
    """Print ``obj`` as indented JSON on stdout (NaN refused: a figure that cannot be computed
    is null)."""
    typer.echo(json.dumps(obj, indent=2, allow_nan=False))


#: ``--conduct`` (rig campaign run): the list :func:`rig.calls.conduct.load_conduct` reads
CONDUCT_HELP = ("calls to a bot: the conduct list (YAML: AI disclosure, prohibited questions with "
                "their sources, accommodation; default rig/data/conduct.yaml)")


VARY_DELIVERY_HELP = ("SD of the TTS engine's rate between deliveries, %: every call spoken at "
                      "its answer's and repeat's rate drawn from the seed, so repeats differ as "
                      "two deliveries of an answer do and the noise floor of a deterministic "
                      "pipeline is measured (e.g. 5; docs/measurement.md, 'Noise floor')")


def probe_scorer(spec: str, option: str = "--scorer"):
    """:func:`~rig.probes.core.build_scorer` of a probe command's option value; an error
    names the option and the value (exit 2)."""
    from rig.probes import core

    try:
        return core.build_scorer(spec)
    except RigError as exc:
        fail(RigError(f"{option} {spec!r}: {exc} (use embedded, a pipeline YAML or a scorer "
                      "YAML" + (", or none)" if option == "--judge" else ")")))


#: ``--executor``/``--workers``/``--ray-address`` of the long jobs that run on :mod:`rig.jobs`
#: (sweep, probes, scorer validate, replay); the defaults keep them in this process.
ExecutorOpt = Annotated[str, typer.Option(
    help="where the work items run: serial (this process), local (--workers processes on "
         "this machine), ray (actors on a Ray cluster, extra 'ray'); results are the same")]
WorkersOpt = Annotated[int, typer.Option(
    min=1, help="worker processes or Ray actors, each building its models once")]
RayAddressOpt = Annotated[str | None, typer.Option(
    help="with --executor ray: auto or HOST:PORT (default: a Ray instance started here)")]


def job_spec(executor: str, workers: int, ray_address: str | None):
    """The :class:`rig.campaign.executors.ExecutorSpec` of those options; exits 2 (naming
    the option and value) on an unknown executor, or ``--ray-address`` without ray."""
    from rig.jobs import executor_spec

    if ray_address is not None and executor != "ray":
        fail(f"--ray-address needs --executor ray (got --executor {executor})")
    try:
        return executor_spec(executor, workers, ray_address)
    except RigError as exc:
        fail(exc)
