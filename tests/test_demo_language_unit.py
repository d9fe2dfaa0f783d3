"""``rig demo --language es`` (issue 32, item 8): the Spanish bank, its profile set and the
multilingual pipeline; the English demo unchanged; a demo answer selector. The campaign
itself is faked here; tests/test_demo_language_integration.py runs it for real."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from rig.answers import load_bank
from rig.cli import app
from rig.language import check_profile_languages
from rig.pipeline import load_pipeline
from rig.profiles import load_profiles

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]


def _invoke(monkeypatch, args: list[str]):
    demo = importlib.import_module("rig.cli.demo")
    specs = []
    monkeypatch.setattr(demo, "_run", lambda spec, progress, finish=True: specs.append(
        spec) or SimpleNamespace(audio_s=1.0, seconds=1.0))
    monkeypatch.setattr(demo, "_demo_sweep", lambda out, progress: None)
    return CliRunner().invoke(app, ["demo", "--no-progress", *args]), specs


def test_spanish_demo_spec(monkeypatch, tmp_path: Path) -> None:
    res, specs = _invoke(monkeypatch, ["--language", "es", "--out", str(tmp_path / "d")])
    assert res.exit_code == 0, res.output
    (spec,) = specs
    assert spec.answers_path.name == "es" and spec.profiles_path.name == "es"
    assert spec.pipeline_path.name == "multilingual.yaml" and spec.campaign_id == "demo-es"
    bank, profiles = load_bank(spec.answers_path), load_profiles(spec.profiles_path)
    check_profile_languages(bank.meta.language, spec.answers_path, profiles)  # no refusal
    assert load_pipeline(spec.pipeline_path).asr.language == "auto"
    assert set(spec.answer_ids) <= {a.answer_id for _, a in bank.answers()}
    ids = {p.profile_id for p in profiles.profiles}
    assert {"baseline", "long_pauses"} <= ids and len(ids) >= 3  # the sweep's profile too


def test_english_demo_unchanged_and_selector(monkeypatch, tmp_path: Path) -> None:
    res, specs = _invoke(monkeypatch, ["--out", str(tmp_path / "d")])
    assert res.exit_code == 0 and specs[0].answers_path.name == "core"
    assert specs[0].campaign_id == "demo" and len(specs[0].answer_ids) == 5
    res, specs = _invoke(monkeypatch, ["--language", "es", "--answer-id", "es_q01_weak",
                                       "--out", str(tmp_path / "e")])
    assert res.exit_code == 0 and specs[0].answer_ids == ("es_q01_weak",)
    res, specs = _invoke(monkeypatch, ["--language", "es", "--answer-id", "q01_weak"])
    assert res.exit_code == 2 and not specs
    assert "not an answer of the es demo" in " ".join(res.output.split())
    res, _ = _invoke(monkeypatch, ["--language", "fr"])
    assert res.exit_code == 2
