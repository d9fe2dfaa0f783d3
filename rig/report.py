"""One offline HTML page per campaign: the per-profile table and a plot of mean paired deltas
with their 95% CI bars (inline SVG drawn by matplotlib; no CDN, no scripts)."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from rig.drilldown import drilldown_html
from rig.pages import CSS as _CSS
from rig.pages import fmt as _fmt
from rig.pages import svg


def _delta_plot_svg(profiles: dict[str, dict], baseline: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [p for p in profiles if p != baseline]
    if not names:
        return "<p class='note'>No profile besides the baseline: nothing to plot.</p>"
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(names) + 1.2))
    labels: set[str] = set()
    for i, name in enumerate(names):
        d = profiles[name]
        m, ci, tci = d.get("mean_delta"), d.get("ci95"), d.get("t_ci95")
        if m is None:
            ax.text(0, i, "  not computable", va="center", fontsize=8, color="#888")
            continue
        if ci:
            ax.plot(ci, [i - 0.12, i - 0.12], color="#1f5fa8", lw=2.5,
                    label="bootstrap 95% CI" if "bootstrap 95% CI" not in labels else None)
            labels.add("bootstrap 95% CI")
        if tci:
            ax.plot(tci, [i + 0.12, i + 0.12], color="#d9822b", lw=1.2,
                    label="t 95% CI" if "t 95% CI" not in labels else None)
            labels.add("t 95% CI")
        ax.plot([m], [i], "o", color="#1f5fa8")
    ax.axvline(0, color="#888", lw=1, ls="--")
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    if labels:
        ax.legend(loc="best", fontsize=8, frameon=False)
    ax.set_xlabel("mean paired score delta vs baseline (points)")
    fig.tight_layout()
    return svg(fig)


_COLUMNS = [
    ("n_pairs", "pairs", 0), ("mean_delta", "mean delta", 2), ("ci95", "95% CI (bootstrap)", 2),
    ("t_ci95", "95% CI (t)", 2),
    ("flip_rate", "flip rate", 3), ("tier_inversion_rate", "tier inversion", 3),
    ("wer_mean", "WER", 3), ("wer_spoken_mean", "WER (spoken part)", 3),
    ("content_similarity_mean", "content similarity", 3),
    ("truncation_rate", "truncation rate", 3), ("words_lost_share_mean", "words lost", 3),
    ("audio_path_loss_mean", "score - oracle", 2), ("n_parse_failures", "parse failures", 0),
    ("n_failed_calls", "failed calls", 0),
]


def _validity_html(summary: dict) -> str:
    """The judge's validity on this campaign's answers, with a plain warning when low."""
    v = summary.get("judge_validity") or {}
    if not v or (v.get("verdict") == "not_measured" and v.get("spearman") is None):
        return ("<p class='note'>Judge validity: not measured "
                f"({html.escape(str(v.get('reason') or 'too few answers'))}).</p>")
    figs = (f"Spearman {_fmt(v.get('spearman'))} (95% CI {_fmt(v.get('spearman_ci95'))}), "
            f"decision agreement {_fmt(v.get('decision_agreement'))} "
            f"(Cohen's kappa {_fmt(v.get('cohen_kappa'))}), mean absolute error "
            f"{_fmt(v.get('mae_points'), 1)} points, {v.get('distinct_scores')} distinct scores, "
            f"over {v.get('n_answers')} answers; scoring mode "
            f"<code>{html.escape(str(v.get('scoring_mode')))}</code>")
    warn = ""
    if v.get("verdict") == "low":
        warn = ("<p class='flag'>Warning: this judge does not rank or decide the bank's clean "
                "scripts well (thresholds: Spearman "
                f"{_fmt(v['thresholds']['min_spearman'])}, decision agreement "
                f"{_fmt(v['thresholds']['min_decision_agreement'])}). The deltas below are "
                "measured by a low-validity judge: they may say more about the judge than "
                "about the audio path.</p>")
    if v.get("verdict") == "not_measured":  # figures on too few answers for a verdict
        why = (v.get("not_computable") or {}).get("verdict", "too few answers")
        warn = f"<p class='note'>No verdict: {html.escape(str(why))}.</p>"
    return (f"<h2>Judge validity</h2>{warn}<p class='note'>The scorer's grades of the "
            f"answers' scripts (the oracle, no audio) against the bank's reference grades: "
            f"{figs}. {html.escape(str(v.get('source', '')))}.</p>")


def _noise_floor_html(summary: dict, profiles: dict[str, dict], baseline: str) -> str:
    """The noise-floor section: whether it was measured, its single-call figures, and each
    profile's figures beside the no-change figures of the same kind (docs/measurement.md)."""
    nf = summary.get("noise_floor") or {}
    parts = []
    if nf.get("measured") is False:
        parts.append(f"<p class='flag'>{html.escape(str(nf.get('reason')))}</p>")
    skipped = summary.get("repeats_skipped") or {}
    if skipped.get("n"):
        parts.append(f"<p class='note'>{skipped['n']} planned repeats not run: "
                     f"{html.escape(str(skipped.get('reason')))}.</p>")
    items = "".join(f"<li>{html.escape(k)}: {_fmt(v, 3)}</li>" for k, v in nf.items()
                    if not isinstance(v, dict | list) and k not in ("measured", "reason"))
    parts.append(f"<ul>{items or '<li>n/a</li>'}</ul>")
    rows = "".join(
        f"<tr><td>{html.escape(pid)}</td><td>{_fmt(d.get('mean_delta'))}</td>"
        f"<td>{_fmt(d.get('noise_floor_mean_delta_limit'))}</td>"
        f"<td>{_fmt(d.get('flip_rate'), 3)}</td>"
        f"<td>{_fmt(d.get('noise_floor_flip_rate_averaged'), 3)}</td>"
        f"<td>{_fmt(d.get('within_noise_floor'))} / "
        f"{_fmt(d.get('flip_within_noise_floor'))}</td></tr>"
        for pid, d in profiles.items() if pid != baseline)
    if rows:
        parts.append(
            "<p class='note'>sd_repeat_diff and the repeat flip rate describe single calls. A "
            "profile's mean delta is held to the largest |mean delta| repeat noise alone "
            "gives at 95% (t x the standard error of a mean delta under no change, with the "
            "repeats averaged on each side), and its flip rate to the flip rate under no "
            "change of decisions on repeat-averaged scores.</p><table><tr><th>profile</th>"
            "<th>mean delta</th><th>noise limit (|delta|)</th><th>flip rate</th>"
            "<th>no-change flip rate</th><th>within (delta / flips)</th></tr>"
            f"{rows}</table>")
    return "".join(parts)


