"""summary.json as a typed contract: the model, the published JSON Schema and docs kept in
step, reading old and newer files, and the gate reading it."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rig.campaign.schema import (
    SCHEMA_VERSION,
    UNVERSIONED,
    CampaignSummary,
    JudgeValidity,
    JudgeValidityNotMeasured,
    NoiseFloorSummary,
    ProfileSummary,
    SummaryHeader,
)
from rig.campaign.summary import build_summary, campaign_summary
from rig.campaign.summary_file import (
    FIELDS_BEGIN,
    FIELDS_END,
    fields_markdown,
    load_summary,
    load_summary_header,
    summary_json_schema,
    write_summary,
)
from rig.errors import ConfigError
from rig.gate import load_campaign
from rig.stats.noise import NoiseFloor
from rig.stats.paired import ProfilePaired
from rig.stats.validity import Validity

pytestmark = pytest.mark.unit
DOCS = Path(__file__).resolve().parents[1] / "docs"


def call_rows(n_answers: int = 6, repeats: int = 2, seed: int = 0) -> pd.DataFrame:
    """Rows shaped like calls.parquet: a baseline and a profile that costs ~20 points, noisy
    repeats, one failed call and one parse failure."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_answers):
        tier = ("weak", "borderline", "strong")[i % 3]
        ref = {"weak": 30.0, "borderline": 60.0, "strong": 85.0}[tier]
        for pid, cost in (("baseline", 0.0), ("noisy", 20.0)):
            for r in range(repeats):
                score = float(np.clip(ref - cost + rng.normal(0, 4), 0, 100))
                out.append({
                    "call_id": f"c{i}{pid}{r}", "answer_id": f"a{i}", "question_id": f"q{i // 3}",
                    "tier": tier, "cutoff": 50.0, "reference_score": ref,
                    "oracle_score": ref + 2.0, "profile_id": pid, "repeat": r, "seed": r,
                    "status": "ok", "parse_status": "ok", "score": round(score, 1),
                    "temperature": 0.0, "scorer_mode": "expected", "transcript": f"t{i}{r}",
                    "wer": cost / 100, "wer_spoken": cost / 200,
                    "truncated": bool(cost > 0 and i % 2),
                    "words_lost_share": cost / 400, "score_minus_oracle": -cost,
                    "content_similarity": 1.0 - cost / 100, "content_similarity_error": None})
    out[-1].update(status="error", score=None, parse_status="error")
    out[-2].update(parse_status="invalid_json", score=None)
    return pd.DataFrame(out)


def summary(**kw) -> CampaignSummary:
    return campaign_summary(call_rows(), campaign_id="c", pipeline_version="v1", n_boot=100,
                            **kw)


# -- the published schema and docs are what the model gives ------------------------------------


def test_committed_json_schema_is_the_models() -> None:
    committed = json.loads((DOCS / "summary.schema.json").read_text(encoding="utf-8"))
    assert committed == summary_json_schema(), \
        "docs/summary.schema.json is stale: python -m rig.campaign.summary_file docs"
    assert SCHEMA_VERSION in committed["$comment"]


def test_committed_field_tables_are_the_models() -> None:
    text = (DOCS / "summary.md").read_text(encoding="utf-8")
    generated = text.split(FIELDS_BEGIN, 1)[1].split(FIELDS_END, 1)[0]
    assert generated.strip() == fields_markdown().strip(), \
        "docs/summary.md is stale: python -m rig.campaign.summary_file docs"
    assert f"**{SCHEMA_VERSION}**" in text  # the changelog names the current version


def test_the_models_hold_every_field_the_statistics_give() -> None:
    # a field added to a result in rig.stats must reach the contract (and raise the version)
    paired = {f.name for f in fields(ProfilePaired)}
    assert paired <= set(ProfileSummary.model_fields)
    nf = NoiseFloor("b", 0, 0, None, None, None, 0).to_dict()
    assert set(nf) == set(NoiseFloorSummary.model_fields)
    v = Validity(0, 0, None, None, None, None, None, None, 0, None, None, None, None, 0)
    assert set(v.to_dict()) | {"scoring_mode", "source"} == set(JudgeValidity.model_fields)


