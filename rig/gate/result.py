"""What the gate returns: one :class:`GateCheck` per line of its table, and the verdict."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from rig.gate.policy import GatePolicy
from rig.stats.common import jsonable

CheckKind = Literal["pipeline_version", "pipeline_config", "flip_rate", "fault_rate",
                    "selection_rate_ratio", "scoring_rate_ratio", "replay_mean_drop",
                    "replay_flip_rate", "replay_heard_nothing",
                    "latency_p95_ms", "talk_over_rate"]
Verdict = Literal["pass", "block"]


@dataclass(frozen=True)
class GateCheck:
    """One line of the gate's table. ``value``/``previous``: the candidate's and the previous
    release's figure (shares for rates and ratios); ``threshold``: what the value was held to;
    ``p_value``/``p_adjusted``: the test and its Holm adjustment (None for non-statistical
    checks); ``blocked``: this line blocks the release; ``computable``: False when the figure
    could not be computed (``reason`` says why)."""

    check: CheckKind
    subject: str
    value: float | str | None
    previous: float | str | None
    threshold: float | str | None
    p_value: float | None
    p_adjusted: float | None
    blocked: bool
    computable: bool
    reason: str
    detail: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {k: jsonable(getattr(self, k)) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class GateResult:
    """The gate's verdict, its checks, and context for gate.json."""

    verdict: Verdict
    checks: tuple[GateCheck, ...]
    policy: GatePolicy
    candidate: dict
    previous: dict
    notes: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        """0 pass, 1 blocked."""
        return 0 if self.verdict == "pass" else 1

    @property
    def reasons(self) -> list[str]:
        """One line per blocking check."""
        return [f"{c.check} [{c.subject}]: {c.reason}" for c in self.checks if c.blocked]

    def to_dict(self) -> dict:
        return {"verdict": self.verdict, "exit_code": self.exit_code, "reasons": self.reasons,
                "checks": [c.to_dict() for c in self.checks],
                "candidate": jsonable(self.candidate), "previous": jsonable(self.previous),
                "policy": self.policy.model_dump(mode="json"), "notes": list(self.notes)}
