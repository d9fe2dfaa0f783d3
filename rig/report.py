"""One offline HTML page per campaign: the per-profile table and a plot of mean paired deltas
with their 95% CI bars (inline SVG drawn by matplotlib; no CDN, no scripts)."""

from __future__ import annotations

import html
import io
from pathlib import Path

import pandas as pd

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1100px;color:#222;padding:0 1rem}
table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}
th,td{border-bottom:1px solid #ddd;padding:.35rem .6rem;text-align:right}
th:first-child,td:first-child{text-align:left}
th{background:#f4f4f4}
.note{color:#555;font-size:.9rem}
.flag{color:#b00020;font-weight:600}
code{background:#f4f4f4;padding:0 .2rem}
"""


def _fmt(v: object, digits: int = 2) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "n/a"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    if isinstance(v, list | tuple) and len(v) == 2:
        return f"[{_fmt(v[0], digits)}, {_fmt(v[1], digits)}]"
    return html.escape(str(v))


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
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    svg = buf.getvalue()
    return svg[svg.find("<svg"):]


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
        body.append(f"<tr><td>{html.escape(pid)}{flag}</td>{cells}</tr>")
    why = []
    for pid, d in profiles.items():
        for k, reason in (d.get("not_computable") or {}).items():
            why.append(f"<li><b>{html.escape(pid)}</b> {html.escape(k)}: "
                       f"{html.escape(str(reason))}</li>")
        for note in d.get("notes") or []:
            why.append(f"<li><b>{html.escape(pid)}</b>: {html.escape(str(note))}</li>")
    why_html = (f"<details><summary>n/a and notes ({len(why)})</summary><ul>{''.join(why)}"
                f"</ul></details>") if why else ""
    note = summary.get("content_similarity_note")
    similarity_html = f"<p class='note'>{html.escape(note)}</p>" if note else ""
    nf = summary.get("noise_floor") or {}
    nf_html = "".join(f"<li>{html.escape(k)}: {_fmt(v, 3)}</li>" for k, v in nf.items()
                      if not isinstance(v, dict | list))
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
<table><tr><th>profile</th>{head}</tr>{''.join(body)}</table>
{similarity_html}
{why_html}
{_delta_plot_svg(profiles, baseline)}
<h2>Scorer noise floor (baseline repeats)</h2><ul>{nf_html or '<li>n/a</li>'}</ul>
{worst}
</body></html>"""
    path.write_text(doc, encoding="utf-8")
    return path
