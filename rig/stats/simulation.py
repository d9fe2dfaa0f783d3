"""Simulated campaigns with known truth, to check that rig's intervals and gate behave.

The model (points on the 0-100 scale). A bank of ``n_questions`` questions, each with one
strong, ``answers_per_question - 2`` borderline and one weak answer, a cutoff per question.
Each campaign draws every answer's true quality (strong: cutoff + 15, borderline: cutoff, weak:
cutoff - 15, each plus N(0, ``quality_sd``)) and every answer's true effect under each profile,
N(``profile_deltas[p]``, ``effect_sd``); the baseline's effect is 0. A call's score is quality +
effect + N(0, ``noise_sd``) call noise (scorer and channel), clipped to [0, 100]; with
probability ``parse_failure_rate`` the reply "does not parse" (score NaN). Repeats redraw only
the call noise.

The true mean delta of profile p is ``profile_deltas[p]``: the population mean of the
per-answer effects, which a 95% interval over a fresh draw of answers must cover 95% of the
time. Qualities sit far enough from 0 and 100 that clipping does not bias the truth.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rig.stats.paired import paired_by_profile


@dataclass(frozen=True)
class Design:
    """What a simulated campaign looks like (see the module docstring for the model)."""

    n_questions: int = 8
    answers_per_question: int = 4
    repeats: int = 3
    profile_deltas: dict[str, float] = field(default_factory=lambda: {
        "slow_pace": -1.0, "long_pauses": -6.0, "noise_10db": -3.0, "accent_gb": 0.0,
        "barge_in": -2.0, "narrowband": 1.0})
    effect_sd: float = 4.0
    noise_sd: float = 3.0
    quality_sd: float = 4.0
    cutoff: float = 65.0
    parse_failure_rate: float = 0.01
    pipeline_version: str = "sim-v1"

    @property
    def n_answers(self) -> int:
        return self.n_questions * self.answers_per_question


@dataclass(frozen=True)
class Bank:
    """One draw of the answers and of each profile's true per-answer effects."""

    answer_id: np.ndarray
    question_id: np.ndarray
    tier: np.ndarray
    quality: np.ndarray
    effects: dict[str, np.ndarray]


def draw_bank(design: Design, rng: np.random.Generator) -> Bank:
    """Draw answer qualities and per-answer profile effects (baseline effect 0)."""
    k = design.answers_per_question
    tiers = ["strong"] + ["borderline"] * (k - 2) + ["weak"]
    offset = {"strong": 15.0, "borderline": 0.0, "weak": -15.0}
    tier = np.array(tiers * design.n_questions)
    qid = np.repeat([f"q{i:02d}" for i in range(design.n_questions)], k)
    aid = np.array([f"{q}-a{j}" for q, j in zip(qid, list(range(k)) * design.n_questions,
                                                  strict=True)])
    quality = design.cutoff + np.array([offset[t] for t in tier]) + rng.normal(
        0.0, design.quality_sd, tier.size)
    effects = {"baseline": np.zeros(tier.size)}
    for p, d in design.profile_deltas.items():
        effects[p] = rng.normal(d, design.effect_sd, tier.size)
    return Bank(aid, qid, tier, quality, effects)


def simulate_calls(design: Design, bank: Bank, rng: np.random.Generator,
                   extra_effects: dict[str, float] | None = None,
                   pipeline_version: str | None = None) -> pd.DataFrame:
    """One campaign's call rows on ``bank`` (fresh call noise), in ``calls.parquet`` columns.

    ``extra_effects`` adds a shift (points) to a profile's effect on every answer, to simulate a
    release that changed something.
    """
    extra = extra_effects or {}
    profiles = list(bank.effects)
    n_a, n_p, n_r = bank.answer_id.size, len(profiles), design.repeats
    a_idx = np.tile(np.repeat(np.arange(n_a), n_r), n_p)
    p_idx = np.repeat(np.arange(n_p), n_a * n_r)
    rep = np.tile(np.arange(n_r), n_a * n_p)
    eff = np.stack([bank.effects[p] + extra.get(p, 0.0) for p in profiles])
    mean = bank.quality[a_idx] + eff[p_idx, a_idx]
    score = np.clip(mean + rng.normal(0.0, design.noise_sd, mean.size), 0.0, 100.0)
    failed = rng.random(mean.size) < design.parse_failure_rate
    score = np.where(failed, np.nan, score)
    cutoff = np.full(mean.size, design.cutoff)
    decision = np.where(failed, None, np.where(score >= cutoff, "advance", "reject"))
    return pd.DataFrame({
        "answer_id": bank.answer_id[a_idx], "question_id": bank.question_id[a_idx],
        "tier": bank.tier[a_idx], "profile_id": np.array(profiles)[p_idx], "repeat": rep,
        "score": score, "parse_status": np.where(failed, "invalid_json", "ok"),
        "cutoff": cutoff, "decision": decision, "wer": np.nan, "truncated": False,
        "pipeline_version": pipeline_version or design.pipeline_version})


