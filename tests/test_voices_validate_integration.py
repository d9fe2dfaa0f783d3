"""``rig voices validate`` on 2 real voices x 2 answers: hibari 'heart' (the baseline voice)
and espeak-ng 'en-gb', rendered, sent through the 8 kHz mu-law line and transcribed by
faster-whisper tiny.en; voices.json and voices.md written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytestmark = pytest.mark.integration


def test_validate_two_voices_two_answers(tmp_path: Path) -> None:
    from rig.cli import app

    out = tmp_path / "v"
    res = CliRunner().invoke(app, [
        "voices", "validate", "--voices", "hibari:heart", "--voices", "espeak-ng:en-gb",
        "--answer-id", "q01_weak", "--answer-id", "q02_weak", "--no-similarity",
        "--out", str(out)], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "voices.json").read_text(encoding="utf-8"))
    assert [v["key"] for v in doc["voices"]] == ["hibari:heart", "espeak-ng:en-gb"]
    heart, gb = doc["voices"]
    for v in (heart, gb):
        assert v["available"] and v["n_answers"] == 2
        assert [a["answer_id"] for a in v["answers"]] == ["q01_weak", "q02_weak"]
        assert v["wer_pooled"] >= 0 and 100 < v["wpm_mean"] < 300
        assert v["content_similarity_mean"] is None
        assert isinstance(v["synthesiser_limited"], bool)
    assert heart["wer_mean"] < 0.1 and heart["synthesiser_limited"] is False
    assert gb["wer_mean"] > heart["wer_mean"]  # the formant voice is the harder one
    assert gb["wer_delta_vs_baseline"] == pytest.approx(gb["wer_mean"] - heart["wer_mean"])
    assert doc["content_similarity_note"].startswith("not measured")
    md = (out / "voices.md").read_text(encoding="utf-8")
    assert "| `espeak-ng:en-gb` |" in md and "| `hibari:heart` |" in md
    assert "not measured" in md


def test_validate_refuses_a_bad_voice_spec(tmp_path: Path) -> None:
    from rig.cli import app

    res = CliRunner().invoke(app, ["voices", "validate", "--voices", "heart",
                                   "--out", str(tmp_path)])
    assert res.exit_code == 2 and "engine:voice_id" in res.output
    # a voice named explicitly is checked before anything renders: an unknown engine or
    # voice is exit 2 naming the option, not a raw validation error or a "not installed" row
    for spec, says in (("espeak:en-gb", "Input should be"), ("kokoro:af_heart", "no voice"),
                       ("hibari:nope", "no voice 'nope'")):
        res = CliRunner().invoke(app, ["voices", "validate", "--voices", spec,
                                       "--out", str(tmp_path)])
        assert res.exit_code == 2 and f"--voices {spec}" in res.output and says in res.output