def _attribution_html(profiles: dict[str, dict], baseline: str) -> str:
    """The stage-attribution section: each profile's mean paired delta split into turn
    detection, ASR and the rest (summary ``attribution``; docs/measurement.md), with the
    bootstrap 95% CIs; empty when no profile has the split."""
    from rig.campaign.attribution import TERMS, split_text

    rows = []
    for pid, d in profiles.items():
        a = d.get("attribution")
        if pid == baseline or not a:
            continue
        cells = "".join(f"<td>{_fmt(a.get(t))} {_fmt(a.get(f'{t}_ci95'))}</td>"
                        for t in TERMS)
        line = split_text(a) or "n/a"
        rows.append(f"<tr><td>{html.escape(pid)}</td><td>{a.get('n_pairs')}</td>"
                    f"<td>{_fmt(a.get('mean_delta'))} {_fmt(a.get('mean_delta_ci95'))}</td>"
                    f"{cells}<td>{html.escape(pid)}: {html.escape(line)}</td></tr>")
    if not rows:
        return ""
    return ("<h2>Stage attribution</h2><p class='note'>Each call is graded three times by the "
            "same scorer: the script (oracle), the script's words spoken before the turn "
            "closed (no ASR), and the transcript. Turn detection = the turn text's grade - "
            "the oracle's; ASR = the transcript's grade - the turn text's; rest = the oracle "
            "grades' own paired difference (scorer noise). Each is the profile's mean minus "
            "the baseline's, paired by answer; the three sum to the mean delta. Points, with "
            "bootstrap 95% CIs.</p><table><tr><th>profile</th><th>pairs</th>"
            "<th>mean delta</th><th>turn detection</th><th>ASR</th><th>rest</th>"
            f"<th>split</th></tr>{''.join(rows)}</table>")