def simulate_campaign(design: Design, seed: int) -> pd.DataFrame:
    """A fresh bank and one campaign's call rows, all drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    return simulate_calls(design, draw_bank(design, rng), rng)


@dataclass(frozen=True)
class Coverage:
    """How often the 95% intervals covered the true mean delta.

    ``boot`` and ``t``: share of all (campaign, profile) intervals that covered the truth;
    ``by_profile``: profile -> (bootstrap share, t share); ``n_intervals``: intervals counted per
    kind; ``n_missing``: intervals that were not computable (counted as not covering).
    """

    n_campaigns: int
    n_intervals: int
    boot: float
    t: float
    by_profile: dict[str, tuple[float, float]]
    n_missing: int


def coverage_study(n_campaigns: int, design: Design | None = None, seed: int = 2024,
                   n_boot: int = 2000) -> Coverage:
    """Simulate ``n_campaigns`` campaigns and count how often ``ci95`` and ``t_ci95`` of
    :func:`~rig.stats.paired.paired_by_profile` cover each profile's true mean delta."""
    design = design or Design()
    hits = {p: [0, 0] for p in design.profile_deltas}
    missing = 0
    for i in range(n_campaigns):
        rows = simulate_campaign(design, seed + i)
        table = paired_by_profile(rows, "baseline", n_boot=n_boot, seed=i)
        for p, truth in design.profile_deltas.items():
            row = table[p]
            for k, ci in enumerate((row.ci95, row.t_ci95)):
                if ci is None:
                    missing += 1
                elif ci[0] <= truth <= ci[1]:
                    hits[p][k] += 1
    n = n_campaigns * len(design.profile_deltas)
    return Coverage(
        n_campaigns=n_campaigns, n_intervals=n,
        boot=sum(h[0] for h in hits.values()) / n, t=sum(h[1] for h in hits.values()) / n,
        by_profile={p: (h[0] / n_campaigns, h[1] / n_campaigns) for p, h in hits.items()},
        n_missing=missing)


@dataclass(frozen=True)
class GateStudy:
    """How often the gate blocked. ``block_rate`` = blocked / releases; ``by_check``: check kind
    -> releases in which that kind of check blocked."""

    n_releases: int
    n_blocked: int
    block_rate: float
    by_check: dict[str, int]


def gate_study(n_releases: int, design: Design | None = None, seed: int = 7,
               extra_effects: dict[str, float] | None = None, policy: object = None
               ) -> GateStudy:
    """Simulate pairs of releases on the same answer bank and run the gate on each pair.

    Each pair draws one bank (answers and true profile effects), then the previous and the
    candidate campaign with fresh call noise. With ``extra_effects`` None the candidate changed
    nothing, so every block is a false block; with a shift (points) on a profile it measures the
    gate's power to catch that regression. ``policy``: a :class:`rig.gate.GatePolicy` (default:
    the defaults, with the bootstrap off since the gate does not use it).
    """
    from rig.gate import Campaign, GatePolicy, evaluate_gate  # the gate builds on rig.stats

    design = design or Design()
    pol = policy if policy is not None else GatePolicy(n_boot=0)
    blocked = 0
    by_check: dict[str, int] = {}
    for i in range(n_releases):
        rng = np.random.default_rng(seed + i)
        bank = draw_bank(design, rng)
        prev = simulate_calls(design, bank, rng)
        cand = simulate_calls(design, bank, rng, extra_effects)
        res = evaluate_gate(Campaign.from_rows(cand, "candidate"),
                            Campaign.from_rows(prev, "previous"), pol,  # type: ignore[arg-type]
                            include_tables=False)
        if res.verdict == "block":
            blocked += 1
            for kind in {c.check for c in res.checks if c.blocked}:
                by_check[kind] = by_check.get(kind, 0) + 1
    return GateStudy(n_releases, blocked, blocked / n_releases if n_releases else 0.0,
                     by_check)
