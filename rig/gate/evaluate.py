"""The gate's run: every check, one Holm family over their tests, the verdict, gate.json."""

from __future__ import annotations

import json
from pathlib import Path

from rig.gate.attribution import with_attribution
from rig.gate.budgets import budget_checks
from rig.gate.campaigns import Campaign, load_campaign
from rig.gate.faults import fault_checks
from rig.gate.flips import flip_checks
from rig.gate.impact import impact_checks
from rig.gate.policy import GatePolicy, load_policy
from rig.gate.result import GateCheck, GateResult, Verdict
from rig.gate.versions import version_checks
from rig.paths import write_text_atomic
from rig.stats.equivalence import holm
from rig.stats.paired import CampaignScores, campaign_scores


def decide(checks: list[GateCheck], policy: GatePolicy) -> list[GateCheck]:
    """Holm-adjust the p-values of all ``checks`` as one family and set which lines block: a
    flip rate that rose beyond its margin, or an impact ratio below the threshold with volume,
    when the adjusted p is below ``alpha``; a line not computable when the policy fails
    closed."""
    adjusted = holm([c.p_value if c.computable else None for c in checks], policy.alpha)
    m = sum(1 for c in checks if c.computable and c.p_value is not None)
    out = []
    for c, (padj, _rej) in zip(checks, adjusted, strict=True):
        blocked = c.blocked
        reason = c.reason
        significant = padj is not None and padj < policy.alpha
        if c.check in ("flip_rate", "fault_rate") and c.computable:
            rise = c.detail["rise"]
            practical = rise > float(c.threshold)  # type: ignore[arg-type]
            blocked = practical and significant
            reason += f"; Holm p {padj:.3g}" if padj is not None else ""
            if blocked:
                reason = ("flip rate rose beyond the noise floor: " if c.check == "flip_rate"
                          else "more answers lost as faults: ") + reason
            elif practical:
                reason = ("rise beyond the margin but does not block: not significant after "
                          f"Holm correction across {m} tests: " + reason)
            elif significant:
                reason = ("significant but within the margin (no larger than the noise floor"
                          "), so it does not block: " + reason)
        elif c.check in ("selection_rate_ratio", "scoring_rate_ratio") and c.computable:
            practical = c.value is not None and float(c.value) < policy.impact.threshold
            blocked = practical and bool(c.detail.get("volume")) and significant
            reason += f"; Holm p {padj:.3g}" if padj is not None else ""
            if blocked:
                reason = "impact ratio below the threshold with volume and significance: " + \
                    reason
            elif practical:
                why = []
                if not c.detail.get("volume"):
                    why.append(f"too little volume (min_n {policy.impact.min_n})")
                if not significant:
                    why.append(f"not significant after Holm correction across {m} tests")
                if c.detail.get("existing_breach"):
                    why.append("already below the threshold in the previous release")
                reason = "below the threshold but does not block: " + "; ".join(why) + \
                    ": " + reason
        if not c.computable and policy.fail_on_not_computable:
            blocked = True
            reason = "not computable and the policy fails closed: " + reason
        out.append(GateCheck(c.check, c.subject, c.value, c.previous, c.threshold, c.p_value,
                             padj, blocked, c.computable, reason, c.detail))
    return out


def evaluate_gate(candidate: Campaign, previous: Campaign, policy: GatePolicy | None = None,
                  include_tables: bool = True) -> GateResult:
    """Run the gate's checks on two campaigns (see the module docstring).

    ``include_tables``: add each release's per-profile paired table to the result's context
    (gate.json); simulations switch it off for speed.

    Raises:
        RowsError: rows of either campaign are malformed or lack the baseline profile (names
            the file, the column and the value).
    """
    policy = policy or GatePolicy()
    notes: list[str] = []
    cs = campaign_scores(candidate.rows, policy.baseline_profile)
    ps = campaign_scores(previous.rows, policy.baseline_profile)
    checks: list[GateCheck] = []
    checks += version_checks(candidate, previous, policy.versions)
    if policy.flip.enabled:
        checks += flip_checks(cs, ps, policy.flip, notes)
    if policy.impact.enabled:
        checks += impact_checks(cs, ps, candidate, previous, policy.impact)
    if policy.faults.enabled:
        checks += fault_checks(candidate, previous, policy.faults)
    checks += budget_checks(candidate, policy)
    checks = with_attribution(decide(checks, policy), candidate, previous, policy)
    verdict: Verdict = "block" if any(c.blocked for c in checks) else "pass"

    def context(c: Campaign, s: CampaignScores) -> dict:
        info: dict = {"name": c.name, "pipeline_version": c.pipeline_version,
                      "n_calls": len(s.calls), "n_parse_failures": int(s.calls["failed"].sum()),
                      "noise_floor": s.noise_floor().to_dict()}
        if include_tables:
            info["profiles"] = {k: v.to_dict() for k, v in
                                s.paired(policy.n_boot, policy.seed).table.items()}
        return info

    return GateResult(verdict, tuple(checks), policy, context(candidate, cs),
                      context(previous, ps), tuple(notes))


def run_gate(candidate_dir: str | Path, previous_dir: str | Path,
             policy_path: str | Path | None = None, out: str | Path | None = None
             ) -> GateResult:
    """Load both campaign folders and the policy, evaluate, write ``gate.json``.

    ``out`` defaults to ``CANDIDATE_DIR/gate.json``.

    Raises:
        ConfigError: a folder, calls file, summary or policy is missing or malformed (names the
            file, the field and the value).
    """
    policy = load_policy(policy_path)
    cand, prev = load_campaign(candidate_dir), load_campaign(previous_dir)
    result = evaluate_gate(cand, prev, policy)
    path = Path(out) if out is not None else Path(candidate_dir) / "gate.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(result.to_dict(), indent=2, allow_nan=False))
    return result
