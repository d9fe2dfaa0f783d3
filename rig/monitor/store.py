"""The local monitoring database: one DuckDB file, one row per call, keyed on ``call_id``.

The row holds the call's metadata, its measured signals, its transcripts and where its
recording lies; the recording itself stays where it was ingested from (or, for calls posted
to ``rig monitor serve``, in the server's recordings folder). Nothing in this file leaves the
machine: reports and exports are built from aggregates (:mod:`rig.monitor.report`) or carry
keyed hashes instead of call ids (:mod:`rig.monitor.privacy`).

Writes are idempotent: a call is inserted in one statement, refused by the primary key when
its ``call_id`` is stored already, so a call is either wholly in the table or not at all, and
ingesting it again changes nothing. DuckDB lets one process write a database file at a time:
stop ``rig monitor serve`` (or post to it) before ingesting a folder into the same file.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from datetime import date, datetime, timedelta
from pathlib import Path

import pandas as pd

from rig.errors import EngineUnavailable
from rig.monitor.config import SegmentsConfig
from rig.monitor.segments import weekly_aggregate_sql

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class CallRecord:
    """One row of the ``calls`` table (units in the names; ``ts`` is UTC, naive)."""
    call_id: str
    ts: datetime
    employer: str
    job_family: str
    score: float | None
    decision: str | None
    channel: str | None
    language: str
    language_source: str
    asr_language: str | None
    codec: str | None
    codec_source: str | None
    channel_class: str
    hf_ratio_db: float | None
    snr_db: float | None
    asr_avg_logprob: float | None
    asr_no_speech_prob: float | None
    n_words: int
    pace_wpm: float | None
    n_turns: int
    truncation_events: int
    repeat_requests: int | None
    repeat_source: str
    duration_s: float
    speech_s: float
    n_channels: int
    layout: str
    file_format: str
    audio_path: str
    audio_sha256: str
    meta_sha256: str
    signals_version: str
    asr_model: str
    transcript: str
    interviewer_transcript: str | None
    notes: str
    t_decode_s: float
    t_vad_s: float
    t_signals_s: float
    t_asr_s: float
    ingested_at: datetime


_SQL_TYPES = {str: "VARCHAR", float: "DOUBLE", int: "INTEGER", datetime: "TIMESTAMP",
              "str": "VARCHAR", "float": "DOUBLE", "int": "INTEGER", "datetime": "TIMESTAMP"}


def _sql_type(annotation: object) -> str:
    base = str(annotation).split("|")[0].strip()
    return _SQL_TYPES[base]


COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(CallRecord))
_DDL = "CREATE TABLE IF NOT EXISTS calls (\n  " + ",\n  ".join(
    f"{f.name} {_sql_type(f.type)}" + (" PRIMARY KEY" if f.name == "call_id" else "")
    + (" NOT NULL" if "None" not in str(f.type) and f.name != "call_id" else "")
    for f in fields(CallRecord)) + "\n)"


def _lock_holder(message: str) -> str | None:
    """``PID N`` (and its program) from DuckDB's "Could not set lock on file ...: Conflicting
    lock is held in PROGRAM (PID N)" error; ``another process`` when the PID is not given;
    None for any other error."""
    import re

    if "lock" not in message.lower() or "conflicting" not in message.lower():
        return None
    m = re.search(r"held in (.+?) \(PID (\d+)\)", message)
    if m is None:
        return "another process"
    return f"PID {m.group(2)}, {Path(m.group(1)).name}"


def _duckdb():
    try:
        import duckdb
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise EngineUnavailable("rig monitor needs DuckDB: pip install 'duckdb==2.0.1' "
                                "(or, in rig's clone: pip install -e '.[monitor]')") from exc
    return duckdb


class MonitorStore:
    """A DuckDB database of monitored calls (created on first open).

    Raises (on open):
        EngineUnavailable: duckdb is not installed.
        RigError: the file is locked by another process or is not a DuckDB database.
    """

    def __init__(self, path: str | Path, read_only: bool = False) -> None:
        from rig.errors import RigError

        duckdb = _duckdb()
        self.path = Path(path)
        if read_only and not self.path.is_file():
            raise RigError(f"{self.path}: no monitoring database here (run rig monitor "
                           "ingest first)")
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.con = duckdb.connect(str(self.path), read_only=read_only)
        except duckdb.Error as exc:
            holder = _lock_holder(str(exc))
            if holder is not None:
                raise RigError(
                    f"{self.path}: another process holds this monitoring database ({holder}); "
                    "DuckDB lets one process write a file at a time: wait for it or stop it "
                    "(post calls to a running `rig monitor serve` instead), then run again"
                ) from None
            raise RigError(f"{self.path}: cannot open the monitoring database ({exc})") from exc
        if not read_only:
            self.con.execute(_DDL)
            self.con.execute("CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, "
                             "value VARCHAR)")
            self.con.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                             [str(SCHEMA_VERSION)])

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> MonitorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def fingerprint(self, call_id: str) -> tuple[str, str] | None:
        """(meta_sha256, audio_sha256) of a stored call, or None when it is not stored."""
        row = self.con.execute("SELECT meta_sha256, audio_sha256 FROM calls WHERE call_id = ?",
                               [call_id]).fetchone()
        return None if row is None else (row[0], row[1])

    def insert(self, record: CallRecord) -> bool:
        """Insert one call in one statement; False (and nothing written) when its call_id is
        already stored."""
        duckdb = _duckdb()
        values = asdict(record)
        placeholders = ", ".join("?" for _ in COLUMNS)
        try:  # a plain INSERT: the primary key refuses a second row (cheaper than OR IGNORE)
            self.con.execute(f"INSERT INTO calls ({', '.join(COLUMNS)}) VALUES ({placeholders})",
                             [values[c] for c in COLUMNS])
        except duckdb.ConstraintException:
            return False
        return True

    def count(self) -> int:
        return int(self.con.execute("SELECT count(*) FROM calls").fetchone()[0])

    def weeks(self) -> list[date]:
        """Mondays (UTC) of the weeks that hold calls, ascending."""
        rows = self.con.execute("SELECT DISTINCT CAST(date_trunc('week', ts) AS DATE) AS w "
                                "FROM calls ORDER BY w").fetchall()
        return [r[0] for r in rows]

    def weekly_aggregates(self, cfg: SegmentsConfig, first_week: date, last_week: date
                          ) -> pd.DataFrame:
        """Per (week_start, dimension, segment) counts and sums for the weeks from
        ``first_week`` to ``last_week`` (Mondays, inclusive), by
        :func:`rig.monitor.segments.weekly_aggregate_sql`."""
        return self.con.execute(weekly_aggregate_sql(cfg), [first_week, last_week]).df()

    def week_facts(self, week: date) -> dict:
        """Counts of one week that the report states beside the segments: calls, calls with a
        score, calls with a score and a decision, the signals versions and ASR models used."""
        start = datetime.combine(week, datetime.min.time())
        end = start + timedelta(days=7)
        q = ("SELECT count(*), count(score), "
             "count(CASE WHEN score IS NOT NULL AND decision IS NOT NULL THEN 1 END), "
             "list(DISTINCT signals_version), list(DISTINCT asr_model) "
             "FROM calls WHERE ts >= ? AND ts < ?")
        n, n_scored, n_decided, versions, models = self.con.execute(q, [start, end]).fetchone()
        return {"n_calls": int(n), "n_scored": int(n_scored), "n_decided": int(n_decided),
                "signals_versions": sorted(versions or []), "asr_models": sorted(models or [])}

    def table_digest(self) -> str:
        """A hash of the whole ``calls`` table's content (order-independent), to check that
        re-ingesting changed nothing."""
        cols = ", ".join(c for c in COLUMNS)
        row = self.con.execute(f"SELECT count(*), coalesce(sum(hash(({cols}))), 0) "
                               "FROM calls").fetchone()
        return f"{row[0]}:{row[1]}"
