"""Durable call storage: an append-only JSON-lines log, one line per finished call.

Each line is written, flushed and fsync'ed as its call finishes, so a crash loses at most the
call in flight. On load, a torn last line (a crash mid-write: no line break after it, and not
a whole row) is ignored; the next append moves its bytes to ``<log>.torn`` before writing, so
the log never holds a torn line before a whole one. Any other damage is an error naming the
file and line (:class:`~rig.errors.RigError`): a line in the middle that is not JSON, a row
without a ``call_id``, bytes that are not UTF-8. A call id seen twice keeps its last row (a
retried failure supersedes the failure), so ``rows()`` never holds duplicate ids.
``calls.parquet`` is written from these rows.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from rig.config import DuplicateKeyError, loads_strict
from rig.errors import ConfigError, RigError
from rig.paths import (
    make_out_dir,
    remove_partials,
    write_text_atomic,  # noqa: F401 - importable from here
)


def _clean(v: object) -> object:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


class CallLog:
    """Append-only log of call rows at ``path`` (a ``.jsonl`` file), keyed by the column
    ``key`` (``call_id``; ``rig replay`` keys its rows by ``row_id``)."""

    def __init__(self, path: str | Path, key: str = "call_id") -> None:
        self.key = key
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._rows: dict[str, dict] = {}
        self.torn_lines = 0
        if self.path.exists():
            self._load()

    def _damaged(self, lineno: int, problem: str) -> RigError:
        return RigError(f"{self.path}: line {lineno}: {problem}. The log is damaged (rows are "
                        "never dropped silently): restore it, or remove that line to ask or "
                        "run its call again")

    def _load(self) -> None:
        data = self.path.read_bytes()
        lines = data.split(b"\n")
        offset = 0
        for i, raw in enumerate(lines):
            lineno, start = i + 1, offset
            offset += len(raw) + 1
            last = i == len(lines) - 1  # no line break after it: a torn write, or complete
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                if last:
                    self.torn_lines += 1
                    continue
                raise self._damaged(lineno, f"not UTF-8 text (byte {start + exc.start} of the "
                                            "file)") from exc
            try:
                row = loads_strict(text)
            except json.JSONDecodeError as exc:
                if last:
                    self.torn_lines += 1
                    continue
                raise self._damaged(lineno, f"not a JSON row ({exc.msg})") from exc
            except DuplicateKeyError as exc:
                raise self._damaged(lineno, str(exc)) from exc
            if not isinstance(row, dict) or not isinstance(row.get(self.key), str):
                raise self._damaged(lineno, f"a row without a {self.key}")
            self._rows[row[self.key]] = row

    def _repair_tail(self) -> bool:
        """Before an append: move a torn last line (no line break after it, not a JSON row)
        to ``<log>.torn``; return whether a line break must precede the next row (the last
        line is a whole row without one)."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return False
        with self.path.open("rb") as f:
            f.seek(-1, os.SEEK_END)
            if f.read(1) == b"\n":
                return False
        data = self.path.read_bytes()
        cut = data.rfind(b"\n") + 1
        tail = data[cut:]
        try:
            row = loads_strict(tail.decode("utf-8"))
            if isinstance(row, dict) and isinstance(row.get(self.key), str):
                return True
        except (UnicodeDecodeError, json.JSONDecodeError, DuplicateKeyError):
            pass
        if not tail.strip():
            return True
        with self.path.with_name(self.path.name + ".torn").open("ab") as f:
            f.write(tail + b"\n")
            f.flush()
            os.fsync(f.fileno())
        os.truncate(self.path, cut)
        return False

    def __contains__(self, call_id: str) -> bool:
        return call_id in self._rows

    def get(self, call_id: str) -> dict | None:
        return self._rows.get(call_id)

    def append(self, row: dict) -> None:
        row = {k: _clean(v) for k, v in row.items()}
        line = json.dumps(row, default=str, separators=(",", ":"))
        # a torn previous line (crash mid-write) must not swallow this one
        needs_nl = self._repair_tail()
        with self.path.open("a", encoding="utf-8") as f:
            if needs_nl:
                f.write("\n")
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
        self._rows[row[self.key]] = row

    def rows(self) -> list[dict]:
        return list(self._rows.values())




