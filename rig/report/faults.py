"""The campaign report's faults section: per profile, the calls of each fault kind, how many
were kept out of the scorer and the means (and what they were left out of), and the capture
rate by answer length (:mod:`rig.campaign.faults`)."""

from __future__ import annotations

import html

from rig.campaign.schema import ProfileSummary
from rig.report.pages import fmt, name_cell

_KINDS = (("vad_missed", "VAD missed the answer"), ("media_outage", "media outage"),
          ("repetition_loop", "looping transcript"), ("empty_reference", "empty reference"))


def faults_html(profiles: dict[str, ProfileSummary]) -> str:
    """The section, or "" when no profile's summary has the fault fields (before 1.7)."""
    have = {pid: d for pid, d in profiles.items() if d.faults is not None}
    if not have:
        return ""
    head = "".join(f"<th scope='col'>{html.escape(label)}</th>" for _, label in _KINDS)
    rows, capture = [], []
    for pid, d in have.items():
        cells = "".join(f"<td>{d.faults.get(k, 0)}</td>" for k, _ in _KINDS)
        rows.append(f"<tr><th scope='row'>{name_cell(pid)}</th>{cells}"
                    f"<td>{d.n_excluded or 0}</td></tr>")
        bins = ", ".join(f"{b.words} words: {fmt(b.capture_rate, 2)} ({b.n_captured}/"
                         f"{b.n_calls})" for b in d.capture_by_length or ())
        if bins:
            capture.append(f"<li><b>{html.escape(pid)}</b>: {html.escape(bins)}</li>")
    left_out = next((d.excluded_from for d in have.values() if d.excluded_from), None)
    said = (f"<p class='flag'>Calls kept out were left out of {html.escape(left_out)}; "
            "they have no score: the interviewer did not hear the answer, or heard it as a "
            "fault.</p>" if left_out else "<p class='note'>No call was kept out.</p>")
    cap = (f"<p class='note'>Capture rate by answer length (share of answers the VAD "
           f"heard):</p><ul>{''.join(capture)}</ul>" if capture else "")
    return ("<section id='faults'><h2>Faults</h2><div class='table-wrap'><table>"
            "<caption>Completed calls of each fault kind, per profile</caption><thead><tr>"
            f"<th scope='col'>profile</th>{head}<th scope='col'>kept out</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>{said}{cap}</section>")
