"""``report.html`` of a replay: the verdict in sentences, the segments (plot and table), the
impact ratios under A and B, each version against people (with ratings), then the turns that
flipped, A beside B, to play and read.

Audio: by default the players link to the recordings where they are (relative links with a
media fragment, ``file.wav#t=START,END``: the span each version heard, from the answer's start
to its turn close); ``--copy-audio`` links to the answers copied into ``audio/`` instead (a
folder to zip and send); ``--no-audio`` writes no player and reads no recording. The page is
offline (no CDN, no font, no script).
"""

from __future__ import annotations

import html
import os
from pathlib import Path

import pandas as pd

from rig.drilldown.align import align_transcript
from rig.drilldown.page import STYLE, aligned_html, audio_html, waveform_svg
from rig.paths import write_text_atomic
from rig.replay.people import people_html
from rig.report.pages import CSS, fmt
from rig.report.svgplot import ForestRow, forest_svg

esc = html.escape


def _pts(v: float | None) -> str:
    return "n/a" if v is None else f"{v:+.1f}"


def _ci(ci: list | None) -> str:
    return ("no CI: under 5 interviews" if not ci
            else f"95% CI [{ci[0]:+.1f}, {ci[1]:+.1f}]")


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:.0f}%"


def _n(k: int, word: str) -> str:
    """``1 turn``, ``2 turns``."""
    return f"{k} {word}" + ("" if k == 1 else "s")


def verdict_sentences(summary: dict) -> list[str]:
    """The report's lead: plain sentences, each figure with its interval and scale."""
    va, vb = summary["versions"]["A"], summary["versions"]["B"]
    o = summary.get("overall")
    out = []
    if summary.get("profile_id"):
        out.append(f"Both versions heard the recordings through profile "
                   f"{summary['profile_id']}'s noise and line; the segments describe the "
                   "recordings as stored.")
    if va["result_source"] == "logged":
        out.append("Version A is the logged result stored with each recording (transcript, "
                   "score, decision), not replayed; version B was replayed on the recordings.")
    if summary.get("negative_control") and o is not None and o["n_pairs"]:
        ok = o["mean_delta"] in (0, None) and o["flips"] == 0
        out.append("A and B are the same pipeline version (a negative control): "
                   + ("every delta is 0 and no decision flips, as it must."
                      if ok else "deltas or flips are NOT zero: the replay is not "
                      "reproducible; look at the failed or differing rows."))
    if o is None or not o["n_pairs"]:
        out.append("No turn was scored under both versions: nothing to compare.")
        return out
    out.append(
        f"Version B ({vb['name']}) changes the mean score by {_pts(o['mean_delta'])} points "
        f"({_ci(o['ci95'])}, clustered by interview; p = {fmt(o['p'], 3)}) over "
        f"{_n(o['n_pairs'], 'turn')} of {_n(o['n_calls'], 'interview')}; {o['flips']} of "
        f"{o['n_decided']} advance/reject decisions flip ({o['flips_advance_to_reject']} "
        f"advance -> reject, {o['flips_reject_to_advance']} reject -> advance).")
    if o.get("truncation_rate_b") is not None:
        out.append(f"B cuts off {_pct(o['truncation_rate_b'])} of turns (the candidate was "
                   f"still answering when B's timer closed the turn); A "
                   f"{_pct(o['truncation_rate_a'])}.")
    if o.get("n_wer_b"):
        out.append(f"Against the human reference transcripts ({_n(o['n_wer_b'], 'turn')}), "
                   f"B's WER is {fmt(o['wer_pooled_b'])} pooled (all errors over all reference "
                   f"words; mean of turns {fmt(o['wer_mean_b'])}), A's "
                   f"{fmt(o.get('wer_pooled_a'))} (mean {fmt(o.get('wer_mean_a'))}).")
    if o.get("heard_nothing_a") or o.get("heard_nothing_b"):
        out.append(f"The VAD heard no speech in {o['heard_nothing_b']} answers under B and "
                   f"{o['heard_nothing_a']} under A (too short or too quiet for it): those "
                   "answers were not graded and are not in the deltas.")
    worst = _worst_segment(summary)
    if worst is not None:
        dim, seg, s = worst
        sig = ("significant after Holm across segments" if s.get("significant")
               else "not significant after Holm across segments")
        out.append(f"Largest drop by segment: {dim} {seg}, {_pts(s['mean_delta'])} points "
                   f"({_ci(s['ci95'])}; Holm p = {fmt(s.get('p_holm'), 3)}, {sig}); "
                   f"{s['flips']} of {s['n_decided']} decisions flip, truncation "
                   f"{_pct(s['truncation_rate_a'])} -> {_pct(s['truncation_rate_b'])}.")
    if summary.get("n_rows_failed"):
        out.append(f"{_n(summary['n_rows_failed'], 'row')} failed in a stage (no score; the "
                   "error is in calls.parquet's error column); a rerun retries them.")
    if summary["left_out"]:
        out.append(f"{len(summary['left_out'])} recordings or turns were left out (listed at "
                   "the end).")
    return out


