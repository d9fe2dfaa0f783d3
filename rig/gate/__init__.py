"""The release gate: may this pipeline release ship, compared with the previous one?

``rig gate CANDIDATE_DIR --baseline PREVIOUS_DIR [--policy gate.yaml]`` reads two campaign
folders (each with ``calls.parquet`` or ``calls.csv``, and optionally ``summary.json``), runs the
checks below, writes ``gate.json`` and exits 0 (pass), 1 (blocked, with a table of reasons) or
2 (bad input).

Checks (each can be switched off in the policy):

1. **Pipeline version.** With ``versions.allow_change: false`` any change of
   ``pipeline_version`` blocks. ``versions.forbid_changes`` lists dotted keys of the resolved
   pipeline configuration (``summary.json``'s ``pipeline`` mapping, or a ``pipeline.yaml`` /
   ``pipeline.json`` in the folder), e.g. ``scorer.model``; a change in any of them blocks.
   When a version is not recorded, or the versions differ and a folder records no
   configuration, the gate cannot show that the forbidden parts are unchanged and blocks
   (version rules fail closed).
2. **Flip rate.** For each profile present in both releases, the flip rates (MEASUREMENT.md,
   "Flip") are compared on the answers both releases scored. It blocks when the rise
   (candidate - previous) exceeds the margin = max(``flip.min_rise``, the noise-floor flip
   rate) **and** the rise is significant: exact one-sided McNemar test (McNemar 1947, in its
   binomial form) on the answers whose flip status changed: b = answers that flip only in the
   candidate, c = only in the previous release, p = P(Binomial(b + c, 1/2) >= b). The noise
   floor is, per profile, the flip rate under no change of the same kind of decision as the
   profile's (the mean of the profile's repeats against the mean of the baseline's, at the
   repeat counts the release used: :meth:`rig.stats.noise.NoiseFloor.flip_rate_averaged`), not
   the flip rate between single repeats, which is wider when repeats are averaged. It is the
   previous release's (the reference the release is held to; a noisier candidate must not
   loosen its own gate), or the candidate's when the previous one's is not measured (single
   repeats, or identical ones).
3. **Impact ratios** of the candidate by ``impact.by`` (default: profile): selection rates
   (four-fifths rule, 29 CFR 1607.4(D)) by default, and LL144 scoring rates when
   ``impact.kinds`` lists ``scoring``. Repeats are averaged per
   (answer, profile) first, so a category's n counts answers, not re-runs of the same answer.
   A category's ratio *falls below* the threshold when, all at once: its ratio is below
   ``impact.threshold``; it has volume (the category and the highest category each have at
   least ``impact.min_n`` rows); and it is significant, which takes two tests that must both
   reject (an intersection-union test, p = the larger of the two): the disparity against the
   highest category in the candidate (z-test or Fisher's exact test, per ``impact.test``), and
   the fall of the category's own rate from the previous release (exact one-sided McNemar
   test on the rows matched by answer and profile; a one-sided two-proportion z-test when no
   row matches). A ratio that fell only because the top category rose, or a breach already
   there in the previous release that did not significantly worsen, is reported and does not
   block, unless ``impact.block_existing`` is true: then the disparity test alone decides, and
   a release that changed nothing is blocked for as long as a breach lasts. A category new in
   the candidate is judged on the disparity test alone.

All the statistical tests of one gate run form one family: their p-values are Holm-adjusted
(Holm 1979) and compared with ``alpha``, so a release that changed nothing is blocked with
probability at most ``alpha`` (``benchmarks/stats_simulation.py`` measures it). A check that
cannot be computed is reported and does not block unless ``fail_on_not_computable`` is true.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, Field

from rig.config import load_model
from rig.errors import ConfigError
from rig.stats.common import NotComputable, jsonable
from rig.stats.equivalence import holm
from rig.stats.paired import CampaignScores, campaign_scores
from rig.stats.rates import (
    RateTable,
    category_labels,
    mcnemar_one_sided,
    scoring_rate_table,
    selection_rate_table,
    two_proportion_ztest,
)
from rig.stats.rows import RowsError, read_rows, require_columns

CheckKind = Literal["pipeline_version", "pipeline_config", "flip_rate", "selection_rate_ratio",
                    "scoring_rate_ratio"]
Verdict = Literal["pass", "block"]
CALLS_FILES = ("calls.parquet", "calls.csv")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FlipPolicy(_Strict):
    """Flip-rate check. ``min_rise`` (share, 0-1) is the smallest rise that can block, used
    when it exceeds the noise-floor flip rate (``use_noise_floor``: the no-change flip rate of
    decisions on repeat-averaged scores, per profile; see the module docstring)."""

    enabled: bool = True
    min_rise: float = Field(0.0, ge=0.0, le=1.0)
    use_noise_floor: bool = True


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


class GatePolicy(_Strict):
    """The gate policy (``gate.yaml``); every field has a default, so an empty file is valid.

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
    versions: VersionPolicy = VersionPolicy()


