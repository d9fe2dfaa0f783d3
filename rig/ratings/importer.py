"""``rig ratings import FILE``: ratings from any tool (CSV or JSON lines) checked against a
campaign's or replay's units and rubric, then appended to its ``ratings.jsonl`` at once.

Input, one rating per row (CSV header, or JSON object keys):

* ``call_id`` (a campaign's call; a replay's ``turn_key``) **or** ``answer_id`` (the
  answer's script), exactly one;
* ``rater`` (or ``rater_id``): who rated;
* per-criterion points: CSV columns ``points.<criterion_id>`` (left empty for a criterion
  another question has), or a JSON object ``"points": {"<criterion_id>": n}``; each from 0
  to the criterion's points; every criterion of the question's rubric, and no other;
* **or** ``total``: the 0-100 score alone;
* optional: ``rubric_version`` (must equal the question's), ``could_not_hear`` (true/false,
  1/0, yes/no), ``rated_at`` (the tool's time stamp).

Every row is checked before anything is written; the first problem stops the import with
a :class:`~rig.errors.ConfigError` naming the file, the line, the field and the value. A
rater who already rated a unit (in the file or in ``ratings.jsonl``) is refused, never
counted twice.
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
from collections.abc import Iterator
from pathlib import Path

from rig.config import DuplicateKeyError, loads_strict
from rig.errors import ConfigError
from rig.paths import write_text_atomic
from rig.ratings.model import RATINGS_FILE, Rating, read_ratings
from rig.ratings.units import Ratable, Unit, load_ratable

_KNOWN = {"call_id", "answer_id", "rater", "rater_id", "points", "total", "rubric_version",
          "could_not_hear", "rated_at"}
_TRUE, _FALSE = {"true", "1", "yes", "y"}, {"false", "0", "no", "n", ""}


def _records(path: Path) -> list[tuple[int, dict]]:
    """(line number, record) per rating; CSV ``points.<id>`` columns folded into
    ``points``, empty cells dropped."""
    text = path.read_text(encoding="utf-8-sig")
    out: list[tuple[int, dict]] = []
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
        for i, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = loads_strict(line)
            except (json.JSONDecodeError, DuplicateKeyError) as exc:
                raise ConfigError(path, f"line {i}", f"not a JSON object ({exc})") from None
            if not isinstance(obj, dict):
                raise ConfigError(path, f"line {i}", "not a JSON object", obj)
            out.append((i, obj))
        return out
    if path.suffix.lower() != ".csv":
        raise ConfigError(path, "FILE", "a ratings file is .csv or .jsonl", path.suffix, True)
    reader = csv.DictReader(text.splitlines())
    seen: dict[str, int] = {}
    for i, name in enumerate(reader.fieldnames or [], 1):
        name = name.strip()
        if name in seen:  # DictReader keeps the last cell of a name twice: refuse, as JSON
            raise ConfigError(path, "line 1", f"the header names {name!r} twice (columns "
                              f"{seen[name]} and {i}): which cells are meant?")
        seen[name] = i
    for row in reader:
        rec: dict = {}
        if None in row:
            raise ConfigError(path, f"line {reader.line_num}", f"{len(row[None])} cell(s) "
                              f"more than the header's {len(reader.fieldnames or [])}",
                              row[None], True)
        for k, v in row.items():
            if k is None or v is None or v.strip() == "":
                continue
            k = k.strip()
            if k.startswith("points."):
                rec.setdefault("points", {})[k[len("points."):]] = v.strip()
            else:
                rec[k] = v.strip()
        out.append((reader.line_num, rec))
    return out


def _number(path: Path, line: int, field: str, v: object) -> float:
    try:
        x = float(v) if not isinstance(v, bool) else math.nan
    except (TypeError, ValueError):
        x = math.nan
    if not math.isfinite(x):
        raise ConfigError(path, f"line {line}: {field}", "not a number", v, True)
    return x


def _flag(path: Path, line: int, v: object) -> bool:
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in _TRUE | _FALSE:
        return s in _TRUE
    raise ConfigError(path, f"line {line}: could_not_hear", "not true/false", v, True)


def _unit(path: Path, line: int, rec: dict, units: Ratable) -> Unit:
    has_call, has_answer = "call_id" in rec, "answer_id" in rec
    if has_call == has_answer:
        raise ConfigError(path, f"line {line}", "give exactly one of call_id or answer_id")
    field = "call_id" if has_call else "answer_id"
    uid = str(rec[field])
    table = units.calls if has_call else units.answers
    if uid not in table:
        where = f"{units.kind} {units.folder}"
        hint = (" (a replay's turns are rated by call_id = the turn_key)"
                if units.kind == "replay" and not has_call else "")
        raise ConfigError(path, f"line {line}: {field}", f"unknown in the {where}{hint}",
                          uid, True)
    return table[uid]


def parse_rating(path: Path, line: int, rec: dict, units: Ratable) -> Rating:
    """One record checked into a :class:`Rating`.

    Raises:
        ConfigError: an unknown field or id, a missing rater, points out of range, a rubric
            that does not match (criteria or ``rubric_version``), or neither points nor
            total (names file, line, field and value).
    """
    unknown = sorted(set(rec) - _KNOWN)
    if unknown:
        raise ConfigError(path, f"line {line}: {unknown[0]}", "unknown field (known: "
                          + ", ".join(sorted(_KNOWN)) + ", points.<criterion_id>)")
    unit = _unit(path, line, rec, units)
    q = units.questions[unit.question_id]
    if "rater" in rec and "rater_id" in rec:
        raise ConfigError(path, f"line {line}: rater_id", "give rater or rater_id, not both",
                          rec["rater_id"], True)
    rater = str(rec.get("rater", rec.get("rater_id", ""))).strip()
    if not rater:
        raise ConfigError(path, f"line {line}: rater", "missing: who rated")
    if "rubric_version" in rec:
        v = _number(path, line, "rubric_version", rec["rubric_version"])
        if v != q.rubric_version:
            raise ConfigError(path, f"line {line}: rubric_version", f"does not match question "
                              f"{q.question_id}'s rubric_version {q.rubric_version}",
                              rec["rubric_version"], True)
    points = rec.get("points")
    if points is not None and "total" in rec:
        raise ConfigError(path, f"line {line}: total", "give points per criterion or a total, "
                          "not both")
    if points is not None:
        if not isinstance(points, dict):
            raise ConfigError(path, f"line {line}: points", "not an object of criterion "
                              "points", points, True)
        want = {c.id: c.points for c in q.rubric}
        extra = sorted(set(points) - set(want))
        missing = sorted(set(want) - set(points))
        if extra or missing:
            raise ConfigError(path, f"line {line}: points", f"the rubric does not match "
                              f"question {q.question_id} (v{q.rubric_version}: "
                              f"{', '.join(want)}): " + "; ".join(
                                  x for x in (extra and f"unknown {extra}",
                                              missing and f"missing {missing}") if x))
        pts = {}
        for cid, maxp in want.items():
            x = _number(path, line, f"points.{cid}", points[cid])
            if not 0 <= x <= maxp:
                raise ConfigError(path, f"line {line}: points.{cid}", f"out of range 0-{maxp}",
                                  points[cid], True)
            pts[cid] = x
        score = sum(pts.values())
    elif "total" in rec:
        pts, score = None, _number(path, line, "total", rec["total"])
        if not 0 <= score <= 100:
            raise ConfigError(path, f"line {line}: total", "out of range 0-100", rec["total"],
                              True)
    else:
        raise ConfigError(path, f"line {line}", "no grade: give points.<criterion_id> for "
                          "every criterion or a total")
    return Rating(rater_id=rater, unit_kind=unit.unit_kind, unit_id=unit.unit_id,
                  answer_id=unit.answer_id, question_id=q.question_id,
                  rubric_version=q.rubric_version, rubric_hash=q.rubric_hash, score=score,
                  points=pts, could_not_hear=_flag(path, line, rec.get("could_not_hear", "")),
                  rated_at=str(rec["rated_at"]) if rec.get("rated_at") else None,
                  source=f"import:{path.name}")


class DuplicateRating(ConfigError):
    """A rater's second rating of one unit (in the file or already in ``ratings.jsonl``)."""


