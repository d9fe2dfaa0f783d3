"""Exceptions raised by rig.

Tree::

    RigError
    ├── ConfigError         a YAML/CSV input is malformed; names the file, field and value
    ├── ModelMissingError   a model package is not installed; names the package to install
    ├── ModelIntegrityError an assembled model's sha256 does not match the verified one
    └── EngineUnavailable   an optional engine (espeak-ng, piper) is not installed

Exit codes of the CLI: 0 pass, 1 threshold breached (gate), 2 bad input.
"""

from __future__ import annotations


class RigError(Exception):
    """Base class of every error rig raises on purpose."""

    def __reduce__(self):
        # pickle rebuilds an exception as cls(*args); a subclass whose __init__ takes other
        # arguments (ConfigError: path, field, problem) failed to unpickle in the process
        # that receives it (a multiprocessing pool's result thread died, its map hung)
        return _rebuild, (type(self), self.args, self.__dict__)


def _rebuild(cls: type, args: tuple, state: dict) -> RigError:
    err = cls.__new__(cls)
    Exception.__init__(err, *args)
    err.__dict__.update(state)
    return err


class ConfigError(RigError):
    """A malformed input file. ``str(err)`` reads ``FILE: FIELD: problem (got VALUE)``."""

    def __init__(self, path: object, field: str, problem: str, value: object = None,
                 has_value: bool = False) -> None:
        self.path, self.field, self.problem, self.value = str(path), field, problem, value
        shown = repr(value)
        if len(shown) > 160:
            shown = shown[:150] + " ...(cut)"
        got = f" (got {shown})" if (has_value or value is not None) and not isinstance(
            value, dict) else ""
        loc = f"{field}: " if field else ""
        super().__init__(f"{self.path}: {loc}{problem}{got}")


class ModelMissingError(RigError):
    """A model package is not installed."""

    def __init__(self, model: str, packages: list[str], extra: str = "models") -> None:
        self.model, self.packages, self.extra = model, packages, extra
        super().__init__(
            f"model {model!r} needs the package(s) {', '.join(packages)}: "
            f"pip install {' '.join(packages)}   (or, in rig's clone: pip install -e '.[{extra}]')")


class ModelIntegrityError(RigError):
    """An assembled model file does not have the verified sha256."""


class EngineUnavailable(RigError):
    """An optional engine is not installed; the message says how to install it."""
