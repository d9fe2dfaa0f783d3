"""The weekly report: ``summary.json``, ``alerts.json`` and ``report.html`` of one week.

Built from SQL aggregates only (:meth:`MonitorStore.weekly_aggregates`): the outputs hold
counts, rates, means and test statistics per segment, never a call id, a transcript or a
recording, and a segment with fewer than ``privacy.min_cell`` calls shows its count only.
The HTML page is one offline file (no scripts, no CDN): the alerts in words first, then the
impact ratio of each segment week by week against the 0.8 line (an inline SVG line plot with
its text alternative, over the week and the baseline weeks the aggregates hold), then the
segment tables.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

import pandas as pd

from rig.errors import RigError
from rig.monitor.alerts import WeekAnalysis, analyse_week, week_label
from rig.monitor.config import MonitorConfig
from rig.monitor.segments import dimensions
from rig.monitor.store import MonitorStore
from rig.report.pages import CSS, fmt
from rig.report.svgplot import lines_svg, num


@dataclass(frozen=True)
class WeeklyReport:
    """A week's analysis with the facts stated beside it."""
    analysis: WeekAnalysis
    week: str
    median_score: float | None
    facts: dict
    config: MonitorConfig
    notes: tuple[str, ...]
    #: ``{week label: {(dimension, segment): impact ratio}}`` for each week of the aggregates
    #: up to the report's week, oldest first (None: not computable, or the segment under
    #: ``privacy.min_cell`` calls that week)
    history: dict[str, dict[tuple[str, str], float | None]] = field(default_factory=dict)

    def shown_median(self) -> float | None:
        """The week's median score, hidden (None) in a week under ``privacy.min_cell`` calls,
        where it would be one candidate's score."""
        n = int(self.facts.get("n_calls") or 0)
        return self.median_score if n >= self.config.privacy.min_cell else None

    def summary_dict(self) -> dict:
        a, cfg = self.analysis, self.config
        by_dim: dict[str, list[dict]] = {}
        for s in a.segments:
            by_dim.setdefault(s.dimension, []).append(s.to_dict(cfg.privacy.min_cell))
        return {"week": self.week, "week_start": a.week_start.isoformat(),
                **self.facts, "median_score": self.shown_median(),
                "baseline_weeks": [week_label(w) for w in a.baseline_weeks],
                "n_tests": a.n_tests, "n_alerts": len(a.alerts),
                "alerts_config": cfg.alerts.model_dump(mode="json"),
                "segments_config": cfg.segments.model_dump(mode="json"),
                "min_cell": cfg.privacy.min_cell, "notes": list(self.notes),
                "dimensions": by_dim,
                "impact_ratio_by_week": [
                    {"week": w, "dimension": d, "segment": g, "impact_ratio": v}
                    for w, per in self.history.items() for (d, g), v in per.items()]}

    def alerts_dict(self) -> dict:
        a = self.analysis
        return {"week": self.week, "week_start": a.week_start.isoformat(),
                "n_calls": self.facts.get("n_calls"), "n_tests": a.n_tests,
                "n_alerts": len(a.alerts), "alerts": [x.to_dict() for x in a.alerts]}


def parse_week(text: str) -> date:
    """The Monday of ``2025-W03`` (ISO week) or of the week holding a date ``2025-01-15``.

    Raises:
        RigError: neither form.
    """
    m = re.fullmatch(r"(\d{4})-W(\d{2})", text.strip())
    try:
        if m:
            return date.fromisocalendar(int(m.group(1)), int(m.group(2)), 1)
        d = date.fromisoformat(text.strip())
    except ValueError as exc:
        raise RigError(f"--week: not a week (got {text!r}; use 2025-W03 or 2025-01-15)"
                       ) from exc
    return d - timedelta(days=d.weekday())


def build_report(store: MonitorStore, config: MonitorConfig, week: date | None = None
                 ) -> WeeklyReport:
    """Analyse one week (default: the latest week with calls) against its trailing baseline.

    Raises:
        RigError: the database holds no calls, or none in the week asked for.
    """
    weeks = store.weeks()
    if not weeks:
        raise RigError(f"{store.path}: no calls ingested yet")
    week = week or weeks[-1]
    if week not in weeks:
        raise RigError(f"{store.path}: no calls in {week_label(week)} (weeks with calls: "
                       f"{', '.join(week_label(w) for w in weeks[-8:])})")
    first = week - timedelta(days=7 * config.alerts.baseline_weeks)
    agg = store.weekly_aggregates(config.segments, first, week)
    return report_from_aggregates(agg, config, week, store.week_facts(week))


