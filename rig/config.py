"""Loading YAML into pydantic models with errors that name the file, the field and the value."""

from __future__ import annotations

import difflib
import hashlib
import json
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from rig.errors import ConfigError

M = TypeVar("M", bound=BaseModel)


#: The most values a YAML file may expand to once its aliases (``*name``) are followed: a
#: config holds hundreds; an "alias bomb" (each level repeating the last nine times) expands
#: to millions and takes minutes to validate while the file is a few hundred bytes.
MAX_YAML_EXPANDED_NODES = 200_000


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    """Nodes under ``node`` with every alias followed (shared subtrees counted each time)."""
    key = id(node)
    if key not in memo:
        memo[key] = 0  # a recursive alias counts once
        if isinstance(node, yaml.SequenceNode):
            n = 1 + sum(_expanded_size(v, memo) for v in node.value)
        elif isinstance(node, yaml.MappingNode):
            n = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo)
                        for k, v in node.value)
        else:
            n = 1
        memo[key] = min(n, MAX_YAML_EXPANDED_NODES + 1)
    return memo[key]


class _UniqueKeyLoader(yaml.SafeLoader):
    """safe_load that refuses a mapping with the same key twice (YAML 1.2 forbids it; PyYAML
    would silently keep the last value) and a document expanding to more than
    :data:`MAX_YAML_EXPANDED_NODES` values (an alias bomb)."""

    def construct_document(self, node):  # type: ignore[no-untyped-def]
        if _expanded_size(node, {}) > MAX_YAML_EXPANDED_NODES:
            raise yaml.constructor.ConstructorError(
                None, None, f"the aliases (*name) expand to more than "
                f"{MAX_YAML_EXPANDED_NODES:,} values: refused as an alias bomb",
                node.start_mark)
        return super().construct_document(node)


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