def load_policy(path: str | Path | None) -> GatePolicy:
    """Read a gate policy YAML (None: the defaults; an empty file: the defaults).

    Raises:
        ConfigError: the file is missing, is not YAML, or a field is invalid (names the file,
            the field and the value).
    """
    if path is None:
        return GatePolicy()
    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, "", "file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(path, "", f"not valid YAML: {exc}") from exc
    return load_model(path, GatePolicy, {} if data is None else data)


@dataclass(frozen=True)
class Campaign:
    """One release's campaign: its call rows and what its folder says about the pipeline."""

    name: str
    rows: pd.DataFrame
    pipeline_version: str | None = None
    pipeline: dict | None = None

    @classmethod
    def from_rows(cls, rows: pd.DataFrame, name: str = "rows",
                  pipeline: dict | None = None) -> Campaign:
        """Wrap rows; the pipeline version comes from their ``pipeline_version`` column."""
        rows = rows.copy(deep=False)
        rows.attrs.setdefault("source", name)
        return cls(name, rows, _version_from_rows(rows), pipeline)


def _version_from_rows(rows: pd.DataFrame) -> str | None:
    if "pipeline_version" not in rows.columns:
        return None
    versions = sorted(map(str, rows["pipeline_version"].dropna().unique()))
    if len(versions) > 1:
        raise RowsError(rows.attrs.get("source", "rows"), "pipeline_version",
                        "a campaign must have one pipeline version", versions, has_value=True)
    return versions[0] if versions else None


