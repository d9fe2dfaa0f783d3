"""The gate on a replay folder: may version B ship, judged on the recorded interviews that
version A served? (``rig gate REPLAY_DIR [--policy gate.yaml]``; rules:
:class:`rig.gate.policy.ReplayPolicy`.)

Each rule runs on the whole replay (``all``) and on every segment of the replay's
``summary.json`` with at least ``min_calls`` interviews: a mean drop (B - A below
``-max_mean_drop_points``) blocks, and so does a flip rate above ``max_flip_rate`` (or the
no-change flip floor, when measured and larger), and so do more turns B heard nothing of
than A (``max_heard_nothing_rise``). A segment under ``min_calls`` is listed as
not computable and does not block (unless ``fail_on_not_computable``); a dimension whose
turns all fall in one segment repeats ``all`` and is not checked again. A replay in which no
turn was scored under both versions, or with fewer than ``min_calls`` interviews in all,
cannot show B is safe and blocks.
"""

from __future__ import annotations

import json
from pathlib import Path

from rig.errors import ConfigError
from rig.gate.policy import GatePolicy, load_policy
from rig.gate.result import GateCheck, GateResult, Verdict
from rig.jsonfile import read_json
from rig.paths import write_text_atomic


def is_replay_folder(path: str | Path) -> bool:
    """True when ``path`` holds a replay's outputs (``replay.json``)."""
    return (Path(path) / "replay.json").is_file()


def _load_summary(folder: Path) -> dict:
    path = folder / "summary.json"
    if not path.is_file():
        raise ConfigError(path, "", "missing: rerun rig replay to write it")
    s = read_json(path)
    if not isinstance(s, dict) or s.get("kind") != "replay":
        raise ConfigError(path, "kind", "a replay's summary (kind: replay)",
                          s.get("kind") if isinstance(s, dict) else s, True)
    return s


def _groups(summary: dict, dims: tuple[str, ...] | None) -> list[tuple[str, dict]]:
    """``all`` and each segment, leaving out a dimension whose turns all fall in one segment
    (it repeats ``all``)."""
    out = [("all", summary["overall"])] if summary.get("overall") else []
    for dim, segs in summary.get("segments", {}).items():
        if (dims is not None and dim not in dims) or any(s.get("same_as_all")
                                                         for s in segs.values()):
            continue
        out += [(f"{dim}={seg}", s) for seg, s in segs.items()]
    return out


def _ci(ci: list | None) -> str:
    return "no CI under 5 interviews" if not ci else f"95% CI [{ci[0]:+.1f}, {ci[1]:+.1f}]"


