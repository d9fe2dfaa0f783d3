"""A published probe set run as it is: each twin rated, each pair's score gap beside its
content gap, the outputs written (:func:`run_import`), and their pure summary
(:func:`summarize`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rig.console import progress_bar
from rig.errors import ConfigError
from rig.probes.core import (
    AskLog,
    ProbeRun,
    build_scorer,
    check_run_folder,
    describe_scorer,
    finish_run,
    start_run,
    write_probe_outputs,
)
from rig.probes.data import DEFAULT_SHIBBOLETH, load_shibboleth
from rig.probes.hedges import HedgeLexicon
from rig.probes.languages import check_probe_language, language_folder
from rig.probes.prompts import PROMPT_VERSION, parse_rating, rating_prompt
from rig.probes.replicate.gaps import (
    ENGLISH,
    content_similarity_of_pairs,
    lacking_words,
    pair_warnings,
)
from rig.probes.replicate.read import ImportedPair, read_pairs
from rig.probes.shibboleth.run import PROBES
from rig.scorer.base import Scorer
from rig.stats.common import jsonable
from rig.stats.comparisons import paired_comparison

#: the category line of a pair whose set names none (or one rig does not know)
GENERAL = "general"
SCORE_GAP = "score_treatment - score_reference: the hedged twin's rating minus the " \
            "confident twin's (1-5 scale, plain rating prompt, temperature of the scorer)"
CONTENT_GAP = ("content_similarity: cosine of the twins' all-MiniLM-L6-v2 sentence embeddings "
               "after WER normalisation (1 = same content); reference_only_words / "
               "treatment_only_words: content words one twin has and the other lacks "
               "(stop words and hedge-marker words left out)")


@dataclass(frozen=True)
class ImportSpec:
    """What to import: ``source`` in ``layout`` (:data:`rig.probes.replicate.read.LAYOUTS`),
    ``columns`` (role -> CSV header) for the benchmark layout, the ``language`` of the
    checks' markers and stop words, the seed of the asks."""
    source: Path
    out_dir: Path
    layout: str = "hedging-benchmark"
    columns: dict[str, str] = field(default_factory=dict)
    language: str = "en"
    seed: int = 0


ImportResult = ProbeRun


def _lexicon(language: str) -> HedgeLexicon:
    lang = check_probe_language("hedging", language)
    if lang == "en":
        return ENGLISH
    lex = load_shibboleth(language_folder(DEFAULT_SHIBBOLETH, lang), lang).hedges
    assert lex is not None
    return lex


def run_import(spec: ImportSpec, scorer: Scorer | None = None, *, embedder=None,
               progress: bool = False) -> ImportResult:
    """Read ``spec.source`` as it is, rate both twins of every pair, and write
    ``scores.parquet`` (one row per pair), ``summary.json`` (:class:`ImportedSummary`),
    ``report.html``, ``probe.json`` and ``asks.jsonl`` (resumable) under ``spec.out_dir``.
    rig's equivalence checks never refuse a pair: each failure is a warning on its row.

    Args:
        embedder: replaces the content-similarity model (tests).

    Raises:
        ConfigError: an unreadable set (names file, line or item, and field), an unknown
            layout or language.
        ScorerUnavailable: no reply to 3 asks in a row, or none at all.
    """
    t0 = time.perf_counter()
    lex = _lexicon(spec.language)
    pairs = read_pairs(spec.source, spec.layout, spec.columns)
    out = spec.out_dir
    check_run_folder(out, {"probe": "imported", "language": lex.language})
    scorer = scorer or build_scorer()
    who = describe_scorer(scorer)
    sims, note = content_similarity_of_pairs(pairs, embedder)
    if note is None and lex.language != "en":
        note = ("all-MiniLM-L6-v2 was trained on English: for other languages the similarity "
                "is a rough guide only")
    meta = {"probe": "imported", "source_file": str(spec.source), "layout": spec.layout,
            "columns": spec.columns, "language": lex.language, "scorer": who,
            "prompt_version": PROMPT_VERSION, "seed": spec.seed,
            "content_similarity_note": note}
    start_run(out, meta)
    asks = AskLog(out / "asks.jsonl", scorer)
    rows = []
    with progress_bar(progress) as bar:
        task = bar.add_task("import: pairs", total=len(pairs))
        for pair, sim in zip(pairs, sims, strict=True):
            rows.append(_pair_row(asks, pair, sim, lex, spec.seed, who))
            bar.advance(task)
    files = write_outputs(out, rows, meta)
    return finish_run(out, rows, files, [asks], t0)


