"""The release gate: policy schema, campaign folders, each check, gate.json."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats

from rig.errors import ConfigError
from rig.gate import (
    Campaign,
    FlipPolicy,
    GatePolicy,
    ImpactPolicy,
    VersionPolicy,
    evaluate_gate,
    load_campaign,
    load_policy,
    run_gate,
)

pytestmark = pytest.mark.unit


def crafted(n: int = 40, profile: str = "same", version: str = "v1",
            repeats: int = 2) -> pd.DataFrame:
    """Baseline answers alternate 60/40 at cutoff 50 (identical repeats: no noise). Profile
    "p" is the same as the baseline ("same"), or pushes every advancing answer to 40
    ("broken"), or rejects everything from the start ("always_low")."""
    out = []
    for i in range(n):
        base = 60.0 if i % 2 == 0 else 40.0
        p_score = {"same": base, "broken": 40.0, "always_low": 40.0}[profile]
        for pid, s in (("baseline", base), ("p", p_score)):
            for r in range(repeats):
                out.append({"answer_id": f"a{i:03d}", "question_id": f"q{i // 4}",
                            "tier": "borderline", "profile_id": pid, "repeat": r,
                            "score": s + (0.5 if i % 4 == 0 else 0.0), "parse_status": "ok",
                            "cutoff": 50.0, "decision": "advance" if s >= 50 else "reject",
                            "pipeline_version": version})
    return pd.DataFrame(out)


def write_campaign(folder: Path, rows: pd.DataFrame, summary: dict | None = None,
                   fmt: str = "parquet") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if fmt == "parquet":
        rows.to_parquet(folder / "calls.parquet")
    else:
        rows.to_csv(folder / "calls.csv", index=False)
    if summary is not None:
        (folder / "summary.json").write_text(json.dumps(summary))
    return folder


def gate(cand: pd.DataFrame, prev: pd.DataFrame, policy: GatePolicy | None = None,
         cand_pipeline: dict | None = None, prev_pipeline: dict | None = None):
    return evaluate_gate(Campaign.from_rows(cand, "cand", cand_pipeline),
                         Campaign.from_rows(prev, "prev", prev_pipeline),
                         policy or GatePolicy(n_boot=0))


# -- policy ---------------------------------------------------------------------------------


def test_default_policy_and_empty_file(tmp_path: Path) -> None:
    assert load_policy(None) == GatePolicy()
    f = tmp_path / "gate.yaml"
    f.write_text("")  # an emptied policy file must not silently loosen the gate
    with pytest.raises(ConfigError, match=r"gate\.yaml: the file is empty"):
        load_policy(f)
    f.write_text("alpha: 0.01\nimpact:\n  min_n: 50\n  kinds: [selection, scoring]\n")
    pol = load_policy(f)
    assert pol.alpha == 0.01 and pol.impact.min_n == 50
    assert pol.impact.kinds == ("selection", "scoring")


@pytest.mark.parametrize(("text", "field", "value"), [
    ("alpha: 2\n", "alpha", "2"),
    ("flip:\n  min_rise: -0.1\n", "flip.min_rise", "-0.1"),
    ("impact:\n  kinds: [gender]\n", "impact.kinds[0]", "'gender'"),
    ("versions:\n  allow_changes: false\n", "versions.allow_changes", "False"),
])
def test_bad_policy_names_file_field_and_value(tmp_path: Path, text: str, field: str,
                                               value: str) -> None:
    f = tmp_path / "gate.yaml"
    f.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_policy(f)
    msg = str(err.value)
    assert msg.startswith(str(f)) and f"{field}:" in msg and f"(got {value})" in msg


def test_missing_or_broken_policy_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_policy(tmp_path / "nope.yaml")
    f = tmp_path / "gate.yaml"
    f.write_text("alpha: [1,\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_policy(f)
    f.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_policy(f)


# -- campaign folders -----------------------------------------------------------------------


def test_load_campaign_reads_parquet_or_csv_and_summary(tmp_path: Path) -> None:
    a = write_campaign(tmp_path / "a", crafted(), {"pipeline_version": "v1",
                                                   "pipeline": {"scorer": {"model": "m"}}})
    c = load_campaign(a)
    assert c.pipeline_version == "v1" and c.pipeline == {"scorer": {"model": "m"}}
    b = write_campaign(tmp_path / "b", crafted().drop(columns=["pipeline_version"]),
                       {"pipeline_version": "v9"}, fmt="csv")
    assert load_campaign(b).pipeline_version == "v9"


def test_load_campaign_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="campaign folder not found"):
        load_campaign(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"no calls\.parquet or calls\.csv"):
        load_campaign(tmp_path / "empty")
    bad = write_campaign(tmp_path / "bad", crafted())
    (bad / "summary.json").write_text("{not json")
    with pytest.raises(ConfigError, match=r"summary\.json: not valid JSON"):
        load_campaign(bad)
    mixed = crafted()
    mixed.loc[0, "pipeline_version"] = "v2"
    write_campaign(tmp_path / "mixed", mixed)
    with pytest.raises(ConfigError, match=r"pipeline_version: a campaign must have one"):
        load_campaign(tmp_path / "mixed")
    write_campaign(tmp_path / "disagree", crafted(), {"pipeline_version": "v7"})
    with pytest.raises(ConfigError, match="differs from the rows"):
        load_campaign(tmp_path / "disagree")


# -- checks -----------------------------------------------------------------------------------


def test_no_change_passes() -> None:
    res = gate(crafted(), crafted())
    assert res.verdict == "pass" and res.exit_code == 0 and res.reasons == []


def test_flip_rate_rise_blocks_with_mcnemar() -> None:
    pol = GatePolicy(n_boot=0, impact=ImpactPolicy(enabled=False))
    res = gate(crafted(profile="broken"), crafted(), pol)
    assert res.verdict == "block"
    flip = next(c for c in res.checks if c.check == "flip_rate")
    assert flip.value == 0.5 and flip.previous == 0.0 and flip.blocked
    b, c = flip.detail["only_candidate_flips"], flip.detail["only_previous_flips"]
    assert (b, c) == (20, 0)
    assert flip.p_value == pytest.approx(
        stats.binomtest(b, b + c, 0.5, alternative="greater").pvalue)
    assert "rose beyond the noise floor" in res.reasons[0]


def test_flip_rise_inside_the_margin_does_not_block() -> None:
    pol = GatePolicy(n_boot=0, impact=ImpactPolicy(enabled=False),
                     flip=FlipPolicy(min_rise=0.6))
    res = gate(crafted(profile="broken"), crafted(), pol)
    assert res.verdict == "pass"
    assert "does not block" in next(c for c in res.checks if c.check == "flip_rate").reason


def test_impact_ratio_fall_blocks_with_volume_and_significance() -> None:
    pol = GatePolicy(n_boot=0, flip=FlipPolicy(enabled=False))
    res = gate(crafted(profile="broken"), crafted(), pol)
    sel = next(c for c in res.checks if c.check == "selection_rate_ratio")
    assert sel.subject == "p" and sel.value == 0.0 and sel.previous == 1.0
    assert sel.blocked and res.verdict == "block"
    assert sel.detail["p_fall"] == pytest.approx(0.5 ** 20)
    assert sel.p_value == max(sel.detail["p_fall"], sel.detail["p_disparity"])


def test_impact_ratio_without_volume_does_not_block() -> None:
    pol = GatePolicy(n_boot=0, flip=FlipPolicy(enabled=False))
    res = gate(crafted(n=20, profile="broken"), crafted(n=20), pol)
    sel = next(c for c in res.checks if c.check == "selection_rate_ratio")
    assert not sel.blocked and not sel.detail["volume"] and res.verdict == "pass"
    assert "too little volume" in sel.reason


def test_existing_breach_is_reported_but_blocks_only_when_the_policy_says_so() -> None:
    pol = GatePolicy(n_boot=0, flip=FlipPolicy(enabled=False))
    res = gate(crafted(profile="always_low"), crafted(profile="always_low"), pol)
    sel = next(c for c in res.checks if c.check == "selection_rate_ratio")
    assert sel.value == 0.0 and not sel.blocked and res.verdict == "pass"
    assert "already below the threshold" in sel.reason
    strict = GatePolicy(n_boot=0, flip=FlipPolicy(enabled=False),
                        impact=ImpactPolicy(block_existing=True))
    assert gate(crafted(profile="always_low"), crafted(profile="always_low"),
                strict).verdict == "block"


def test_scoring_rate_check_when_asked() -> None:
    pol = GatePolicy(n_boot=0, flip=FlipPolicy(enabled=False),
                     impact=ImpactPolicy(kinds=("scoring",)))
    res = gate(crafted(profile="broken"), crafted(), pol)
    assert {c.check for c in res.checks} == {"scoring_rate_ratio"}


def test_pipeline_version_change_forbidden() -> None:
    pol = GatePolicy(n_boot=0, versions=VersionPolicy(allow_change=False))
    res = gate(crafted(version="v2"), crafted(version="v1"), pol)
    assert res.verdict == "block" and "pipeline_version" in res.reasons[0]
    assert gate(crafted(), crafted(), pol).verdict == "pass"
    unknown = crafted().drop(columns=["pipeline_version"])
    res = gate(unknown, crafted(), pol)
    assert res.verdict == "block" and "records no pipeline_version" in res.reasons[0]


def test_forbidden_component_change() -> None:
    pol = GatePolicy(n_boot=0, versions=VersionPolicy(forbid_changes=("scorer.model",)))
    old = {"scorer": {"model": "qwen-1.5b", "prompt": "p1"}}
    same_model = {"scorer": {"model": "qwen-1.5b", "prompt": "p2"}}
    new_model = {"scorer": {"model": "qwen-7b", "prompt": "p1"}}
    assert gate(crafted(version="v2"), crafted(), pol, same_model, old).verdict == "pass"
    res = gate(crafted(version="v2"), crafted(), pol, new_model, old)
    assert res.verdict == "block" and "scorer.model changed" in res.reasons[0]
    # versions differ and nothing records the configuration: the gate cannot verify, so blocks
    res = gate(crafted(version="v2"), crafted(), pol)
    assert res.verdict == "block" and "cannot verify" in res.reasons[0]
    # same version hash: same configuration
    assert gate(crafted(), crafted(), pol).verdict == "pass"


def test_not_computable_checks_fail_closed_only_when_asked() -> None:
    cand = crafted().drop(columns=["cutoff", "decision"])
    res = gate(cand, crafted())
    flip = next(c for c in res.checks if c.check == "flip_rate")
    assert not flip.computable and not flip.blocked and res.verdict == "pass"
    strict = GatePolicy(n_boot=0, fail_on_not_computable=True)
    res = gate(cand, crafted(), strict)
    assert res.verdict == "block" and "fails closed" in res.reasons[0]


def test_profile_only_in_one_release_is_noted() -> None:
    cand = pd.concat([crafted(), crafted().query("profile_id == 'p'").assign(profile_id="new")])
    res = gate(cand, crafted(), GatePolicy(n_boot=0, impact=ImpactPolicy(enabled=False)))
    assert any("'new' is only in the candidate" in n for n in res.notes)


def test_segment_columns_for_impact() -> None:
    cand, prev = crafted(profile="broken"), crafted()
    for df in (cand, prev):
        df["channel"] = ["narrow" if int(a[1:]) % 2 else "wide" for a in df["answer_id"]]
    pol = GatePolicy(n_boot=0, flip=FlipPolicy(enabled=False),
                     impact=ImpactPolicy(by=("profile_id", "channel"), min_n=10))
    res = gate(cand, prev, pol)
    subjects = {c.subject for c in res.checks}
    assert "p × wide" in subjects
    pol_bad = GatePolicy(n_boot=0, impact=ImpactPolicy(by=("segment",)))
    with pytest.raises(ConfigError, match="segment: column missing"):
        gate(cand, prev, pol_bad)


def test_missing_baseline_profile_is_bad_input() -> None:
    with pytest.raises(ConfigError, match="baseline"):
        gate(crafted(), crafted(), GatePolicy(baseline_profile="clean"))


# -- run_gate and gate.json -------------------------------------------------------------------


def test_run_gate_writes_gate_json(tmp_path: Path) -> None:
    prev = write_campaign(tmp_path / "prev", crafted())
    cand = write_campaign(tmp_path / "cand", crafted(profile="broken"))
    res = run_gate(cand, prev)
    data = json.loads((cand / "gate.json").read_text())
    assert data["verdict"] == "block" == res.verdict and data["exit_code"] == 1
    assert data["reasons"] and data["policy"]["alpha"] == 0.05
    assert data["candidate"]["profiles"]["p"]["flip_rate"] == 0.5
    # identical repeats (no noise in crafted()) measure nothing: not measured, never 0.0
    nf = data["previous"]["noise_floor"]
    assert nf["measured"] is False and nf["sd_repeat_diff"] is None
    assert nf["reason"].startswith("not measured: the repeats are identical")
    out = tmp_path / "elsewhere" / "g.json"
    run_gate(prev, prev, out=out)
    assert json.loads(out.read_text())["verdict"] == "pass"
