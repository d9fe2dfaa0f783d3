"""The shape of a group metric: overall, by group, ratio and difference (fairlearn's
``MetricFrame``).

A group metric answers three questions with one return type, however degenerate the data:
what the figure is over every included row, what it is in each group, and how far apart the
groups are. :class:`GroupFrame` gives a result that shape; a result class (a frozen dataclass,
e.g. :class:`rig.stats.rates.RateTable`) inherits it and holds:

* ``overall``: the metric over every included row (None when not computable);
* ``by_group``: one row per included group, sorted by label; each row has a ``category`` label
  and the metric's value in the field named by the class's ``value_field``;
* ``reference``: the label of the group the others are compared with (None when none is).

and gets:

* :meth:`GroupFrame.values`: group -> value (fairlearn's ``by_group``);
* :meth:`GroupFrame.ratio` / :meth:`GroupFrame.difference`: group -> value / (or -) the
  reference group's value (``method="to_reference"``, the default) or the overall value
  (``method="to_overall"``). Always a mapping over the groups of ``by_group``, with None where
  a figure is undefined (a missing value, or a ratio to 0), never a scalar in one case and a
  mapping in another. With the highest group as the reference, ``ratio()`` is the impact
  ratio of NYC LL144 and the four-fifths rule (29 CFR 1607.4(D)), and its smallest value is
  fairlearn's ``ratio(method="between_groups")``;
* :meth:`GroupFrame.group_max`, :meth:`GroupFrame.group_min`: the highest and lowest value;
* :meth:`GroupFrame.group` and :attr:`GroupFrame.reference_group`: one group's row.

Source of the shape: fairlearn ``MetricFrame`` (Weerts et al. 2023, "Fairlearn: assessing and
improving fairness of AI systems", JMLR 24(257)).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar

#: What :meth:`GroupFrame.ratio` and :meth:`GroupFrame.difference` compare each group with.
CompareTo = Literal["to_reference", "to_overall"]


class GroupRow(Protocol):
    """A row of ``by_group``: a group's label (and its value, in the frame's ``value_field``)."""

    category: str


R = TypeVar("R", bound=GroupRow)


class GroupFrame(Generic[R]):
    """Mixin: the ``MetricFrame`` view of a result holding ``overall``, ``by_group`` and
    ``reference`` (see the module docstring). ``value_field`` names the rows' value field."""

    value_field: ClassVar[str] = "value"
    overall: float | None
    by_group: Sequence[R]
    reference: str | None

    def _value(self, row: R) -> float | None:
        v: Any = getattr(row, self.value_field)
        return None if v is None else float(v)

    def values(self) -> dict[str, float | None]:
        """Group label -> its value (None when not computable), in ``by_group`` order."""
        return {r.category: self._value(r) for r in self.by_group}

    def group(self, category: str) -> R | None:
        """The row of group ``category``; None when it is not among the included groups."""
        return next((r for r in self.by_group if r.category == category), None)

    @property
    def reference_group(self) -> R | None:
        """The reference group's row (None when there is no reference)."""
        return None if self.reference is None else self.group(self.reference)

    def group_max(self) -> float | None:
        """The highest group value (None when no group has one)."""
        vals = [v for v in self.values().values() if v is not None]
        return max(vals) if vals else None

    def group_min(self) -> float | None:
        """The lowest group value (None when no group has one)."""
        vals = [v for v in self.values().values() if v is not None]
        return min(vals) if vals else None

    def _base(self, method: CompareTo) -> float | None:
        if method == "to_overall":
            return self.overall
        if method == "to_reference":
            ref = self.reference_group
            return None if ref is None else self._value(ref)
        raise ValueError(f"method must be to_reference or to_overall (got {method!r})")

    def ratio(self, method: CompareTo = "to_reference") -> dict[str, float | None]:
        """Group -> value / the reference's value (or the overall value); None where either is
        missing or the denominator is 0.

        Raises:
            ValueError: an unknown ``method``.
        """
        base = self._base(method)
        out: dict[str, float | None] = {}
        for r in self.by_group:
            v = self._value(r)
            out[r.category] = None if v is None or base is None or base == 0 else v / base
        return out

    def difference(self, method: CompareTo = "to_reference") -> dict[str, float | None]:
        """Group -> value - the reference's value (or the overall value); None where either
        is missing.

        Raises:
            ValueError: an unknown ``method``.
        """
        base = self._base(method)
        return {r.category: None if (v := self._value(r)) is None or base is None else v - base
                for r in self.by_group}
