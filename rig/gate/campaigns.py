"""A release's campaign as the gate reads it: call rows, pipeline version and configuration.

A campaign folder holds ``calls.parquet`` (or ``calls.csv``), optionally ``summary.json``
(read through its typed contract, :mod:`rig.campaign.schema`) and optionally a
``pipeline.yaml`` / ``pipeline.json`` with the resolved pipeline configuration.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rig.campaign.summary_file import load_summary_header
from rig.config import read_yaml
from rig.errors import ConfigError
from rig.jsonfile import read_json
from rig.stats.rows import RowsError, read_rows

CALLS_FILES = ("calls.parquet", "calls.csv")


@dataclass(frozen=True)
class Campaign:
    """One release's campaign: its call rows and what its folder says about the pipeline."""

    name: str
    rows: pd.DataFrame
    pipeline_version: str | None = None
    pipeline: dict | None = None

    @classmethod
    def from_rows(cls, rows: pd.DataFrame, name: str = "rows",
                  pipeline: dict | None = None) -> Campaign:
        """Wrap rows; the pipeline version comes from their ``pipeline_version`` column."""
        rows = rows.copy(deep=False)
        rows.attrs.setdefault("source", name)
        return cls(name, rows, _version_from_rows(rows), pipeline)


def _version_from_rows(rows: pd.DataFrame) -> str | None:
    if "pipeline_version" not in rows.columns:
        return None
    versions = sorted(map(str, rows["pipeline_version"].dropna().unique()))
    if len(versions) > 1:
        raise RowsError(rows.attrs.get("source", "rows"), "pipeline_version",
                        "a campaign must have one pipeline version", versions, has_value=True)
    return versions[0] if versions else None


def load_campaign(folder: str | Path) -> Campaign:
    """Read a campaign folder: ``calls.parquet`` (or ``calls.csv``), ``summary.json`` if any
    (its ``pipeline_version`` and ``pipeline``, read through
    :func:`rig.campaign.summary_file.load_summary_header`, so a summary of any rig version, or
    one holding only these fields, serves), and ``pipeline.yaml``/``pipeline.json`` if any.

    Raises:
        ConfigError: the folder or its calls file is missing, a file is unreadable, or the rows
            hold several pipeline versions or disagree with summary.json, a field of
            summary.json the gate reads is malformed, or ``pipeline.yaml``/``pipeline.json``
            is not valid or names a key twice (names file, field or key, value).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(folder, "", "campaign folder not found")
    calls = next((folder / f for f in CALLS_FILES if (folder / f).is_file()), None)
    if calls is None:
        raise ConfigError(folder, "", f"no {' or '.join(CALLS_FILES)} in the campaign folder")
    rows = read_rows(calls)
    version = _version_from_rows(rows)
    pipeline = None
    summary_path = folder / "summary.json"
    if summary_path.is_file():
        head = load_summary_header(summary_path)  # the identifying fields of the contract
        sv = head.pipeline_version
        if sv is not None and version is not None and sv != version:
            raise ConfigError(summary_path, "pipeline_version",
                              f"differs from the rows' pipeline_version {version!r}", sv,
                              has_value=True)
        version = version or sv
        pipeline = head.pipeline
    for name in ("pipeline.yaml", "pipeline.json"):
        p = folder / name
        if pipeline is None and p.is_file():
            # the strict readers: a key named twice is refused (naming it), never resolved
            data = read_json(p) if name.endswith(".json") else read_yaml(p)
            if isinstance(data, dict):
                pipeline = data
    return Campaign(str(folder), rows, version, pipeline)
