"""A mistyped key in a YAML file: the error lists the keys allowed there and the close ones,
in the ``FILE: FIELD: problem (got VALUE)`` shape, at the top level and nested (a nested
model, a discriminated union inside a tuple, a dict of models)."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from rig.config import allowed_keys, close_keys, load_model
from rig.errors import ConfigError
from rig.gate import GatePolicy
from rig.profiles import Profile, load_profiles

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
PROFILE_KEYS = sorted(Profile.model_fields)


def _profile_error(tmp_path: Path, extra: str) -> str:
    folder = tmp_path / "set"
    shutil.copytree(ROOT / "profiles" / "demo", folder)
    (folder / "slow.yaml").write_text("profile_id: slow\nchanges: [pace]\n"
                                      + textwrap.dedent(extra))
    with pytest.raises(ConfigError) as info:
        load_profiles(folder)
    return str(info.value)


def test_a_mistyped_top_level_key_says_what_was_meant_and_what_is_allowed(tmp_path):
    msg = _profile_error(tmp_path, "pase: {rate: 0.8}\n")
    assert msg.startswith(f"{tmp_path / 'set' / 'slow.yaml'}: pase: Extra inputs are not "
                          "permitted (did you mean `pace`? allowed here: ")
    assert f"allowed here: {', '.join(PROFILE_KEYS)})" in msg
    assert "`pauses`" not in msg  # one edit away wins over two


def test_a_nested_key_lists_the_nested_model_keys_and_keeps_the_value(tmp_path):
    msg = _profile_error(tmp_path, "pace: {rat: 0.8}\n")
    assert msg.endswith("pace.rat: Extra inputs are not permitted (did you mean `rate`? "
                        "allowed here: rate, wpm) (got 0.8)")


def test_a_key_inside_a_tagged_channel_step_names_that_step_keys(tmp_path):
    msg = _profile_error(tmp_path, "channel: {steps: [{kind: g711, lawz: alaw}]}\n")
    assert msg.endswith("channel.steps[0].g711.lawz: Extra inputs are not permitted (did you "
                        "mean `law`? allowed here: kind, law) (got 'alaw')")


def test_no_suggestion_for_a_key_like_none_of_them_and_secrets_stay_hidden():
    with pytest.raises(ConfigError) as info:
        load_model("p.yaml", Profile, {"profile_id": "x", "zzzz": 1})
    assert str(info.value) == (f"p.yaml: zzzz: Extra inputs are not permitted (allowed here: "
                               f"{', '.join(PROFILE_KEYS)}) (got 1)")
    with pytest.raises(ConfigError) as info:
        load_model("p.yaml", Profile, {"profile_id": "x", "voice": {"api_key": "sk-secret"}})
    assert str(info.value) == ("p.yaml: voice.api_key: Extra inputs are not permitted (allowed "
                               "here: config_path, engine, model_path, speaker_wav, "
                               "voice_id); value not shown")


def test_gate_policy_keys_and_the_count_of_other_problems():
    with pytest.raises(ConfigError) as info:
        load_model("gate.yaml", GatePolicy, {"flip": {"min_rice": 1, "x": 2}})
    msg = str(info.value)
    assert msg.startswith("gate.yaml: flip.min_rice: Extra inputs are not permitted (did you "
                          "mean `min_rise`? allowed here: enabled, min_rise, use_noise_floor)")
    assert "(and 1 more problem)" in msg


class _Leaf(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["leaf"] = "leaf"
    threshold: float = 0.5


class _Other(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["other"] = "other"
    size: int = 1


class _Root(BaseModel):
    model_config = ConfigDict(extra="forbid")
    by_name: dict[str, _Leaf] = {}
    items: list[_Leaf | _Other] = []
    tagged: tuple[Annotated[_Leaf | _Other, Field(discriminator="kind")], ...] = ()
    maybe: _Leaf | None = None


@pytest.mark.parametrize("loc,keys", [
    ((), ["by_name", "items", "tagged", "maybe"]),
    (("by_name", "any key"), ["kind", "threshold"]),
    (("items", 0, "_Other"), ["kind", "size"]),
    (("tagged", 3, "leaf"), ["kind", "threshold"]),
    (("maybe",), ["kind", "threshold"]),
    (("items", 0), None),  # either member: no single list
    (("nope",), None),
])
def test_allowed_keys_follow_the_error_location(loc, keys):
    assert allowed_keys(_Root, loc) == keys


def test_allowed_keys_match_what_pydantic_reports():
    with pytest.raises(ConfigError) as info:
        load_model("r.yaml", _Root, {"by_name": {"a": {"treshold": 1}}})
    assert "did you mean `threshold`? allowed here: kind, threshold" in str(info.value)
    with pytest.raises(ConfigError) as info:
        load_model("r.yaml", _Root, {"tagged": [{"kind": "other", "sise": 2}]})
    assert "tagged[0].other.sise" in str(info.value)
    assert "did you mean `size`? allowed here: kind, size" in str(info.value)


def test_close_keys_prefer_the_fewest_edits():
    assert close_keys("pase", ["pauses", "pace", "voice"]) == ["pace"]
    assert close_keys("paec", ["pace", "pauses"]) == ["pace"]  # a transposition is one edit
    assert close_keys("bogus", ["out", "repeats"]) == []
    assert set(close_keys("rat", ["rate", "rats", "cat_"])) == {"rate", "rats"}  # a tie: both
