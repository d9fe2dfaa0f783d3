"""Reading a published probe set as it is (``rig probe import --layout``).

Layouts (:data:`LAYOUTS`):

* ``hedging-benchmark``: a CSV, one row per question, with a question, a confident answer and
  a hedged answer (the layout of the hedging benchmark's released pairs, "I Think, Therefore
  I Am Under-Qualified?", 2025). Headers are matched case- and punctuation-blind against
  :data:`ALIASES` (``question``; ``confident``, ``confident_answer``, ...; ``hedged``,
  ``hedged_answer``, ...; optional ``id`` and ``category``); ``--column role=HEADER`` names
  any other header.
* ``rig-pairs``: rig's own probe layout (``probes/shibboleth/<category>.yaml``: ``category``
  and ``items`` with ``id``, ``question``, ``confident``, ``hedged``), one file or a folder,
  read **without** rig's equivalence checks (the import reports them per pair instead).

Each pair is an :class:`ImportedPair`: the reference twin (confident) and the treatment twin
(hedged), with where it came from (``source``: file and row or item).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rig.config import read_yaml, yaml_files
from rig.errors import ConfigError

Layout = Literal["hedging-benchmark", "rig-pairs"]
LAYOUTS: tuple[Layout, ...] = ("hedging-benchmark", "rig-pairs")
Role = Literal["id", "question", "category", "reference", "treatment"]
#: header spellings per role (after lower-casing and turning non-alphanumerics into "_")
ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "question_id", "qid", "item_id", "pair_id"),
    "question": ("question", "interview_question", "question_text", "prompt"),
    "category": ("category", "interview_category", "question_category"),
    "reference": ("confident", "confident_answer", "confident_response", "unhedged",
                  "unhedged_answer", "non_hedged_answer", "reference"),
    "treatment": ("hedged", "hedged_answer", "hedged_response", "treatment"),
}
REQUIRED: tuple[Role, ...] = ("question", "reference", "treatment")
#: ``--column`` role names as a user writes them
COLUMN_ROLES = {"id": "id", "question": "question", "category": "category",
                "confident": "reference", "hedged": "treatment"}


@dataclass(frozen=True)
class ImportedPair:
    """One published pair: ``reference`` (the confident twin) and ``treatment`` (the hedged
    twin) answering ``question``; ``category`` None when the set gives none."""
    pair_id: str
    question: str
    reference: str
    treatment: str
    category: str | None
    source: str


def _key(header: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", str(header).strip().lower()).strip("_")


def _columns(path: Path, headers: list[str], given: dict[str, str]) -> dict[str, str]:
    """role -> the CSV header holding it."""
    out: dict[str, str] = {}
    for role, header in given.items():
        if header not in headers:
            raise ConfigError(path, f"--column {role}", f"no such header; the file has "
                              f"{headers}", header)
        out[COLUMN_ROLES[role]] = header
    by_key = {_key(h): h for h in headers}
    for role, names in ALIASES.items():
        if role in out:
            continue
        hit = next((by_key[n] for n in names if n in by_key), None)
        if hit is not None:
            out[role] = hit
    missing = [r for r in REQUIRED if r not in out]
    if missing:
        spell = {"reference": "confident", "treatment": "hedged"}
        raise ConfigError(path, "header", "no column for " + ", ".join(
            f"{spell.get(r, r)} (one of {list(ALIASES[r])})" for r in missing)
            + f"; the file has {headers}. Name it with --column "
            f"{spell.get(missing[0], missing[0])}=HEADER")
    return out


#: the first bytes of files often given in place of a CSV, and what they are
_BINARY_MAGIC = ((b"PAR1", "a Parquet file", "pandas.read_parquet(FILE).to_csv(OUT, index=False)"),
                 (b"PK\x03\x04", "a ZIP archive (an .xlsx workbook is one)",
                  "save it from the spreadsheet as CSV (UTF-8)"),
                 (b"\xd0\xcf\x11\xe0", "an old Excel or Office file (.xls)",
                  "save it from the spreadsheet as CSV (UTF-8)"),
                 (b"SQLite format 3", "an SQLite database", "export the table as CSV"))


def _refuse_binary(path: Path) -> None:
    """Refuse a file that is not text before pandas reads it (pandas says only "Expected 2
    fields in line 3" of a Parquet file renamed ``.csv``).

    Raises:
        ConfigError: the file starts with a known binary signature (names what it looks like
            and how to write it as CSV), or holds a NUL byte in its first 8 KiB.
    """
    with open(path, "rb") as fh:
        head = fh.read(8192)
    for magic, what, how in _BINARY_MAGIC:
        if head.startswith(magic):
            raise ConfigError(path, "", f"not a CSV: it looks like {what} (it starts with "
                              f"{magic!r}); write it as CSV first ({how})")
    if b"\x00" in head:
        raise ConfigError(path, "", "not a CSV: it holds NUL bytes (a binary file, or text in "
                          "UTF-16); write it as CSV in UTF-8")


def read_benchmark_csv(path: str | Path, columns: dict[str, str] | None = None
                       ) -> list[ImportedPair]:
    """The pairs of a hedging-benchmark CSV (see the module docstring).

    Raises:
        ConfigError: no such file, not a CSV, a required column missing (the message lists
            the headers found), or a row whose question or answer is empty (names the row).
    """
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, "", "file not found")
    _refuse_binary(path)
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise ConfigError(path, "", f"not a readable CSV ({type(exc).__name__}: {exc})") \
            from exc
    cols = _columns(path, [str(c) for c in df.columns], columns or {})
    pairs, seen = [], set()
    for i, row in enumerate(df.to_dict("records")):
        line = i + 2  # the header is line 1
        vals = {r: " ".join(str(row[h]).split()) for r, h in cols.items()}
        for r in REQUIRED:
            if not vals[r]:
                raise ConfigError(path, f"line {line}: {cols[r]}", "empty")
        pid = vals.get("id") or f"row{line - 1:04d}"
        if pid in seen:
            raise ConfigError(path, f"line {line}: {cols.get('id', 'id')}", "id repeats", pid)
        seen.add(pid)
        pairs.append(ImportedPair(pid, vals["question"], vals["reference"], vals["treatment"],
                                  vals.get("category") or None, f"{path.name}:{line}"))
    if not pairs:
        raise ConfigError(path, "", "no rows")
    return pairs


def read_rig_pairs(path: str | Path) -> list[ImportedPair]:
    """The confident/hedged pairs of rig's probe layout (a YAML file or a folder of them;
    ``fewshot.yaml`` and ``hedges.yaml`` are skipped), without the equivalence checks.

    Raises:
        ConfigError: no such file or folder, or an item without ``id``, ``question``,
            ``confident`` or ``hedged`` (names the file and the item).
    """
    path = Path(path)
    if path.is_dir():
        files = [p for p in yaml_files(path) if p.name not in ("fewshot.yaml", "hedges.yaml")]
    elif path.is_file():
        files = [path]
    else:
        raise ConfigError(path, "", "no such file or folder")
    pairs, seen = [], set()
    for f in files:
        data = read_yaml(f)
        items = data.get("items") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise ConfigError(f, "items", "expected a list of items (rig's probe layout)")
        for i, it in enumerate(items):
            if not isinstance(it, dict):
                raise ConfigError(f, f"items[{i}]", "expected a mapping", it)
            for k in ("id", "question", "confident", "hedged"):
                if not isinstance(it.get(k), str) or not it[k].strip():
                    raise ConfigError(f, f"items[{i}].{k}", "missing or empty", it.get(k))
            if it["id"] in seen:
                raise ConfigError(f, f"items[{i}].id", "id repeats", it["id"])
            seen.add(it["id"])
            pairs.append(ImportedPair(it["id"], " ".join(it["question"].split()),
                                      " ".join(it["confident"].split()),
                                      " ".join(it["hedged"].split()),
                                      data.get("category"), f"{f.name}:items[{i}]"))
    if not pairs:
        raise ConfigError(path, "", "no items")
    return pairs


def read_pairs(path: str | Path, layout: str, columns: dict[str, str] | None = None
               ) -> list[ImportedPair]:
    """The pairs of ``path`` in ``layout`` (:data:`LAYOUTS`).

    Raises:
        ConfigError: an unknown layout, or the layout's reader's errors."""
    if layout == "hedging-benchmark":
        return read_benchmark_csv(path, columns)
    if layout == "rig-pairs":
        if columns:
            raise ConfigError("probe", "--column", "only the hedging-benchmark layout takes "
                              "--column", sorted(columns))
        return read_rig_pairs(path)
    raise ConfigError("probe", "--layout", f"unknown layout; use one of {list(LAYOUTS)}",
                      layout)