def report_from_aggregates(agg: pd.DataFrame, config: MonitorConfig, week: date | None = None,
                           facts: dict | None = None, source: str = "aggregates"
                           ) -> WeeklyReport:
    """The report of one week from aggregate rows (the output of
    :func:`rig.monitor.segments.weekly_aggregate_sql`, computed here or on another engine).

    Args:
        agg: the aggregate rows of the week and of the baseline weeks before it.
        week: the Monday of the week (default: the latest week in ``agg``).
        facts: counts stated beside the segments (:meth:`MonitorStore.week_facts`); default
            from the aggregates (without the signals versions, which they do not hold).

    Raises:
        RigError: a required column is missing, or the week is not in ``agg``.
    """
    need = {"week_start", "dimension", "segment", "n_calls", "n_scored", "n_above_median",
            "n_decided", "n_advanced", "sum_score", "sum_sq_score", "median_score"}
    missing = sorted(need - set(agg.columns))
    if missing:
        raise RigError(f"{source}: {missing[0]}: column missing from the aggregates "
                       f"(they have {sorted(map(str, agg.columns))})")
    agg = agg.copy()
    agg["week_start"] = pd.to_datetime(agg["week_start"]).dt.date
    weeks = sorted(set(agg["week_start"]))
    if not weeks:
        raise RigError(f"{source}: no aggregate rows")
    week = week or weeks[-1]
    if week not in weeks:
        raise RigError(f"{source}: no rows for {week_label(week)}")
    cur = agg[agg["week_start"] == week]
    if facts is None:
        first_dim = cur[cur["dimension"] == cur["dimension"].iloc[0]]
        facts = {"n_calls": int(first_dim["n_calls"].sum()),
                 "n_scored": int(first_dim["n_scored"].sum()),
                 "n_decided": int(first_dim["n_decided"].sum()),
                 "signals_versions": [], "asr_models": []}
    analysis = analyse_week(agg, week, dimensions(config.segments), config.alerts)
    median = (float(cur["median_score"].iloc[0]) if cur["median_score"].notna().any()
              else None)
    notes = []
    if len(facts["signals_versions"]) > 1:
        notes.append(f"calls of this week were measured under {len(facts['signals_versions'])}"
                     " signal settings (signals_version); segments by signals mix them")
    if facts["n_calls"] > facts["n_decided"]:
        notes.append(f"{facts['n_calls'] - facts['n_scored']} calls without a score and "
                     f"{facts['n_calls'] - facts['n_decided']} without a score and a decision "
                     "are counted in volume only")
    if not analysis.baseline_weeks:
        notes.append("no earlier week in the data: no mean-shift comparison this week")
    history = {}
    for w in (w for w in weeks if w <= week):
        a = analysis if w == week else analyse_week(agg, w, dimensions(config.segments),
                                                    config.alerts)
        history[week_label(w)] = {
            (sg.dimension, sg.segment): (sg.impact_ratio if sg.n_calls >= config.privacy.min_cell
                                         else None) for sg in a.segments}
    return WeeklyReport(analysis, week_label(week), median, facts, config, tuple(notes),
                        history)


_COLUMNS = [("n_calls", "calls", 0), ("mean_score", "mean score", 2),
            ("selection_rate", "advance rate", 3), ("selection_ratio", "selection ratio", 2),
            ("selection_p_adj", "p (adj.)", 4), ("scoring_rate", "scoring rate", 3),
            ("impact_ratio", "impact ratio", 2), ("scoring_p_adj", "p (adj.)", 4),
            ("baseline_mean", "baseline mean", 2), ("shift", "shift", 2),
            ("noise_floor", "noise floor", 2), ("shift_p_adj", "p (adj.)", 4)]


def _cell(key: str, value: object, digits: int) -> str:
    if key.endswith("_p_adj") and isinstance(value, float) and value < 1e-4:
        return f"{value:.1e}"
    return fmt(value, digits) if digits else fmt(value)


