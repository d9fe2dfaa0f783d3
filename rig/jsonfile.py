"""Strict JSON files and texts: a user's or an earlier run's JSON read so that a key named
twice is an error naming the file and the key (plain ``json.loads`` keeps the last value
without a word). The parser itself is :func:`rig.config.loads_strict`."""

from __future__ import annotations

import json
from pathlib import Path

from rig.config import DuplicateKeyError, loads_strict
from rig.errors import ConfigError


def read_json(path: str | Path) -> object:
    """Parse a JSON file that a user or an earlier run wrote, refusing a key named twice.

    Raises:
        ConfigError: the file is missing or unreadable, not UTF-8, not JSON (line and column
            given), or an object names a key twice (the key and both values given; plain
            ``json.loads`` would keep the last value without a word).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(path, "", "file not found") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(path, "", f"not UTF-8 text (byte {exc.object[exc.start]:#04x} at "
                                    f"offset {exc.start}); save it as UTF-8") from None
    except OSError as exc:
        raise ConfigError(path, "", f"cannot read the file ({exc.strerror or exc})") from None
    return loads_json(path, text)


def loads_json(where: str | Path, text: str | bytes, field: str = "") -> object:
    """:func:`loads_strict` with its errors as a ConfigError naming ``where`` (a file, or a
    file and ``field``, e.g. a row's column holding JSON text).

    Raises:
        ConfigError: not JSON (line and column), a key named twice, nested too deeply."""
    try:
        return loads_strict(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(where, field, f"not valid JSON: {exc.msg} (line {exc.lineno}, "
                                        f"column {exc.colno})") from None
    except DuplicateKeyError as exc:
        raise ConfigError(where, field or exc.key, str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(where, field, f"not UTF-8 text ({exc.reason})") from None
    except RecursionError:
        raise ConfigError(where, field, "nested too deeply to be read") from None
