"""Reading and checking call rows (a campaign's ``calls.parquet`` or a user's CSV export).

Columns have the names of a campaign's ``calls.parquet``: ``answer_id``, ``question_id``,
``tier``, ``profile_id``, ``repeat``, ``score``, ``parse_status``, ``cutoff``, ``decision``,
``pipeline_version`` and any segment columns. A user's own export can map its names onto these
with ``columns={"score": "their_score_column", ...}``.

A row is a **parse failure** when its score is missing (NaN) or its ``parse_status`` (when
that column exists) is anything other than ``"ok"``. Parse failures are left out of every
statistic and counted, never scored as 0 (MEASUREMENT.md, "Score").

Bad input raises :class:`RowsError`, which names the file (or ``rows`` for a DataFrame), the
column and the offending value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from rig.errors import ConfigError

ADVANCE, REJECT = "advance", "reject"
_TRUE = {"advance", "advanced", "true", "1", "yes", "pass"}
_FALSE = {"reject", "rejected", "false", "0", "no", "fail"}


class RowsError(ConfigError, ValueError):
    """Rows that cannot be used. ``str(err)`` reads ``FILE: COLUMN: problem (got VALUE)``."""

    def __init__(self, path: object, field: str, problem: str, value: object = None,
                 has_value: bool = False) -> None:
        if isinstance(value, np.generic):
            value = value.item()
        super().__init__(path, field, problem, value, has_value)


def source_of(df: pd.DataFrame) -> str:
    """The file the rows came from (``df.attrs["source"]``), or ``"rows"``."""
    return str(df.attrs.get("source", "rows"))


def read_rows(path: str | Path, columns: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Read call rows from a ``.csv`` or ``.parquet`` file, renaming mapped columns.

    ``columns`` maps rig's column name to the file's (``{"score": "total"}`` reads the file's
    ``total`` column as ``score``). The returned frame's ``attrs["source"]`` is the path, so
    later errors name the file.

    In a CSV only an empty cell or ``NaN`` is missing; a text such as ``N/A`` stays text (a score
    column holding it is refused by :func:`numeric_column`, naming the row and value).

    Raises:
        RowsError: the file is missing, has another extension, is a Parquet file named
            ``.csv`` (or a text file named ``.parquet``), is empty or only a header, is not
            UTF-8, names a column twice, cannot be read, or lacks a mapped column.
    """
    path = Path(path)
    if not path.is_file():
        raise RowsError(path, "", "file not found")
    suffix = path.suffix.lower()
    check_table_format(path)
    try:
        if suffix == ".csv":
            # only an empty cell or a float's NaN is missing: pandas' default would also read
            # "N/A", "NA", "null" as missing, so a text score would pass as a scorer's
            # unparsed reply and a segment value "NA" (Namibia) would vanish
            check_csv_header(path)
            df = pd.read_csv(path, keep_default_na=False, na_values=list(CSV_MISSING))
        elif suffix in (".parquet", ".pq"):
            check_parquet_columns(path)
            df = pd.read_parquet(path)
        else:
            raise RowsError(path, "", "expected a .csv or .parquet file", suffix, has_value=True)
    except RowsError:
        raise
    except UnicodeDecodeError as exc:
        raise RowsError(path, "", f"not UTF-8 text (a byte "
                        f"{exc.object[exc.start]:#04x} no UTF-8 text holds): save it as "
                        f"UTF-8") from exc
    except pd.errors.EmptyDataError as exc:
        raise RowsError(path, "", "the file is empty: no header row") from exc
    except Exception as exc:  # pandas/pyarrow raise many types for unreadable files
        raise RowsError(path, "", f"cannot read the file: {exc}") from exc
    if columns:
        missing = [theirs for theirs in columns.values() if theirs not in df.columns]
        if missing:
            raise RowsError(path, missing[0], f"mapped column not in the file; it has "
                            f"{list(map(str, df.columns))}", missing[0], has_value=True)
        df = df.rename(columns={theirs: ours for ours, theirs in columns.items()})
    if df.empty:
        raise RowsError(path, "", f"no rows: the file has a header "
                        f"({', '.join(map(str, df.columns[:8]))}) and no call rows")
    df.attrs["source"] = str(path)
    df = drop_fault_excluded(df)
    df.attrs["source"] = str(path)
    return df