_SOURCE_WORDS = {"week_to_week": "how much its weekly mean varied over the baseline weeks",
                 "scorer": "the scorer's own noise between repeats of a call",
                 "sampling": "the sampling error of the two means"}


def alert_words(alert, report: WeeklyReport) -> str:
    """An alert as a plain sentence (escaped HTML): what moved, against what, how far past
    the line, and how unlikely by chance after the week's adjustment."""
    a, cfg = report.analysis, report.config
    e = html.escape
    who = (f"calls in <b>{e(alert.dimension)} = {e(alert.segment)}</b>"
           if alert.dimension != "all" else "<b>all calls</b>")
    chance = (f"a gap this large arises by chance with probability {alert.p_adjusted:.2g} "
              f"after adjusting for the week's {a.n_tests} tests ({e(cfg.alerts.correction)})")
    if alert.kind in ("scoring_impact_ratio", "selection_ratio"):
        what = ("scored above the week's median score" if alert.kind == "scoring_impact_ratio"
                else "were advanced")
        name = "impact ratio" if alert.kind == "scoring_impact_ratio" else "selection ratio"
        return (f"{who[0].upper()}{who[1:]} {what} {num(alert.value)} times as often as calls "
                f"in <b>{e(str(alert.reference))}</b>, the segment with the highest rate "
                f"({name} {num(alert.value)}, under the {alert.threshold:g} line of the "
                f"four-fifths rule; {alert.n} against {alert.n_reference} calls); {chance}.")
    seg = next((sg for sg in a.segments if (sg.dimension, sg.segment)
                == (alert.dimension, alert.segment)), None)
    src = _SOURCE_WORDS.get(seg.noise_floor_source if seg else "", "")
    return (f"The mean score of {who} moved {'up' if alert.value > 0 else 'down'} by "
            f"{num(abs(alert.value))} points, from {num(seg.baseline_mean if seg else None)} "
            f"over the previous {seg.baseline_weeks if seg else '?'} weeks to "
            f"{num(seg.mean_score if seg else None)} this week: more than the noise floor of "
            f"{num(alert.threshold)} points ({e(src)}); {alert.n} against "
            f"{alert.n_reference} scored calls; {chance}.")


def _history_html(report: WeeklyReport) -> str:
    """One line plot per dimension with several segments: the impact ratio week by week."""
    weeks = list(report.history)
    if not weeks:
        return ""
    thr = report.config.alerts.ratio_threshold
    parts = [f"<h2>Impact ratio week by week</h2><p class='note'>Impact ratio = a segment's "
             "scoring rate (share of its scored calls above the week's median) / the reference "
             f"segment's, per week of the data ({len(weeks)} "
             f"week{'s' if len(weeks) != 1 else ''}: this one and its baseline). Under "
             f"{thr:g} (the four-fifths rule) a segment's calls score high markedly less often; "
             "an alert also needs enough calls and a significant test. Missing points: "
             f"ratio not computable, or a segment under {report.config.privacy.min_cell} calls."
             "</p>"]
    keys = list(dict.fromkeys(k for per in report.history.values() for k in per))
    for dim in dict.fromkeys(d for d, _ in keys):
        segs = [g for d, g in keys if d == dim]
        if len(segs) < 2:
            continue
        series = {g: [report.history[w].get((dim, g)) for w in weeks] for g in segs}
        if all(v is None for vs in series.values() for v in vs):
            continue
        parts.append(lines_svg(
            weeks, series, ylabel="impact ratio", threshold=thr,
            threshold_label=f"{thr:g}: four-fifths line", title=f"Impact ratio by {dim}",
            caption=f"Impact ratio of each <b>{html.escape(dim)}</b> segment by ISO week; the "
                    f"dashed line is {thr:g}. The reference segment sits at 1."))
    if len(parts) == 1:  # the heading alone: say why there is nothing to draw
        parts.append("<p class='note'>Nothing to plot yet: no dimension has two segments with "
                     f"a computable ratio of at least {report.config.privacy.min_cell} calls in "
                     "any week of the data.</p>")
    return "".join(parts)


