"""Segments: which bin of each signal a call falls in, written as SQL so the aggregation runs
in DuckDB here and unchanged on a distributed SQL engine (Spark SQL, Trino) over Parquet.

Default bins (``rig monitor segments`` prints the ones in effect; a config file changes them):

=====================  ====================  =============================================
dimension              default edges         reading
=====================  ====================  =============================================
``all``                one segment           every call: the week's overall figures
``snr_db``             10, 20, 30 dB         under 10 dB is a noisy line (WER of a small
                                             Whisper on phone speech climbs steeply there,
                                             see the measured table in the project's
                                             STACK notes); 30 dB and over is clean
``asr_logprob``        -1.0, -0.6, -0.3      Whisper's own failed-decoding threshold is
                                             -1.0 (``logprob_threshold``); over -0.3 is a
                                             confident transcript
``pace_wpm``           110, 170 wpm          slow, typical, fast conversational English
``truncation_events``  1, 2                  none, one, two or more per call
``repeat_requests``    1, 2                  none, one, two or more per call
``channel_class``      categorical           narrowband, wideband, unknown
``codec``              categorical           as known (metadata, file or detected)
``language``           categorical           metadata (or Whisper's detection)
``employer``           categorical
``job_family``         categorical
=====================  ====================  =============================================

Bins are half-open: edges ``[10, 20, 30]`` make ``<10 dB``, ``[10, 20) dB``, ``[20, 30) dB``
and ``>=30 dB``; for the counts (truncation events, repeat requests) edges ``[1, 2]`` make
``0``, ``1`` and ``2+``. A call whose signal was not measurable is in ``unknown``. Each
dimension is analysed on its own (one segment per call per dimension); the segments are audio
and line conditions and the interview's context, never a person's demographics.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Literal

from rig.monitor.config import COUNT_SIGNALS, NUMERIC_SIGNALS, Bins, SegmentsConfig

UNKNOWN = "unknown"
#: Numeric dimension -> the calls column it bins.
COLUMN_OF: dict[str, str] = {"snr_db": "snr_db", "asr_logprob": "asr_avg_logprob",
                             "pace_wpm": "pace_wpm", "truncation_events": "truncation_events",
                             "repeat_requests": "repeat_requests"}


def _num(x: float) -> str:
    return f"{x:g}"


def bin_labels(edges: tuple[float, ...], unit: str = "", counts: bool = False) -> list[str]:
    """Labels of the bins of ``edges`` in order, ``unknown`` last. ``counts``: the signal is
    a whole number >= 0 and the edges are whole numbers >= 1: bins read ``0``, ``1``, ``2+``
    (or ``2-4``)."""
    if counts and all(float(e).is_integer() and e >= 1 for e in edges):
        ints = [0, *(int(e) for e in edges)]

        def span(a: int, b: int) -> str:  # the whole numbers a .. b-1
            return str(a) if b == a + 1 else f"{a}-{b - 1}"

        return [*(span(a, b) for a, b in itertools.pairwise(ints)), f"{ints[-1]}+",
                UNKNOWN]
    u = f" {unit}" if unit else ""
    out = [f"<{_num(edges[0])}{u}"]
    out += [f"[{_num(a)}, {_num(b)}){u}" for a, b in itertools.pairwise(edges)]
    out.append(f">={_num(edges[-1])}{u}")
    return [*out, UNKNOWN]


def bin_label(value: float | None, edges: tuple[float, ...], unit: str = "",
              counts: bool = False) -> str:
    """The bin of one value (the same rule as the SQL of :func:`bin_sql`)."""
    labels = bin_labels(edges, unit, counts)
    if value is None or value != value:
        return UNKNOWN
    for i, e in enumerate(edges):
        if value < e:
            return labels[i]
    return labels[len(edges)]


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def bin_sql(column: str, bins: Bins, unit: str = "", counts: bool = False) -> str:
    """A standard-SQL CASE expression giving the bin label of ``column``."""
    labels = bin_labels(bins.edges, unit, counts)
    parts = [f"WHEN {column} IS NULL THEN {_quote(UNKNOWN)}"]
    parts += [f"WHEN {column} < {e!r} THEN {_quote(labels[i])}"
              for i, e in enumerate(bins.edges)]
    return f"CASE {' '.join(parts)} ELSE {_quote(labels[len(bins.edges)])} END"


@dataclass(frozen=True)
class Dimension:
    """One segment dimension: its name, the SQL giving a call's segment, and the order its
    segments are shown in (bins in order; categories sorted, ``unknown`` last)."""
    name: str
    sql: str
    labels: tuple[str, ...] | None  # None: categorical (order by label)

    def order(self, segment: str) -> tuple[int, str]:
        if self.labels is not None and segment in self.labels:
            return self.labels.index(segment), ""
        return (1 if segment == UNKNOWN else 0), segment


#: The dimension holding every call in one segment: the week's overall figures and shift.
ALL = Dimension("all", "'all calls'", ("all calls",))


def dimensions(cfg: SegmentsConfig) -> list[Dimension]:
    """Every dimension of ``cfg``: ``all`` (every call), the numeric signals, then the
    categorical columns."""
    out = [ALL]
    for name, bins in cfg.numeric().items():
        unit, counts = NUMERIC_SIGNALS[name], name in COUNT_SIGNALS
        out.append(Dimension(name, bin_sql(COLUMN_OF[name], bins, unit, counts),
                             tuple(bin_labels(bins.edges, unit, counts))))
    out += [Dimension(name, f"coalesce({name}, {_quote(UNKNOWN)})", None)
            for name in cfg.categorical]
    return out


Dialect = Literal["duckdb", "spark", "trino"]
#: The median of a week's scores in each engine: exact and interpolated in DuckDB and Spark
#: (as pandas' median); Trino has only an approximate percentile (see docs/monitoring.md).
MEDIAN_SQL: dict[str, str] = {"duckdb": "median(score)", "spark": "percentile(score, 0.5)",
                              "trino": "approx_percentile(score, 0.5)"}
#: The week of a call: Monday (UTC) of its timestamp, in all three engines.
WEEK_OF_TS = "CAST(date_trunc('week', ts) AS DATE)"


def weekly_aggregate_sql(cfg: SegmentsConfig, table: str = "calls", *,
                         dialect: Dialect = "duckdb", week_sql: str = WEEK_OF_TS,
                         first_week: str = "?", last_week: str = "?") -> str:
    """The aggregation behind the weekly report, one statement in portable SQL.

    Args:
        cfg: the segment bins.
        table: the calls table (the DuckDB table, or e.g. a Parquet-backed table elsewhere).
        dialect: which engine's median function to use.
        week_sql: how to get a call's week (Monday) from the table: from ``ts`` by default;
            ``week_start`` for an export of ``rig monitor export``, which has no timestamp.
        first_week, last_week: SQL for the first and last Monday wanted (inclusive); ``?``
            parameters by default.

    Output, one row per (week_start, dimension, segment): ``n_calls``; ``n_scored`` (calls with
    a score); ``n_above_median`` (score strictly above the median of **all** scored calls of
    that week, MEASUREMENT.md's scoring rate); ``n_decided`` (calls with a score and a decision;
    the selection rate's denominator, as :func:`rig.stats.rates.selection_rate_table`);
    ``n_advanced``; ``sum_score`` and ``sum_sq_score`` (over scored calls, for means and
    variances that pool exactly across weeks); ``median_score`` (the week's).

    ``date_trunc('week', ts)`` starts weeks on Monday in DuckDB, Spark SQL and Trino.
    """
    dims = dimensions(cfg)
    needed = sorted({*COLUMN_OF.values(), *cfg.categorical})
    seg_cols = ",\n    ".join(f"{d.sql} AS seg_{i}" for i, d in enumerate(dims))
    union = "\n  UNION ALL ".join(
        f"SELECT week_start, {_quote(d.name)} AS dimension, seg_{i} AS segment, score, "
        f"advanced FROM src" for i, d in enumerate(dims))
    return f"""
WITH base AS (
  SELECT {week_sql} AS week_start, score, decision, {', '.join(needed)}
  FROM {table}
),
src AS (
  SELECT week_start,
    score,
    CASE WHEN score IS NULL THEN NULL WHEN decision = 'advance' THEN 1
         WHEN decision = 'reject' THEN 0 END AS advanced,
    {seg_cols}
  FROM base
  WHERE week_start >= {first_week} AND week_start <= {last_week}
),
medians AS (
  SELECT week_start, {MEDIAN_SQL[dialect]} AS median_score FROM src GROUP BY week_start
),
long AS (
  {union}
)
SELECT l.week_start, l.dimension, l.segment,
  count(*) AS n_calls,
  count(l.score) AS n_scored,
  sum(CASE WHEN l.score > m.median_score THEN 1 ELSE 0 END) AS n_above_median,
  count(l.advanced) AS n_decided,
  coalesce(sum(l.advanced), 0) AS n_advanced,
  sum(l.score) AS sum_score,
  sum(l.score * l.score) AS sum_sq_score,
  m.median_score
FROM long l JOIN medians m ON l.week_start = m.week_start
GROUP BY l.week_start, l.dimension, l.segment, m.median_score
ORDER BY l.week_start, l.dimension, l.segment
"""
