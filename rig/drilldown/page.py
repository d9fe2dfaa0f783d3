"""HTML pieces of the drill-down: one call's panel (audio, waveform, script, aligned
transcript, scorer points), the legend, the filters and their inline script and style.

Everything is inline (no library, no font, no fetch): the page works from ``file://``. Marks
never rely on colour alone: lost and deleted words are struck through, inserted and
substituted heard words underlined, and each alignment mark carries a letter (S, D, I).
"""

from __future__ import annotations

import html
from pathlib import Path

from rig.config import loads_strict
from rig.drilldown.align import AlignedWord, ScriptWord, alignment_counts
from rig.report.pages import PALETTE, fmt

_BLUE, _ORANGE, _GREEN, _VERMILLION = PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[3]

#: The section's own style (class names start ``dd-``; they do not touch the page's).
STYLE = f"""
#calls .dd-filters{{display:flex;flex-wrap:wrap;gap:.5rem 1.2rem;align-items:center;
margin:.6rem 0;padding:.5rem;background:#f4f4f4}}
#calls .dd-filters label{{max-width:100%}}
#calls .dd-filters select{{max-width:min(20rem,70vw)}}
#calls details.dd-call{{border:1px solid #ddd;margin:.35rem 0;padding:.2rem .6rem}}
#calls details.dd-call>summary{{cursor:pointer;padding:.2rem 0}}
#calls .dd-pair{{display:grid;grid-template-columns:1fr 1fr;gap:1rem}}
@media (max-width:800px){{#calls .dd-pair{{grid-template-columns:1fr}}}}
#calls .dd-panel{{min-width:0}}
#calls .dd-panel h4{{margin:.5rem 0 .3rem}}
#calls audio{{width:100%;height:2.2rem}}
#calls .dd-wave{{width:100%;height:auto;display:block}}
#calls .dd-text{{line-height:1.7;font-size:.9rem}}
#calls del.dd-lost{{color:{_VERMILLION};text-decoration:line-through 2px}}
#calls .dd-filler{{font-style:italic;color:#555}}
#calls .dd-s{{background:#fdf0d5}}
#calls .dd-d del{{color:{_VERMILLION};text-decoration:line-through 2px}}
#calls .dd-i ins,#calls .dd-s ins{{color:{_BLUE};text-decoration:underline 2px}}
#calls sup.dd-mark{{font-size:.65rem;font-weight:700;margin-left:1px}}
#calls table.dd-crit{{font-size:.85rem;margin:.3rem 0}}
#calls .dd-tag{{display:inline-block;border:1px solid #999;border-radius:3px;padding:0 .3rem;
font-size:.8rem;margin-left:.3rem}}
#calls .dd-tag.dd-warn{{border-color:{_VERMILLION};color:{_VERMILLION};font-weight:600}}
"""

#: The filters (profile, tier, flipped, truncated): each ``details.dd-call`` carries
#: ``data-profile``, ``data-tier``, ``data-flipped`` and ``data-truncated`` ("1"/"0").
SCRIPT = """
(function(){
  var root=document.getElementById('calls'); if(!root) return;
  var get=function(id){return document.getElementById(id);};
  var ids=['dd-profile','dd-tier','dd-flipped','dd-truncated'];
  function apply(){
    var p=get('dd-profile').value, t=get('dd-tier').value;
    var f=get('dd-flipped').checked, tr=get('dd-truncated').checked;
    var items=root.querySelectorAll('details.dd-call'), n=0;
    for(var i=0;i<items.length;i++){
      var d=items[i].dataset;
      var ok=(!p||d.profile===p)&&(!t||d.tier===t)&&(!f||d.flipped==='1')&&
             (!tr||d.truncated==='1');
      items[i].hidden=!ok; if(ok) n++;
    }
    get('dd-count').textContent=n+' of '+items.length+' shown';
  }
  for(var i=0;i<ids.length;i++){ get(ids[i]).addEventListener('change',apply); }
  apply();
})();
"""

