"""``report.html`` of ``rig probe import``: the gap in sentences, then every pair's score gap
beside its content gap (similarity, the words one twin lacks) and rig's warnings."""

from __future__ import annotations

from pathlib import Path

from rig.paths import write_text_atomic
from rig.probes.report import cell, esc, p_fmt, page, paired_p, table
from rig.probes.report_bias import scorer_line
from rig.probes.report_language import quoted
from rig.probes.schema import ImportedSummary
from rig.report.pages import fmt


def _gap_sentence(what: str, pc: dict) -> str:
    if not pc.get("n_pairs"):
        return f"<li>{esc(what)}: no scored pair.</li>"
    ci = pc.get("t_ci95")
    return (f"<li>{esc(what)}: mean score gap {fmt(pc.get('mean_diff'))} points "
            f"(hedged - confident, 95% CI {fmt(ci) if ci else 'n/a'}, p {paired_p(pc)}) over "
            f"{pc['n_pairs']} pairs.</li>")


def import_verdict(s: ImportedSummary) -> list[str]:
    """The sentences that lead the report: the gap over all pairs, over the pairs that pass
    rig's checks and over those that do not, and how content similarity tracks it."""
    cv = s.content_vs_score
    rho = (f"Spearman's rho between content similarity and score gap is {fmt(cv['rho'])} "
           f"(p {p_fmt(cv['p'])}, n = {cv['n']}): a positive rho means pairs whose twins "
           "differ more in content lose more points, so part of the gap is content."
           if cv.get("rho") is not None else
           "Content similarity against score gap: "
           f"{esc((cv.get('not_computable') or {}).get('rho', 'n/a'))}.")
    return ["<ul>", _gap_sentence("All pairs", s.paired),
            _gap_sentence("Pairs passing rig's equivalence checks", s.paired_passing),
            _gap_sentence(f"Pairs with warnings ({s.n_pairs_with_warnings} of {s.n_pairs})",
                          s.paired_warned),
            f"<li>{rho}</li>", "</ul>"]


def _pair_details(p, language: str = "en") -> str:
    """One pair below the table, full width: its question, the words each twin lacks and
    rig's warnings (on a phone these made a tall, mostly blank table row); the question and
    the words marked with the set's ``language``."""
    status = (f"{len(p.warnings)} warning{'s' if len(p.warnings) != 1 else ''}"
              if p.warnings else "passes rig's checks")
    warns = ("<ul>" + "".join(f"<li>{esc(w)}</li>" for w in p.warnings) + "</ul>"
             if p.warnings else "")
    return (f"<details id='pair-{esc(p.pair_id)}'{' open' if p.warnings else ''}><summary>"
            f"<b>{esc(p.pair_id)}</b> ({status}): {quoted(p.question, language)}</summary>"
            f"<p>Words only the confident twin has: "
            f"{_words(p.reference_only_words, language)}. Words only the hedged twin "
            f"has: {_words(p.treatment_only_words, language)}.</p>{warns}</details>")


def _words(words: list[str], language: str) -> str:
    return quoted(", ".join(words), language) if words else "none"


def write_import_report(path: str | Path, s: ImportedSummary) -> Path:
    """Write the import's ``report.html`` from its summary: the verdict, a five-column table
    of the pairs' scores (it fits a 390 px phone) and each pair's question, lacking words and
    warnings below it, full width."""
    path = Path(path)
    rows = []
    for p in s.pairs:
        checks = (f"<a href='#pair-{esc(p.pair_id)}'>{len(p.warnings)} warning"
                  f"{'s' if len(p.warnings) != 1 else ''}</a>" if p.warnings else "passes")
        rows.append([esc(p.pair_id),
                     f"{fmt(p.score_reference, 0)} → {fmt(p.score_treatment, 0)}",
                     fmt(p.score_gap, 0), fmt(p.content_similarity, 3), checks])
    body = "".join([
        "<h1>Probe: imported set, score gap beside content gap</h1>",
        f"<p class='note'>{esc(s.source_file)} ({esc(s.layout)}, checks in "
        f"{esc(s.language)}) · {scorer_line(s.scorer)} · {s.n_pairs} pairs, "
        f"{s.n_pairs_with_warnings} with warnings, {s.n_rating_failures} ratings not "
        "parsed.</p>",
        "<p class='note'>The set is run as published: rig's equivalence checks (no hedge in "
        "the confident twin, two or more in the hedged twin, every content word kept) are "
        "warnings on each pair, not a refusal. Read each pair's score gap beside its content "
        f"gap to see how much of a gap is content rather than style. {esc(s.score_gap)}. "
        f"{esc(s.content_gap)}."
        + (f" {esc(s.content_similarity_note)}." if s.content_similarity_note else "")
        + "</p>",
        *import_verdict(s),
        "<h2>Every pair</h2>",
        "<p class='note'>Scores 1-5, the confident twin's → the hedged twin's; gap = hedged - "
        "confident; similarity: the twins' content similarity (all-MiniLM-L6-v2 cosine); "
        "checks: rig's equivalence checks, each warning below the table.</p>",
        "<div class='pairs'>",
        table(["pair", "confident → hedged", "gap", "similarity", "checks"], rows),
        "</div>",
        f"<p class='note'>Paired test over all pairs: t CI {cell(s.paired, 't_ci95')}, "
        f"d_z {cell(s.paired, 'cohens_dz')}.</p>",
        "<h3>Each pair's question, lacking words and warnings</h3>",
        *(_pair_details(p, s.language) for p in s.pairs),
    ])
    return write_text_atomic(path, page("rig probe import", body))
