"""Check 1: the pipeline version and the configuration keys the policy forbids to change.

Version rules fail closed: when a version is not recorded, or the versions differ and a folder
records no configuration, the gate cannot show that a forbidden part is unchanged and blocks.
"""

from __future__ import annotations

from rig.gate.campaigns import Campaign
from rig.gate.policy import VersionPolicy
from rig.gate.result import GateCheck
from rig.stats.common import jsonable


def _get(d: dict | None, dotted: str) -> tuple[bool, object]:
    cur: object = d
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return False, None
        cur = cur[part]
    return True, cur


def version_checks(cand: Campaign, prev: Campaign, vp: VersionPolicy) -> list[GateCheck]:
    """The pipeline_version line (when the policy allows no change) and one pipeline_config
    line per key of ``vp.forbid_changes``; these lines block on their own (no test)."""
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
