"""One offline HTML page per campaign (issue 17): the verdict first (one sentence per profile,
:func:`rig.report.verdict.verdict_sentences`), then inline SVG plots (rig.report.plots), the
detailed per-profile table with column help, the stage attribution, the noise floor, the
judge's validity, and the calls section (rig.drilldown.drilldown_html).

Self-contained: no external URL, font or script file (the calls section's filters are one
inline script); styles inline (rig.report.pages.CSS); opens from ``file://``; laid out for
1280 px and phone widths, and for print.
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from rig.campaign.schema import CampaignSummary, ProfileSummary
from rig.paths import write_text_atomic
from rig.report.faults import faults_html
from rig.report.pages import CSS as _CSS
from rig.report.pages import fmt as _fmt
from rig.report.people import people_html
from rig.report.plots import plots_html
from rig.report.sections import _attribution_html, _noise_floor_html, _validity_html
from rig.report.table import profile_table
from rig.report.taking import taking_html
from rig.report.verdict import verdict_sentences

__all__ = ["_validity_html", "campaign_report_html", "verdict_sentences",
           "write_campaign_report"]


def _notes_html(profiles: dict[str, ProfileSummary], noise_reason: str | None = None) -> str:
    """Why each figure is n/a, and the profiles' notes: each reason said once, with the
    profiles and fields it explains (an unmeasured noise floor's reason is one item, not one
    per profile and field). ``noise_reason``: the campaign's unmeasured noise floor's reason,
    said in the noise-floor section: here a link to it instead of the text again."""
    by_reason: dict[str, dict[str, list[str]]] = {}
    for pid, d in profiles.items():
        for k, reason in d.not_computable.items():
            by_reason.setdefault(str(reason), {}).setdefault(pid, []).append(k)
        attr_notes = d.attribution.notes if d.attribution is not None else []
        for note in [*d.notes, *attr_notes]:
            by_reason.setdefault(str(note), {}).setdefault(pid, [])
    why = []
    for reason, where in by_reason.items():
        who = "; ".join(f"<b>{html.escape(pid)}</b>" + (f" {html.escape(', '.join(ks))}"
                                                         if ks else "")
                        for pid, ks in where.items())
        said = (html.escape(reason) if reason != noise_reason else
                "the noise floor was not measured (<a href='#noise'>why</a>)")
        why.append(f"<li>{who}: {said}</li>")
    if not why:
        return ""
    return (f"<details><summary>n/a and notes ({len(why)})</summary><ul>{''.join(why)}"
            "</ul></details>")


def _noise_reason(summary: CampaignSummary) -> str | None:
    """The campaign's noise floor's reason when it was not measured, else None."""
    nf = summary.noise_floor
    return str(nf.reason) if nf is not None and nf.measured is False and nf.reason else None


def _worst_html(rows: pd.DataFrame) -> str:
    if rows.empty or "words_lost_share" not in rows or "truncated" not in rows:
        return ""
    tr = rows[rows["truncated"] == True]  # noqa: E712 - pandas mask, nulls drop out
    if not len(tr):
        return ""
    ex = tr.sort_values("words_lost_share", ascending=False).head(_WORST_SHOWN)
    items = "".join(
        f"<li><b>{html.escape(str(r.answer_id))}</b> under "
        f"<b>{html.escape(str(r.profile_id))}</b>: {_fmt(r.words_lost_share)} of the "
        f"words lost; the scorer heard: <i>{html.escape(str(r.transcript))}</i></li>"
        for r in ex.itertuples())
    shown = (f"all {len(tr)}" if len(ex) == len(tr) else
             f"{len(ex)} of {len(tr)} shown; every one is in the calls below (filter "
             "'truncated only')")
    return (f"<h2>Truncated answers (worst first)</h2><p class='note'>Truncated calls: "
            f"{shown}.</p><ul>{items}</ul>")


#: Truncated calls listed by the report's "Truncated answers", worst first.
_WORST_SHOWN = 3


def _verdict_item(sentence: str, profiles: dict[str, ProfileSummary]) -> str:
    """A verdict sentence as a list item, its profile id in bold (same text content)."""
    pid, sep, rest = sentence.partition(": ")
    if sep and pid in profiles:
        return f"<li><b>{html.escape(pid)}</b>: {html.escape(rest)}</li>"
    return f"<li>{html.escape(sentence)}</li>"


def _calls_html(campaign_dir: Path, summary: CampaignSummary, rows: pd.DataFrame) -> str:
    from rig.drilldown import drilldown_html

    return drilldown_html(campaign_dir, summary, rows)


def campaign_report_html(campaign_dir: str | Path, summary: CampaignSummary,
                         rows: pd.DataFrame) -> str:
    """The report page as a string: ``summary`` is the campaign's summary.json
    (:class:`rig.campaign.schema.CampaignSummary`), ``rows`` the campaign's call rows (one per call,
    rig.campaign.row columns; may be empty), ``campaign_dir`` the folder the page sits in (the
    drill-down links its audio relative to it)."""
    profiles = summary.profiles
    baseline = summary.baseline
    cid = html.escape(summary.campaign_id)
    verdict = "".join(_verdict_item(s, profiles) for s in verdict_sentences(summary))
    note = summary.content_similarity_note
    similarity = f"<p class='note'>{html.escape(note)}</p>" if note else ""
    from rig.calls.bots.score_sources import score_source_note

    src = score_source_note(rows.get("score_source", ()))
    sources = f"<p class='flag'>{html.escape(src)}</p>" if src else ""
    plots = plots_html(summary, rows)
    plots_section = (f"<section id='plots'><h2>Pictures</h2>{plots}</section>" if plots
                     else "")
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rig campaign {cid}</title>
<style>{_CSS}</style></head><body>
<header><h1>Campaign {cid}</h1>
<p class="note">Pipeline <code>{html.escape(summary.pipeline_version)}</code> ·
{summary.n_calls} calls · baseline profile <code>{html.escape(baseline)}</code> ·
profiles are audio conditions, not demographic categories.</p></header>
<main>
<section id="verdict" aria-labelledby="verdict-h"><h2 id="verdict-h">Verdict</h2>
<ul class="verdict">{verdict}</ul>
{sources}
<p class="note">Delta: profile score - baseline score, in rubric points (0-100), repeats
averaged per answer, then paired by answer. A flip: the advance/reject decision differs from
the baseline's. The noise floor: the largest mean delta repeat noise alone gives at 95%.</p>
</section>
{plots_section}
<section id="table"><h2>Per profile, against the baseline</h2>
<p class="note">Hover a column's name (or read the legend below the table) for its
definition and unit. Content similarity is scorer-free; score - oracle is the loss the audio path
caused (the oracle is the same scorer on the script text).</p>
{profile_table(summary)}
{similarity}
{_notes_html(profiles, _noise_reason(summary))}
</section>
{faults_html(profiles)}
{_attribution_html(profiles, baseline)}
{taking_html(profiles)}
<section id="judge">{_validity_html(summary)}</section>
{people_html(summary)}
<section id="noise"><h2>Scorer noise floor (baseline repeats)</h2>
{_noise_floor_html(summary, profiles, baseline)}</section>
{_worst_html(rows)}
{_calls_html(Path(campaign_dir), summary, rows)}
</main></body></html>"""


def write_campaign_report(path: str | Path, summary: CampaignSummary,
                          rows: pd.DataFrame) -> Path:
    """Write ``report.html`` (:func:`campaign_report_html`) at ``path`` from a campaign
    summary and its call rows; returns ``path``. The calls section links
    audio relative to ``path``'s folder."""
    path = Path(path)
    write_text_atomic(path, campaign_report_html(path.parent, summary, rows))
    return path
