"""The values of a call row's columns: a column's Python type from its annotation, and a
value's normalisation to that type (:class:`rig.campaign.row.CallRow` checks every column of a
row with them).

A column is ``str``, ``float``, ``int`` or ``bool``, each nullable (:func:`column_type`).
:func:`coerce` normalises a value to its column's type: numpy scalars become Python ones, an
integral ``int`` column value given as a float (``3.0``) becomes ``3``, an ``int`` in a
``float`` column becomes a ``float``, a non-finite float becomes None (JSON has no NaN); a
value of another type is :data:`BAD`.
"""

from __future__ import annotations

import math
import numbers
import types
import typing
from typing import Any

#: What :func:`coerce` returns for a value its column's type cannot take
BAD = object()


def coerce(v: Any, kind: type) -> Any:
    """``v`` as ``kind`` (the normalisation above), or :data:`BAD`."""
    t = type(v)
    if t is kind and kind is not float:
        return v
    if kind is str:
        return str(v) if isinstance(v, str) else BAD
    if kind is bool:
        return bool(v) if isinstance(v, (bool, _np_bool())) else BAD
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        return BAD
    if kind is float:
        f = float(v)
        if not math.isfinite(f):
            return None
        return v if t is float else f
    # int
    if isinstance(v, numbers.Integral):
        return int(v)
    f = float(v)
    return int(f) if f.is_integer() else BAD


def _np_bool() -> type:
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is a dependency
        return bool
    return np.bool_


def column_type(name: str, hint: Any) -> type:
    """The Python type of column ``name`` from its annotation ``hint`` (``X | None``).

    Raises:
        TypeError: ``hint`` is not ``str``, ``float``, ``int`` or ``bool`` ``| None``."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if not (isinstance(hint, types.UnionType) and len(args) == 1
            and args[0] in (str, float, int, bool)):
        raise TypeError(f"CallRow.{name}: a column is str, float, int or bool | None, "
                        f"got {hint!r}")
    return args[0]