def write_parquet(rows: list[dict], path: str | Path,
                  types: Mapping[str, str] | None = None) -> Path:
    """Write rows to Parquet atomically (temp file, then rename).

    ``types`` maps column names to ``string``, ``float64``, ``int64`` or ``bool``: those columns
    are written with that Arrow type even when every value is null (pandas would write the
    type ``null``, which no other file's column can be read together with), and added as a
    null column when no row has them, so that every file has the same columns, in the order
    of ``types`` (other columns follow). A column whose
    values do not convert (a row from elsewhere) keeps the type pandas gives it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    tmp = path.with_suffix(".parquet.partial")
    df = pd.DataFrame(rows)
    if not types:
        df.to_parquet(tmp, index=False)
    else:
        # large_string: what pandas writes for text, so that files written before the types
        # were explicit have the same string type
        arrow = {"string": pa.large_string(), "float64": pa.float64(), "int64": pa.int64(),
                 "bool": pa.bool_()}
        table = pa.Table.from_pandas(df, preserve_index=False)
        for name, kind in types.items():
            i = table.schema.get_field_index(name)
            if i < 0:  # no row has it (every call failed before it): a typed null column
                table = table.append_column(pa.field(name, arrow[kind]),
                                            pa.nulls(len(table), arrow[kind]))
                continue
            want = arrow[kind]
            col = table.column(i)
            if col.type == want:
                continue
            try:
                col = col.cast(want)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                continue
            table = table.set_column(i, pa.field(name, want), col)
        # one column order, whichever columns the rows had: the typed columns in ``types``'s
        # order, then any others as they came
        names = table.schema.names
        table = table.select([n for n in types if n in names]
                             + [n for n in names if n not in types])
        pq.write_table(table, tmp)
    os.replace(tmp, path)
    return path


def open_campaign_folder(out: Path, transport: str) -> list[dict]:
    """Create (or reopen, to resume) the campaign folder ``out`` for a campaign over
    ``transport``: a killed run's temporary files are removed (its writers and workers are gone;
    this run's are not started yet), and a folder holding another transport's campaign is
    refused (call ids do not name the transport: two transports' rows would mix).

    Returns the ``runtime`` records of the folder's earlier runs, oldest first (campaign.json's
    ``runtime`` and its ``earlier_runs``; [] for a new folder): a resume keeps them in its own
    ``runtime.earlier_runs``, so a worker death an earlier run recorded is never overwritten.

    Raises:
        RigError: ``out`` cannot be an output folder (:func:`rig.paths.make_out_dir`).
        ConfigError: ``out/campaign.json`` is damaged, or names another transport."""
    make_out_dir(out)
    remove_partials(out)
    remove_partials(out / "audio")
    if not (out / "campaign.json").is_file():
        return []
    try:
        was = loads_strict((out / "campaign.json").read_text())
        transport_was = was.get("transport", "sim")
    except (UnicodeDecodeError, json.JSONDecodeError, DuplicateKeyError, AttributeError) as exc:
        raise ConfigError(out / "campaign.json", "", "not a JSON object (damaged, e.g. by "
                          "an older rig killed while writing it): delete it and rerun the "
                          "same command (the calls logged are kept)") from exc
    if transport_was != transport:
        raise ConfigError(out / "campaign.json", "transport", f"this folder holds a "
                          f"{transport_was!r} campaign; give --transport {transport} its own "
                          "--out", transport)
    runtime = was.get("runtime")
    if not isinstance(runtime, dict):
        return []
    earlier = runtime.pop("earlier_runs", None)
    return [*(earlier if isinstance(earlier, list) else []), runtime]
