"""The report page of a read-speech campaign (:mod:`rig.campaign.read_speech`): no scorer ran,
so it leads with one sentence per speaker group and per speaker (WER, truncation, content
similarity, each with its 95% CI), then the two tables, then the calls behind the numbers
(:func:`rig.drilldown.drilldown_html`: each speaker's call beside the baseline speaker's).

Self-contained like the graded report (:mod:`rig.report`): inline styles, no external URL.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from rig.campaign.schema import (
    CampaignSummary,
    ReadSpeechFigures,
    ReadSpeechGroup,
    ReadSpeechSummary,
)
from rig.paths import write_text_atomic
from rig.report.pages import CSS, fmt

#: (key, header, decimals, help) of the tables' figure columns.
_COLUMNS = (
    ("n_calls", "calls", 0, "calls run (count)"),
    ("wer_mean", "WER", 3, "mean word error rate of the transcript against the prompt (0-1)"),
    ("wer_ci95", "WER 95% CI", 3, "percentile bootstrap 95% CI of the mean WER over calls"),
    ("wer_pooled", "WER pooled", 3, "pooled word error rate: all errors over all prompt "
     "words (0-1)"),
    ("truncation_rate", "truncation", 3, "share of calls with prompt words spoken after the "
     "interviewer closed the turn (0-1)"),
    ("truncation_ci95", "truncation 95% CI", 3, "Wilson 95% CI of the truncation rate"),
    ("content_similarity_mean", "content similarity", 3, "mean cosine similarity of "
     "transcript and prompt embeddings (1 = same meaning)"),
    ("content_similarity_ci95", "similarity 95% CI", 3, "percentile bootstrap 95% CI"),
    ("n_failed_calls", "failed", 0, "calls that failed (left out)"),
)


def n_speakers_text(group: ReadSpeechGroup) -> str:
    """``"1 speaker"``, ``"3 speakers"``: the size of a ``read_speech.by_group`` entry."""
    n = len(group.speakers)
    return f"{n} speaker{'' if n == 1 else 's'}"


def figures_sentence(name: str, d: ReadSpeechFigures) -> str:
    """One line of a speaker's or group's figures (a ``read_speech`` entry of summary.json):
    ``name: WER 0.125 (95% CI [0.000, 0.375]; pooled 0.100), 0 of 3 calls truncated (...),
    content similarity 0.962``."""
    return (f"{name}: WER {fmt(d.wer_mean, 3)} (95% CI {fmt(d.wer_ci95, 3)}; pooled "
            f"{fmt(d.wer_pooled, 3)}), "
            f"{d.n_truncated} of {d.n_calls - d.n_failed_calls} "
            f"calls truncated ({fmt(d.truncation_rate, 3)}, 95% CI "
            f"{fmt(d.truncation_ci95, 3)}), content similarity "
            f"{fmt(d.content_similarity_mean, 3)}")


def _table(entries: Mapping[str, ReadSpeechFigures], first: tuple[str, str],
           extra: tuple[str, str] | None, caption: str) -> str:
    head = "".join(f"<th scope='col'><abbr title='{html.escape(h)}'>{html.escape(n)}</abbr>"
                   "</th>" for _, n, _, h in _COLUMNS)
    extra_head = f"<th scope='col'>{html.escape(extra[1])}</th>" if extra else ""
    body = []
    for name, d in entries.items():
        cells = "".join(f"<td>{fmt(getattr(d, k), dec) if dec else fmt(getattr(d, k))}</td>"
                        for k, _, dec, _ in _COLUMNS)
        ex = f"<td>{fmt(getattr(d, extra[0]))}</td>" if extra else ""
        body.append(f"<tr><th scope='row'>{html.escape(name)}</th>{ex}{cells}</tr>")
    return (f"<div class='table-wrap'><table><caption>{html.escape(caption)}</caption><thead>"
            f"<tr><th scope='col'>{html.escape(first[1])}</th>{extra_head}{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>")


def read_speech_report_html(campaign_dir: str | Path, summary: CampaignSummary,
                            rows: pd.DataFrame) -> str:
    """The page as a string, from a read-speech ``summary`` (summary.json with
    ``read_speech``) and the call rows; audio linked relative to ``campaign_dir``."""
    from rig.drilldown import drilldown_html

    rs = summary.read_speech or ReadSpeechSummary(by_speaker={}, by_group={}, note="")
    cid = html.escape(summary.campaign_id)
    groups = "".join("<li>" + html.escape(figures_sentence(
        f"{g} ({n_speakers_text(d)})", d)) + "</li>"
        for g, d in rs.by_group.items())
    speakers = "".join("<li>" + html.escape(figures_sentence(f"{s} ({d.group})", d))
                       + "</li>" for s, d in rs.by_speaker.items())
    note = summary.content_similarity_note
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rig read-speech campaign {cid}</title>
<style>{CSS}</style></head><body>
<header><h1>Read-speech campaign {cid}</h1>
<p class="note">Pipeline <code>{html.escape(summary.pipeline_version)}</code> ·
{summary.n_calls} calls · no scorer ran: each speaker read the same prompts, and
the figures are what turn detection and ASR lost. Groups are the speakers' own or the
corpus's accent labels, never inferred from the voices.</p></header>
<main>
<section id="verdict"><h2>By speaker group</h2><ul class="verdict">{groups}</ul>
<h2>By speaker</h2><ul class="verdict">{speakers}</ul>
<p class="note">{html.escape(rs.note)}</p>
{f"<p class='note'>{html.escape(note)}</p>" if note else ""}</section>
<section id="table"><h2>Per group and per speaker</h2>
{_table(rs.by_group, ('group', 'group'), None, 'Per speaker group')}
{_table(rs.by_speaker, ('speaker', 'speaker'), ('group', 'group'), 'Per speaker')}
</section>
{drilldown_html(Path(campaign_dir), summary, rows)}
</main></body></html>"""


def write_read_speech_report(path: str | Path, summary: CampaignSummary,
                             rows: pd.DataFrame) -> Path:
    """Write :func:`read_speech_report_html` to ``path`` (atomically); returns ``path``."""
    path = Path(path)
    write_text_atomic(path, read_speech_report_html(path.parent, summary, rows))
    return path