LEGEND = (
    "<p class='note dd-legend'><b>Legend.</b> Script: <del class='dd-lost'>struck</del> = "
    "spoken after the interviewer closed the turn (never heard); <span class='dd-filler'>"
    "italic</span> = a filler the render added. Transcript aligned to the script (jiwer, after "
    "Whisper's normaliser, as in WER): plain = heard as scripted; "
    "<span class='dd-s'><del>said</del> <ins>heard</ins><sup class='dd-mark'>S</sup></span> "
    "= substitution; <span class='dd-d'><del>word</del><sup class='dd-mark'>D</sup></span> = "
    "deletion (scripted, not heard); <span class='dd-i'><ins>word</ins>"
    "<sup class='dd-mark'>I</sup></span> = insertion (heard, not scripted). Waveform: what "
    "the interviewer heard (after the line); the dashed line marks the turn close, the "
    "shaded part after it was never transcribed.</p>")


def esc(v: object) -> str:
    return html.escape(str(v))


def script_html(words: list[ScriptWord]) -> str:
    """The script, lost words in ``<del class="dd-lost">``, fillers in italics."""
    if not words:
        return "<span class='note'>no script</span>"
    out = []
    for w in words:
        text = esc(w.word)
        if w.filler:
            text = f"<span class='dd-filler'>{text}</span>"
        out.append(f"<del class='dd-lost' title='lost after the turn closed'>{text}</del>"
                   if w.lost else text)
    return " ".join(out)


def aligned_html(steps: list[AlignedWord]) -> str:
    """The aligned transcript (see :data:`LEGEND`), with its counts."""
    if not steps:
        return "<span class='note'>nothing to align (no script, nothing heard)</span>"
    out = []
    for s in steps:
        if s.op == "equal":
            out.append(esc(s.hyp))
        elif s.op == "substitute":
            out.append(f"<span class='dd-s' title='substitution'><del>{esc(s.ref)}</del> "
                       f"<ins>{esc(s.hyp)}</ins><sup class='dd-mark'>S</sup></span>")
        elif s.op == "delete":
            out.append(f"<span class='dd-d' title='deletion'><del>{esc(s.ref)}</del>"
                       "<sup class='dd-mark'>D</sup></span>")
        else:
            out.append(f"<span class='dd-i' title='insertion'><ins>{esc(s.hyp)}</ins>"
                       "<sup class='dd-mark'>I</sup></span>")
    c = alignment_counts(steps)
    counts = (f"<span class='note'>({c['equal']} heard as scripted, {c['substitute']} S, "
              f"{c['delete']} D, {c['insert']} I)</span>")
    return " ".join(out) + " " + counts


def waveform_svg(peaks: list[float], duration_s: float, turn_close_s: float | None,
                 label: str, width: int = 400, height: int = 70) -> str:
    """An inline SVG of ``peaks`` (peak absolute amplitude per equal time bin, [0, 1]) over
    ``duration_s`` seconds, mirrored about the middle, with the turn close as a dashed
    vertical line and the part after it shaded; ``label`` is its text alternative."""
    if not peaks or not duration_s or duration_s <= 0:
        return "<p class='note'>No waveform (no audio recorded for this call).</p>"
    mid, half = height / 2, height / 2 - 4
    dx = width / len(peaks)
    path = "".join(f"M{(i + .5) * dx:.1f} {mid - half * min(1.0, p):.1f}V"
                   f"{mid + half * min(1.0, p):.1f}" for i, p in enumerate(peaks))
    parts = [f"<svg class='dd-wave' viewBox='0 0 {width} {height + 14}' role='img' "
             f"aria-label='{esc(label)}' xmlns='http://www.w3.org/2000/svg'>",
             f"<title>{esc(label)}</title>",
             f"<path d='{path}' stroke='{_BLUE}' stroke-width='{max(0.6, dx * .8):.2f}'/>"]
    if turn_close_s is not None and turn_close_s == turn_close_s:
        x = max(0.0, min(width, width * turn_close_s / duration_s))
        parts += [f"<rect x='{x:.1f}' y='0' width='{width - x:.1f}' height='{height}' "
                  "fill='#000' fill-opacity='0.12'/>",
                  f"<line x1='{x:.1f}' y1='0' x2='{x:.1f}' y2='{height}' stroke='{_VERMILLION}' "
                  "stroke-width='2' stroke-dasharray='4 3'/>",
                  (f"<text x='{x + 3:.1f}' y='11' font-size='10'" if x < width - 90 else
                   f"<text x='{x - 3:.1f}' y='11' font-size='10' text-anchor='end'")
                  + f" fill='{_VERMILLION}'>turn closed {turn_close_s:.2f} s</text>"]
    parts += [f"<text x='0' y='{height + 11}' font-size='10' fill='#555'>0 s</text>",
              f"<text x='{width}' y='{height + 11}' font-size='10' fill='#555' "
              f"text-anchor='end'>{duration_s:.2f} s</text></svg>"]
    return "".join(parts)


