"""Loading YAML into pydantic models with errors that name the file, the field and the value."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from rig.errors import ConfigError

M = TypeVar("M", bound=BaseModel)


def read_yaml(path: str | Path) -> object:
    """Parse a YAML file. Raises ConfigError (file missing, or YAML syntax error with line)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, "", "file not found")
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(path, "", f"not valid YAML: {exc}") from exc


def _loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def validation_error(path: str | Path, exc: ValidationError) -> ConfigError:
    """Turn the first pydantic error into a ConfigError naming file, field and value."""
    err = exc.errors()[0]
    more = len(exc.errors()) - 1
    problem = err["msg"] + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")
    return ConfigError(path, _loc(tuple(err["loc"])), problem, err.get("input"), has_value=True)


def load_model(path: str | Path, model: type[M], data: object | None = None) -> M:
    """Validate ``data`` (or the YAML at ``path``) as ``model``. Raises ConfigError."""
    if data is None:
        data = read_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(path, "", "expected a mapping at the top level", data, has_value=True)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(path, exc) from exc


def content_hash(obj: object, n: int = 12) -> str:
    """Stable short sha256 of a JSON-able object (pydantic models are dumped first)."""
    if isinstance(obj, BaseModel):
        obj = obj.model_dump(mode="json")
    blob = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:n]