def _worst_segment(summary: dict) -> tuple[str, str, dict] | None:
    best = None
    for dim, segs in summary.get("segments", {}).items():
        for seg, s in segs.items():
            if s["mean_delta"] is None or s["mean_delta"] >= 0:
                continue
            if best is None or s["mean_delta"] < best[2]["mean_delta"]:
                best = (dim, seg, s)
    return best


def _segment_table(summary: dict) -> str:
    head = ("dimension", "segment", "turns", "interviews", "mean A", "mean B", "delta B-A",
            "95% CI", "Holm p", "flips", "truncated A", "truncated B")
    rows = []
    for dim, segs in summary.get("segments", {}).items():
        for seg, s in segs.items():
            rows.append(
                f"<tr><th scope='row'>{esc(dim)}</th><td>{esc(seg)}</td><td>{s['n_pairs']}"
                f"</td><td>{s['n_calls']}</td><td>{fmt(s['mean_score_a'], 1)}</td>"
                f"<td>{fmt(s['mean_score_b'], 1)}</td><td>{_pts(s['mean_delta'])}</td>"
                f"<td>{fmt(s['ci95'], 1)}</td><td>{fmt(s.get('p_holm'), 3)}</td>"
                f"<td>{s['flips']}/{s['n_decided']}</td><td>{_pct(s['truncation_rate_a'])}</td>"
                f"<td>{_pct(s['truncation_rate_b'])}</td></tr>")
    ths = "".join(f"<th scope='col'>{h}</th>" for h in head)
    return (f"<div class='table-wrap' tabindex='0'><table><caption>Paired deltas by measured "
            f"segment (points, 0-100)</caption><thead><tr>{ths}</tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></div>")


def _impact_table(summary: dict) -> str:
    rows = []
    for dim, segs in summary.get("impact", {}).items():
        for seg, e in segs.items():
            rows.append(
                f"<tr><th scope='row'>{esc(dim)}</th><td>{esc(seg)}</td>"
                f"<td>{e.get('n_a', 'n/a')}</td><td>{e.get('n_b', 'n/a')}</td>"
                f"<td>{fmt(e.get('scoring_impact_ratio_a'))}</td>"
                f"<td>{fmt(e.get('scoring_impact_ratio_b'))}</td>"
                f"<td>{fmt(e.get('selection_impact_ratio_a'))}</td>"
                f"<td>{fmt(e.get('selection_impact_ratio_b'))}</td></tr>")
    head = "".join(f"<th scope='col'>{h}</th>" for h in (
        "dimension", "segment", "turns, A", "turns, B", "scoring IR, A", "scoring IR, B",
        "selection IR, A", "selection IR, B"))
    return ("<div class='table-wrap' tabindex='0'><table><caption>Impact ratios (LL144 scoring "
            "rate; four-fifths selection rate) per segment, under A and under B</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>" + "".join(rows) + "</tbody></table></div>")


def _forest(summary: dict) -> str:
    rows = [ForestRow(f"{dim}: {seg}", s["mean_delta"], s["ci95"], "",
                      "" if s["ci95"] else "no CI under 5 interviews")
            for dim, segs in summary.get("segments", {}).items() for seg, s in segs.items()
            if s["mean_delta"] is not None]
    if not rows:
        return ""
    return forest_svg(rows, xlabel="B - A (points)", title="Paired delta B - A by segment",
                      caption="Each dot: the mean paired delta of the segment's turns; line: "
                      "its 95% cluster-bootstrap interval (interviews resampled).")


def _audio_src(out: Path, p: pd.Series, close: float | None, copied: bool) -> str | None:
    if copied:
        src = f"audio/{p['turn_key']}.flac"
        start = 0.0
    else:
        src = os.path.relpath(p["source"], out).replace(os.sep, "/")
        start = float(p["start_in_file_s"])
    if close is None or close != close:
        return src
    return f"{src}#t={start:.2f},{start + float(close):.2f}"