@contextlib.contextmanager
def ratings_lock(folder: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``folder/.ratings.lock`` (POSIX; elsewhere no lock), held
    across reading and replacing ``ratings.jsonl``, so that two processes writing at once
    (two ``rig ratings collect`` servers, or an import beside one) cannot lose a rating."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with (folder / ".ratings.lock").open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def append_ratings(folder: Path, new: list[Rating], where: list[str] | None = None) -> Path:
    """Write ``folder/ratings.jsonl`` as its old lines plus ``new``, in one atomic replace (a
    kill leaves the old file or the new one, never part of an import), under
    :func:`ratings_lock`; the file is read again under the lock, so a rating another process
    wrote meanwhile is kept and a duplicate of it refused. ``where``: per new rating, where
    it came from (for the error), e.g. ``"line 3"``.

    Raises:
        DuplicateRating: a rater already rated one of the units (nothing is written).
        ConfigError: ``ratings.jsonl`` is damaged (:func:`read_ratings`).
    """
    folder = Path(folder)
    path = folder / RATINGS_FILE
    with ratings_lock(folder):
        have = {r.key for r in read_ratings(folder)}
        for i, r in enumerate(new):
            if r.key in have:
                raise DuplicateRating(path, where[i] if where else "", f"rater "
                                      f"{r.rater_id!r} already rated {r.unit_kind} "
                                      f"{r.unit_id!r} (ratings.jsonl)")
        old = path.read_text(encoding="utf-8") if path.is_file() else ""
        if old and not old.endswith("\n"):
            old += "\n"
        lines = "".join(json.dumps(r.model_dump(mode="json"), separators=(",", ":")) + "\n"
                        for r in new)
        return write_text_atomic(path, old + lines)


def import_ratings(file: str | Path, folder: str | Path) -> list[Rating]:
    """Check every rating in ``file`` against ``folder``'s units and rubrics and append them
    to its ``ratings.jsonl``; returns the ratings added.

    Raises:
        ConfigError: the first problem found (nothing is written then): see
            :func:`parse_rating`, and a rater rating one unit twice.
    """
    file, folder = Path(file), Path(folder)
    if not file.is_file():
        raise ConfigError(file, "FILE", "no such file")
    units = load_ratable(folder)
    seen = {r.key: "ratings.jsonl" for r in read_ratings(folder)}
    new: list[Rating] = []
    lines: list[str] = []
    for line, rec in _records(file):
        r = parse_rating(file, line, rec, units)
        if r.key in seen:
            raise DuplicateRating(file, f"line {line}", f"rater {r.rater_id!r} already rated "
                              f"{r.unit_kind} {r.unit_id!r} ({seen[r.key]})")
        seen[r.key] = f"line {line}"
        new.append(r)
        lines.append(f"line {line}")
    if new:
        try:
            append_ratings(folder, new, lines)
        except DuplicateRating as exc:  # written by another process since the check
            raise DuplicateRating(file, exc.field, exc.problem) from None
    return new