def write_campaign_report(path: str | Path, summary: dict, rows: pd.DataFrame) -> Path:
    """Write ``report.html`` from a campaign summary and its call rows."""
    path = Path(path)
    profiles: dict[str, dict] = summary.get("profiles", {})
    baseline = summary.get("baseline", "baseline")
    head = "".join(f"<th>{html.escape(label)}</th>" for _, label, _ in _COLUMNS)
    body = []
    for pid, d in profiles.items():
        cells = "".join(f"<td>{_fmt(d.get(k), digits if digits else 0)}</td>"
                        for k, _, digits in _COLUMNS)
        flag = " <span class='flag'>(within noise floor)</span>" if d.get(
            "within_noise_floor") else ""
        if (summary.get("judge_validity") or {}).get("verdict") == "low" and pid != baseline:
            flag += " <span class='flag'>(low-validity judge)</span>"
        body.append(f"<tr><td>{html.escape(pid)}{flag}</td>{cells}</tr>")
    why = []
    for pid, d in profiles.items():
        for k, reason in (d.get("not_computable") or {}).items():
            why.append(f"<li><b>{html.escape(pid)}</b> {html.escape(k)}: "
                       f"{html.escape(str(reason))}</li>")
        attr = d.get("attribution") or {}
        for note in [*(d.get("notes") or []), *(attr.get("notes") or [])]:
            why.append(f"<li><b>{html.escape(pid)}</b>: {html.escape(str(note))}</li>")
    why_html = (f"<details><summary>n/a and notes ({len(why)})</summary><ul>{''.join(why)}"
                f"</ul></details>") if why else ""
    nf_html = _noise_floor_html(summary, profiles, baseline)
    note = summary.get("content_similarity_note")
    similarity_html = f"<p class='note'>{html.escape(note)}</p>" if note else ""
    worst = ""
    if not rows.empty and "words_lost_share" in rows:
        tr = rows[rows.get("truncated", False) == True]  # noqa: E712 - pandas mask
        if len(tr):
            ex = tr.sort_values("words_lost_share", ascending=False).head(3)
            items = "".join(
                f"<li><b>{html.escape(str(r.answer_id))}</b> under "
                f"<b>{html.escape(str(r.profile_id))}</b>: {_fmt(r.words_lost_share)} of the "
                f"words lost; the scorer heard: <i>{html.escape(str(r.transcript))}</i></li>"
                for r in ex.itertuples())
            worst = f"<h2>Truncated answers (worst first)</h2><ul>{items}</ul>"
    doc = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>rig campaign {html.escape(str(summary.get('campaign_id')))}</title>
<style>{_CSS}</style></head><body>
<h1>Campaign {html.escape(str(summary.get('campaign_id')))}</h1>
<p class="note">Pipeline <code>{html.escape(str(summary.get('pipeline_version')))}</code> ·
{summary.get('n_calls', 0)} calls · baseline <code>{html.escape(baseline)}</code> ·
profiles are audio conditions, not demographic categories.</p>
<h2>Per profile, against the baseline</h2>
<p class="note">Repeats averaged per (answer, profile), then paired by answer. Delta = profile
score - baseline score, in rubric points (0-100). Flip: the advance/reject decision differs
from the baseline's. Truncation: script words spoken after the interviewer closed the turn.
score - oracle: the loss caused by the audio path (the oracle is the same scorer on the script
text). Content similarity: cosine of the transcript's and the script's sentence embeddings
(all-MiniLM-L6-v2; 1 = same meaning), scorer-free.</p>
{_validity_html(summary)}
<table><tr><th>profile</th>{head}</tr>{''.join(body)}</table>
{similarity_html}
{why_html}
{_delta_plot_svg(profiles, baseline)}
{_attribution_html(profiles, baseline)}
<h2>Scorer noise floor (baseline repeats)</h2>{nf_html}
{worst}
{drilldown_html(path.parent, summary, rows)}
</body></html>"""
    path.write_text(doc, encoding="utf-8")
    return path