def test_the_header_is_a_part_of_the_summary() -> None:
    for name, f in SummaryHeader.model_fields.items():
        full = CampaignSummary.model_fields[name].annotation
        assert f.annotation in (full, full | None), name


# -- building -----------------------------------------------------------------------------------


def _check(instance: object, schema: dict, defs: dict, where: str = "$") -> None:
    """A small JSON Schema check of the keywords the model's schema uses, independent of
    pydantic's validation."""
    if "$ref" in schema:
        return _check(instance, defs[schema["$ref"].rsplit("/", 1)[-1]], defs, where)
    if "anyOf" in schema:
        errors = []
        for s in schema["anyOf"]:
            try:
                return _check(instance, s, defs, where)
            except AssertionError as exc:
                errors.append(str(exc))
        raise AssertionError(f"{where}: matches none of anyOf: {errors}")
    kinds = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
             "integer": int, "number": (int, float)}
    if "type" in schema:
        assert isinstance(instance, kinds[schema["type"]]), f"{where}: not {schema['type']}"
        assert schema["type"] == "boolean" or not isinstance(instance, bool), where
    if "const" in schema:
        assert instance == schema["const"], where
    if "enum" in schema:
        assert instance in schema["enum"], where
    if "pattern" in schema:
        assert re.search(schema["pattern"], instance), where
    if "minimum" in schema:
        assert instance >= schema["minimum"], where
    if isinstance(instance, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", ()):
            assert key in instance, f"{where}: {key} missing"
        for key, value in instance.items():
            if key in props:
                _check(value, props[key], defs, f"{where}.{key}")
            elif isinstance(schema.get("additionalProperties"), dict):
                _check(value, schema["additionalProperties"], defs, f"{where}.{key}")
            else:
                assert schema.get("additionalProperties", True) is not False, \
                    f"{where}: {key} not in the schema"
    if isinstance(instance, list) and "prefixItems" in schema:
        assert len(instance) == len(schema["prefixItems"]), where
        for i, (v, s) in enumerate(zip(instance, schema["prefixItems"], strict=True)):
            _check(v, s, defs, f"{where}[{i}]")
    elif isinstance(instance, list) and "items" in schema:
        for i, v in enumerate(instance):
            _check(v, schema["items"], defs, f"{where}[{i}]")
    return None


def test_a_built_summary_validates_against_the_published_schema() -> None:
    s = summary(n_log_rows_not_in_plan=3, pipeline={"scorer": {"model": "m"}})
    data = json.loads(json.dumps(s.to_dict()))
    schema = summary_json_schema()
    _check(data, schema, schema["$defs"])
    assert next(iter(data)) == "schema_version" and data["schema_version"] == SCHEMA_VERSION
    assert list(data["profiles"]) == ["baseline", "noisy"]
    assert data["n_failed_calls"] == 1 and data["n_parse_failures"] == 1
    assert isinstance(s.judge_validity, JudgeValidity)
    # a mistyped key in a JSON dashboard's copy would be refused the same way
    bad = {**data, "profiles": {"noisy": {**data["profiles"]["noisy"], "mean_detla": 1.0}}}
    with pytest.raises(AssertionError, match="mean_detla not in the schema"):
        _check(bad, schema, schema["$defs"])


def test_build_summary_is_the_models_json() -> None:
    rows = call_rows()
    d = build_summary(rows, campaign_id="c", pipeline_version="v1", n_boot=100)
    assert d == summary().to_dict()
    assert "n_log_rows_not_in_plan" not in d and "pipeline" not in d
    assert CampaignSummary.model_validate(d) == summary()


def test_a_campaign_with_no_calls_writes_only_what_it_has() -> None:
    empty = call_rows().iloc[:0]
    d = build_summary(empty, campaign_id="c", pipeline_version="v1", n_boot=10)
    assert d == {"schema_version": SCHEMA_VERSION, "campaign_id": "c", "pipeline_version": "v1",
                 "baseline": "baseline", "n_calls": 0,
                 "bootstrap": {"resamples": 10, "seed": 0, "method": "percentile"},
                 "repeats_skipped": {"n": 0, "reason": None, "by_profile": {}},
                 "profiles": {}, "noise_floor": None}
    schema = summary_json_schema()
    _check(d, schema, schema["$defs"])


def test_rows_without_reference_grades_say_judge_validity_not_measured() -> None:
    rows = call_rows().drop(columns=["reference_score"])
    s = campaign_summary(rows, campaign_id="c", pipeline_version="v1", n_boot=50)
    assert isinstance(s.judge_validity, JudgeValidityNotMeasured)
    assert "reference_score" in s.to_dict()["judge_validity"]["reason"]


def test_the_model_refuses_a_key_it_does_not_know() -> None:
    d = summary().to_dict()
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        CampaignSummary.model_validate({**d, "n_cals": 3})


# -- reading ------------------------------------------------------------------------------------


def test_write_then_load_round_trips(tmp_path: Path) -> None:
    s = summary(n_log_rows_not_in_plan=0, pipeline={"scorer": {"model": "m"}})
    path = write_summary(tmp_path / "summary.json", s)
    assert path.read_text() == json.dumps(s.to_dict(), indent=2)
    assert load_summary(path) == s and load_summary(path).to_dict() == s.to_dict()


def test_a_summary_written_before_schema_version_still_reads(tmp_path: Path) -> None:
    d = summary().to_dict()
    d.pop("schema_version")
    (tmp_path / "summary.json").write_text(json.dumps(d))
    old = load_summary(tmp_path / "summary.json")
    assert old.schema_version == UNVERSIONED
    assert old.profiles["noisy"] == summary().profiles["noisy"]


def test_an_older_summary_missing_a_field_names_it_and_the_fix(tmp_path: Path) -> None:
    d = summary().to_dict()
    for k in ("schema_version", "repeats_skipped"):
        d.pop(k)
    (tmp_path / "summary.json").write_text(json.dumps(d))
    with pytest.raises(ConfigError, match=r"repeats_skipped: Field required.*campaign "
                                          r"summarize"):
        load_summary(tmp_path / "summary.json")


def test_a_newer_minor_version_reads_and_a_newer_major_is_refused(tmp_path: Path) -> None:
    major = int(SCHEMA_VERSION.split(".")[0])
    d = summary().to_dict()
    newer = {**d, "schema_version": f"{major}.9", "a_later_field": 1}
    newer["profiles"]["noisy"]["a_later_figure"] = 2.0
    (tmp_path / "minor.json").write_text(json.dumps(newer))
    assert load_summary(tmp_path / "minor.json").profiles["noisy"] == summary().profiles["noisy"]
    (tmp_path / "major.json").write_text(json.dumps({**d, "schema_version": f"{major + 1}.0"}))
    with pytest.raises(ConfigError, match=r"schema_version: written by a newer rig"):
        load_summary(tmp_path / "major.json")


def test_malformed_summaries_name_the_file_and_the_field(tmp_path: Path) -> None:
    p = tmp_path / "summary.json"
    d = summary().to_dict()
    d["profiles"]["noisy"]["n_pairs"] = "six"
    p.write_text(json.dumps(d))
    with pytest.raises(ConfigError, match=r"summary\.json: profiles\.noisy\.n_pairs: .*'six'"):
        load_summary(p)
    p.write_text("[1, 2]")
    with pytest.raises(ConfigError, match="expected a JSON object"):
        load_summary(p)
    p.write_text("{nope")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_summary_header(p)
    with pytest.raises(ConfigError, match="file not found"):
        load_summary(tmp_path / "missing.json")


def test_the_gate_reads_a_written_summary_through_the_header(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    folder.mkdir()
    rows = call_rows().assign(pipeline_version="v1")
    rows.to_parquet(folder / "calls.parquet")
    write_summary(folder / "summary.json", summary(pipeline={"scorer": {"model": "m"}}))
    c = load_campaign(folder)
    assert c.pipeline_version == "v1" and c.pipeline == {"scorer": {"model": "m"}}
    (folder / "summary.json").write_text(json.dumps({"pipeline_version": "v1",
                                                     "pipeline": "not a mapping"}))
    with pytest.raises(ConfigError, match=r"summary\.json: pipeline: "):
        load_campaign(folder)
