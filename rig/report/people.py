"""The campaign report's section on people and the truth: judge-human agreement per profile
(flagging a profile below the baseline), the prediction-powered human-scale figures beside
the judge-only ones, and error-rate parity against the reference grades (summary
``human_ratings`` and ``error_parity``; docs/measurement.md)."""

from __future__ import annotations

import html

from rig.campaign.schema import CampaignSummary
from rig.campaign.schema_ratings import PPIFigure
from rig.report.pages import fmt as _fmt
from rig.report.pages import name_cell


def _ci(ci: tuple[float, float] | None, nd: int = 1) -> str:
    return f"[{_fmt(ci[0], nd)}, {_fmt(ci[1], nd)}]" if ci else "n/a"


def _ppi(p: PPIFigure | None) -> str:
    if p is None:
        return "<td>-</td><td>-</td><td>-</td>"
    need = (str(p.ratings_for_target_width) if p.ratings_for_target_width is not None
            else "out of reach")
    return (f"<td>{_fmt(p.estimate, 1)} {_ci(p.ci95)} (n={p.n_rated})</td>"
            f"<td>{_fmt(p.judge_only, 1)}</td><td>{need}</td>")


def _table(label: str, head: list[str], rows: list[str]) -> str:
    th = "".join(f"<th scope='col'>{html.escape(h)}</th>" for h in head)
    return (f"<div class='table-wrap' role='region' tabindex='0' aria-label='{label}'><table>"
            f"<thead><tr>{th}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>")


def people_html(summary: CampaignSummary) -> str:
    """The section's HTML; empty when the summary has neither part."""
    parts = []
    h = summary.human_ratings
    if h is not None:
        rows = []
        for pid, p in h.by_profile.items():
            a = p.agreement
            flag = " <b>lower than the baseline</b>" if p.lower_than_baseline else ""
            rows.append(
                f"<tr><th scope='row'>{name_cell(pid)}{flag}</th><td>{a.n_units}</td>"
                f"<td>{_fmt(a.spearman, 2)}</td><td>{_fmt(a.mae_points, 1)}</td>"
                f"<td>{_fmt(a.decision_agreement, 2)}</td><td>{_fmt(a.cohen_kappa, 2)}</td>"
                f"{_ppi(p.mean)}{_ppi(p.paired_delta)}</tr>")
        ir = h.inter_rater
        ceiling = (f"Inter-rater agreement (the ceiling): Spearman {_fmt(ir.spearman, 2)}, "
                   f"decision agreement {_fmt(ir.decision_agreement, 2)}, kappa "
                   f"{_fmt(ir.cohen_kappa, 2)} on {ir.n_units} units rated twice."
                   if ir else "No unit was rated twice: no inter-rater ceiling.")
        o = h.overall
        flagged = ", ".join(h.profiles_lower_than_baseline) or "none"
        parts.append(
            f"<h3>Against human ratings</h3><p>{h.n_ratings} ratings by {h.n_raters} "
            f"rater(s) cover {h.n_calls_rated} calls. Overall the pipeline's score agrees "
            f"with people at Spearman {_fmt(o.spearman, 2)}, MAE {_fmt(o.mae_points, 1)} "
            f"points, decision agreement {_fmt(o.decision_agreement, 2)} (kappa "
            f"{_fmt(o.cohen_kappa, 2)}). {html.escape(ceiling)} Profiles where the judge "
            f"agrees with people less than on the baseline: {html.escape(flagged)}.</p>"
            + _table("judge-human agreement per profile",
                     ["profile", "rated calls", "Spearman", "MAE", "decision agreement",
                      "kappa", "mean (PPI, 95% CI)", "mean (judge only)",
                      f"ratings for a {h.target_ci_width_points:g}-point CI",
                      "paired delta (PPI, 95% CI)", "delta (judge only)",
                      "ratings for the delta"], rows))
        adv = [f"<tr><th scope='row'>{name_cell(pid)}</th>{_ppi(p.advance_rate_pct)}</tr>"
               for pid, p in h.by_profile.items() if p.advance_rate_pct is not None]
        if adv:
            parts.append(_table("share advanced per profile", [
                "profile", "advanced, % (PPI, 95% CI)", "advanced, % (judge only)",
                f"ratings for a {h.target_ci_width_points:g}-point CI"], adv))
        if h.ppi_sample_note:
            parts.append(f"<p class='note'>{html.escape(h.ppi_sample_note)}.</p>")
    par = summary.error_parity
    if par:
        rows = []
        for pid, p in par.items():
            cells = "".join(
                f"<td>{r.errors}/{r.n} = {_fmt(r.rate, 2)} {_ci(r.wilson_ci95, 2)}</td>"
                f"<td>{_fmt(r.ratio_to_baseline, 2)} {_ci(r.ratio_ci95, 2)}</td>"
                for r in (p.qualified_rejected, p.unqualified_advanced))
            rows.append(f"<tr><th scope='row'>{name_cell(pid)}</th>{cells}</tr>")
        parts.append(
            "<h3>Against the reference grades: error-rate parity</h3><p class='note'>Per "
            "answer (repeats averaged): qualified rejected = reference grade at or above the "
            "cutoff, pipeline rejected; unqualified advanced = below it, pipeline advanced. "
            "Wilson 95% CIs; ratios to the baseline with paired bootstrap 95% CIs.</p>"
            + _table("error-rate parity per profile",
                     ["profile", "qualified rejected", "ratio to baseline",
                      "unqualified advanced", "ratio to baseline"], rows))
    parts.append(_impact(summary))
    if not any(parts):
        return ""
    return ("<section id='people'><h2>Against people and the truth</h2>" + "".join(parts)
            + "</section>")


def _impact(summary: CampaignSummary) -> str:
    """The impact ratios by profile (summary ``impact_ratios``) with their bootstrap CIs."""
    imp = summary.impact_ratios
    if not imp:
        return ""
    rows = []
    profiles = list(next(iter(imp.values())).by_profile)
    for pid in profiles:
        cells = ""
        for t in imp.values():
            p = t.by_profile.get(pid)
            if p is None:
                cells += "<td>-</td><td>-</td>"
                continue
            ratio = ("highest" if p.is_reference else
                     f"{_fmt(p.impact_ratio, 2)} {_ci(p.impact_ratio_ci95, 2)}"
                     + (" <b>below the threshold</b>" if p.flagged else ""))
            cells += f"<td>{_fmt(p.rate, 2)} (n={p.n})</td><td>{ratio}</td>"
        rows.append(f"<tr><th scope='row'>{name_cell(pid)}</th>{cells}</tr>")
    head = ["profile"]
    for kind in imp:
        head += [f"{kind} rate", f"{kind} impact ratio (95% CI)"]
    return ("<h3>Impact ratios by profile</h3><p class='note'>Per answer (repeats averaged): "
            "scoring rate = share strictly above the median score of all answers (LL144); "
            "selection rate = share advanced. Impact ratio = rate / the highest profile's "
            "rate, flagged below the four-fifths threshold; percentile bootstrap 95% CIs, "
            "the two profiles' answers resampled apart.</p>"
            + _table("impact ratios per profile", head, rows))
