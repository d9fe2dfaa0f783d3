"""The phases before a campaign's first call are said as they happen (issue 33, item 2):
assembling a model (before and after, with its time), loading the models, and the scripts'
gradings on a progress line of their own before the calls'."""

from __future__ import annotations

from pathlib import Path

import pytest

import rig.models
from rig.campaign.phases import loading_line, models_needed, prepare_models
from rig.pipeline import load_pipeline
from rig.profiles import load_profiles

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]


def test_a_model_assembled_now_is_said_before_and_after(monkeypatch):
    assembled, said = [], []
    monkeypatch.setattr(rig.models, "needs_assembly", lambda name: name == "whisper-base")
    monkeypatch.setattr(rig.models, "ensure_model", lambda name: assembled.append(name))
    spent = prepare_models(["whisper-base", "qwen2.5-coder-1.5b-instruct-q4_k_m"],
                           ["kokoro-82m-v1.0-int8"], said.append)
    # required models are always verified (a missing package fails here); an optional one
    # already assembled or not installed is left to the call that needs it
    assert assembled == ["whisper-base", "qwen2.5-coder-1.5b-instruct-q4_k_m"]
    assert said[0] == ("assembling model whisper-base from its 2 package files and checking "
                       "its sha256 (once per machine)")
    assert said[1].startswith("model whisper-base ready (") and said[1].endswith(" s)")
    assert len(said) == 2 and spent >= 0


def test_needs_assembly_is_false_for_unknown_missing_or_ready_models(tmp_path, monkeypatch):
    monkeypatch.setenv("RIG_CACHE_DIR", str(tmp_path))
    assert rig.models.needs_assembly("no-such-model") is False
    monkeypatch.setattr(rig.models, "missing_packages", lambda name: ["x==1"])
    assert rig.models.needs_assembly("whisper-base") is False  # ensure_model names it
    monkeypatch.setattr(rig.models, "missing_packages", lambda name: [])
    assert rig.models.needs_assembly("whisper-base") is True  # empty cache: to assemble


def test_the_demo_needs_asr_judge_and_the_kokoro_voice():
    pipe = load_pipeline(ROOT / "pipelines" / "reference.yaml")
    required, optional = models_needed(pipe, load_profiles(ROOT / "profiles" / "demo"), True)
    assert required == [pipe.asr.model, pipe.scorer.model]
    assert optional == ["kokoro-82m-v1.0-int8"]  # voice_kokoro_gb
    assert models_needed(pipe, load_profiles(ROOT / "profiles" / "demo"), False)[0] == [
        pipe.asr.model]  # read speech: no judge


def test_loading_line_says_where():
    assert loading_line(["a", "b"], 1, True) == "loading the models (a, b) in this process"
    assert loading_line(["a"], 2, False).startswith("starting 2 worker processes; each loads")


def test_script_gradings_get_their_own_line_before_the_calls(tmp_path, capsys):
    from test_campaign_unit import make_stages

    from rig.campaign.runner import CampaignSpec, run_campaign

    spec = CampaignSpec(answers_path=ROOT / "answer_bank" / "core",
                        profiles_path=ROOT / "profiles" / "demo",
                        pipeline_path=ROOT / "pipelines" / "reference.yaml",
                        out_dir=tmp_path / "c", campaign_id="t", question_ids=("q01_conflict",),
                        profile_ids=("slow",))
    run_campaign(spec, stages=make_stages(), progress=True)
    out = capsys.readouterr().out.splitlines()
    grading = [i for i, s in enumerate(out) if s.startswith("t: script gradings (oracle): 0/")]
    calls = [i for i, s in enumerate(out) if s.startswith("t: calls: 0/")]
    assert grading and calls and grading[0] < calls[0], out


def test_the_final_count_then_the_summarizing_phase_are_said_after_the_last_call(tmp_path,
                                                                                capsys):
    from test_campaign_unit import make_stages

    from rig.campaign.runner import CampaignSpec, run_campaign

    spec = CampaignSpec(answers_path=ROOT / "answer_bank" / "core",
                        profiles_path=ROOT / "profiles" / "demo",
                        pipeline_path=ROOT / "pipelines" / "reference.yaml",
                        out_dir=tmp_path / "c", campaign_id="t", question_ids=("q01_conflict",),
                        profile_ids=("slow",), n_boot=200)
    res = run_campaign(spec, stages=make_stages(), progress=True)
    out = capsys.readouterr().out.splitlines()
    n = len(res.rows)
    final = [i for i, s in enumerate(out) if s.startswith(f"t: calls: {n}/{n}, ")]
    said = [i for i, s in enumerate(out) if s.startswith(f"t: summarizing {n} calls: ")]
    assert len(final) == 1 and len(said) == 1 and final[0] < said[0], out
    assert "200 bootstrap resamples" in out[said[0]]
    assert not any("━" in s for s in out)  # off a terminal: our lines, no rich bar