def render_html(report: WeeklyReport) -> str:
    """The report page (offline HTML, aggregates only): the alerts in words, the weekly
    impact ratios against the 0.8 line, the segment tables."""
    a, cfg = report.analysis, report.config
    mc = cfg.privacy.min_cell
    alert_items = "".join(f"<li class='verdict'>{alert_words(x, report)}<br><span "
                          f"class='note'>{html.escape(x.message)}</span></li>"
                          for x in a.alerts)
    alerts_html = (f"<ul>{alert_items}</ul>" if a.alerts else
                   "<p class='verdict'>No alert this week: no segment's ratio is under the "
                   f"{cfg.alerts.ratio_threshold:g} line with a significant test, and no mean "
                   "moved beyond its noise floor.</p>")
    flagged = {(x.dimension, x.segment) for x in a.alerts}
    head = "".join(f"<th scope='col'>{html.escape(label)}</th>" for _, label, _ in _COLUMNS)
    tables = []
    for dim in dict.fromkeys(s.dimension for s in a.segments):
        body = []
        for s in (s for s in a.segments if s.dimension == dim):
            marks = (" (ref.)" if s.selection_reference and s.scoring_reference else
                     " (ref. selection)" if s.selection_reference else
                     " (ref. scoring)" if s.scoring_reference else "")
            cls = " class='flag'" if (s.dimension, s.segment) in flagged else ""
            d = s.to_dict(mc)
            cells = "".join(f"<td>{_cell(k, d[k], dg)}</td>" for k, _, dg in _COLUMNS)
            body.append(f"<tr><th scope='row'{cls}>{html.escape(s.segment)}{marks}</th>{cells}"
                        "</tr>")
        tables.append(f"<h3>{html.escape(dim)}</h3><div class='scroll'><table><thead><tr>"
                      f"<th scope='col'>segment</th>{head}</tr></thead><tbody>{''.join(body)}"
                      "</tbody></table></div>")
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in report.notes)
    al = cfg.alerts
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>rig monitor {html.escape(report.week)}</title><style>{CSS}{_PAGE_CSS}</style>
</head><body><main>
<h1>Production monitoring, week {html.escape(report.week)}</h1>
<p class="note">Week starting {a.week_start.isoformat()} (Monday, UTC) ·
{report.facts.get('n_calls', 0)} calls · median score {fmt(report.shown_median())} · baseline:
{html.escape(', '.join(week_label(w) for w in a.baseline_weeks) or 'none')} ·
{a.n_tests} tests ({html.escape(al.correction)}-adjusted) · generated
{datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}.
Segments are measured audio and line conditions and the interview's context; nothing here
infers a protected trait of a candidate.</p>
<h2>Alerts ({len(a.alerts)})</h2>{alerts_html}
{f'<ul class="note">{notes}</ul>' if notes else ''}
{_history_html(report)}
<h2>Segments</h2>
<p class="note">Advance rate = selection rate (calls with a score and a decision). Scoring
rate = share of the segment's scored calls above the week's median score. Ratios are against
the reference segment of the dimension (the highest rate among segments with at least
{al.min_n} calls). An alert needs a ratio under {al.ratio_threshold:g} or a shift beyond the
noise floor, at least {al.min_n} calls, and an adjusted p under {al.alpha:g}. Shift = this
week's mean score minus the mean of the previous {al.baseline_weeks} weeks. Segments with
fewer than {mc} calls show their count only. "ref.": the reference segment of the dimension
(of both rates, or of the one named).</p>
{''.join(tables)}
</main></body></html>"""


_PAGE_CSS = """
th[scope=row]{background:none;font-weight:600;text-align:left}
th[scope=row].flag{color:#b00020}
.scroll{overflow-x:auto;max-width:100%}
.verdict{font-size:1.05rem;line-height:1.5;max-width:760px;margin-bottom:.6rem}
@media (max-width:640px){body{margin:1rem auto}}
"""


def write_report(report: WeeklyReport, out_dir: str | Path) -> dict[str, Path]:
    """Write ``summary.json``, ``alerts.json`` and ``report.html`` into ``out_dir``; each file
    is written to a temporary name and renamed, so a reader never sees half a file."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {"summary": (out / "summary.json",
                         json.dumps(report.summary_dict(), indent=2, allow_nan=False)),
             "alerts": (out / "alerts.json",
                        json.dumps(report.alerts_dict(), indent=2, allow_nan=False)),
             "report": (out / "report.html", render_html(report))}
    for path, text in files.values():
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    return {k: v[0] for k, v in files.items()}
