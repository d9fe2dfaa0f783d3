import textwrap
from pathlib import Path

import pytest

from rig.answers import load_bank
from rig.errors import ConfigError
from rig.pipeline import load_pipeline, pipeline_version
from rig.profiles import load_profiles
from rig.script import Filler, Pause, Words, parse_script, reference_text

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]


def test_script_marks_and_reference_policies():
    s = "I led the team. [pause 1.2s] We cut costs [um] by thirty percent."
    segs = parse_script(s)
    assert segs == [Words("I led the team."), Pause(1.2), Words("We cut costs"), Filler("um"),
                    Words("by thirty percent.")]
    assert reference_text(s) == "I led the team. We cut costs by thirty percent."
    assert reference_text(s, "verbatim") == "I led the team. We cut costs um by thirty percent."


def test_unknown_mark_is_rejected():
    with pytest.raises(ValueError, match=r"\[cough\]"):
        parse_script("Well [cough] yes")


def test_shipped_bank_loads():
    bank = load_bank(ROOT / "answer_bank" / "core")
    assert len(bank.questions) >= 8
    tiers = [a.tier for _, a in bank.answers()]
    assert all(tiers.count(t) >= len(bank.questions) for t in ("strong", "weak"))
    assert 0.4 <= tiers.count("borderline") / len(tiers) <= 0.6
    for q in bank.questions:
        assert len(q.answers) >= 3
        assert sum(c.points for c in q.rubric) == 100
        for a in q.answers:
            assert len({g.grader_id for g in a.reference_grades}) >= 2


def _question_yaml(**over):
    base = dict(tier_strong="strong", points_last=40, grade_weak=30)
    base.update(over)
    return textwrap.dedent(f"""\
        question_id: qx
        category: teamwork
        question: Tell me about a conflict.
        rubric_version: 1
        cutoff: 60
        rubric:
          - {{id: situation, description: Describes a real situation clearly, points: 60}}
          - id: result
            description: States the outcome and what was learned
            points: {base['points_last']}
        answers:
          - answer_id: a1
            tier: {base['tier_strong']}
            script: We had a real disagreement and solved it.
            reference_grades: [{{grader_id: g1, score: 85}}, {{grader_id: g2, score: 80}}]
          - answer_id: a2
            tier: borderline
            script: We talked it over.
            reference_grades: [{{grader_id: g1, score: 58}}, {{grader_id: g2, score: 62}}]
          - answer_id: a3
            tier: weak
            script: I do not know.
            reference_grades:
              - {{grader_id: g1, score: {base['grade_weak']}}}
              - {{grader_id: g2, score: 20}}
        """)


def test_bank_errors_name_file_field_and_value(tmp_path):
    f = tmp_path / "qx.yaml"
    f.write_text(_question_yaml(tier_strong="strng"))
    with pytest.raises(ConfigError) as e:
        load_bank(tmp_path)
    msg = str(e.value)
    assert str(f) in msg and "answers[0].tier" in msg and "'strng'" in msg

    f.write_text(_question_yaml(points_last=30))
    with pytest.raises(ConfigError, match="sum to 90"):
        load_bank(tmp_path)

    f.write_text(_question_yaml(grade_weak=90))  # mean 55: not clearly below 60
    with pytest.raises(ConfigError, match="a3"):
        load_bank(tmp_path)

    f.write_text(_question_yaml())
    assert len(load_bank(tmp_path).answers()) == 3


def test_profiles_one_dimension_rule(tmp_path):
    (tmp_path / "baseline.yaml").write_text("profile_id: baseline\n")
    (tmp_path / "slow.yaml").write_text("profile_id: slow\npace: {rate: 0.8}\n")
    s = load_profiles(tmp_path)
    assert s.get("slow").dimensions_changed(s.baseline) == ["pace"]

    (tmp_path / "two.yaml").write_text(
        "profile_id: two\npace: {rate: 0.8}\nnoise: {kind: white, snr_db: 10}\n")
    with pytest.raises(ConfigError) as e:
        load_profiles(tmp_path)
    assert "two.yaml" in str(e.value) and "changes" in str(e.value)
    (tmp_path / "two.yaml").write_text(
        "profile_id: two\nchanges: [pace, noise]\npace: {rate: 0.8}\n"
        "noise: {kind: white, snr_db: 10}\n")
    assert load_profiles(tmp_path).get("two").dimensions_changed(s.baseline) == ["pace", "noise"]


