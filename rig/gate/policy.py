"""The gate policy (``gate.yaml``): which checks run, and what blocks a release.

Every field has a default, so no file (or ``{}``) is the default policy; an empty file is
refused (an emptied policy must not loosen the gate unseen). What each check does with these
settings is in :mod:`rig.gate`'s docstring.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rig.config import load_model, read_yaml


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FlipPolicy(_Strict):
    """Flip-rate check. ``min_rise`` (share, 0-1) is the smallest rise that can block, used
    when it exceeds the noise-floor flip rate (``use_noise_floor``: the no-change flip rate of
    decisions on repeat-averaged scores, per profile; see the module docstring)."""

    enabled: bool = True
    min_rise: float = Field(0.0, ge=0.0, le=1.0)
    use_noise_floor: bool = True


class FaultGatePolicy(_Strict):
    """Fault check (:mod:`rig.gate.faults`): the share of answers per profile kept out as
    faults (not heard, looped, empty reference). ``min_rise`` (share, 0-1): the smallest
    rise that can block."""

    enabled: bool = True
    min_rise: float = Field(0.0, ge=0.0, le=1.0)


class ImpactPolicy(_Strict):
    """Impact-ratio check on the candidate. ``kinds``: selection rates (advance decisions) by
    default; add ``scoring`` for LL144 scoring rates (each kind adds tests to the Holm family,
    which lowers the power of every check). ``min_n``: rows (answers) a category and the
    highest category each need before a low ratio can block. ``min_share``: categories under
    this share of rows are excluded (LL144 allows 2%)."""

    enabled: bool = True
    kinds: tuple[Literal["selection", "scoring"], ...] = ("selection",)
    by: tuple[str, ...] = ("profile_id",)
    threshold: float = Field(0.8, gt=0.0, le=1.0)
    min_n: int = Field(30, ge=1)
    min_share: float = Field(0.0, ge=0.0, lt=1.0)
    test: Literal["z", "fisher"] = "z"
    pooled: bool = True
    block_existing: bool = False


class VersionPolicy(_Strict):
    """Pipeline-version rule. ``allow_change: false`` blocks any change of pipeline_version;
    ``forbid_changes`` lists dotted keys of the pipeline configuration that must not change."""

    allow_change: bool = True
    forbid_changes: tuple[str, ...] = ()


class ReplayPolicy(_Strict):
    """Rules for a replay folder (``rig gate REPLAY_DIR``, :mod:`rig.gate.replay`), checked on
    the whole replay (``all``) and on every measured segment with at least ``min_calls``
    interviews: block when B lowers the segment's mean score by more than
    ``max_mean_drop_points`` (points, 0-100), or when more than ``max_flip_rate`` (share,
    0-1) of its decisions flip (or more than the no-change flip floor, when that is larger).
    ``require_significance``: a rule blocks only when the segment's Holm-adjusted p (the
    replay's cluster sign-flip test) is also under ``alpha``; off by default, because a replay
    grades the very calls a release would have served, and the point estimate is what those
    candidates would have got. ``dimensions``: which segment dimensions are checked (default
    all the replay measured). ``max_heard_nothing_rise``: turns B heard nothing of (its VAD
    found no speech) beyond A's count that block (turns; such turns are not paired, so no
    mean or flip sees them)."""

    enabled: bool = True
    max_heard_nothing_rise: int = Field(0, ge=0)
    max_mean_drop_points: float = Field(5.0, ge=0.0, le=100.0)
    max_flip_rate: float = Field(0.05, ge=0.0, le=1.0)
    min_calls: int = Field(3, ge=1)
    require_significance: bool = False
    dimensions: tuple[str, ...] | None = None


class BudgetPolicy(_Strict):
    """Turn-taking budgets per profile over a campaign's real calls (docs/calls.md,
    "Turn-taking and conduct"; :mod:`rig.gate.budgets`): a profile whose figure is above its
    budget blocks, and the line names the profile and the budget. None: no budget (no line).
    ``latency_p95_ms``: the 95th percentile of its calls' ``response_latency_ms``;
    ``talk_over_rate``: talked-over turns / candidate turns (0-1)."""

    latency_p95_ms: float | None = Field(None, gt=0.0)
    talk_over_rate: float | None = Field(None, ge=0.0, le=1.0)


class GatePolicy(_Strict):
    """The gate policy (``gate.yaml``); every field has a default (``{}`` is the default policy;
    an empty file is refused).

    ``alpha``: family-wise error rate of all the gate's tests together (Holm). ``n_boot`` and
    ``seed``: bootstrap settings of the per-profile tables written to gate.json.
    """

    alpha: float = Field(0.05, gt=0.0, lt=1.0)
    baseline_profile: str = "baseline"
    n_boot: int = Field(1000, ge=0)
    seed: int = 0
    fail_on_not_computable: bool = False
    flip: FlipPolicy = FlipPolicy()
    impact: ImpactPolicy = ImpactPolicy()
    faults: FaultGatePolicy = FaultGatePolicy()
    versions: VersionPolicy = VersionPolicy()
    replay: ReplayPolicy = ReplayPolicy()
    budgets: BudgetPolicy = BudgetPolicy()


def load_policy(path: str | Path | None) -> GatePolicy:
    """Read a gate policy YAML (None or ``{}``: the defaults; an empty file is a ConfigError).

    Raises:
        ConfigError: the file is missing, is not YAML, or a field is invalid (names the file,
            the field and the value).
    """
    if path is None:
        return GatePolicy()
    data = read_yaml(path)  # missing, not UTF-8, not YAML, a duplicate key: ConfigError
    return load_model(path, GatePolicy, {} if data is None else data)
