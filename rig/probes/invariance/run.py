"""An invariance run: every pair's two assessments asked through the ask log, masked and
measured (:mod:`rig.probes.measures`), the outputs written."""

from __future__ import annotations

import time
from dataclasses import dataclass
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
from rig.probes.invariance.assessment import (
    INSTRUCTION,
    REPLY_GRAMMAR,
    SYSTEM,
    assessment_prompt,
    mask_names,
    parse_assessment,
)
from rig.probes.invariance.pairs import (
    CONTROLS,
    Pair,
    campaign_pairs,
    name_pairs,
    perturbation_kind,
)
from rig.probes.invariance.summary import summarize
from rig.probes.measures import MEASURE_UNITS, MEASURES, text_measures
from rig.probes.names import DEFAULT_MATERIALS
from rig.probes.report_bias import write_invariance_report
from rig.scorer.base import Scorer

PROMPT_VERSION = 1


@dataclass(frozen=True)
class InvarianceSpec:
    out_dir: Path
    perturbations: tuple[str, ...] = ("name_swap", *CONTROLS)
    name_set: str = "gendered"
    materials_path: Path = DEFAULT_MATERIALS
    n_items: int | None = 6
    names_per_group: int = 2
    campaign: Path | None = None
    profiles: tuple[str, ...] = ()
    answers_path: Path | None = None
    max_pairs: int | None = None
    alpha: float = 0.05
    seed: int = 0


InvarianceResult = ProbeRun  # the run's folder, summary, rows, backend asks, seconds, files


def build_pairs(spec: InvarianceSpec) -> list[Pair]:
    """Every pair of the spec: the name-based ones, then the campaign's.

    Raises:
        ConfigError: as :func:`name_pairs` and :func:`campaign_pairs`; no pair at all.
    """
    for p in spec.perturbations:
        if p != "name_swap":
            perturbation_kind(p)
    pairs = name_pairs(spec.perturbations, spec.name_set, spec.materials_path, spec.n_items,
                       spec.names_per_group, spec.seed)
    profiles = tuple(p.split(":", 1)[1] for p in spec.perturbations if p.startswith("profile:"))
    profiles += tuple(spec.profiles)
    if spec.campaign is not None:
        pairs += campaign_pairs(spec.campaign, tuple(dict.fromkeys(profiles)),
                                spec.answers_path, spec.max_pairs, spec.seed)
    elif profiles:
        raise ConfigError("probe", "--campaign", "profile perturbations need a campaign folder",
                          list(profiles))
    if not pairs:
        raise ConfigError("probe", "--perturbation", "nothing to compare: no perturbation "
                          "selected", list(spec.perturbations))
    return pairs


def run_invariance(spec: InvarianceSpec, scorer: Scorer | None = None, *,
                   progress: bool = False) -> InvarianceResult:
    """Run (or resume) the invariance probe and write its outputs.

    Raises:
        ConfigError: see :func:`build_pairs`; alpha outside (0, 1).
        ScorerUnavailable: no reply to 3 asks in a row, or none to any ask of the run
            (the outputs are written first).
    """
    t0 = time.perf_counter()
    if not 0 < spec.alpha < 1:
        raise ConfigError("probe", "--alpha", "must be between 0 and 1", spec.alpha)
    pairs = build_pairs(spec)
    scorer = scorer or build_scorer()
    who = describe_scorer(scorer)
    out = spec.out_dir
    meta = {"probe": "invariance", "scorer": who, "prompt_version": PROMPT_VERSION,
            "perturbations": sorted({p.perturbation for p in pairs}),
            "kinds": {p.perturbation: p.kind for p in pairs}, "name_set": spec.name_set,
            "n_items": spec.n_items, "names_per_group": spec.names_per_group,
            "campaign": str(spec.campaign) if spec.campaign else None,
            "alpha": spec.alpha, "seed": spec.seed, "system_prompt": SYSTEM,
            "instruction": INSTRUCTION, "measures": list(MEASURES),
            "measure_units": MEASURE_UNITS}
    start_run(out, meta)
    asks = AskLog(out / "asks.jsonl", scorer)
    rows: list[dict] = []
    with progress_bar(progress) as bar:
        task = bar.add_task("invariance: pairs", total=len(pairs))
        for p in pairs:
            rows.append(_ask_pair(asks, p, spec.seed, who))
            bar.advance(task)
    files = write_outputs(out, rows, meta)
    return finish_run(out, rows, files, [asks], t0)


def _ask_pair(asks: AskLog, p: Pair, seed: int, who: dict) -> dict:
    row: dict = {"probe": "invariance", "perturbation": p.perturbation, "kind": p.kind,
                 "item_id": p.item_id, "unit": p.unit, "role": p.role,
                 "scorer_backend": who.get("backend"), "scorer_model": who.get("model"),
                 "prompt_version": PROMPT_VERSION, "seed": seed}
    for side, text, names in (("reference", p.reference, p.reference_names),
                              ("perturbed", p.perturbed, p.perturbed_names)):
        res = asks.ask(SYSTEM, assessment_prompt(p.role, text), REPLY_GRAMMAR,
                       parse_assessment, seed)
        masked = mask_names(res.value, names) if res.ok else None
        m = text_measures(masked) if masked is not None else dict.fromkeys(MEASURES)
        row.update({f"{side}_text": text, f"{side}_name": names[0] if names else None,
                    f"{side}_reply": res.value if res.ok else None,
                    f"{side}_masked": masked,
                    f"{side}_raw": res.raw, f"{side}_parse_status": res.parse_status,
                    f"{side}_error": res.error, f"{side}_seconds": res.seconds,
                    f"{side}_cached": res.cached})
        row.update({f"{side}_{k}": v for k, v in m.items()})
    row["scored"] = (row["reference_parse_status"] == "ok"
                     and row["perturbed_parse_status"] == "ok")
    row["reply_changed"] = (row["reference_masked"] != row["perturbed_masked"]
                            if row["scored"] else None)
    row["temperature"] = asks.scorer.temperature
    return row


def write_outputs(out: Path, rows: list[dict], meta: dict) -> dict[str, Path]:
    """Write scores.parquet, summary.json and report.html."""
    return write_probe_outputs(out, rows, summarize(pd.DataFrame(rows), meta),
                               write_invariance_report)