def _rate(asks: AskLog, pair: ImportedPair, answer: str, seed: int):
    from rig.probes.data import CATEGORIES

    cat = pair.category if pair.category in CATEGORIES else GENERAL
    p = rating_prompt("plain", PROBES["hedging"].anti_bias, cat, pair.question, answer)
    return asks.ask(p.system, p.user, p.grammar, parse_rating, seed)


def _pair_row(asks: AskLog, pair: ImportedPair, sim: float | None, lex: HedgeLexicon,
              seed: int, who: dict) -> dict:
    ref, treat = (_rate(asks, pair, a, seed) for a in (pair.reference, pair.treatment))
    sr = float(ref.value.score) if ref.ok else None
    st = float(treat.value.score) if treat.ok else None
    only_ref, only_treat = lacking_words(pair, lex)
    return {"probe": "imported", "pair_id": pair.pair_id, "source": pair.source,
            "category": pair.category, "question": pair.question,
            "reference": pair.reference, "treatment": pair.treatment,
            "score_reference": sr, "score_treatment": st,
            "score_gap": st - sr if sr is not None and st is not None else None,
            "content_similarity": sim, "reference_only_words": only_ref,
            "treatment_only_words": only_treat, "warnings": pair_warnings(pair, lex),
            "parse_status_reference": ref.parse_status,
            "parse_status_treatment": treat.parse_status,
            "raw_reference": ref.raw, "raw_treatment": treat.raw,
            "scorer_backend": who.get("backend"), "scorer_model": who.get("model"),
            "seed": seed, "prompt_version": PROMPT_VERSION}


def _spearman(x: np.ndarray, y: np.ndarray) -> dict:
    from scipy import stats

    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return {"n": len(x), "rho": None, "p": None, "not_computable": {
            "rho": "fewer than 3 pairs with both figures, or one of them constant"}}
    r = stats.spearmanr(x, y)
    return {"n": len(x), "rho": float(r.statistic), "p": float(r.pvalue)}


def summarize(rows: pd.DataFrame, meta: dict) -> dict:
    """The summary of an import from its rows (pure)."""
    def num(col: str, r: pd.DataFrame) -> np.ndarray:
        return pd.to_numeric(r[col], errors="coerce").to_numpy(dtype=float) if len(r) \
            else np.array([], dtype=float)

    def paired(r: pd.DataFrame) -> dict:
        return paired_comparison(num("score_reference", r), num("score_treatment", r)
                                 ).to_dict()

    warned = rows["warnings"].map(len) > 0 if len(rows) else pd.Series(dtype=bool)
    pairs = []
    for r in rows.to_dict("records"):
        pairs.append({k: r[k] for k in (
            "pair_id", "source", "category", "question", "score_reference",
            "score_treatment", "score_gap", "content_similarity")}
            | {k: list(r[k]) for k in ("reference_only_words", "treatment_only_words",
                                       "warnings")})
    n_fail = int(sum((rows[c] != "ok").sum() for c in ("parse_status_reference",
                                                       "parse_status_treatment"))) \
        if len(rows) else 0
    return jsonable({
        **{k: meta[k] for k in ("probe", "source_file", "layout", "language", "scorer",
                                "prompt_version", "seed")},
        "n_pairs": len(rows), "n_pairs_with_warnings": int(warned.sum()),
        "n_rating_failures": n_fail, "score_gap": SCORE_GAP, "content_gap": CONTENT_GAP,
        "content_similarity_note": meta.get("content_similarity_note"),
        "paired": paired(rows), "paired_passing": paired(rows[~warned] if len(rows) else rows),
        "paired_warned": paired(rows[warned] if len(rows) else rows),
        "content_vs_score": _spearman(num("content_similarity", rows), num("score_gap", rows)),
        "pairs": pairs})  # type: ignore[return-value]


def write_outputs(out: Path, rows: list[dict], meta: dict) -> dict[str, Path]:
    """Write scores.parquet, summary.json and report.html."""
    from rig.probes.replicate.report import write_import_report

    if not rows:
        raise ConfigError(meta["source_file"], "", "no pairs to write")
    return write_probe_outputs(out, rows, summarize(pd.DataFrame(rows), meta),
                               write_import_report)
