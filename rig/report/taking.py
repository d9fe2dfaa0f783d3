"""The campaign report's turn-taking and conduct section: per profile, how the interviewer
treated its callers on real calls (summary ``profiles.<id>.turn_taking``; docs/calls.md,
"Turn-taking and conduct"). Empty for a simulated campaign."""

from __future__ import annotations

import html

from rig.campaign.schema import ProfileSummary
from rig.report.pages import fmt as _fmt
from rig.report.pages import name_cell

COLUMNS = (("calls", "real calls with turn-taking figures"),
           ("latency p50 / p95 (ms)", "candidate's end of speech to the interviewer's first "
            "audio, on the caller's clock"),
           ("talk-over rate", "share of the candidate's turns the interviewer started "
            "speaking in"),
           ("barge-in: stopped / p50 (ms)", "the candidate started while the interviewer "
            "spoke: share where it stopped, and its median stop time"),
           ("backchannel: stopped", "share of calls with a 'mm-hm' where the interviewer "
            "stopped at it (robust: 0)"),
           ("dead air max (s)", "longest silence with neither side speaking"),
           ("AI disclosed", "share of calls whose interviewer said it is an AI in its first "
            "turns"),
           ("prohibited questions", "calls with one, and the topics (text matching)"),
           ("accommodation handled", "share of calls where a request to repeat more slowly "
            "was met"))


def taking_html(profiles: dict[str, ProfileSummary]) -> str:
    """The section's HTML; empty when no profile has turn-taking figures."""
    rows = []
    for pid, d in profiles.items():
        t = d.turn_taking
        if t is None:
            continue
        topics = ", ".join(f"{k} ({v})" for k, v in sorted(t.prohibited_topics.items()))
        rows.append(
            f"<tr><th scope='row'>{name_cell(pid)}</th><td>{t.n_calls}</td>"
            f"<td>{_fmt(t.response_latency_p50_ms, 0)} / {_fmt(t.response_latency_p95_ms, 0)}"
            f"</td><td>{_fmt(t.talk_over_rate, 3)}</td>"
            f"<td>{_fmt(t.barge_in_stopped_rate, 2)} / {_fmt(t.barge_in_stop_p50_ms, 0)}</td>"
            f"<td>{_fmt(t.backchannel_stopped_rate, 2)}</td>"
            f"<td>{_fmt(t.dead_air_max_s, 1)}</td><td>{_fmt(t.ai_disclosed_rate, 2)}</td>"
            f"<td>{t.n_prohibited_calls}{': ' + html.escape(topics) if topics else ''}</td>"
            f"<td>{_fmt(t.accommodation_handled_rate, 2)}</td></tr>")
    if not rows:
        return ""
    head = "".join(f"<th scope='col' title='{html.escape(w)}'>{html.escape(c)}</th>"
                   for c, w in COLUMNS)
    legend = "".join(f"<li><b>{html.escape(c)}</b>: {html.escape(w)}</li>" for c, w in COLUMNS)
    return ("<section id='turn-taking'><h2>How the interviewer treated the callers</h2>"
            "<p class='note'>Per profile, over its real calls: turn-taking measured on the "
            "caller agent's clock from both recorded sides; conduct by text matching on what "
            "the interviewer said (never inferred from voices). n/a: no call had the figure."
            "</p><div class='table-wrap' role='region' tabindex='0' aria-label='turn-taking "
            f"per profile'><table><thead><tr><th scope='col'>profile</th>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div><ul class='note'>{legend}</ul>"
            "</section>")
