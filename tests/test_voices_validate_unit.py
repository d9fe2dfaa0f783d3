"""The synthesiser-limited rule, the voice key, the markdown table, the summary.json lookup
and the verdict's sentence (rig.voices.validate, rig.report.verdict), on made-up figures."""

from __future__ import annotations

import pandas as pd
import pytest
from summaries import profile_like, summary_like

from rig.report.verdict import profile_sentence
from rig.voices import shipped
from rig.voices import validate as vv

pytestmark = pytest.mark.unit


def test_flag_needs_both_the_margin_and_a_ci_above_zero() -> None:
    base = [0.0, 0.02, 0.01, 0.0, 0.03]
    far = [0.30, 0.45, 0.25, 0.40, 0.35]  # +0.34 on every answer, spread small
    flag, mean, ci = vv.flag_limited(far, base)
    assert flag and mean == pytest.approx(0.338) and ci[0] > 0
    near = [0.05, 0.10, 0.08, 0.07, 0.12]  # +0.07: under the 0.10 margin
    assert vv.flag_limited(near, base)[0] is False
    noisy = [0.0, 1.2, 0.0, 0.0, 0.0]  # mean +0.23 but one answer carries it: CI spans 0
    flag, mean, ci = vv.flag_limited(noisy, base)
    assert mean > vv.LIMITED_WER_MARGIN and ci[0] < 0 and flag is False


def test_flag_on_a_constant_shift_and_bad_input() -> None:
    flag, _, ci = vv.flag_limited([0.3, 0.3], [0.1, 0.1])
    assert flag and ci == pytest.approx([0.2, 0.2])
    assert vv.flag_limited([0.0, 0.0], [0.0, 0.0])[0] is False
    with pytest.raises(ValueError, match="2 voice WERs against 1"):
        vv.flag_limited([0.1, 0.2], [0.1])
    # one answer: no interval, so the flag is not decided (not a zero-width CI)
    assert vv.flag_limited([0.34], [0.02]) == (None, pytest.approx(0.32), None)


def test_voice_key_sorts_options() -> None:
    assert vv.voice_key("espeak-ng", "en-gb") == "espeak-ng:en-gb"
    assert vv.voice_key("kokoro", "jf_alpha", {"lang": "en-us", "b": 1}) == \
        "kokoro:jf_alpha?b=1&lang=en-us"


def _doc() -> dict:
    def voice(key, wer, limited, sim=0.98, available=True):
        engine, voice_id = key.split(":")
        return {"key": key, "engine": engine, "voice_id": voice_id, "label": f"label {voice_id}",
                "profiles": ["core/a", "core/b", "core/c", "demo/d"] if limited is False else [],
                "available": available, "reason": None if available else "not installed",
                "n_answers": 4, "wer_pooled": wer, "wer_mean": wer,
                "wer_ci95": None if wer is None else [wer - 0.01, wer + 0.01],
                "content_similarity_mean": sim,
                "wpm_mean": 190.0, "synthesiser_limited": limited, "answers": []}
    return {"generated": "2026-12-02 02:00 UTC", "machine": "test box", "line": "the line",
            "asr": {"model": "whisper-tiny.en", "beam_size": 1}, "rule": "the rule",
            "baseline_voice": "hibari:heart",
            "voices": [voice("hibari:heart", 0.02, False),
                       voice("espeak-ng:en-gb-scotland", 0.69, True, sim=None),
                       voice("mbrola:en1", None, None, available=False)]}


def test_markdown_table_rows() -> None:
    md = vv.markdown_table(_doc())
    assert "2026-12-02 02:00 UTC" in md and "test box" in md and "whisper-tiny.en" in md
    lines = [x for x in md.splitlines() if x.startswith("| `")]
    assert len(lines) == 3
    assert "0.020 (0.010-0.030)" in lines[0] and lines[0].endswith("| no |")
    assert "core/a, core/b, core/c +1 more" in lines[0]
    assert "not measured" in lines[1] and lines[1].endswith("| yes |")
    assert "not installed here" in lines[2]


def test_voice_fields_and_verdict_sentence(monkeypatch) -> None:
    found = {"espeak-ng:en-gb-scotland": {"synthesiser_limited": True, "wer_mean": 0.69,
                                          "baseline_wer_mean": 0.02}}
    monkeypatch.setattr(shipped, "shipped_result",
                        lambda e, v, o=None: found.get(vv.voice_key(e, v)))
    rows = pd.DataFrame({"voice_engine": ["espeak-ng"], "voice_id": ["en-gb-scotland"]})
    fields = shipped.voice_fields(rows)
    assert fields == {"synthesiser_limited": True, "voice_clean_wer": 0.69,
                      "baseline_voice_clean_wer": 0.02}
    assert shipped.voice_fields(pd.DataFrame({"voice_engine": ["recorded"],
                                         "voice_id": ["spk"]}))["synthesiser_limited"] is None
    assert shipped.voice_fields(pd.DataFrame({"x": [1]}))["voice_clean_wer"] is None
    summary = summary_like(profiles={"accent": profile_like(
        mean_delta=-30.0, n_pairs=5, **fields)})
    s = profile_sentence(summary, "accent")
    assert ("the voice itself is synthesiser-limited (clean-line WER 0.69 vs 0.02): much of "
            "this gap is the synthesiser") in s
    summary = summary_like(summary, profiles={"accent": profile_like(
        summary.profiles["accent"], synthesiser_limited=False)})
    assert ("its voice is not synthesiser-limited but starts at a clean-line WER of 0.69 "
            "against the baseline voice's 0.02") in profile_sentence(summary, "accent")
    summary = summary_like(summary, profiles={"accent": profile_like(  # the baseline's voice
        summary.profiles["accent"], voice_clean_wer=0.02)})
    assert "synthesiser-limited" not in profile_sentence(summary, "accent")


def test_shipped_validation_is_readable() -> None:
    v = shipped.shipped_result("hibari", "heart")
    assert v is not None and v["synthesiser_limited"] is False
    assert "answers" not in v and v["baseline_wer_mean"] == v["wer_mean"]
    assert shipped.shipped_result("hibari", "no-such-voice") is None