def drop_fault_excluded(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` without the calls a campaign kept out of the scorer as faults (a looped
    transcript, an answer the VAD missed, an empty reference: :mod:`rig.campaign.faults`,
    its logged ``fault_excluded`` or, on older rows, the default policy applied to their
    suspect reasons), as ``rig campaign summarize`` leaves them out. An excluded call has no
    score because nothing was graded, not because a reply failed to parse: it is counted in
    ``attrs["n_fault_excluded"]`` (their (answer_id, profile_id) in
    ``attrs["fault_excluded_keys"]``), never as a parse failure. Rows with neither the column
    nor the suspect reasons (a user's own export) are kept whole."""
    if "fault_excluded" not in df.columns and not {"asr_suspect_reason",
                                                   "turn_suspect_reason"} & set(df.columns):
        df.attrs["n_fault_excluded"], df.attrs["fault_excluded_keys"] = 0, []
        return df
    from rig.campaign.faults import excluded_mask

    ok = df["status"] == "ok" if "status" in df.columns else pd.Series(True, index=df.index)
    gone = ok & excluded_mask(df)
    out = df[~gone].copy()
    out.attrs["n_fault_excluded"] = len(df) - len(out)
    keys = [c for c in ("answer_id", "profile_id") if c in df.columns]  # for the gate
    out.attrs["fault_excluded_keys"] = sorted(map(tuple, df.loc[gone, keys].astype(str)
                                                  .drop_duplicates().to_numpy().tolist()))
    return out


#: the CSV cells read as missing: empty, or a float's not-a-number as Python and R write it
CSV_MISSING = ("", "NaN", "nan")

#: the first bytes of every Parquet file
PARQUET_MAGIC = b"PAR1"


def check_table_format(path: Path) -> None:
    """Refuse a file whose contents are the other table format than its name says.

    Raises:
        RowsError: a ``.csv`` file starting with the Parquet magic bytes ``PAR1`` ("name it
            .parquet"), or a ``.parquet``/``.pq`` file without them that reads as UTF-8 text
            ("name it .csv" when it has a comma in its first line)."""
    suffix = path.suffix.lower()
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return  # read_rows names the problem
    if suffix == ".csv" and head.startswith(PARQUET_MAGIC):
        raise RowsError(path, "", "this is a Parquet file (it starts with PAR1), not a CSV: "
                        "name it .parquet")
    if suffix in (".parquet", ".pq") and head and not head.startswith(PARQUET_MAGIC):
        try:
            first = head.decode("utf-8").splitlines()[0]
        except (UnicodeDecodeError, IndexError):
            first = ""
        what = "text with commas (a CSV?): name it .csv" if "," in first else \
            "no Parquet magic bytes PAR1 at its start"
        raise RowsError(path, "", f"not a Parquet file: {what}")


def check_csv_header(path: Path) -> None:
    """Refuse a CSV whose header names a column twice (pandas renames the second ``score``
    ``score.1`` silently). Raises RowsError naming the column and its two positions."""
    header = pd.read_csv(path, header=None, nrows=1, dtype=str, keep_default_na=False)
    _refuse_repeats(path, header.iloc[0].tolist() if len(header) else [], "header")


def check_parquet_columns(path: Path) -> None:
    """Refuse a Parquet file whose schema names a column twice (pyarrow's error lists the
    whole schema). Raises RowsError naming the column and its two positions (1-based)."""
    import pyarrow.parquet as pq
    _refuse_repeats(path, pq.read_schema(path).names, "schema")


def _refuse_repeats(path: Path, names: Iterable[object], where: str) -> None:
    seen: dict[str, int] = {}
    for i, name in enumerate(names, start=1):
        name = str(name).strip()
        if name in seen:
            raise RowsError(path, name, f"column named twice in the {where} (columns "
                            f"{seen[name]} and {i}): rename or drop one", name, has_value=True)
        seen[name] = i


def parse_column_map(items: Iterable[str], source: str = "--col") -> dict[str, str]:
    """Parse ``["score=total", "profile_id=condition"]`` into ``{"score": "total", ...}``.

    Raises:
        RowsError: an item without ``=`` or with an empty side.
    """
    out: dict[str, str] = {}
    for item in items:
        ours, sep, theirs = item.partition("=")
        if not sep or not ours.strip() or not theirs.strip():
            raise RowsError(source, "", "expected RIG_NAME=FILE_NAME", item, has_value=True)
        out[ours.strip()] = theirs.strip()
    return out


def require_columns(df: pd.DataFrame, columns: Iterable[str], why: str = "") -> None:
    """Raise :class:`RowsError` naming the first of ``columns`` that ``df`` lacks."""
    for col in columns:
        if col not in df.columns:
            extra = f" ({why})" if why else ""
            raise RowsError(source_of(df), col,
                            f"column missing{extra}; the rows have {list(map(str, df.columns))}")


#: texts that people write for "no value" (pandas' defaults, among others)
_MISSING_WORDS = {"n/a", "na", "nan", "null", "none", "-", "--", "#n/a", "missing", "?"}


def numeric_column(df: pd.DataFrame, col: str) -> pd.Series:
    """``df[col]`` as floats; empty cells become NaN.

    Raises:
        RowsError: a cell that is not a number (names the column, the row, the value and how
            many such cells; a text such as ``N/A`` is named as a text in the input, not a
            scorer's unparsed reply), or an infinite value.
    """
    raw = df[col]
    if pd.api.types.is_bool_dtype(raw):
        raise RowsError(source_of(df), col, "expected numbers, found booleans",
                        raw.iloc[0] if len(raw) else None, has_value=True)
    if pd.api.types.is_numeric_dtype(raw):
        values = raw.astype(float)
        bad = pd.Series(False, index=raw.index)
    else:
        values = pd.to_numeric(raw, errors="coerce").astype(float)
        bad = values.isna() & raw.notna() & (raw.astype(str).str.strip() != "")
    if bad.any():
        i = bad.to_numpy().nonzero()[0][0]
        n = int(bad.sum())
        more = f" ({n} such cells)" if n > 1 else ""
        text = str(raw.iloc[i]).strip().lower()
        hint = ("; a text in the input, not a scorer's reply: leave the cell empty where the "
                "value is missing" if text in _MISSING_WORDS else "")
        raise RowsError(source_of(df), col, f"not a number in row {i + 1}{more}{hint}",
                        raw.iloc[i], has_value=True)
    inf = np.isinf(values.to_numpy())
    if inf.any():
        i = inf.nonzero()[0][0]
        raise RowsError(source_of(df), col, f"infinite value in row {i + 1}", raw.iloc[i],
                        has_value=True)
    return values


def parse_failures(df: pd.DataFrame, score_col: str = "score") -> pd.Series:
    """Boolean mask of parse failures: score NaN, or ``parse_status`` present and not "ok"
    (case and surrounding spaces ignored; an empty status leaves it to the score).

    Raises:
        RowsError: the score column is missing or holds a non-number.
    """
    require_columns(df, [score_col])
    failed = numeric_column(df, score_col).isna()
    if "parse_status" in df.columns:
        not_ok = _classify(df["parse_status"],
                           lambda v: float(str(v).strip().lower() != "ok"))
        failed = failed | (not_ok == 1.0)  # an empty status leaves the score to decide
    return failed.astype(bool)


def failure_reason(row: dict) -> str:
    """Why a call has no usable score, in a few words, from its row: a failed call's error
    (its stage, without the exception's name and details: "telephony: the interviewer did not
    hear the answer"), else its scorer's parse status ("the scorer reply did not parse
    (invalid_json)", "not scored")."""
    import re

    status, error = row.get("status"), row.get("error")
    if isinstance(error, str) and error.strip() and status not in (None, "ok"):
        text = re.sub(r"^(\w+: )?[A-Z]\w*(Error|Exception|Hear|Route|Timeout)\w*: ", r"\1",
                      error.strip())
        text = re.split(r" \(|; |\n", text, maxsplit=1)[0].strip()
        return text[:100] or "the call failed"
    ps = row.get("parse_status")
    if isinstance(ps, str) and ps.strip().lower() == "not_scored":
        return "not scored"
    if isinstance(ps, str) and ps.strip() and ps.strip().lower() != "ok":
        return f"the scorer reply did not parse ({ps.strip()})"
    return "no score"


def _classify(raw: pd.Series, classify) -> np.ndarray:
    """Apply ``classify`` to each distinct value of ``raw`` once; return the per-row results."""
    codes, uniques = pd.factorize(raw, use_na_sentinel=True)
    table = np.array([classify(u) for u in uniques] + [np.nan], dtype=float)
    return table[codes]  # code -1 (missing) picks the trailing NaN


def _decision_value(v: object) -> float:
    if isinstance(v, (bool, np.bool_)):
        return float(v)
    if isinstance(v, (int, float, np.integer, np.floating)):
        return float(v) if v in (0, 1) else -1.0
    text = str(v).strip().lower()
    if text in _TRUE:
        return 1.0
    if text in _FALSE:
        return 0.0
    return np.nan if text in ("", "nan", "none", "<na>") else -1.0


def decision_column(df: pd.DataFrame, col: str = "decision") -> pd.Series:
    """The decision column as a float Series: 1.0 advance, 0.0 reject, NaN missing.

    Accepts "advance"/"reject" (any case; also advanced/rejected, pass/fail, yes/no), booleans
    (True = advance) and 1/0.

    Raises:
        RowsError: the column is missing or holds another value (names row and value).
    """
    require_columns(df, [col])
    raw = df[col]
    values = _classify(raw, _decision_value)
    bad = values == -1.0
    if bad.any():
        i = bad.nonzero()[0][0]
        raise RowsError(source_of(df), col,
                        f"row {i + 1}: expected 'advance' or 'reject' (or true/false, 1/0)",
                        raw.iloc[i], has_value=True)
    return pd.Series(values, index=df.index, name=col)


def label_column(df: pd.DataFrame, col: str) -> pd.Series:
    """``df[col]`` as strings (for ids such as ``answer_id`` and ``profile_id``).

    Raises:
        RowsError: the column is missing or has an empty cell (names the row).
    """
    require_columns(df, [col])
    raw = df[col]
    missing = raw.isna()
    if missing.any():
        i = missing.to_numpy().nonzero()[0][0]
        raise RowsError(source_of(df), col, f"empty cell in row {i + 1}", None, has_value=True)
    return raw.astype(str)


def standardise(rows: pd.DataFrame, score_col: str = "score") -> pd.DataFrame:
    """Checked copy of call rows with rig's names and types, ready for the statistics.

    Columns: ``answer_id``, ``profile_id`` (str), ``score`` (float points, NaN for a parse
    failure), ``failed`` (bool), and when present in ``rows``: ``repeat`` (float),
    ``question_id`` (str), ``tier`` (lower case), ``transcript`` (str), ``cutoff`` (float
    points) and ``advance``
    (1.0 advance, 0.0 reject, from ``decision``). A row whose ``parse_status`` is not "ok" has
    its score set to NaN, so it is never used.

    Raises:
        RowsError: a required column missing (``answer_id``, ``profile_id``, ``score_col``), a
            non-number in a numeric column, an unknown decision, an empty id, the same
            (answer, profile, repeat) scored twice (a failed attempt beside a scored one is
            fine), or an answer whose rows give different cutoffs.
    """
    src = source_of(rows)
    require_columns(rows, ["answer_id", "profile_id", score_col])
    out = pd.DataFrame(index=rows.index)
    out["answer_id"] = label_column(rows, "answer_id")
    out["profile_id"] = label_column(rows, "profile_id")
    failed = parse_failures(rows, score_col)
    out["score"] = numeric_column(rows, score_col).where(~failed)
    out["failed"] = failed
    cols = [c for c in ("status", "error", "parse_status") if c in rows.columns]
    out["fail_reason"] = pd.Series(
        [failure_reason(r) if f else None for r, f in
         zip(rows[cols].to_dict("records"), failed, strict=True)], index=rows.index,
        dtype=object)
    if "repeat" in rows.columns:
        out["repeat"] = numeric_column(rows, "repeat")
    if "question_id" in rows.columns:
        out["question_id"] = rows["question_id"].astype("string")
    if "tier" in rows.columns:
        out["tier"] = rows["tier"].astype("string").str.strip().str.lower()
    if "transcript" in rows.columns:  # tells identical repeats apart (rig.stats.noise)
        out["transcript"] = rows["transcript"].astype("string")
    if "cutoff" in rows.columns:
        out["cutoff"] = numeric_column(rows, "cutoff")
        spread = out.dropna(subset=["cutoff"]).groupby("answer_id")["cutoff"].nunique()
        if (spread > 1).any():
            aid = spread[spread > 1].index[0]
            vals = sorted(out.loc[out["answer_id"] == aid, "cutoff"].dropna().unique())
            raise RowsError(src, "cutoff", f"answer {aid!r} has rows with different cutoffs",
                            vals, has_value=True)
    has_cutoff = "cutoff" in out.columns and bool(out["cutoff"].notna().any())
    if "decision" in rows.columns and not has_cutoff:
        # decisions are only read when there is no cutoff to decide on (see paired.py)
        out["advance"] = decision_column(rows, "decision")
    if "repeat" in out.columns:
        keys = ["answer_id", "profile_id", "repeat"]
        scored = out[~out["failed"] & out["repeat"].notna()]
        dup = scored.duplicated(subset=keys, keep=False)
        if dup.any():
            first = scored[dup].iloc[0]
            raise RowsError(src, "repeat", f"the same call appears twice: answer "
                            f"{first['answer_id']!r}, profile {first['profile_id']!r}",
                            first["repeat"], has_value=True)
    out.attrs["source"] = src
    return out
