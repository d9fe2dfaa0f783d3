"""External scores from a file: the import of a CSV, Parquet or JSONL file of scores, and their
join onto a campaign's calls.

:func:`import_scores` reads a CSV or Parquet file with at least ``call_id`` and ``score``
columns, or a JSONL file of the same records, and also the logs rig writes
(:class:`rig.calls.interviewer.results.ResultStore`): the webhook's ``results.jsonl`` (the last
record per call id wins, as on ``GET``) and the reference interviewer's own ``results.jsonl`` (its
records hold the scores inside ``questions``; they are mapped with
:func:`interviewer_record_score`, as a real-transport campaign maps them onto its rows).

:func:`match_scores` joins returned scores onto a campaign's call rows and lists the calls with
no returned score (they are kept, with ``external_score`` null, never dropped).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from rig.calls.interviewer.results import LOG_FIELDS, ExternalScore, _jsonl_records
from rig.errors import ConfigError


def interviewer_record_score(rec: dict) -> dict:
    """An external-score record from one record of the reference interviewer's own
    ``results.jsonl`` (an :class:`~rig.calls.interviewer.results.InterviewResult`), mapped as a
    real-transport campaign maps a result onto its row (:class:`rig.calls.run.caller.
    TransportCaller`): a result with ``status`` ``ok`` and questions gives its last question's
    ``score`` and ``transcript``; any other status is no score returned. The interviewer
    decides nothing itself (the campaign applies the question's cutoff), so ``decision`` is
    None; ``interviewer_status`` and ``interviewer_error`` are kept."""
    qs = rec.get("questions") or []
    ok = rec.get("status") == "ok" and bool(qs) and isinstance(qs[-1], dict)
    last = qs[-1] if ok else {}
    return {"call_id": rec.get("call_id"), "score": last.get("score"),
            "transcript": last.get("transcript"), "decision": None,
            "interviewer_status": rec.get("status"), "interviewer_error": rec.get("error"),
            **{k: rec[k] for k in ("attempt_id", *LOG_FIELDS) if k in rec}}


def _is_log_record(rec: dict) -> bool:
    """A record written by rig's :class:`~rig.calls.interviewer.results.ResultStore` (webhook or
    reference interviewer)."""
    return (any(k in rec for k in LOG_FIELDS) or rec.get("source") == "webhook"
            or "questions" in rec)


def _validate(path: Path, where: str, rec: dict) -> ExternalScore:
    try:
        return ExternalScore.model_validate(rec)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err["loc"]) or "record"
        raise ConfigError(path, f"{where}: {field}", err["msg"], rec.get(field),
                          has_value=field in rec) from None


def _read_jsonl(path: Path) -> list[ExternalScore]:
    records = _jsonl_records(path)
    if not records:
        raise ConfigError(path, "", "no records (an empty file)")
    log = all(_is_log_record(r) for _, r in records)
    if log and all(isinstance(r.get("received_seq"), int) for _, r in records):
        records.sort(key=lambda nr: nr[1]["received_seq"])  # stable: line order on ties
    # the reference interviewer's own records hold their scores under ``questions``; a
    # webhook record is the external interviewer's score as posted, whatever else it holds
    out = [_validate(path, f"line {n}",
                     interviewer_record_score(r)
                     if "questions" in r and r.get("source") != "webhook" else r)
           for n, r in records]
    if not log:
        return out
    last: dict[str, ExternalScore] = {}
    for s in out:  # a time-ordered log: the last write for a call id wins (a correction)
        last.pop(s.call_id, None)
        last[s.call_id] = s
    return list(last.values())


def import_scores(path: str | Path) -> list[ExternalScore]:
    """Read external scores from a CSV, Parquet or JSONL file (``call_id`` and ``score``
    at least; more columns are kept).

    A JSONL file written by rig (records stamped by
    :class:`~rig.calls.interviewer.results.ResultStore`: the webhook's ``results.jsonl``, or the
    reference interviewer's own, whose records are mapped with :func:`interviewer_record_score`) is
    a time-ordered log: one score per call id comes back, the last written (a correction wins,
    and a last record with no score means none was returned). Any other file has no order, so
    its duplicates are all returned and :func:`match_scores` judges them.

    Raises:
        ConfigError: the file is missing, empty, of another type, lacks a column, or a row
            or line is invalid (names the file, the row or line and the field).
    """
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, "", "scores file not found")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return _read_jsonl(path)
    try:
        if suffix == ".csv":
            df = pd.read_csv(path, dtype={"call_id": str})
        elif suffix in (".parquet", ".pq"):
            df = pd.read_parquet(path)
        else:
            raise ConfigError(path, "", "scores must be a .csv, .parquet or .jsonl file",
                              path.suffix)
    except pd.errors.EmptyDataError:
        raise ConfigError(path, "", "empty file (expected a header row with call_id and "
                          "score)") from None
    except (ValueError, OSError, pd.errors.ParserError) as exc:  # unreadable, corrupt
        raise ConfigError(path, "", f"cannot read: {exc}") from exc
    for col in ("call_id", "score"):
        if col not in df.columns:
            raise ConfigError(path, col, "missing column", list(df.columns))
    return [_validate(path, f"row {i + 1}",
                      {k: (None if isinstance(v, float) and v != v else v)
                       for k, v in rec.items()})
            for i, rec in enumerate(df.to_dict("records"))]


def match_scores(call_ids: Sequence[str], scores: Sequence[ExternalScore],
                 source: object = "scores"
                 ) -> tuple[dict[str, ExternalScore], list[str], list[str]]:
    """(scores by call id, call ids with no score returned, returned ids not in the campaign).

    A row with an empty score is not a returned score: its call is listed as missing unless
    another row returns a score for it (that score is taken). The same score returned twice
    is one return.

    Raises:
        ConfigError: a call id is returned twice with different scores or decisions (which
            one is right cannot be told in a file with no order; the message names
            ``source``, the call id and both values).
    """
    by_id: dict[str, ExternalScore] = {}
    for s in scores:
        if s.score is None:
            continue
        prev = by_id.get(s.call_id)
        if prev is not None and prev.score != s.score:
            raise ConfigError(source, "call_id", "returned twice with different scores "
                              f"({prev.score:g} and {s.score:g})", s.call_id)
        if prev is not None and prev.decision != s.decision:
            raise ConfigError(source, "call_id", "returned twice with different decisions "
                              f"({prev.decision} and {s.decision})", s.call_id)
        by_id[s.call_id] = s
    wanted = list(dict.fromkeys(call_ids))
    missing = [c for c in wanted if c not in by_id]
    unknown = sorted(set(by_id) - set(wanted))
    return {c: by_id[c] for c in wanted if c in by_id}, missing, unknown
