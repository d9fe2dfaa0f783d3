"""The weekly report: ``summary.json``, ``alerts.json`` and ``report.html`` of one week.

Built from SQL aggregates only (:meth:`MonitorStore.weekly_aggregates`): the outputs hold
counts, rates, means and test statistics per segment, never a call id, a transcript or a
recording, and a segment with fewer than ``privacy.min_cell`` calls shows its count only.
The HTML page is one offline file (no scripts, no CDN).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

import pandas as pd

from rig.errors import RigError
from rig.monitor.alerts import WeekAnalysis, analyse_week, week_label
from rig.monitor.config import MonitorConfig
from rig.monitor.segments import dimensions
from rig.monitor.store import MonitorStore
from rig.pages import CSS, fmt


@dataclass(frozen=True)
class WeeklyReport:
    """A week's analysis with the facts stated beside it."""
    analysis: WeekAnalysis
    week: str
    median_score: float | None
    facts: dict
    config: MonitorConfig
    notes: tuple[str, ...]

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
                "dimensions": by_dim}

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
    return WeeklyReport(analysis, week_label(week), median, facts, config, tuple(notes))


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


def render_html(report: WeeklyReport) -> str:
    """The report page (offline HTML, aggregates only)."""
    a, cfg = report.analysis, report.config
    mc = cfg.privacy.min_cell
    alert_items = "".join(f"<li class='flag'>{html.escape(x.message)}</li>" for x in a.alerts)
    alerts_html = (f"<ul>{alert_items}</ul>" if a.alerts else
                   "<p>No alert this week.</p>")
    flagged = {(x.dimension, x.segment) for x in a.alerts}
    head = "".join(f"<th>{html.escape(label)}</th>" for _, label, _ in _COLUMNS)
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
            body.append(f"<tr><td{cls}>{html.escape(s.segment)}{marks}</td>{cells}</tr>")
        tables.append(f"<h3>{html.escape(dim)}</h3><table><tr><th>segment</th>{head}</tr>"
                      f"{''.join(body)}</table>")
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in report.notes)
    al = cfg.alerts
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>rig monitor {html.escape(report.week)}</title><style>{CSS}</style></head><body>
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
</body></html>"""


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
