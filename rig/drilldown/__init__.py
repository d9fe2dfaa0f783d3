"""Per-call drill-down of a campaign report: the audio, waveform, script, aligned transcript
and scorer points behind every number (issue 17, item 3).

One collapsed entry per (answer, profile): the baseline's call and the profile's side by side,
each with an audio player for what the candidate's phone sent and for what the interviewer
heard (relative links into the campaign's ``audio/`` folder, :mod:`rig.drilldown.audio`; a
real call's stereo ``recording_path``), the line audio's waveform with the turn close marked,
the script with the words lost after the turn closed struck through, the transcript aligned
to the script (:mod:`rig.drilldown.align`), the scorer's per-criterion points and reason, and
the ASR and turn suspect reasons when the row has them. Filters (profile, tier, decision
flipped, truncated) are inline script. With repeats, repeat 0 (the lowest run) is shown and
the count is said. Calls with no audio (``--no-audio``, a resumed older run) still show their
text; the script's lost words then come from the row (``words_lost``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rig.campaign.schema import CampaignSummary
from rig.drilldown.align import (
    AlignedWord,
    LostWords,
    align_transcript,
    alignment_words,
    lost_words,
    script_words,
)
from rig.drilldown.audio import AUDIO_DIRNAME, audio_paths, read_call_audio
from rig.drilldown.page import (
    LEGEND,
    SCRIPT,
    STYLE,
    agent_events_html,
    aligned_html,
    audio_html,
    criteria_html,
    esc,
    filters_html,
    script_html,
    waveform_svg,
)
from rig.report.pages import fmt
from rig.stats.flip_direction import reference_decision

__all__ = ["drilldown_html", "pair_entries"]


def _clean(v: object) -> object:
    """None for NaN / pandas NA, else ``v``."""
    try:
        if v is None or pd.isna(v):
            return None
    except (TypeError, ValueError):  # lists, arrays
        return v
    return v


def _records(rows: pd.DataFrame) -> list[dict]:
    return [{k: _clean(v) for k, v in r.items()} for r in rows.to_dict("records")]


def _mean_score(calls: list[dict]) -> float | None:
    s = [float(c["score"]) for c in calls if c.get("score") is not None]
    return sum(s) / len(s) if s else None


def _decision(score: float | None, cutoff: object) -> str | None:
    if score is None or cutoff is None:
        return None
    return "advance" if score >= float(cutoff) else "reject"  # type: ignore[arg-type]


def _shown(calls: list[dict]) -> dict:
    """Repeat 0: the call with the lowest repeat index."""
    return min(calls, key=lambda c: (c.get("repeat") is None, c.get("repeat") or 0))


def pair_entries(summary: CampaignSummary, rows: pd.DataFrame) -> list[dict]:
    """The drill-down's entries, one per (question, answer, profile other than the baseline),
    in the summary's profile order then the rows' order; only the baseline's when the
    campaign has no other profile. Each: ``{"profile_id", "question_id", "answer_id", "tier",
    "base": call row or None, "call": call row, "n_base": repeats, "n_call": repeats,
    "base_score", "call_score" (means over repeats), "base_decision", "call_decision"
    (the mean against the cutoff, as the summary decides), "flipped": bool,
    "reference_decision" (the reference grade against the cutoff,
    :func:`rig.stats.flip_direction.reference_decision`; None when unknown), "truncated":
    bool (the shown call's)}``."""
    recs = _records(rows) if rows is not None and not rows.empty else []
    baseline = summary.baseline
    groups: dict[tuple, dict[str, list[dict]]] = {}
    for r in recs:
        key = (r.get("question_id"), r.get("answer_id"))
        groups.setdefault(key, {}).setdefault(str(r.get("profile_id")), []).append(r)
    order = [p for p in summary.profiles if p != baseline]
    seen = {p for g in groups.values() for p in g}
    order += sorted(p for p in seen if p not in order and p != baseline)
    if not order:
        order = [baseline]
    out = []
    for pid in order:
        for (qid, aid), by_profile in groups.items():
            calls = by_profile.get(pid)
            if not calls:
                continue
            base_calls = by_profile.get(baseline) if pid != baseline else None
            shown = _shown(calls)
            cutoff = shown.get("cutoff")
            bs, cs = _mean_score(base_calls or []), _mean_score(calls)
            bd, cd = _decision(bs, cutoff), _decision(cs, cutoff)
            out.append({
                "profile_id": pid, "question_id": qid, "answer_id": aid,
                "tier": shown.get("tier"), "base": _shown(base_calls) if base_calls else None,
                "call": shown, "n_base": len(base_calls or []), "n_call": len(calls),
                "base_score": bs, "call_score": cs, "base_decision": bd, "call_decision": cd,
                "flipped": bool(bd and cd and bd != cd),
                "reference_decision": reference_decision(shown.get("reference_score"),
                                                         cutoff),
                "truncated": bool(shown.get("truncated"))})
    return out


def _link(campaign_dir: Path, path: Path) -> str | None:
    """A relative link to ``path`` when it is a file (under the campaign folder), or a
    ``file://`` URI when it is elsewhere; None when it does not exist."""
    if not path.is_file():
        return None
    try:
        return path.resolve().relative_to(campaign_dir.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_uri()


def _recording(campaign_dir: Path, call: dict) -> list[Path]:
    """A real call's recording, if it is on disk: as written (absolute or from the cwd), in
    the folder, or where rig puts it."""
    recording, cid = call.get("recording_path"), str(call.get("call_id"))
    if not recording:
        return []
    return [p for p in (Path(str(recording)), campaign_dir / str(recording),
                        campaign_dir / "recordings" / f"{cid}.wav") if p.is_file()]


def call_words(call: dict, timings: list[dict] | None
               ) -> tuple[list, list[AlignedWord] | None, LostWords | None]:
    """A call's script words (:func:`rig.drilldown.align.script_words`, ``timings`` the
    audio JSON's ``words``), its transcript aligned to the script (None without a
    transcript) and the words lost counted in that alignment's words (None without one), so
    the count a reader sees, the struck-through words and the alignment's deletions agree."""
    script = str(call.get("script") or "")
    words = script_words(script, call.get("words_lost"), timings)
    if call.get("transcript") is None:
        return words, None, None
    steps = align_transcript(script, str(call["transcript"]))
    lost = lost_words(steps, [w.word for w in words if w.lost and not w.filler],
                      call.get("words_lost"), call.get("words_total"))
    return words, steps, lost


def lost_text(call: dict, lost: LostWords | None) -> str:
    """``"N of M words lost"``: in the alignment's words when there is one
    (:meth:`LostWords.text`), else the row's ``words_lost`` of ``words_total``."""
    if lost is not None and lost.n_total:
        return lost.text()
    return f"{fmt(call.get('words_lost'))} of {fmt(call.get('words_total'))} words lost"


def call_panel(campaign_dir: Path, call: dict | None, title: str, n_repeats: int) -> str:
    """One call's panel (see the module); a note when ``call`` is None."""
    if call is None:
        return f"<div class='dd-panel'><h4>{esc(title)}</h4><p class='note'>No call.</p></div>"
    cid = str(call.get("call_id"))
    rec = read_call_audio(campaign_dir / AUDIO_DIRNAME, cid)
    paths = audio_paths(campaign_dir / AUDIO_DIRNAME, cid)
    rep = (f" · repeat {call.get('repeat')} shown of {n_repeats}" if n_repeats > 1 else "")
    words, steps, lost = call_words(call, (rec or {}).get("words"))
    parts = [f"<div class='dd-panel'><h4>{esc(title)} <span class='note'>call "
             f"<code>{esc(cid)}</code>{rep}</span></h4>"]
    if call.get("status") not in (None, "ok"):
        parts.append(f"<p class='flag'>Call failed: {esc(call.get('error'))}</p>")
    parts.append(f"<p class='note'>Score {fmt(call.get('score'), 1)} · decision "
                 f"{fmt(call.get('decision'))} · WER {fmt(call.get('wer'))} · turn closed at "
                 f"{fmt(call.get('turn_close_s'))} s by {fmt(call.get('turn_closed_by'))} · "
                 f"{esc(lost_text(call, lost))}</p>")
    parts.append(bot_words_html(call))
    recording = call.get("recording_path")
    if recording:
        found = _recording(campaign_dir, call)
        parts.append(audio_html(_link(campaign_dir, found[0]) if found else None,
                                "the real call's recording (left: caller sent, right: "
                                "interviewer received)"))
        if found:
            parts.append(agent_events_html(found[0].with_suffix(".json")))
    parts.append(audio_html(_link(campaign_dir, paths["caller"]),
                            "caller audio (what the candidate's phone sent)"))
    parts.append(audio_html(_link(campaign_dir, paths["line"]),
                            "line audio (what the interviewer heard)"))
    if rec:
        close = rec.get("turn_close_s")
        label = (f"Waveform of the line audio, {rec.get('line_duration_s', 0):.2f} s; the turn "
                 f"closed at {close:.2f} s" if close is not None else "Waveform of the line audio")
        parts.append(waveform_svg(rec.get("line_peaks") or [], rec.get("line_duration_s") or 0,
                                  close, label))
    parts.append(f"<p class='dd-text'><b>Script:</b> {script_html(words)}</p>")
    if steps is not None:
        parts.append(f"<p class='dd-text'><b>Transcript, aligned:</b> {aligned_html(steps)}</p>")
        parts.append(f"<p class='note'>{esc(alignment_words(steps, lost))}</p>")
    for col, what in (("asr_suspect_reason", "ASR suspect"),
                      ("turn_suspect_reason", "Turn suspect")):
        if call.get(col):
            parts.append(f"<p class='flag'>{what}: {esc(call[col])}</p>")
    parts.append(criteria_html(call.get("scorer_criteria_json"), call.get("scorer_reason")))
    parts.append("</div>")
    return "".join(parts)


def bot_words_html(call: dict) -> str:
    """A real call's score source (a rig grade labelled as such) and what the bot asked,
    heard and said; "" on a simulated call."""
    from rig.calls.bots.score_sources import RIG_GRADES, SOURCE_WORDS

    src = call.get("score_source")
    if call.get("transport") in (None, "sim") or (
            not isinstance(src, str) and not isinstance(call.get("interviewer_said"), str)):
        return ""
    out = []
    if isinstance(src, str):
        cls = "flag" if src in RIG_GRADES else "note"
        out.append(f"<p class='{cls}'>Score source <code>{esc(src)}</code>: "
                   f"{esc(SOURCE_WORDS.get(src, src))}</p>")
    heard = call.get("interviewer_heard_speech")  # True/False (numpy's too), None/NaN: unknown
    heard = None if heard is None or heard != heard else bool(heard)
    if heard is False:
        out.append("<p class='flag'>The bot raised no user-speech event during the answer: "
                   "it did not hear it (no score).</p>")
    elif heard is None and call.get("transport") in ("webrtc", "twilio", "sip"):
        out.append("<p class='note'>What the bot heard is unknown: it sent no user-turn "
                   "events (RTVI off, or a telephony bot).</p>")
    for col, what in (("question_asked", "The bot asked"),
                      ("interviewer_heard", "The bot heard"),
                      ("interviewer_heard_context", "Its LLM was given"),
                      ("interviewer_said", "The bot said")):
        v = call.get(col)
        if isinstance(v, str) and v:
            sim = call.get("question_match_similarity")
            more = (f" <span class='note'>(similarity to the bank's question "
                    f"{fmt(sim)})</span>" if col == "question_asked" and sim is not None
                    else "")
            out.append(f"<p class='dd-text'><b>{what}:</b> {esc(v)}{more}</p>")
    return "".join(out)


def _summary_line(e: dict, baseline: str, campaign_dir: Path | None = None) -> str:
    pid = e["profile_id"]
    head = (f"<b>{esc(e['answer_id'])}</b> <span class='note'>({esc(e['question_id'])}, tier "
            f"{fmt(e['tier'])})</span> · <b>{esc(pid)}</b>")
    if e["base"] is not None:
        d = (None if e["base_score"] is None or e["call_score"] is None
             else e["call_score"] - e["base_score"])
        head += (f": {fmt(e['base_score'], 1)} → {fmt(e['call_score'], 1)} "
                 f"(delta {'+' if d is not None and d > 0 else ''}{fmt(d, 1)})")
    elif pid == baseline:
        head += f": {fmt(e['call_score'], 1)}"
    if e["flipped"]:
        ref = e.get("reference_decision")
        toward = "away from" if ref == e["base_decision"] else "toward"
        way = "" if ref is None else f"; reference decision {ref}: {toward} it"
        head += (f"<span class='dd-tag dd-warn'>flipped: {esc(e['base_decision'])} → "
                 f"{esc(e['call_decision'])}{esc(way)}</span>")
    if e["truncated"]:
        c = e["call"]
        rec = (read_call_audio(campaign_dir / AUDIO_DIRNAME, str(c.get("call_id")))
               if campaign_dir is not None else None)
        _, _, lost = call_words(c, (rec or {}).get("words"))
        head += f"<span class='dd-tag dd-warn'>truncated: {esc(lost_text(c, lost))}</span>"
    for col, what in (("asr_suspect", "ASR suspect"), ("turn_suspect", "turn suspect")):
        if e["call"].get(col):
            head += f"<span class='dd-tag'>{what}</span>"
    return head


def drilldown_html(campaign_dir: str | Path, summary: CampaignSummary,
                   rows: pd.DataFrame) -> str:
    """The report's "calls" section (``<section id="calls">`` with its own inline script and
    style), for the campaign in ``campaign_dir``; audio linked relative to it.

    Args:
        campaign_dir: the campaign's output folder (``report.html``'s folder, holding
            ``audio/``).
        summary: the campaign's summary (``summary.json``: ``baseline`` and ``profiles``
            give the order).
        rows: the call rows (``calls.parquet``'s columns; the suspect columns are optional).

    Returns an empty section with a note when there are no rows. Never reads audio samples:
    waveforms come from each call's JSON (:mod:`rig.drilldown.audio`)."""
    d = Path(campaign_dir)
    baseline = summary.baseline
    entries = pair_entries(summary, rows)
    if not entries:
        return ("<section id='calls'><h2>The calls behind the numbers</h2>"
                "<p class='note'>No calls.</p></section>")
    items = []
    for e in entries:
        flags = (f"data-profile='{esc(e['profile_id'])}' data-tier='{esc(e['tier'] or '')}' "
                 f"data-flipped='{int(e['flipped'])}' data-truncated='{int(e['truncated'])}'")
        panels = (call_panel(d, e["base"], f"baseline ({baseline})", e["n_base"])
                  if e["profile_id"] != baseline else "")
        panels += call_panel(d, e["call"], e["profile_id"], e["n_call"])
        items.append(f"<details class='dd-call' {flags}><summary>{_summary_line(e, baseline, d)}"
                     f"</summary><div class='dd-pair'>{panels}</div></details>")
    profiles = list(dict.fromkeys(e["profile_id"] for e in entries))
    tiers = sorted({str(e["tier"]) for e in entries if e["tier"] is not None})
    # a simulated call's audio, or a real call's recording (linked in its panel)
    n_audio = sum(1 for e in entries if audio_paths(d / AUDIO_DIRNAME,
                                                    str(e["call"].get("call_id")))["line"]
                  .is_file() or _recording(d, e["call"]))
    note = ("" if n_audio else " No call audio was recorded (run without <code>--no-audio"
            "</code> to hear the calls).")
    return (f"<section id='calls'><style>{STYLE}</style><h2>The calls behind the numbers</h2>"
            f"<p class='note'>Per answer and profile, the baseline's call beside the "
            f"profile's; open one to hear it and read what was heard. {len(entries)} entries."
            f"{note}</p>{LEGEND}{filters_html(profiles, tiers, len(entries))}{''.join(items)}"
            f"<script>{SCRIPT}</script></section>")