def _strict_number(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> object:
    """YAML 1.1 numbers that YAML 1.2 and every reader of the file see otherwise are refused:
    base 60 (``1:30`` is 90) and a leading zero (``060`` is octal, 48)."""
    is_int = node.tag.endswith(":int")
    value = (yaml.SafeLoader.construct_yaml_int(loader, node) if is_int
             else yaml.SafeLoader.construct_yaml_float(loader, node))
    digits = str(node.value).replace("_", "").lstrip("+-")
    if ":" in digits:
        raise yaml.constructor.ConstructorError(
            None, None, f"{node.value} is a YAML 1.1 base-60 number ({value}): quote it, or "
            "write the number", node.start_mark)
    if is_int and len(digits) > 1 and digits[0] == "0" and digits[1] in "01234567":
        raise yaml.constructor.ConstructorError(
            None, None, f"{node.value} has a leading zero, which YAML 1.1 reads as octal "
            f"({value}): drop the zero or quote it", node.start_mark)
    return value


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:int", _strict_number)
_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:float", _strict_number)

#: fields whose values an error message never shows (a secret pasted into a config file)
_SECRET_WORDS = ("key", "token", "secret", "password", "credential")


#: The largest YAML input read (bytes): a config, profile or question file is a few KB; a
#: bigger one is a wrong file (a log, an export) and is refused before it is parsed.
MAX_YAML_BYTES = 5 * 1024 * 1024

#: The plain scalars YAML 1.1 (PyYAML) reads as booleans besides true/false: where a string is
#: meant (``language: no``, Norway) the value silently becomes ``False``.
YAML11_BOOLEANS = ("yes", "no", "on", "off", "y", "n", "true", "false")


def _yaml_problem(exc: yaml.YAMLError, text: str) -> str:
    """A YAML error in words, with the line; a tab used as indentation says so."""
    if isinstance(exc, yaml.reader.ReaderError):
        line = text[:exc.position].count("\n") + 1
        ch = exc.character if isinstance(exc.character, int) else ord(exc.character)
        return (f"line {line}: the control character U+{ch:04X} is not allowed in YAML; "
                "delete it")
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        lines = text.splitlines()
        indent = lines[mark.line][:len(lines[mark.line]) - len(lines[mark.line].lstrip())] \
            if mark.line < len(lines) else ""
        if "\t" in indent or "'\\t'" in str(exc):
            return (f"line {mark.line + 1}: a tab is used for indentation; YAML allows only "
                    "spaces (replace the tab with spaces)")
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    what = " ".join(str(getattr(exc, "problem", None) or exc).split())
    context = getattr(exc, "context", None)
    return f"not valid YAML: {where}{what}" + (f" ({' '.join(context.split())})"
                                               if context else "")


def read_yaml(path: str | Path) -> object:
    """Parse a YAML file. Raises ConfigError (file missing, over :data:`MAX_YAML_BYTES`
    (checked before reading), not UTF-8 (UTF-16 named as such), empty, YAML syntax error with
    its line (a tab in the indentation named), or a duplicate key, which PyYAML would
    otherwise resolve silently by keeping the last value)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, "", "file not found")
    size = path.stat().st_size
    if size > MAX_YAML_BYTES:
        raise ConfigError(path, "", f"the file is {size / 1e6:.1f} MB; a rig YAML file is a "
                          f"few KB (limit {MAX_YAML_BYTES / 1e6:.0f} MB): is it the right file?")
    try:
        raw = path.read_bytes()
    except OSError as exc:  # permissions, a file vanishing, an I/O error
        raise ConfigError(path, "", f"cannot read the file ({exc.strerror or exc})") from None
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise ConfigError(path, "", "UTF-16 text (it starts with a UTF-16 byte order mark); "
                          "save it as UTF-8")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(path, "", f"not UTF-8 text (byte {exc.object[exc.start]:#04x} at "
                                    f"offset {exc.start}); save it as UTF-8") from None
    if not text.strip():
        raise ConfigError(path, "", "the file is empty")
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ConfigError(path, "", _yaml_problem(exc, text)) from exc


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
        if isinstance(part, int) and not isinstance(part, bool):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _edit_distance(a: str, b: str) -> int:
    """Levenshtein distance with adjacent transpositions (optimal string alignment)."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def close_keys(key: str, allowed: list[str]) -> list[str]:
    """The keys of ``allowed`` that ``key`` is a likely typo of: difflib's close matches
    (ratio >= 0.6, :func:`difflib.get_close_matches`), the fewest edits first, only those
    tied for the fewest (``pase``: ``pace``, one edit, not ``pauses``, two)."""
    near = difflib.get_close_matches(key, allowed, n=5, cutoff=0.6)
    if not near:
        return []
    dist = {k: _edit_distance(key, k) for k in near}
    return sorted((k for k in near if dist[k] == min(dist.values())), key=near.index)


def _unwrap(tp: Any) -> Any:
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _keys(model: type[BaseModel]) -> dict[str, Any]:
    """A model's keys as a YAML file spells them (the alias when it has one) -> the type."""
    return {f.alias or name: f.annotation for name, f in model.model_fields.items()}


def _tags(model: type[BaseModel]) -> set[str]:
    """What names ``model`` in an error location inside a union: its class name and the
    value of any ``Literal`` field of one value (a discriminator)."""
    out = {model.__name__}
    for tp in _keys(model).values():
        args = typing.get_args(_unwrap(tp))
        if typing.get_origin(_unwrap(tp)) is typing.Literal and len(args) == 1:
            out.add(str(args[0]))
    return out


def _follow(tp: Any, part: str | int) -> list[Any]:
    """The types that one part of a pydantic error location leads to from the type ``tp``."""
    tp = _unwrap(tp)
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        members = [m for m in map(_unwrap, typing.get_args(tp)) if m is not type(None)]
        named = [m for m in members if _is_model(m) and str(part) in _tags(m)]
        return named or [t for m in members for t in _follow(m, part)]
    if _is_model(tp):
        return [_keys(tp)[part]] if part in _keys(tp) else []
    args = typing.get_args(tp)
    if isinstance(origin, type) and issubclass(origin, Mapping) and len(args) == 2:
        return [args[1]]
    if origin in (list, tuple, set, frozenset) and isinstance(part, int) and args:
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return [args[part]] if part < len(args) else []
        return [args[0]]
    return []


def allowed_keys(model: type[BaseModel], loc: tuple) -> list[str] | None:
    """The keys allowed in the mapping at ``loc`` inside ``model`` (a pydantic error location
    without its last part), or None when the location does not lead to one model."""
    found: list[Any] = [model]
    for part in loc:
        found = [t for tp in found for t in _follow(tp, part)]
    models: list[type[BaseModel]] = []
    for tp in found:
        tp = _unwrap(tp)
        union = typing.get_origin(tp) in (typing.Union, types.UnionType)
        for m in map(_unwrap, typing.get_args(tp) if union else (tp,)):
            if _is_model(m) and m not in models:
                models.append(m)
    return list(_keys(models[0])) if len(models) == 1 else None


def _extra_key_hint(model: type[BaseModel] | None, loc: tuple) -> str:
    """`` (did you mean `pace`? allowed here: a, b, c)`` for a key the model does not allow;
    empty when the location does not lead to one model."""
    if model is None or not loc or not isinstance(loc[-1], str):
        return ""
    allowed = allowed_keys(model, loc[:-1])
    if not allowed:
        return ""
    near = close_keys(loc[-1], allowed)
    mean = ("did you mean " + " or ".join(f"`{k}`" for k in near) + "? ") if near else ""
    return f" ({mean}allowed here: {', '.join(sorted(allowed))})"


def _wants_text(err_type: str) -> bool:
    """Whether a pydantic error of this type is a known field that wanted text (a string, one
    of some words): only then is a YAML 1.1 boolean (``no``, ``on``) the likely cause. Not for
    a key the model does not have (``extra_forbidden``), nor a number or a list field."""
    return err_type.startswith("string") or err_type in ("literal_error", "enum")


def validation_error(path: str | Path, exc: ValidationError,
                     model: type[BaseModel] | None = None) -> ConfigError:
    """Turn the first pydantic error into a ConfigError naming file, field and value.

    With ``model`` (the model validated), a key it does not allow is answered with the keys
    allowed there and the close ones ("did you mean `pace`?")."""
    errs = exc.errors()
    # a misspelt key gives "Field required" for the right one too: name the misspelling first
    err = next((e for e in errs if e.get("type") == "extra_forbidden"), errs[0])
    more = len(errs) - 1
    msg = err["msg"]
    # a validator's ValueError reads "Value error, <the validator's message>": keep the message
    if err.get("type") == "value_error" and msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    if err.get("type") == "extra_forbidden":
        msg += _extra_key_hint(model, tuple(err["loc"]))
    if isinstance(err.get("input"), bool) and _wants_text(err.get("type", "")) \
            and str(path).lower().endswith((".yaml", ".yml")):
        msg += ("; YAML reads an unquoted yes/no/on/off (YAML 1.1) as a boolean: quote it, "
                "e.g. 'no', where text is meant")
    problem = msg + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")
    field = _loc(tuple(err["loc"]))
    if any(w in field.lower() for w in _SECRET_WORDS):
        return ConfigError(path, field, problem + "; value not shown")
    value = err.get("input")
    if err.get("type") == "value_error" and isinstance(value, list) and any(
            isinstance(x, dict) for x in value):
        return ConfigError(path, field, problem)  # a list of records: the message says what
    return ConfigError(path, field, problem, value, has_value=True)


def load_model(path: str | Path, model: type[M], data: object | None = None) -> M:
    """Validate ``data`` (or the YAML at ``path``) as ``model``.

    Raises:
        ConfigError: ``FILE: FIELD: problem (got VALUE)`` for the first problem; a key the
            model does not allow lists the keys allowed there and the close ones (``pase:
            Extra inputs are not permitted (did you mean `pace`? allowed here: ...)``).
    """
    if data is None:
        data = read_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(path, "", "expected a mapping at the top level", data, has_value=True)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(path, exc, model) from exc


def content_hash(obj: object, n: int = 12) -> str:
    """Stable short sha256 of a JSON-able object (pydantic models are dumped first)."""
    if isinstance(obj, BaseModel):
        obj = obj.model_dump(mode="json")
    blob = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:n]


class DuplicateKeyError(ValueError):
    """A JSON object names a key twice (``json.loads`` would keep the last value silently);
    ``key`` is the key."""

    def __init__(self, message: str, key: str = "") -> None:
        super().__init__(message)
        self.key = key


def _short(v: object) -> str:
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    seen: dict = {}
    for k, v in pairs:
        if k in seen:
            raise DuplicateKeyError(f"duplicate key {k!r} (the object names it twice: which "
                                    f"value is meant?); values ({_short(seen[k])} and "
                                    f"{_short(v)})", k)
        seen[k] = v
    return seen


def loads_strict(text: str) -> object:
    """``json.loads`` that refuses an object naming a key twice, at any depth (a call's
    metadata, a judge's reply: which value is meant cannot be known).

    Raises:
        json.JSONDecodeError: not JSON. DuplicateKeyError (a ValueError): a key named twice,
            with both values. RecursionError: nested too deeply."""
    return json.loads(text, object_pairs_hook=_no_duplicates)
