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


class _UniqueKeyLoader(yaml.SafeLoader):
    """safe_load that refuses a mapping with the same key twice (YAML 1.2 forbids it; PyYAML
    would silently keep the last value)."""


def _unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict:
    seen: set = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=True)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                                 _unique_mapping)

#: fields whose values an error message never shows (a secret pasted into a config file)
_SECRET_WORDS = ("key", "token", "secret", "password", "credential")


def read_yaml(path: str | Path) -> object:
    """Parse a YAML file. Raises ConfigError (file missing, not UTF-8, YAML syntax error with
    its line, or a duplicate key)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, "", "file not found")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(path, "", f"not UTF-8 text (byte {exc.object[exc.start]:#04x} at "
                                    f"offset {exc.start})") from None
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ConfigError(path, "", f"not valid YAML: {exc}") from exc


def yaml_files(folder: str | Path) -> list[Path]:
    """The ``*.yaml`` files of ``folder``, sorted by name.

    Raises:
        ConfigError: the folder holds a ``.yml`` (or upper-case ``.YAML``) file, which would
            otherwise be skipped without a word; the message names it.
    """
    folder = Path(folder)
    odd = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in
                 (".yml", ".yaml") and p.suffix != ".yaml")
    if odd:
        raise ConfigError(odd[0], "", "rig reads only files ending in .yaml: rename it")
    return sorted(folder.glob("*.yaml"))


def _loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def validation_error(path: str | Path, exc: ValidationError) -> ConfigError:
    """Turn the first pydantic error into a ConfigError naming file, field and value."""
    err = exc.errors()[0]
    more = len(exc.errors()) - 1
    msg = err["msg"]
    # a validator's ValueError reads "Value error, <the validator's message>": keep the message
    if err.get("type") == "value_error" and msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    problem = msg + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")
    field = _loc(tuple(err["loc"]))
    if any(w in field.lower() for w in _SECRET_WORDS):
        return ConfigError(path, field, problem + "; value not shown")
    return ConfigError(path, field, problem, err.get("input"), has_value=True)


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
