"""Shared pieces of the statistics layer: the not-computable signal and JSON cleaning.

Every table-level function in :mod:`rig.stats` returns ``None`` for a figure it cannot compute
and records the reason in a ``not_computable`` mapping (field name -> reason); it never
returns NaN and never raises on degenerate data. Low-level helpers raise
:class:`NotComputable` instead, and the table builders turn that into a ``None`` and a reason.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Literal

import numpy as np

from rig.errors import RigError

Interval = tuple[float, float]
Alternative = Literal["two-sided", "larger", "smaller"]


class NotComputable(RigError):
    """A statistic cannot be computed from these data. ``reason`` says why in plain words."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def finite(x: object) -> float | None:
    """``float(x)`` when it is a finite number, else ``None`` (NaN and infinities included)."""
    if x is None:
        return None
    try:
        v = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def jsonable(obj: object) -> object:
    """Recursively turn numpy scalars, tuples and dataclasses into JSON values; NaN -> None."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if hasattr(obj, "to_dict"):
            return obj.to_dict()
        return {f.name: jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return finite(obj)
    if obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, np.ndarray):
        return [jsonable(v) for v in obj.tolist()]
    return str(obj)


def dataclass_dict(obj: object) -> dict:
    """Every field of a dataclass instance as a JSON value (:func:`jsonable`: tuples and
    intervals as lists, NaN as None), in field order: the ``to_dict`` of a result type."""
    fields = dataclasses.fields(obj)  # type: ignore[arg-type]
    return {f.name: jsonable(getattr(obj, f.name)) for f in fields}


def interval(low: float, high: float) -> Interval:
    """A ``(low, high)`` tuple of Python floats."""
    return (float(low), float(high))
