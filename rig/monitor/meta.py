"""Call metadata: the fields a production call brings, validated, and where they come from.

One record per call, from a JSON sidecar beside the recording (``call-017.wav`` +
``call-017.json``), one line of a JSONL manifest, one row of a CSV manifest, or the
``metadata`` object of a ``POST /v1/calls`` body. Fields:

=================  ========================================================================
``call_id``        required, 1-200 printable characters; the key ingest is idempotent on
``timestamp``      required, ISO 8601 with a zone (``Z`` or ``+01:00``); one without a zone
                   is refused (its week depends on a guess of the exporter's clock). A
                   number is Unix time (UTC by definition; over 2e10: milliseconds)
``employer``       required
``job_family``     required
``score``          required, a number or null (null: the interviewer produced no score);
                   within the config's ``score_range`` when it declares one. In JSON a
                   string (``"71.5"``) is refused; only a CSV row holds it as text
``decision``       required: ``advance``/``reject`` (also true/false, yes/no, 1/0) or null
``language``       optional, e.g. ``en``; else Whisper's detection (multilingual model) or
                   ``unknown``
``channel``        optional, e.g. ``pstn``, ``mobile``, ``voip`` (as the telephony side
                   knows it)
``codec``          optional, e.g. ``mulaw``, ``alaw``, ``amr-nb``, ``opus``, ``g722``
``layout``         optional: ``mono``, ``candidate_left``, ``candidate_right`` (stereo
                   recordings: which channel is the candidate; default from the config)
``repeat_requests`` optional integer >= 0: the interviewer system's own count, used instead
                   of the transcript's when given
``audio``          the recording's file name, relative to the metadata's folder (required in
                   a manifest; a sidecar defaults to its own name with the audio suffix)
=================  ========================================================================

Any other field is ignored and **not stored** (a candidate's name or phone number in an
export from the interviewer system never reaches the monitoring database).
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from rig.config import DuplicateKeyError, loads_strict, validation_error
from rig.errors import ConfigError

#: Recordings read: WAV (any PCM, float or G.711), raw mu-law, and FLAC (lossless, what many
#: call recorders archive)
AUDIO_SUFFIXES: tuple[str, ...] = (".wav", ".ulaw", ".mulaw", ".flac")
MANIFEST_NAMES: tuple[str, ...] = ("manifest.jsonl", "manifest.csv")
#: The largest JSON sidecar read (bytes); a bigger one is refused before it is read.
MAX_SIDECAR_BYTES = 1024 * 1024
_ADVANCE = {"advance", "advanced", "true", "1", "yes", "pass"}
_REJECT = {"reject", "rejected", "false", "0", "no", "fail"}
Layout = Literal["mono", "candidate_left", "candidate_right"]


def _not_text(field: str, info: ValidationInfo) -> None:
    """Refuse a JSON string where a number is meant: only a CSV row holds numbers as text."""
    if not (info.context or {}).get("text_values"):
        raise ValueError(f"{field} must be a number (or null), not text: write it without "
                         "quotes in JSON (a CSV manifest is the only text form)")


class CallMeta(BaseModel):
    """One call's metadata (see the module docstring for each field). Frozen; extra fields
    are dropped."""
    model_config = ConfigDict(frozen=True, extra="ignore")

    call_id: str = Field(min_length=1, max_length=200)
    timestamp: datetime
    employer: str = Field(min_length=1, max_length=200)
    job_family: str = Field(min_length=1, max_length=200)
    score: float | None
    decision: Literal["advance", "reject"] | None
    language: str | None = Field(None, max_length=32)
    channel: str | None = Field(None, max_length=64)
    codec: str | None = Field(None, max_length=32)
    layout: Layout | None = None
    repeat_requests: int | None = Field(None, ge=0)
    audio: str | None = Field(None, max_length=1000)

    @field_validator("call_id")
    @classmethod
    def _printable(cls, v: str) -> str:
        if not v.isprintable() or v != v.strip():
            raise ValueError("call_id must be printable, without surrounding spaces")
        return v

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, v: datetime) -> datetime:
        if v.tzinfo is None or v.utcoffset() is None:
            raise ValueError("timestamp has no time zone: add Z (UTC) or the offset it was "
                             "written in, e.g. 2025-01-07T10:00:00+01:00")
        return v.astimezone(UTC)

    @field_validator("score", mode="before")
    @classmethod
    def _score(cls, v: object, info: ValidationInfo) -> object:
        if isinstance(v, bool):
            raise ValueError("score must be a number, not a boolean")
        if isinstance(v, str):
            _not_text("score", info)
            if not v.strip():
                return None
        return v

    @field_validator("score")
    @classmethod
    def _finite(cls, v: float | None, info: ValidationInfo) -> float | None:
        if v is not None and not math.isfinite(v):
            raise ValueError("score must be a finite number")
        rng = (info.context or {}).get("score_range")
        if v is not None and rng is not None and not rng[0] <= v <= rng[1]:
            raise ValueError(f"score outside the config's score_range [{rng[0]:g}, "
                             f"{rng[1]:g}]")
        return v

    @field_validator("decision", mode="before")
    @classmethod
    def _decision(cls, v: object) -> object:
        if v is None or (isinstance(v, str) and not v.strip()):
            return None
        s = str(v).strip().lower()
        if s in _ADVANCE:
            return "advance"
        if s in _REJECT:
            return "reject"
        raise ValueError("decision must be advance or reject (or true/false, yes/no, 1/0)")

    @field_validator("language", "channel", "codec", "audio", "layout", mode="before")
    @classmethod
    def _blank_is_none(cls, v: object) -> object:
        if isinstance(v, str):
            return v.strip() or None
        return v

    @field_validator("layout", mode="before")
    @classmethod
    def _lower(cls, v: object) -> object:
        return v.lower() if isinstance(v, str) else v

    @field_validator("repeat_requests", mode="before")
    @classmethod
    def _count(cls, v: object, info: ValidationInfo) -> object:
        if isinstance(v, str):
            _not_text("repeat_requests", info)
        return None if isinstance(v, str) and not v.strip() else v

    def content_sha256(self) -> str:
        """sha256 of the stored fields (``audio`` left out: moving a file is no change)."""
        blob = json.dumps(self.model_dump(mode="json", exclude={"audio"}), sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()



def parse_meta(data: object, source: str | Path,
               score_range: tuple[float, float] | None = None,
               text_values: bool = False) -> CallMeta:
    """Validate one record; with ``score_range`` (the monitor config's), a score outside it
    is refused.

    ``text_values``: the record is a CSV row, whose numbers are text (``"71.5"``, ``""`` for
    none). Otherwise (a JSON sidecar, a JSONL line, a request's ``metadata``) a number given
    as a string (``"score": "71.5"``) is refused: JSON has numbers, and a quoted one means
    the exporter wrote something other than what rig is told. A ``timestamp`` given as a
    number is Unix time (seconds since 1970-01-01 UTC; over 2e10, milliseconds), accepted.

    Raises:
        ConfigError: not a mapping, or a field is missing or invalid; the message names
            ``source`` (a file, ``FILE:LINE`` for manifests, or ``request``), the field and
            the value.
    """
    if not isinstance(data, dict):
        raise ConfigError(source, "", "expected a JSON object of call metadata", data,
                          has_value=True)
    try:
        return CallMeta.model_validate(data, context={"score_range": score_range,
                                                      "text_values": text_values})
    except ValidationError as exc:
        raise validation_error(source, exc) from exc


@dataclass(frozen=True)
class CallInput:
    """A call found in an input folder: its metadata and its recording's path, or the reason
    it cannot be used (``meta``/``audio_path`` None and ``error`` set, naming ``source``)."""
    source: str
    meta: CallMeta | None
    audio_path: Path | None
    error: str | None = None
    #: the record as read (all its fields, also those CallMeta drops): ``rig replay`` reads
    #: its own fields (``question_id``, ``turns``) from it; never stored by the monitor
    raw: dict | None = None


def find_manifest(folder: Path, manifest: Path | None = None) -> Path | None:
    """``manifest`` when given, else ``manifest.jsonl`` or ``manifest.csv`` in ``folder``."""
    if manifest is not None:
        return manifest
    for name in MANIFEST_NAMES:
        if (folder / name).is_file():
            return folder / name
    return None


def _manifest_records(path: Path) -> Iterator[tuple[str, object]]:
    """(``FILE:LINE``, record) for each record, streamed; a bad line yields its error text,
    and bytes that are not UTF-8 end the manifest with an error naming the line (the records
    before it are kept)."""
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".csv"):
        raise ConfigError(path, "", "a manifest is a .jsonl or .csv file", path.suffix,
                          has_value=True)
    i = 0
    try:
        if suffix == ".jsonl":
            with path.open(encoding="utf-8") as fh:
                for i, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    try:
                        yield f"{path}:{i}", loads_strict(line)
                    except json.JSONDecodeError as exc:
                        yield f"{path}:{i}", ConfigError(f"{path}:{i}", "",
                                                         f"not valid JSON: {exc}")
                    except DuplicateKeyError as exc:
                        yield f"{path}:{i}", ConfigError(f"{path}:{i}", "", str(exc))
        else:
            with path.open(encoding="utf-8", newline="") as fh:
                for i, row in enumerate(csv.DictReader(fh), 2):
                    yield f"{path}:{i}", {k: v for k, v in row.items() if k is not None}
    except UnicodeDecodeError as exc:  # text is decoded in blocks: no line number to give
        yield str(path), ConfigError(path, "", f"not UTF-8 text (byte "
                                     f"{exc.object[exc.start]:#04x}); save the manifest as "
                                     f"UTF-8 ({f'records after line {i}' if i else 'no record'}"
                                     " read)")


def iter_calls(folder: str | Path, manifest: str | Path | None = None,
               score_range: tuple[float, float] | None = None) -> Iterator[CallInput]:
    """The calls of an input folder, one at a time (nothing is read ahead).

    With ``manifest``, that manifest's records only. Otherwise the folder and its subfolders,
    in sorted order: a folder holding ``manifest.jsonl`` or ``manifest.csv`` is read through
    it (one record per call, whose ``audio`` names the recording relative to the manifest);
    in any other folder every recording (``*.wav``, ``*.ulaw``, ``*.mulaw``) goes with its JSON
    sidecar of the same name. A record or recording that cannot be used comes out with
    ``error`` set, naming the file; the caller reports it and goes on. ``score_range``: see
    :func:`parse_meta`.

    Raises:
        ConfigError: the folder or the given manifest does not exist, or the manifest is of an
            unknown kind (nothing can be ingested then).
    """
    folder = Path(folder)
    if manifest is not None:
        man = Path(manifest)
        if not man.is_file():
            raise ConfigError(man, "", "manifest not found")
        yield from _from_manifest(man, score_range)
        return
    if not folder.is_dir():
        raise ConfigError(folder, "", "input folder not found")
    for here, dirs, files in os.walk(folder):
        dirs.sort()
        here_path = Path(here)
        man = find_manifest(here_path)
        if man is not None:
            yield from _from_manifest(man, score_range)
        else:
            yield from _from_sidecars(here_path, sorted(files), score_range)


def _from_sidecars(here: Path, files: list[str],
                   score_range: tuple[float, float] | None) -> Iterator[CallInput]:
    names = set(files)
    for name in files:
        path = here / name
        if path.suffix.lower() not in AUDIO_SUFFIXES:
            continue
        side = path.with_suffix(".json")
        if side.name not in names:
            yield CallInput(str(path), None, None, f"{path}: no metadata (expected {side.name})")
            continue
        size = side.stat().st_size
        if size > MAX_SIDECAR_BYTES:
            yield CallInput(str(side), None, None, f"{side}: the sidecar is {size / 1e6:.1f} MB;"
                            f" call metadata is a few hundred bytes (limit "
                            f"{MAX_SIDECAR_BYTES // 1024} KB): is it the right file?")
            continue
        try:
            data = loads_strict(side.read_text(encoding="utf-8"))
            meta = parse_meta(data, side, score_range)
        except json.JSONDecodeError as exc:
            yield CallInput(str(side), None, None, f"{side}: not valid JSON: {exc}")
            continue
        except DuplicateKeyError as exc:
            yield CallInput(str(side), None, None, f"{side}: {exc}")
            continue
        except UnicodeDecodeError as exc:
            yield CallInput(str(side), None, None, f"{side}: not UTF-8 text (byte "
                            f"{exc.object[exc.start]:#04x} at offset {exc.start}); save it as "
                            "UTF-8")
            continue
        except ConfigError as exc:
            yield CallInput(str(side), None, None, str(exc))
            continue
        if meta.audio and meta.audio != path.name:
            yield CallInput(str(side), None, None,
                            f"{side}: audio: names another file than {path.name}")
            continue
        yield CallInput(str(path), meta, path, raw=data)
    stems = {Path(n).stem for n in files if Path(n).suffix.lower() in AUDIO_SUFFIXES}
    for name in files:
        if name.lower().endswith(".json") and Path(name).stem not in stems:
            yield CallInput(str(here / name), None, None, f"{here / name}: no recording beside "
                                                          f"it ({', '.join(AUDIO_SUFFIXES)})")


def _from_manifest(man: Path, score_range: tuple[float, float] | None = None
                   ) -> Iterator[CallInput]:
    for where, data in _manifest_records(man):
        if isinstance(data, ConfigError):
            yield CallInput(where, None, None, str(data))
            continue
        try:
            meta = parse_meta(data, where, score_range, man.suffix.lower() == ".csv")
        except ConfigError as exc:
            yield CallInput(where, None, None, str(exc))
            continue
        if not meta.audio:
            yield CallInput(where, None, None, f"{where}: audio: missing (the recording's "
                                               "file name, relative to the manifest)")
            continue
        path = man.parent / meta.audio
        if not path.is_file():
            yield CallInput(where, None, None, f"{where}: audio: file not found ({path})")
            continue
        yield CallInput(str(path), meta, path, raw=data)