def _turn_panel(out: Path, p: pd.Series, audio: bool, peaks: list[float],
                dur: float | None) -> str:
    copied = _copied(out, p)
    cols = []
    for v in ("a", "b"):
        close = p.get(f"turn_close_s_{v}")
        label = f"{v.upper()}: what it heard"
        player = audio_html(_audio_src(out, p, close, copied), label) if audio else ""
        if audio and not copied and str(p["source"]).lower().endswith((".ulaw", ".mulaw")):
            player = (f"<p class='note'>{esc(label)}: a raw mu-law recording, which browsers "
                      "do not play: rerun with --copy-audio to hear it here.</p>")
        wave = (waveform_svg(peaks, dur, close, f"{label}: the answer, turn closed at "
                             f"{fmt(close)} s") if audio and peaks and dur else "")
        lost = p.get(f"lost_text_{v}")
        cols.append(
            f"<div class='dd-side'><h4>Version {v.upper()}: score {fmt(p[f'score_{v}'], 1)}, "
            f"{esc(str(p[f'decision_{v}']))}</h4>{player}{wave}"
            f"<p><b>Heard:</b> {esc(str(p[f'transcript_{v}'] or ''))}</p>"
            + (f"<p><b>Lost after the close:</b> <del class='dd-lost'>{esc(lost)}</del></p>"
               if isinstance(lost, str) and lost else "") + "</div>")
    diff = aligned_html(align_transcript(p["transcript_a"] or "", p["transcript_b"] or "")
                        ).replace("heard as scripted", "the same in A and B")
    return (f"<section class='dd-pair'><h3>{esc(str(p['call_id']))}, turn {p['turn_index']} "
            f"({esc(str(p['question_id']))}): {esc(str(p['flip_direction']))}, delta "
            f"{_pts(p['delta'])}</h3><div class='dd-cols'>{''.join(cols)}</div>"
            f"<p><b>B's transcript against A's</b> (WER {fmt(p['wer_b_vs_a'])}; D: a word A "
            f"heard and B did not, I: the reverse, S: heard differently): {diff}</p>"
            "</section>")


def _copied(out: Path, p: pd.Series) -> bool:
    """The answer's audio was copied into ``out/audio`` (``--copy-audio``)."""
    return (out / "audio" / f"{p['turn_key']}.flac").is_file()


def _peaks(p: pd.Series, out: Path) -> tuple[list[float], float | None]:
    from rig.drilldown.audio import peaks
    from rig.monitor.recording import format_of, read_call_audio

    try:
        if _copied(out, p):
            import soundfile as sf

            x, sr = sf.read(out / "audio" / f"{p['turn_key']}.flac", dtype="float32")
            return peaks(x), len(x) / sr
        path = Path(p["source"])
        layout = None if pd.isna(p.get("layout")) else p.get("layout")
        audio = read_call_audio(path.read_bytes(), format_of(path), layout).candidate
        clip = audio.slice(float(p["start_in_file_s"]),
                           None if pd.isna(p["end_in_file_s"]) else float(p["end_in_file_s"]))
        return peaks(clip.samples), clip.duration_s
    except Exception:  # a moved or unreadable recording: the page says so, no waveform
        return [], None


def report_html(out: Path, summary: dict, pairs: pd.DataFrame, audio: bool = True) -> str:
    """The whole page (see the module docstring)."""
    verdict = "".join(f"<li>{esc(s)}</li>" for s in verdict_sentences(summary))
    flipped = pairs[pairs["flip"].fillna(False).astype(bool)] if len(pairs) else pairs
    panels = "".join(_turn_panel(out, p, audio, *(_peaks(p, out) if audio else ([], None)))
                     for _, p in flipped.iterrows())
    left = "".join(f"<li>{esc(m)}</li>" for m in summary["left_out"])
    va, vb = summary["versions"]["A"], summary["versions"]["B"]
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><meta name='viewport' "
        "content='width=device-width,initial-scale=1'><title>rig replay report</title>"
        f"<style>{CSS}{STYLE}.dd-cols{{display:flex;flex-wrap:wrap;gap:1rem}}"
        ".dd-side{flex:1 1 22rem}pre{white-space:pre-wrap}</style></head><body>"
        f"<h1>Replay: B ({esc(str(vb['pipeline_version']))}) against A "
        f"({esc(str(va['pipeline_version'] or 'logged results'))})</h1>"
        f"<p class='note'>replay {esc(summary['replay_id'])}; A {va['result_source']}, "
        f"endpointing {va['silence_timeout_ms']} ms; B {vb['result_source']}, endpointing "
        f"{vb['silence_timeout_ms']} ms; {_n(summary['n_recordings'], 'recording')}"
        + (f"; profile {esc(summary['profile_id'])}" if summary.get("profile_id") else "")
        + ".</p>"
        f"<ul class='verdict'>{verdict}</ul>{_forest(summary)}{_segment_table(summary)}"
        f"<h2>Impact ratios under A and B</h2>{_impact_table(summary)}"
        f"{people_html(summary)}"
        f"<h2>The turns that flipped ({len(flipped)})</h2>"
        + (panels or "<p class='note'>No decision flipped.</p>")
        + f"<h2>Left out ({len(summary['left_out'])})</h2><ul>{left}</ul>"
        "<h2>Method</h2><dl>" + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>"
                                        for k, v in summary["method"].items()) + "</dl>"
        "</body></html>")


def write_report(out: Path, summary: dict, pairs: pd.DataFrame, audio: bool = True) -> Path:
    """Write ``out/report.html`` atomically; returns its path."""
    return write_text_atomic(out / "report.html", report_html(out, summary, pairs, audio))

