"""Privacy: what leaves the machine, and in what form.

* Recordings and transcripts stay local: the recordings where they were ingested from (or the
  server's recordings folder), the transcripts in the DuckDB file. Neither is in any output.
* Reports (``summary.json``, ``alerts.json``, ``report.html``) hold aggregates per segment
  only; a segment under ``privacy.min_cell`` calls shows its count only.
* ``rig monitor export`` writes one row per call of **signals and outcomes** for analysis
  elsewhere, with the call id replaced by a keyed hash: HMAC-SHA256 (RFC 2104) of the call id
  under a secret key from the environment variable named by ``privacy.hash_key_env``
  (default ``RIG_MONITOR_HASH_KEY``), cut to 16 hex digits (64 bits). Without the key the
  hash cannot be reversed by trying likely call ids; with it, the key holder can find a call
  again. No timestamp finer than the week, no transcript, no path, no metadata beyond the
  segment columns is exported.
* No step infers a protected trait (race, sex, age, national origin, disability) from the
  voice or the words: the segments are measured line and audio conditions plus the
  interview's context (employer, job family, interview language).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path

from rig.errors import RigError
from rig.monitor.config import MonitorConfig
from rig.monitor.store import MonitorStore

MIN_KEY_CHARS = 16
#: Columns of an export (``call_key`` is the keyed hash of ``call_id``).
EXPORT_COLUMNS: tuple[str, ...] = (
    "week_start", "employer", "job_family", "language", "channel", "codec", "channel_class",
    "snr_db", "asr_avg_logprob", "asr_no_speech_prob", "pace_wpm", "truncation_events",
    "repeat_requests", "duration_s", "speech_s", "score", "decision", "signals_version")


def hash_key(config: MonitorConfig) -> bytes:
    """The export key from the environment.

    Raises:
        RigError: the variable is unset or shorter than 16 characters (its value is never
            shown).
    """
    name = config.privacy.hash_key_env
    key = os.environ.get(name, "")
    if len(key) < MIN_KEY_CHARS:
        raise RigError(f"set the environment variable {name} to a secret of at least "
                       f"{MIN_KEY_CHARS} characters: exports hash call ids with it")
    return key.encode()


def call_key(call_id: str, key: bytes) -> str:
    """HMAC-SHA256 of ``call_id`` under ``key``, first 16 hex digits."""
    return hmac.new(key, call_id.encode("utf-8"), hashlib.sha256).hexdigest()[:16]


def export_calls(store: MonitorStore, out: str | Path, config: MonitorConfig,
                 batch_rows: int = 50_000) -> int:
    """Write the per-call signals with hashed call ids to a Parquet file, streamed in
    batches (``out`` is written to a temporary name and renamed). Returns the row count.

    Raises:
        RigError: no key (see :func:`hash_key`).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    key = hash_key(config)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    cols = ", ".join(c if c != "week_start" else
                     "CAST(date_trunc('week', ts) AS DATE) AS week_start"
                     for c in EXPORT_COLUMNS)
    reader = store.con.sql(f"SELECT call_id, {cols} FROM calls ORDER BY ts, call_id"
                           ).to_arrow_reader(batch_rows)
    n = 0
    writer = None
    try:
        for batch in reader:
            ids = batch.column(0).to_pylist()
            keys = pa.array([call_key(i, key) for i in ids], pa.string())
            table = pa.Table.from_batches([batch]).drop_columns(["call_id"])
            table = table.add_column(0, "call_key", keys)
            if writer is None:
                writer = pq.ParquetWriter(str(tmp), table.schema)
            writer.write_table(table)
            n += table.num_rows
    finally:
        if writer is not None:
            writer.close()
    if writer is None:  # no rows: an empty file with the columns
        empty = store.con.sql(f"SELECT {cols} FROM calls LIMIT 0").to_arrow_table()
        empty = empty.add_column(0, "call_key", pa.array([], pa.string()))
        pq.write_table(empty, str(tmp))
    tmp.replace(out)
    return n