def test_profile_field_errors(tmp_path):
    (tmp_path / "baseline.yaml").write_text("profile_id: baseline\n")
    (tmp_path / "fast.yaml").write_text("profile_id: fast\npace: {rate: 9}\n")
    with pytest.raises(ConfigError) as e:
        load_profiles(tmp_path)
    assert "fast.yaml" in str(e.value) and "pace.rate" in str(e.value) and "9" in str(e.value)
    (tmp_path / "fast.yaml").write_text("profile_id: fast\nnoise: {kind: pink}\n")
    with pytest.raises(ConfigError, match="snr_db"):
        load_profiles(tmp_path)


def test_shipped_profiles_and_pipelines_load():
    s = load_profiles(ROOT / "profiles" / "demo")
    changed = {p.profile_id: p.dimensions_changed(s.baseline) for p in s.profiles}
    assert changed["long_pauses"] == ["pauses"] and changed["noise_10db"] == ["noise"]
    assert {"slow", "voice_kokoro_gb"} <= set(changed)
    for f in (ROOT / "pipelines").glob("*.yaml"):
        load_pipeline(f)


def test_pipeline_version_changes_with_any_setting(tmp_path):
    p = load_pipeline(ROOT / "pipelines" / "reference.yaml")
    v = pipeline_version(p)
    assert v.startswith("reference-")
    assert v == pipeline_version(p)
    p2 = p.model_copy(update={"endpointing": p.endpointing.model_copy(
        update={"silence_timeout_ms": 500})})
    assert v != pipeline_version(p2)


def test_pipeline_errors(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("name: x\nendpointing: {silence_timeout_ms: 5}\n")
    with pytest.raises(ConfigError) as e:
        load_pipeline(f)
    assert "endpointing.silence_timeout_ms" in str(e.value) and "5" in str(e.value)
    f.write_text("name: x\nasr: {model: whisper-large}\n")
    with pytest.raises(ConfigError, match="whisper-large"):
        load_pipeline(f)
    f.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_pipeline(f)


def test_yaml_duplicate_keys_and_non_utf8_are_config_errors(tmp_path):
    from rig.config import read_yaml

    f = tmp_path / "p.yaml"
    f.write_text("name: a\nname: b\n")
    with pytest.raises(ConfigError, match="duplicate key 'name'") as e:
        read_yaml(f)
    assert str(f) in str(e.value)
    f.write_bytes("name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8 text") as e:
        read_yaml(f)
    assert str(f) in str(e.value)


def test_a_secret_pasted_into_a_config_is_never_echoed(tmp_path):
    from rig.probes.core import scorer_settings

    f = tmp_path / "s.yaml"
    f.write_text("backend: openai\nbase_url: http://127.0.0.1:1/v1\nmodel: m\n"
                 "api_key: sk-abc123-secret\n")
    with pytest.raises(ConfigError) as e:
        scorer_settings(f)
    assert "api_key" in str(e.value) and "sk-abc123-secret" not in str(e.value)


def test_a_yml_file_in_a_profile_set_is_an_error_not_skipped(tmp_path):
    import shutil

    d = tmp_path / "profiles"
    shutil.copytree(ROOT / "profiles" / "demo", d)
    (d / "extra.yml").write_text("profile_id: extra\npace: {rate: 0.9}\n")
    with pytest.raises(ConfigError, match=r"only files ending in \.yaml") as e:
        load_profiles(d)
    assert "extra.yml" in str(e.value)


def test_noise_with_an_snr_but_no_kind_is_rejected(tmp_path):
    import shutil

    d = tmp_path / "profiles"
    shutil.copytree(ROOT / "profiles" / "demo", d)
    (d / "quiet_noise.yaml").write_text("profile_id: quiet_noise\nnoise: {snr_db: 10}\n")
    with pytest.raises(ConfigError, match="name the noise kind") as e:
        load_profiles(d)
    assert "quiet_noise.yaml" in str(e.value)