def audio_html(src: str | None, label: str) -> str:
    """An ``<audio controls preload="none">`` of ``src`` (a relative link), or a note."""
    if not src:
        return f"<p class='note'>{esc(label)}: not recorded.</p>"
    return (f"<div><span class='note'>{esc(label)}</span><br><audio controls preload='none' "
            f"src='{esc(src)}' aria-label='{esc(label)}'></audio></div>")


def criteria_html(criteria_json: str | None, reason: str | None) -> str:
    """The scorer's per-criterion points (a table) and its reason, when recorded."""
    out = []
    try:
        crit = loads_strict(criteria_json) if criteria_json else None
    except ValueError:
        crit = None
    if crit:
        body = "".join(f"<tr><td>{esc(c.get('criterion_id'))}</td><td>{fmt(c.get('points'), 1)}"
                       f"</td><td>{fmt(c.get('points_max'))}</td></tr>" for c in crit)
        out.append("<table class='dd-crit'><tr><th scope='col'>criterion</th>"
                   f"<th scope='col'>points</th><th scope='col'>of</th></tr>{body}</table>")
    if reason:
        out.append(f"<p class='dd-text'><b>Scorer's reason:</b> {esc(reason)}</p>")
    return "".join(out) or "<p class='note'>No per-criterion points recorded.</p>"


def filters_html(profiles: list[str], tiers: list[str], n: int) -> str:
    """The filter bar (ids ``dd-profile``, ``dd-tier``, ``dd-flipped``, ``dd-truncated``,
    ``dd-count``)."""
    def options(values: list[str]) -> str:
        return "<option value=''>all</option>" + "".join(
            f"<option value='{esc(v)}'>{esc(v)}</option>" for v in values)

    return ("<div class='dd-filters' role='group' aria-label='Filter the calls'>"
            f"<label>Profile <select id='dd-profile'>{options(profiles)}</select></label>"
            f"<label>Tier <select id='dd-tier'>{options(tiers)}</select></label>"
            "<label><input type='checkbox' id='dd-flipped'> decision flipped only</label>"
            "<label><input type='checkbox' id='dd-truncated'> truncated only</label>"
            f"<span id='dd-count' class='note' aria-live='polite'>{n} of {n} shown</span>"
            "</div>")


def agent_events_html(recording_json: Path) -> str:
    """A real call's caller-agent decisions (the recording JSON's ``events``: seconds from
    connect, kind, detail; :mod:`rig.calls.agent.brain`) as a collapsed list; "" when the file is
    missing, unreadable or has none."""
    try:
        events = loads_strict(recording_json.read_text()).get("events") or []
    except (OSError, ValueError, AttributeError):
        return ""
    if not events:
        return ""
    items = "".join(f"<li><code>{float(t):.2f} s</code> {esc(kind)}"
                    f"{': ' + esc(detail) if detail else ''}</li>"
                    for t, kind, detail in events)
    return (f"<details class='dd-events'><summary>Agent events ({len(events)}): what the "
            f"caller agent heard and decided</summary><ol class='dd-text'>{items}</ol>"
            "</details>")

