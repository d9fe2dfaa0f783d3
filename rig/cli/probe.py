"""``rig probe ...``: text-level probes of the scorer (a thin layer over :mod:`rig.probes`;
the tables printed are :mod:`rig.cli.probe_tables`).

Exit codes: 0 success, 2 bad input.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.table import Table

from rig.cli.common import (
    ExecutorOpt,
    RayAddressOpt,
    RigTyper,
    WorkersOpt,
    console,
    fail,
    job_spec,
    probe_scorer,
)
from rig.cli.probe_tables import (
    BIAS_PRINTERS,
    print_framing,
    print_invariance,
    print_name_swap,
    print_shibboleth,
)
from rig.console import print_table, stdout_console
from rig.errors import RigError
from rig.jsonfile import read_json
from rig.probes.data import DEFAULT_SHIBBOLETH
from rig.probes.framing import DEFAULT_FRAMING
from rig.probes.names import DEFAULT_MATERIALS
from rig.probes.schema import load_probe_summary

probe_app = RigTyper(no_args_is_help=True, pretty_exceptions_show_locals=False,
                     help="Text-level probes: does the scorer grade style instead of "
                          "content? (hedging, accent markers), and probes from the "
                          "hiring-bias literature (name swap, dual framing, invariance)")

_MITIGATIONS = {"anti-bias": "anti_bias", "reasoning-fewshot": "reasoning_fewshot",
                "anti_bias": "anti_bias", "reasoning_fewshot": "reasoning_fewshot"}

ScorerOpt = Annotated[str, typer.Option(
    help="'embedded' (llama.cpp, the verified GGUF) or a YAML file: a pipeline, or scorer "
         "settings (backend: openai, base_url, model, api_key_env = the NAME of the "
         "environment variable holding the key)")]
SessionsOpt = Annotated[int, typer.Option(min=1, help="sessions per variant and condition")]
SeedOpt = Annotated[int, typer.Option(help="seed of the session draws (and the sampling "
                                           "above temperature 0)")]
MitigationOpt = Annotated[list[str] | None, typer.Option(
    help="mitigation prompt condition to run besides the plain prompt, which always runs: "
         "anti-bias, reasoning-fewshot (repeatable; default: both), or none alone for the "
         "plain prompt only (none cannot be combined with a mitigation)")]
ProgressOpt = Annotated[bool, typer.Option(help="show a progress bar")]
OutOpt = Annotated[Path, typer.Option(help="output folder (resumes)")]
MaterialsOpt = Annotated[Path, typer.Option(help="materials file (resumes, transcripts)")]
NamesPerGroupOpt = Annotated[int, typer.Option(min=1, help="name slots per item")]
LanguageOpt = Annotated[str, typer.Option(
    help="language of the prompt set: en, es, fr or de (the answer banks' languages; "
         "probes/README.md says what each probe has in each)")]


def _mitigations(mitigation: list[str] | None, mapping: dict[str, str],
                 default: tuple[str, ...]) -> tuple[str, ...]:
    """The prompt conditions of ``--mitigation``: the plain prompt always runs, then each
    mitigation given (``default`` when none is given); ``none`` alone: the plain prompt only.
    ``none`` with a mitigation is refused: it says "no mitigation", the other says one."""
    if not mitigation:
        return ("plain", *default)
    if "none" in mitigation:
        others = [m for m in mitigation if m != "none"]
        if others:
            fail(RigError(f"--mitigation none cannot be combined with other mitigations "
                          f"(got none and {', '.join(others)}): the plain prompt always "
                          f"runs, so give {' '.join('--mitigation ' + m for m in others)} "
                          "alone for the plain prompt and those, or --mitigation none "
                          "alone for the plain prompt only"))
        return ("plain",)
    return ("plain", *_choices(mitigation, mapping, "mitigation", extra=("none",)))


def _conditions(mitigation: list[str] | None) -> tuple[str, ...]:
    return _mitigations(mitigation, _MITIGATIONS, ("anti_bias", "reasoning_fewshot"))


def _choices(values: list[str] | None, mapping: dict[str, str], what: str,
             extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    out = []
    for v in values or []:
        if v not in mapping:
            known = sorted({*mapping, *extra})
            fail(RigError(f"--{what}: unknown {v!r} (use {', '.join(known)})"))
        out.append(mapping[v])
    return tuple(dict.fromkeys(out))


def _scorer(spec: str, option: str = "--scorer"):
    """:func:`rig.cli.common.probe_scorer` (kept here so tests can replace it per command
    module)."""
    return probe_scorer(spec, option)


def _execute(run: Callable[..., Any], show: Callable[[Any, Path], None], *args: Any,
             jobs: tuple = ("serial", 1, None, "embedded"), **kwargs: Any) -> None:
    """``run(*args, **kwargs)`` (a probe's runner), then the count of scorer calls on stderr
    and ``show(summary, out_dir)``; a ``RigError`` exits 2 with its message. ``jobs``:
    (--executor, --workers, --ray-address, --scorer): the asks on workers
    (:func:`rig.probes.parallel.run_probe`)."""
    import functools

    from rig.probes.core import build_scorer
    from rig.probes.parallel import run_probe

    spec = job_spec(*jobs[:3])
    try:
        res = run_probe(run, *args, executor=spec,
                        make_scorer=functools.partial(build_scorer, jobs[3]), **kwargs)
    except RigError as exc:
        fail(exc)
    console.print(f"{res.n_backend_calls} scorer calls, {res.seconds:.0f} s")
    show(res.summary, res.out_dir)


def _shibboleth_command(probe: str, doc: str) -> Callable[..., None]:
    """The command of a shibboleth probe (hedging, accent markers): the same options, its
    own output folder."""

    def command(
        scorer: ScorerOpt = "embedded",
        sessions: SessionsOpt = 20,
        questions_per_session: Annotated[int | None, typer.Option(
            min=1, help="questions drawn per session (default 10, or every question of a "
                        "smaller set)")] = None,
        seed: SeedOpt = 0,
        out: OutOpt = Path(f"reports/probe-{probe}"),
        mitigation: MitigationOpt = None,
        data: Annotated[Path | None, typer.Option(
            help=f"probe data folder (default the shipped set of --language: "
                 f"{DEFAULT_SHIBBOLETH} or its es/, fr/, de/)")] = None,
        language: LanguageOpt = "en",
        progress: ProgressOpt = True,
        executor: ExecutorOpt = "serial", workers: WorkersOpt = 1,
        ray_address: RayAddressOpt = None,
    ) -> None:
        from rig.probes.shibboleth import ProbeSpec, run_probe

        spec = ProbeSpec(probe=probe, out_dir=out, data_path=data,  # type: ignore[arg-type]
                         n_sessions=sessions, questions_per_session=questions_per_session,
                         seed=seed, conditions=_conditions(mitigation), language=language)
        _execute(run_probe, print_shibboleth, spec, _scorer(scorer), progress=progress,
                 jobs=(executor, workers, ray_address, scorer))

    command.__doc__ = doc
    return command


probe_app.command("hedging")(_shibboleth_command(
    "hedging", "Confident vs hedged answers with the same content: the scorer's gap."))
probe_app.command("accent-markers")(_shibboleth_command(
    "accent-markers",
    "Confident answers vs the same answers with articles dropped: the scorer's gap."))


@probe_app.command("summarize")
def summarize_cmd(out: Annotated[Path, typer.Argument(help="a probe output folder")]) -> None:
    """Rewrite summary.json and report.html from the folder's parquet files (written when a
    run finishes; an interrupted run is completed by rerunning its command)."""
    import pandas as pd

    meta_path = out / "probe.json"
    if not meta_path.is_file():
        fail(RigError(f"{meta_path}: not a probe folder (no probe.json)"))
    try:
        meta = read_json(meta_path)  # not JSON, a key named twice: ConfigError
    except RigError as exc:
        fail(exc)
    if not isinstance(meta, dict):
        fail(RigError(f"{meta_path}: not a probe's probe.json (expected a JSON object)"))
    kind = meta.get("probe")
    needed = ["scores.parquet"] + (["decisions.parquet"] if kind not in (*BIAS_PRINTERS,
                                                                       "imported") else [])
    missing = [n for n in needed if not (out / n).is_file()]
    if missing:
        fail(RigError(f"{out}: no {', '.join(missing)}: the run did not finish. Rerun the same "
                      "`rig probe ...` command: it resumes from the ask log (asks.jsonl) and "
                      "writes every output"))
    rerun = ("rerun the `rig probe ...` command that wrote it: it resumes from the ask log "
             "(asks.jsonl) and rewrites every output")

    def read(name: str) -> pd.DataFrame:
        try:
            return pd.read_parquet(out / name)
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            fail(RigError(f"{out / name}: not a readable parquet file "
                          f"({type(exc).__name__}: {exc}); {rerun}"))

    def damaged(exc: Exception) -> NoReturn:
        fail(RigError(f"{out}: scores.parquet or probe.json does not hold what a {kind} "
                      f"run writes ({type(exc).__name__}: {exc}); {rerun}"))

    if kind == "imported":
        from rig.cli.probe_import import print_import
        from rig.probes import replicate

        try:
            replicate.write_outputs(out, read("scores.parquet").to_dict("records"), meta)
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            damaged(exc)
        print_import(load_probe_summary(out / "summary.json"), out)  # type: ignore[arg-type]
        return
    if kind in BIAS_PRINTERS:
        from rig.probes import framing, invariance, name_swap

        mod = {"name_swap": name_swap, "dual_framing": framing, "invariance": invariance}[kind]
        rows = read("scores.parquet").to_dict("records")
        try:
            mod.write_outputs(out, rows, meta)
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            damaged(exc)
        BIAS_PRINTERS[kind](load_probe_summary(out / "summary.json"), out)
        return
    from rig.probes.report import write_shibboleth_report
    from rig.probes.schema import probe_summary, write_probe_summary
    from rig.probes.shibboleth import summarize

    scores, decisions = read("scores.parquet"), read("decisions.parquet")
    try:
        summary = summarize(scores, decisions, meta)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        damaged(exc)
    try:
        model = probe_summary(summary, out / "summary.json")
    except RigError as exc:
        damaged(exc)
    write_probe_summary(out / "summary.json", model)
    write_shibboleth_report(out / "report.html", model)
    print_shibboleth(model, out)


@probe_app.command("check")
def check(data: Annotated[Path | None, typer.Argument(
              help="probe data folder (default the shipped set of --language)")] = None,
          language: Annotated[str | None, typer.Option(
              help="language of the set: en, es, fr or de (default: its hedges.yaml's "
                   "language:, else en)")] = None) -> None:
    """Validate a probe data folder (schema and equivalence checks); count its questions.
    A published set that fails the checks can still be run, with a warning per pair:
    `rig probe import`."""
    from rig.probes.data import CATEGORIES, load_shibboleth
    from rig.probes.languages import check_probe_language, language_folder, set_language

    try:
        lang = check_probe_language("hedging", set_language(data, language))
        data = data or language_folder(DEFAULT_SHIBBOLETH, lang)
        s = load_shibboleth(data, lang)
    except RigError as exc:
        fail(RigError(f"{exc}\nTo run a published set as it is, with these checks as "
                      "warnings per pair: rig probe import FILE --layout rig-pairs "
                      "(or hedging-benchmark for a CSV)"))
    t = Table(title=f"{data} ({s.version})")
    t.add_column("category")
    t.add_column("questions", justify="right")
    for cat, n in s.counts().items():
        t.add_row(CATEGORIES[cat][0], str(n))
    t.add_row("total", str(len(s.items)))
    print_table(t)
    stdout_console().print(f"{len(s.fewshot)} few-shot examples; every item passed the checks")
    if s.hedges is not None:
        kinds = ", ".join(f"{k} {len(v)}" for k, v in s.hedges.markers.items()) or "none"
        stdout_console().print(f"hedge markers ({s.language}): {kinds}; source: "
                               f"{s.hedges.source}" + (f"; note: {s.hedges.note}"
                                                       if s.hedges.note else ""))


@probe_app.command("name-swap")
def name_swap_cmd(
    scorer: ScorerOpt = "embedded",
    name_set: Annotated[list[str] | None, typer.Option(
        help="name set id (probes/names/<id>.yaml, probes/names/<lang>/<id>.yaml) or YAML "
             "path, repeatable (default: the language's shipped sets: gendered and "
             "neutral_pronouns in en, gendered in es, fr, de)")] = None,
    materials: Annotated[Path | None, typer.Option(
        help="materials file (resumes, transcripts; default: the language's shipped "
             "one)")] = None,
    kind: Annotated[list[str] | None, typer.Option(
        help="material kind: resume or transcript (repeatable; default both)")] = None,
    items: Annotated[int | None, typer.Option(
        min=1, help="a seeded draw of this many items (default: all)")] = None,
    names_per_group: NamesPerGroupOpt = 4,
    feature: Annotated[list[str] | None, typer.Option(
        help="qualification, hire or compensation (repeatable; default all three)")] = None,
    mitigation: Annotated[list[str] | None, typer.Option(
        help="mitigation condition besides the plain prompt, which always runs: anti-bias, "
             "reasoning (repeatable; default both), or none alone for the plain prompt only "
             "(none cannot be combined with a mitigation)")] = None,
    language: Annotated[str, typer.Option(
        help="language of the names, material and asks: en, es, fr or de (shipped sets in "
             "each); a --name-set or --materials file must declare it")] = "en",
    seed: SeedOpt = 0,
    out: OutOpt = Path("reports/probe-name-swap"),
    progress: ProgressOpt = True,
    executor: ExecutorOpt = "serial", workers: WorkersOpt = 1, ray_address: RayAddressOpt = None,
) -> None:
    """Identical material under names of different groups: qualification, hire, pay."""
    from rig.probes.name_swap import FEATURES, NameSwapSpec, run_name_swap

    conds = _mitigations(mitigation, {"anti-bias": "anti_bias", "anti_bias": "anti_bias",
                                      "reasoning": "reasoning"}, ("anti_bias", "reasoning"))
    kinds = _choices(kind, {"resume": "resume", "transcript": "transcript"}, "kind") or (
        "resume", "transcript")
    feats = _choices(feature, {f: f for f in FEATURES}, "feature") or FEATURES
    spec = NameSwapSpec(out_dir=out, name_sets=tuple(name_set or ()),
                        materials_path=materials, kinds=kinds, n_items=items,  # type: ignore
                        names_per_group=names_per_group, seed=seed, conditions=conds,
                        features=feats, language=language)
    _execute(run_name_swap, print_name_swap, spec, _scorer(scorer), progress=progress,
             jobs=(executor, workers, ray_address, scorer))


@probe_app.command("dual-framing")
def dual_framing_cmd(
    scorer: ScorerOpt = "embedded",
    topic: Annotated[list[str] | None, typer.Option(
        help="topic id (repeatable; default all): gender_leadership, employment_gap, "
             "age_hiring, accent_customer_facing, remote_office")] = None,
    iterations: Annotated[int, typer.Option(
        min=1, help="wrapper draws per statement, each asked in both frames")] = 5,
    judge: Annotated[str, typer.Option(
        help="LLM judge for replies the rules do not settle: none, embedded, or a scorer "
             "YAML")] = "none",
    data: Annotated[Path | None, typer.Option(
        help="dual-framing folder (topics.yaml, wrappers.yaml); default the shipped set of "
             f"--language ({DEFAULT_FRAMING}, or its es/, fr/, de/)")] = None,
    language: LanguageOpt = "en",
    seed: SeedOpt = 0,
    out: OutOpt = Path("reports/probe-dual-framing"),
    progress: ProgressOpt = True,
    executor: ExecutorOpt = "serial", workers: WorkersOpt = 1, ray_address: RayAddressOpt = None,
) -> None:
    """Affirmative and reversed statements on hiring topics: does the scorer take sides?"""
    from rig.probes.framing import FramingSpec, run_dual_framing

    spec = FramingSpec(out_dir=out, data_path=data, topics=tuple(topic or ()),
                       iterations=iterations, seed=seed, language=language)
    sc = _scorer(scorer)
    judge_scorer = None if judge == "none" else _scorer(judge, "--judge")
    _execute(run_dual_framing, print_framing, spec, sc, judge=judge_scorer, progress=progress,
             jobs=(executor, workers, ray_address, scorer))


@probe_app.command("invariance")
def invariance_cmd(
    scorer: ScorerOpt = "embedded",
    perturbation: Annotated[list[str] | None, typer.Option(
        help="name-swap, typos, spacing, name-within-group, or profile:<id> (repeatable; "
             "default the first four)")] = None,
    name_set: Annotated[str, typer.Option(help="name set of the name perturbations")]
    = "gendered",
    materials: MaterialsOpt = DEFAULT_MATERIALS,
    items: Annotated[int, typer.Option(min=1, help="a seeded draw of this many items")] = 6,
    names_per_group: NamesPerGroupOpt = 2,
    campaign: Annotated[Path | None, typer.Option(
        help="a `rig campaign run` folder: compare audio profiles' transcripts with the "
             "baseline's")] = None,
    profile: Annotated[list[str] | None, typer.Option(
        help="profile id to compare with the baseline (repeatable; default: every profile "
             "of --campaign)")] = None,
    answers: Annotated[Path | None, typer.Option(
        help="answer bank of the campaign (default: the campaign's)")] = None,
    max_pairs: Annotated[int | None, typer.Option(
        min=1, help="at most this many campaign pairs per profile (seeded draw)")] = None,
    alpha: Annotated[float, typer.Option(help="family-wise error rate per perturbation")]
    = 0.05,
    seed: SeedOpt = 0,
    out: OutOpt = Path("reports/probe-invariance"),
    progress: ProgressOpt = True,
    executor: ExecutorOpt = "serial", workers: WorkersOpt = 1, ray_address: RayAddressOpt = None,
) -> None:
    """The scorer's written assessment under name swaps, controls and audio profiles."""
    from rig.probes.invariance import CONTROLS, InvarianceSpec, run_invariance

    given = [p.replace("-", "_") if not p.startswith("profile:") else p
             for p in perturbation or []]
    perts = tuple(given) if given else ("name_swap", *CONTROLS)
    if campaign is not None and not given:
        perts = ()  # a campaign alone: its profiles
    spec = InvarianceSpec(out_dir=out, perturbations=perts, name_set=name_set,
                          materials_path=materials, n_items=items,
                          names_per_group=names_per_group, campaign=campaign,
                          profiles=tuple(profile or ()), answers_path=answers,
                          max_pairs=max_pairs, alpha=alpha, seed=seed)
    _execute(run_invariance, print_invariance, spec, _scorer(scorer), progress=progress,
             jobs=(executor, workers, ray_address, scorer))


def _register_import() -> None:
    from rig.cli.probe_import import import_cmd

    probe_app.command("import")(import_cmd)


_register_import()