def load_campaign(folder: str | Path) -> Campaign:
    """Read a campaign folder: ``calls.parquet`` (or ``calls.csv``), ``summary.json`` if any
    (``pipeline_version``, ``pipeline``), and ``pipeline.yaml``/``pipeline.json`` if any.

    Raises:
        ConfigError: the folder or its calls file is missing, a file is unreadable, or the rows
            hold several pipeline versions or disagree with summary.json (names file, field,
            value).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(folder, "", "campaign folder not found")
    calls = next((folder / f for f in CALLS_FILES if (folder / f).is_file()), None)
    if calls is None:
        raise ConfigError(folder, "", f"no {' or '.join(CALLS_FILES)} in the campaign folder")
    rows = read_rows(calls)
    version = _version_from_rows(rows)
    pipeline = None
    summary_path = folder / "summary.json"
    if summary_path.is_file():
        try:
            summary = json.loads(summary_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(summary_path, "", f"not valid JSON: {exc}") from exc
        if not isinstance(summary, dict):
            raise ConfigError(summary_path, "", "expected a JSON object", type(summary).__name__,
                              has_value=True)
        sv = summary.get("pipeline_version")
        if sv is not None and version is not None and str(sv) != version:
            raise ConfigError(summary_path, "pipeline_version",
                              f"differs from the rows' pipeline_version {version!r}", sv,
                              has_value=True)
        version = version or (None if sv is None else str(sv))
        if isinstance(summary.get("pipeline"), dict):
            pipeline = summary["pipeline"]
    for name in ("pipeline.yaml", "pipeline.json"):
        p = folder / name
        if pipeline is None and p.is_file():
            try:
                text = p.read_text(encoding="utf-8")
                data = json.loads(text) if name.endswith(".json") else yaml.safe_load(text)
            except (OSError, json.JSONDecodeError, yaml.YAMLError) as exc:
                raise ConfigError(p, "", f"cannot read: {exc}") from exc
            if isinstance(data, dict):
                pipeline = data
    return Campaign(str(folder), rows, version, pipeline)


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


def _get(d: dict | None, dotted: str) -> tuple[bool, object]:
    cur: object = d
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return False, None
        cur = cur[part]
    return True, cur


def _version_checks(cand: Campaign, prev: Campaign, vp: VersionPolicy) -> list[GateCheck]:
    out = []
    same = cand.pipeline_version == prev.pipeline_version
    known = cand.pipeline_version is not None and prev.pipeline_version is not None
    if not vp.allow_change:
        if not known:
            out.append(GateCheck("pipeline_version", "pipeline_version", cand.pipeline_version,
                                 prev.pipeline_version, "same", None, None, True, False,
                                 "cannot verify that the version is unchanged: a campaign "
                                 "records no pipeline_version"))
        else:
            out.append(GateCheck(
                "pipeline_version", "pipeline_version", cand.pipeline_version,
                prev.pipeline_version, "same", None, None, not same, True,
                "pipeline version changed and the policy allows no change" if not same
                else "same pipeline version"))
    for key in vp.forbid_changes:
        has_c, vc = _get(cand.pipeline, key)
        has_p, vpv = _get(prev.pipeline, key)
        if has_c and has_p:
            changed = vc != vpv
            out.append(GateCheck("pipeline_config", key, jsonable(vc), jsonable(vpv),  # type: ignore[arg-type]
                                 "unchanged", None, None, changed, True,
                                 f"{key} changed and the policy forbids it" if changed
                                 else "unchanged"))
        elif known and same:
            out.append(GateCheck("pipeline_config", key, None, None, "unchanged", None, None,
                                 False, True, "same pipeline version, so unchanged"))
        else:
            out.append(GateCheck(
                "pipeline_config", key, None, None, "unchanged", None, None, True, False,
                f"cannot verify that {key} is unchanged: the versions differ (or are unknown) "
                "and a campaign folder records no pipeline configuration with this key"))
    return out


def _flip_checks(cand: CampaignScores, prev: CampaignScores, fp: FlipPolicy,
                 notes: list[str]) -> list[GateCheck]:
    fc, fpv = cand.flips(), prev.flips()
    if fc is None or fpv is None:
        which = "candidate" if fc is None else "previous release"
        return [GateCheck("flip_rate", "*", None, None, None, None, None, False, False,
                          f"the {which} has no decisions to compare (no cutoff column)")]
    out = []
    no_floor: list[str] = []
    for p in sorted(set(fc) | set(fpv)):
        if p not in fc or p not in fpv:
            notes.append(f"profile {p!r} is only in the "
                         f"{'candidate' if p in fc else 'previous release'}; not compared")
            continue
        margin, source = fp.min_rise, "policy min_rise"
        if fp.use_noise_floor:
            nf, nf_source = _flip_floor(prev, cand, p)
            if nf is None:
                no_floor.append(f"{p} ({nf_source})")
            elif nf > margin:
                margin, source = nf, nf_source
        both = pd.concat([fc[p].rename("c"), fpv[p].rename("p")], axis=1, join="inner")
        if both.empty:
            out.append(GateCheck("flip_rate", p, None, None, margin, None, None, False, False,
                                 "no answer scored in both releases"))
            continue
        rc, rp = float(both["c"].mean()), float(both["p"].mean())
        b = int(((both["c"] == 1) & (both["p"] == 0)).sum())
        c = int(((both["c"] == 0) & (both["p"] == 1)).sum())
        out.append(GateCheck(
            "flip_rate", p, rc, rp, margin, mcnemar_one_sided(b, c), None, False, True,
            f"flip rate {rc:.3f} vs {rp:.3f} (rise {rc - rp:+.3f}; margin {margin:.3f}, "
            f"{source})",
            {"n_answers": len(both), "rise": rc - rp, "only_candidate_flips": b,
             "only_previous_flips": c}))
    if no_floor:
        notes.append("no noise-floor flip rate for " + "; ".join(no_floor) + ": the flip "
                     f"margin there is the policy's min_rise {fp.min_rise:g}")
    return out


def _flip_floor(prev: CampaignScores, cand: CampaignScores, profile: str
                ) -> tuple[float | None, str]:
    """The no-change flip rate of ``profile``'s kind of decision: the previous release's
    baseline noise at the previous release's repeat counts, else the candidate's. Returns
    (rate, where it comes from), or (None, why not)."""
    why = []
    for name, s in (("previous release", prev), ("candidate", cand)):
        try:
            rate = s.no_change_flip_rate(profile)
        except NotComputable as exc:
            why.append(f"{name}: {exc.reason}")
            continue
        sizes = s.repeat_counts(profile) or (0, 0)
        return rate, (f"no-change flip rate of {sizes[0]}- vs {sizes[1]}-repeat means, "
                      f"{name}")
    return None, "; ".join(why)


def _averaged_with_segments(scores: CampaignScores, raw: pd.DataFrame, ip: ImpactPolicy,
                            source: str) -> pd.DataFrame:
    avg = scores.averaged()
    extra = [c for c in ip.by if c not in avg.columns]
    if extra:
        require_columns(raw, extra, "impact.by of the gate policy")
        seg = raw.loc[scores.calls.index, extra]
        seg = seg.assign(answer_id=scores.calls["answer_id"],
                         profile_id=scores.calls["profile_id"])
        first = seg.groupby(["answer_id", "profile_id"])[extra].first().reset_index()
        avg = avg.merge(first, on=["answer_id", "profile_id"], how="left")
    avg.attrs["source"] = source
    return avg


def _rate_table(avg: pd.DataFrame, kind: str, ip: ImpactPolicy) -> RateTable:
    if kind == "selection":
        return selection_rate_table(avg, ip.by, "decision", min_share=ip.min_share,
                                    threshold=ip.threshold, pooled=ip.pooled, min_n=ip.min_n)
    return scoring_rate_table(avg, ip.by, "score", min_share=ip.min_share,
                              threshold=ip.threshold, pooled=ip.pooled, min_n=ip.min_n)


def _row_hits(avg: pd.DataFrame, kind: str, by: tuple[str, ...]) -> pd.DataFrame:
    """Per (answer, profile) row: its category and whether it is a hit (advanced, or scored
    strictly above this release's median)."""
    if kind == "selection":
        hit = avg["advance"]
    else:
        hit = (avg["score"] > avg["score"].median()).astype(float)
    return pd.DataFrame({"answer_id": avg["answer_id"], "profile_id": avg["profile_id"],
                         "category": category_labels(avg, by), "hit": hit}).dropna()


def _fall_tests(now: pd.DataFrame, before: pd.DataFrame) -> dict[str, tuple[float | None,
                                                                          str]]:
    """Per category, a one-sided test that its rate fell: exact McNemar on the rows matched by
    (answer, profile) across the releases; a one-sided pooled two-proportion z-test when no
    row matches."""
    keys = ["answer_id", "profile_id", "category"]
    both = now.merge(before, on=keys, suffixes=("_now", "_before"))
    lost = ((both["hit_before"] == 1) & (both["hit_now"] == 0)).groupby(both["category"]).sum()
    gained = ((both["hit_before"] == 0) & (both["hit_now"] == 1)).groupby(
        both["category"]).sum()
    matched = both.groupby("category").size()
    n_now, x_now = now.groupby("category")["hit"].size(), now.groupby("category")["hit"].sum()
    n_bef = before.groupby("category")["hit"].size()
    x_bef = before.groupby("category")["hit"].sum()
    out: dict[str, tuple[float | None, str]] = {}
    for cat in set(n_now.index) | set(n_bef.index):
        m = int(matched.get(cat, 0))
        if m:
            b, c = int(lost.get(cat, 0)), int(gained.get(cat, 0))
            out[cat] = (mcnemar_one_sided(b, c),
                        f"exact McNemar on {m} matched rows: {b} lost, {c} gained")
        elif cat not in n_now.index or cat not in n_bef.index:
            out[cat] = (None, "the category has no rows in one of the releases")
        else:
            z = two_proportion_ztest(float(x_bef[cat]), int(n_bef[cat]), float(x_now[cat]),
                                     int(n_now[cat]), alternative="larger")
            out[cat] = (z.p_value, "two-proportion z-test (no matched rows)"
                        + (f": {z.reason}" if z.reason else ""))
    return out


def _impact_checks(cand: CampaignScores, prev: CampaignScores, candidate: Campaign,
                   previous: Campaign, ip: ImpactPolicy) -> list[GateCheck]:
    ca = _averaged_with_segments(cand, candidate.rows, ip, candidate.name)
    pa = _averaged_with_segments(prev, previous.rows, ip, previous.name)
    out = []
    for kind in ip.kinds:
        table, old_table = _rate_table(ca, kind, ip), _rate_table(pa, kind, ip)
        check: CheckKind = "selection_rate_ratio" if kind == "selection" else \
            "scoring_rate_ratio"
        before = {c.category: c for c in old_table.by_group}
        ref = next((c for c in table.by_group if c.is_reference), None)
        falls = _fall_tests(_row_hits(ca, kind, ip.by), _row_hits(pa, kind, ip.by)) \
            if not ip.block_existing else {}
        for cat in table.by_group:
            if cat.is_reference or ref is None:
                continue
            old = before.get(cat.category)
            pr = None if old is None else old.impact_ratio
            if cat.impact_ratio is None:
                out.append(GateCheck(check, cat.category, None, pr, ip.threshold, None, None,
                                     False, False, cat.not_computable.get(
                                         "impact_ratio", "impact ratio not computable")))
                continue
            p_disp = cat.p_fisher if ip.test == "fisher" else cat.p_z
            p_fall, fall_note = (None, "fall test: not needed")
            if old is not None and not ip.block_existing:
                p_fall, fall_note = falls.get(cat.category, (None, "no rows to compare"))
            volume = cat.n >= ip.min_n and ref.n >= ip.min_n
            reason = (f"{kind} rate ratio {cat.impact_ratio:.3f} vs {table.reference} "
                      f"(was {'n/a' if pr is None else f'{pr:.3f}'}; threshold "
                      f"{ip.threshold:g}; n {cat.n} and {ref.n}, min_n {ip.min_n})")
            if ip.block_existing or old is None:
                pval = p_disp
            elif p_fall is None or p_disp is None:
                pval = None
            else:
                pval = max(p_disp, p_fall)  # intersection-union: both must reject
            if p_disp is None:
                reason += "; disparity test not computable: " + cat.not_computable.get("z", "")
            detail = {"rate": cat.rate, "reference": table.reference,
                      "reference_rate": ref.rate, "n": cat.n, "reference_n": ref.n,
                      "z": cat.z, "p_z": cat.p_z, "p_fisher": cat.p_fisher,
                      "p_disparity": p_disp, "p_fall": p_fall, "fall_test": fall_note,
                      "previous_rate": None if old is None else old.rate,
                      "volume": volume, "small_sample": cat.small_sample,
                      "existing_breach": bool(pr is not None and pr < ip.threshold)}
            out.append(GateCheck(check, cat.category, cat.impact_ratio, pr, ip.threshold, pval,
                                 None, False, True, reason, detail))
    return out


def _decide(checks: list[GateCheck], policy: GatePolicy) -> list[GateCheck]:
    adjusted = holm([c.p_value if c.computable else None for c in checks], policy.alpha)
    m = sum(1 for c in checks if c.computable and c.p_value is not None)
    out = []
    for c, (padj, _rej) in zip(checks, adjusted, strict=True):
        blocked = c.blocked
        reason = c.reason
        significant = padj is not None and padj < policy.alpha
        if c.check == "flip_rate" and c.computable:
            rise = c.detail["rise"]
            practical = rise > float(c.threshold)  # type: ignore[arg-type]
            blocked = practical and significant
            reason += f"; Holm p {padj:.3g}" if padj is not None else ""
            if blocked:
                reason = "flip rate rose beyond the noise floor: " + reason
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
    checks += _version_checks(candidate, previous, policy.versions)
    if policy.flip.enabled:
        checks += _flip_checks(cs, ps, policy.flip, notes)
    if policy.impact.enabled:
        checks += _impact_checks(cs, ps, candidate, previous, policy.impact)
    checks = _decide(checks, policy)
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
    path.write_text(json.dumps(result.to_dict(), indent=2, allow_nan=False), encoding="utf-8")
    return result