def replay_checks(summary: dict, policy: GatePolicy) -> list[GateCheck]:
    """The gate's lines for one replay summary (see the module docstring)."""
    rp = policy.replay
    floor = (summary.get("flip_floor") or {}).get("rate")
    flip_limit = max(rp.max_flip_rate, floor or 0.0)
    checks: list[GateCheck] = []
    groups = _groups(summary, rp.dimensions)
    if not groups or not summary["overall"]["n_pairs"]:
        return [GateCheck("replay_mean_drop", "all", None, None, -rp.max_mean_drop_points,
                          None, None, True, False, "no turn was scored under both versions: "
                          "the replay cannot show B is safe")]
    overall = summary["overall"]
    if overall["n_calls"] < rp.min_calls:  # fails closed, as with no paired turn
        return [GateCheck(
            "replay_mean_drop", "all", overall["mean_delta"], overall["mean_score_a"],
            -rp.max_mean_drop_points, overall.get("p"), None, True, False,
            f"{overall['n_calls']} interviews, under min_calls {rp.min_calls}: too few to "
            "judge B on (replay more recordings, or lower replay.min_calls)")]
    for subject, s in groups:
        small = s["n_calls"] < rp.min_calls
        why_small = f"{s['n_calls']} interviews, under min_calls {rp.min_calls}"
        # Holm across segments; the whole replay is one test of its own (not adjusted)
        p_holm = s.get("p_holm") if subject != "all" else None
        p_test = s.get("p") if subject == "all" else p_holm
        significant = p_test is not None and p_test < policy.alpha
        sig_ok = significant or not rp.require_significance
        d = s["mean_delta"]
        if small or d is None:
            checks.append(GateCheck("replay_mean_drop", subject, d, s["mean_score_a"],
                                    -rp.max_mean_drop_points, s.get("p"), p_holm, False, False,
                                    why_small if small else "no paired turn"))
        else:
            blocked = d < -rp.max_mean_drop_points and sig_ok
            checks.append(GateCheck(
                "replay_mean_drop", subject, d, s["mean_score_a"], -rp.max_mean_drop_points,
                s.get("p"), p_holm, blocked, True,
                f"B changes the mean score by {d:+.1f} points ({_ci(s['ci95'])}, "
                f"{s['n_pairs']} turns of {s['n_calls']} interviews); limit "
                f"-{rp.max_mean_drop_points:g}", {"ci95": s["ci95"]}))
        fr = s["flip_rate"]
        if small or fr is None:
            checks.append(GateCheck("replay_flip_rate", subject, fr, floor, flip_limit, None,
                                    None, False, False, why_small if small else "no decision"))
        else:  # no test of its own: require_significance reads the segment's delta test
            blocked = fr > flip_limit and sig_ok
            checks.append(GateCheck(
                "replay_flip_rate", subject, fr, floor, flip_limit, None, None, blocked, True,
                f"{s['flips']} of {s['n_decided']} decisions flip ({fr:.1%}; "
                f"{s['flips_advance_to_reject']} advance -> reject); limit {flip_limit:.1%}",
                {"flip_ci95": s["flip_ci95"]}))
        checks += _heard_nothing(subject, s, rp.max_heard_nothing_rise)
    return checks


def _heard_nothing(subject: str, s: dict, limit: int) -> list[GateCheck]:
    """Turns B heard nothing of (no speech found: not transcribed, not scored, not paired)
    beyond A's: more than ``limit`` blocks, since no mean or flip rate sees those turns."""
    if "heard_nothing_b" not in s:
        return []
    hb, ha = int(s["heard_nothing_b"]), int(s.get("heard_nothing_a") or 0)
    return [GateCheck("replay_heard_nothing", subject, hb, ha, limit, None, None,
                      hb - ha > limit, True,
                      f"B heard nothing of {hb} turns, A of {ha} (rise {hb - ha:+d}; limit "
                      f"+{limit}): those answers were not scored")]


def run_replay_gate(folder: str | Path, policy_path: str | Path | None = None,
                    out: str | Path | None = None) -> GateResult:
    """Judge a replay folder; writes ``gate.json`` (default ``FOLDER/gate.json``).

    Raises:
        ConfigError: the folder's summary or the policy is missing or malformed."""
    folder = Path(folder)
    policy = load_policy(policy_path)
    summary = _load_summary(folder)
    checks = replay_checks(summary, policy) if policy.replay.enabled else []
    if policy.fail_on_not_computable:
        checks = [c if c.computable else GateCheck(**{**c.__dict__, "blocked": True})
                  for c in checks]
    verdict: Verdict = "block" if any(c.blocked for c in checks) else "pass"
    v = summary["versions"]
    notes = []
    if v["A"]["result_source"] == "logged":
        notes.append("version A is the logged results stored with the recordings")
    if not policy.replay.enabled:
        notes.append("replay rules are switched off in the policy (replay.enabled: false)")
    res = GateResult(verdict, tuple(checks), policy, {"replay": str(folder), **v["B"]},
                     v["A"], tuple(notes))
    path = Path(out) if out is not None else folder / "gate.json"
    write_text_atomic(path, json.dumps(res.to_dict(), indent=2, allow_nan=False))
    return res
