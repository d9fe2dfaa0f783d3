"""A name-swap run: every name set, condition, item, slot and group asked each feature through
the ask log, the outputs written."""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pandas as pd

from rig.console import progress_bar
from rig.errors import ConfigError
from rig.probes.core import (
    AskLog,
    ProbeRun,
    build_scorer,
    describe_scorer,
    finish_run,
    start_run,
    write_probe_outputs,
)
from rig.probes.languages import check_name_swap_language, check_probe_language
from rig.probes.name_swap.asks import (
    CONDITIONS,
    FEATURES,
    PROMPT_VERSION,
    Condition,
    Feature,
    feature_prompt,
    parse_feature,
)
from rig.probes.name_swap.summary import summarize
from rig.probes.name_swap.texts import ask_texts
from rig.probes.names import (
    Material,
    MaterialKind,
    NameSet,
    candidate_name,
    default_materials,
    draw_slots,
    load_materials,
    load_name_set,
    materials_language,
    select_items,
    shipped_name_sets,
)
from rig.probes.report_bias import write_name_swap_report
from rig.scorer.base import Scorer


@dataclass(frozen=True)
class NameSwapSpec:
    """What to run. ``n_items`` None: every item of the selected kinds; otherwise a seeded
    draw of that many."""
    out_dir: Path
    #: empty: the shipped name sets of ``language`` (:func:`rig.probes.names.shipped_name_sets`)
    name_sets: tuple[str, ...] = ()
    #: None: the shipped materials of ``language`` (:func:`rig.probes.names.default_materials`)
    materials_path: Path | None = None
    kinds: tuple[MaterialKind, ...] = ("resume", "transcript")
    n_items: int | None = None
    names_per_group: int = 4
    seed: int = 0
    conditions: tuple[str, ...] = CONDITIONS
    features: tuple[str, ...] = FEATURES
    #: the language of the names, material and asks (en, es, fr, de ship sets); every file
    #: read must declare it (:func:`rig.probes.languages.check_name_swap_language`)
    language: str = "en"


NameSwapResult = ProbeRun  # the run's folder, summary, rows, backend asks, seconds, files


def _select(values: tuple[str, ...], known: tuple[str, ...], what: str,
            keep_first: str | None = None) -> tuple:
    bad = [v for v in values if v not in known]
    if bad:
        raise ConfigError("probe", what, f"unknown; known: {list(known)}", bad)
    return tuple(k for k in known if k in values or k == keep_first)


def run_name_swap(spec: NameSwapSpec, scorer: Scorer | None = None, *,
                  progress: bool = False) -> NameSwapResult:
    """Run (or resume) the name-swap probe and write its outputs.

    Raises:
        ConfigError: an unknown name set, condition or feature, bad sizes, or malformed
            material (names the file, field and value).
        ScorerUnavailable: no reply to 3 asks in a row, or none to any ask of the run
            (the outputs are written first).
    """
    t0 = time.perf_counter()
    conditions = _select(spec.conditions, CONDITIONS, "--mitigation", keep_first="plain")
    features = _select(spec.features, FEATURES, "--feature")
    lang = check_probe_language("name_swap", spec.language)
    mats = spec.materials_path or default_materials(lang)
    sets = [load_name_set(s, lang) for s in spec.name_sets or shipped_name_sets(lang)]
    if len({s.id for s in sets}) != len(sets):
        raise ConfigError("probe", "--name-set", "a name set is given twice",
                          [s.id for s in sets])
    declared = {f"name set {s.id!r}": s.language for s in sets}
    declared[str(mats)] = materials_language(mats)
    check_name_swap_language(lang, declared)
    items = select_items(load_materials(mats, spec.kinds), spec.n_items, spec.seed, mats)
    plan = {s.id: {m.item_id: draw_slots(s, m.item_id, spec.names_per_group, spec.seed)
                   for m in items} for s in sets}
    texts = ask_texts(lang)
    scorer = scorer or build_scorer()
    who = describe_scorer(scorer)
    out = spec.out_dir
    meta = {"probe": "name_swap", "scorer": who, "prompt_version": PROMPT_VERSION,
            "language": lang,
            "materials_path": str(mats), "kinds": list(spec.kinds),
            "items": [{"item_id": m.item_id, "kind": m.kind, "role": m.role} for m in items],
            "name_sets": {s.id: {"title": s.title, "version": s.version, "source": s.source,
                                 "groups": [{"id": g.id, "label": g.label}
                                            for g in s.groups]} for s in sets},
            "names_per_group": spec.names_per_group, "seed": spec.seed,
            "conditions": list(conditions), "features": list(features),
            "fairness_instruction": texts.fairness, "system_prompt": texts.system,
            "questions": {f: texts.questions[f] for f in features},
            "compensation_currency": texts.currency}
    start_run(out, meta)
    asks = AskLog(out / "asks.jsonl", scorer)
    rows: list[dict] = []
    n_steps = sum(len(conditions) * len(items) * spec.names_per_group * len(s.groups)
                  for s in sets)
    with progress_bar(progress) as bar:
        task = bar.add_task("name swap: names x items", total=n_steps)
        for s in sets:
            for cond in conditions:
                for m in items:
                    for slot in plan[s.id][m.item_id]:
                        for g in s.group_ids:
                            rows += _ask_name(asks, s, cond, m, slot, g, features, spec.seed,
                                              who, lang)
                            bar.advance(task)
    files = write_outputs(out, rows, meta)
    return finish_run(out, rows, files, [asks], t0)


def _ask_name(asks: AskLog, s: NameSet, cond: Condition, m: Material, slot, group: str,
              features: tuple[Feature, ...], seed: int, who: dict,
              language: str = "en") -> list[dict]:
    first, name = candidate_name(s, group, slot)
    text = m.text(name)
    base = {"probe": "name_swap", "name_set": s.id, "condition": cond, "item_id": m.item_id,
            "item_kind": m.kind, "role": m.role, "slot": slot.slot, "group": group,
            "first_name": first, "name": name, "scorer_backend": who.get("backend"),
            "scorer_model": who.get("model"), "prompt_version": PROMPT_VERSION}
    rows = []
    for f in features:
        a = feature_prompt(cond, f, m.role, text, language)
        res = asks.ask(a.system, a.user, a.grammar,
                       partial(parse_feature, f, reasoning=cond == "reasoning",
                               language=language), seed)
        v = res.value if res.ok else None
        rows.append({**base, "feature": f, "value": v.value if v else None,
                     "answer": v.answer if v else None, "reasoning": v.reasoning if v else None,
                     "parse_status": res.parse_status, "raw": res.raw, "error": res.error,
                     "seconds": res.seconds, "cached": res.cached,
                     "temperature": res.temperature, "seed": seed})
    return rows


def write_outputs(out: Path, rows: list[dict], meta: dict) -> dict[str, Path]:
    """Write scores.parquet, summary.json and report.html."""
    return write_probe_outputs(out, rows, summarize(pd.DataFrame(rows), meta),
                               write_name_swap_report)
