"""``rig scorer validate`` per language (issue 32, item 4): the figures name the bank's
language in the JSON and the table's title. A fake scorer; the real judge's figures per
language are in docs/measurement.md."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rig.cli import app
from rig.scorer import factory
from rig.scorer.fake import FakeScorer

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("bank,language", [("es", "es"), ("fr", "fr"), ("mini", "en")])
def test_validate_names_the_language(monkeypatch, bank: str, language: str) -> None:
    monkeypatch.setattr(factory, "build_scorer", lambda settings, **kw: FakeScorer())
    r = CliRunner().invoke(app, ["scorer", "validate", "--answers", f"answer_bank/{bank}",
                                 "--modes", "expected", "--json", "--no-progress"])
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert res["language"] == language and res["modes"]["expected"]["validity"]["n_answers"] == 8
    r = CliRunner().invoke(app, ["scorer", "validate", "--answers", f"answer_bank/{bank}",
                                 "--modes", "expected", "--no-progress"])
    assert r.exit_code == 0 and f"language {language}" in " ".join(r.stdout.split())
