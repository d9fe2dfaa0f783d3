"""Durable call storage: an append-only JSON-lines log, one line per finished call.

Each line is written, flushed and fsync'ed as its call finishes, so a crash loses at most the
call in flight. On load, a torn last line is ignored and a call id seen twice keeps its last
row (a retried failure supersedes the failure), so ``rows()`` never holds duplicate ids.
``calls.parquet`` is written from these rows.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pandas as pd


def _clean(v: object) -> object:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


class CallLog:
    """Append-only log of call rows at ``path`` (a ``.jsonl`` file)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._rows: dict[str, dict] = {}
        self.torn_lines = 0
        if self.path.exists():
            with self.path.open("r", encoding="utf-8") as f:
                for line in f:
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError:
                        self.torn_lines += 1
                        continue
                    self._rows[row["call_id"]] = row

    def __contains__(self, call_id: str) -> bool:
        return call_id in self._rows

    def get(self, call_id: str) -> dict | None:
        return self._rows.get(call_id)

    def append(self, row: dict) -> None:
        row = {k: _clean(v) for k, v in row.items()}
        line = json.dumps(row, default=str, separators=(",", ":"))
        # a torn previous line (crash mid-write) must not swallow this one
        needs_nl = False
        if self.path.exists() and self.path.stat().st_size > 0:
            with self.path.open("rb") as f:
                f.seek(-1, os.SEEK_END)
                needs_nl = f.read(1) != b"\n"
        with self.path.open("a", encoding="utf-8") as f:
            if needs_nl:
                f.write("\n")
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
        self._rows[row["call_id"]] = row

    def rows(self) -> list[dict]:
        return list(self._rows.values())


def write_parquet(rows: list[dict], path: str | Path) -> Path:
    """Write rows to Parquet atomically (temp file, then rename)."""
    path = Path(path)
    tmp = path.with_suffix(".parquet.partial")
    pd.DataFrame(rows).to_parquet(tmp, index=False)
    os.replace(tmp, path)
    return path
