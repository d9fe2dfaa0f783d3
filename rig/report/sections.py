"""The campaign report's detail sections below the verdict and the plots: the judge's
validity, the baseline's noise floor and the stage attribution (figures from summary.json;
docs/measurement.md defines them)."""

from __future__ import annotations

import html

from rig.campaign.schema import CampaignSummary, JudgeValidityNotMeasured, ProfileSummary
from rig.report.pages import fmt as _fmt
from rig.report.pages import name_cell


def _validity_html(summary: CampaignSummary) -> str:
    """The judge's validity on this campaign's answers, with a plain warning when low."""
    v = summary.judge_validity
    if (v is None or isinstance(v, JudgeValidityNotMeasured)
            or (v.verdict == "not_measured" and v.spearman is None)):
        reason = v.reason if isinstance(v, JudgeValidityNotMeasured) else None
        return ("<p class='note'>Judge validity: not measured "
                f"({html.escape(str(reason or 'too few answers'))}).</p>")
    figs = (f"Spearman {_fmt(v.spearman)} (95% CI {_fmt(v.spearman_ci95)}), "
            f"decision agreement {_fmt(v.decision_agreement)} "
            f"(Cohen's kappa {_fmt(v.cohen_kappa)}), mean absolute error "
            f"{_fmt(v.mae_points, 1)} points, {v.distinct_scores} distinct scores, "
            f"over {v.n_answers} answers; scoring mode "
            f"<code>{_fmt(v.scoring_mode)}</code>")
    warn = ""
    if v.verdict == "low":
        warn = ("<p class='flag'>Warning: this judge does not rank or decide the bank's clean "
                "scripts well (thresholds: Spearman "
                f"{_fmt(v.thresholds.min_spearman)}, decision agreement "
                f"{_fmt(v.thresholds.min_decision_agreement)}). The deltas below are "
                "measured by a low-validity judge: they may say more about the judge than "
                "about the audio path.</p>")
    if v.verdict == "not_measured":  # figures on too few answers for a verdict
        why = v.not_computable.get("verdict", "too few answers")
        warn = f"<p class='note'>No verdict: {html.escape(str(why))}.</p>"
    return (f"<h2>Judge validity</h2>{warn}<p class='note'>The scorer's grades of the "
            f"answers' scripts (the oracle, no audio) against the bank's reference grades: "
            f"{figs}. {html.escape(str(v.source))}.</p>")


def _noise_floor_html(summary: CampaignSummary, profiles: dict[str, ProfileSummary],
                      baseline: str) -> str:
    """The noise-floor section: whether it was measured, its single-call figures, and each
    profile's figures beside the no-change figures of the same kind (docs/measurement.md)."""
    nf = summary.noise_floor
    parts = []
    if nf is not None and nf.measured is False:
        parts.append(f"<p class='flag'>{html.escape(str(nf.reason))}</p>")
    skipped = summary.repeats_skipped
    if skipped.n:
        parts.append(f"<p class='note'>{skipped.n} planned repeats not run: "
                     f"{html.escape(str(skipped.reason))}.</p>")
    # every scalar figure of the noise floor, in the schema's order
    figures = [(k, getattr(nf, k)) for k in type(nf).model_fields
               if k in nf.model_fields_set] if nf is not None else []
    items = "".join(f"<li>{html.escape(k)}: {_fmt(v, 3)}</li>" for k, v in figures
                    if not isinstance(v, dict | list | tuple) and k not in ("measured", "reason"))
    parts.append(f"<ul>{items or '<li>n/a</li>'}</ul>")
    rows = "".join(
        f"<tr><th scope='row'>{name_cell(pid)}</th><td>{_fmt(d.mean_delta)}</td>"
        f"<td>{_fmt(d.noise_floor_mean_delta_limit)}</td>"
        f"<td>{_fmt(d.flip_rate, 3)}</td>"
        f"<td>{_fmt(d.noise_floor_flip_rate_averaged, 3)}</td>"
        f"<td>{_fmt(d.within_noise_floor)} / "
        f"{_fmt(d.flip_within_noise_floor)}</td></tr>"
        for pid, d in profiles.items() if pid != baseline)
    if rows:
        parts.append(
            "<p class='note'>sd_repeat_diff and the repeat flip rate describe single calls. A "
            "profile's mean delta is held to the largest |mean delta| repeat noise alone "
            "gives at 95% (t x the standard error of a mean delta under no change, with the "
            "repeats averaged on each side), and its flip rate to the flip rate under no "
            "change of decisions on repeat-averaged scores.</p>"
            "<div class='table-wrap' role='region' tabindex='0' "
            "aria-label='noise floor per profile'><table><thead><tr>"
            "<th scope='col'>profile</th><th scope='col'>mean delta (points)</th>"
            "<th scope='col'>noise limit (|delta|, points)</th><th scope='col'>flip rate</th>"
            "<th scope='col'>no-change flip rate</th>"
            "<th scope='col'>within (delta / flips)</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></div>")
    return "".join(parts)


def _attribution_html(profiles: dict[str, ProfileSummary], baseline: str) -> str:
    """The stage-attribution section: each profile's mean paired delta split into turn
    detection, ASR and the rest (summary ``attribution``; docs/measurement.md), with the
    bootstrap 95% CIs; empty when no profile has the split."""
    from rig.campaign.attribution import TERMS, split_text

    rows = []
    for pid, d in profiles.items():
        a = d.attribution
        if pid == baseline or a is None:
            continue
        cells = "".join(f"<td>{_fmt(getattr(a, t))} {_fmt(getattr(a, f'{t}_ci95'))}</td>"
                        for t in TERMS)
        line = split_text(a) or "n/a"
        rows.append(f"<tr><th scope='row'>{name_cell(pid)}</th><td>{a.n_pairs}</td>"
                    f"<td>{_fmt(a.mean_delta)} {_fmt(a.mean_delta_ci95)}</td>"
                    f"{cells}<td class='text'>{html.escape(line)}</td></tr>")
    if not rows:
        return ""
    return ("<h2>Stage attribution</h2><p class='note'>Each call is graded three times by the "
            "same scorer: the script (oracle), the script's words spoken before the turn "
            "closed (no ASR), and the transcript. Turn detection = the turn text's grade - "
            "the oracle's; ASR = the transcript's grade - the turn text's; rest = the oracle "
            "grades' own paired difference (scorer noise). Each is the profile's mean minus "
            "the baseline's, paired by answer; the three sum to the mean delta. Points, with "
            "bootstrap 95% CIs.</p><div class='table-wrap' role='region' tabindex='0' "
            "aria-label='stage attribution'><table><thead><tr><th scope='col'>profile</th>"
            "<th scope='col'>pairs</th><th scope='col'>mean delta</th>"
            "<th scope='col'>turn detection</th><th scope='col'>ASR</th>"
            "<th scope='col'>rest</th><th scope='col'>split</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")
