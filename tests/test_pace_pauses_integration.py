"""Pace apart from pauses: a slower or faster voice changes the speech rate, not the silences
between sentences or inside them (rig.synth.pauses.keep_pauses), measured on the output as
``rig profiles check --measure`` does; the core ``slow`` profile no longer closes the
reference interviewer's turn at a comma (it did on q03_strong and q07_strong before)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rig.synth.base import WordTiming
from rig.synth.pauses import keep_pauses, measure_gaps, quiet_runs, speech_gaps

ROOT = Path(__file__).resolve().parents[1]
SR = 16000


def _tone(s: float) -> np.ndarray:
    t = np.arange(round(s * SR)) / SR
    return (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


def _silence(s: float) -> np.ndarray:
    return np.zeros(round(s * SR), np.float32)


def _clip(*parts: tuple[str, float]) -> np.ndarray:
    return np.concatenate([_tone(s) if k == "tone" else _silence(s) for k, s in parts])


@pytest.mark.unit
def test_quiet_runs_are_interior_and_long_enough() -> None:
    x = _clip(("tone", 0.3), ("sil", 0.6), ("tone", 0.3), ("sil", 0.05), ("tone", 0.3))
    runs = quiet_runs(x, SR)
    assert len(runs) == 1  # the 50 ms closure is not a pause
    a, b = runs[0]
    assert abs((b - a) / SR - 0.6) <= 0.02
    assert quiet_runs(_clip(("sil", 0.5), ("tone", 0.3), ("sil", 0.5)), SR) == []


@pytest.mark.unit
@pytest.mark.parametrize("slowdown", [2.0, 0.5])
def test_keep_pauses_gives_a_run_its_natural_length(slowdown: float) -> None:
    x = _clip(("tone", 0.3), ("sil", 0.8), ("tone", 0.3))
    y = keep_pauses(x, SR, slowdown)
    (a, b), = quiet_runs(y, SR)
    assert abs((b - a) / SR - 0.8 / slowdown) <= 0.03
    assert abs(len(y) / SR - (0.6 + 0.8 / slowdown)) <= 0.03


@pytest.mark.unit
def test_keep_pauses_at_natural_pace_is_identity_and_refuses_bad_factor() -> None:
    x = _clip(("tone", 0.3), ("sil", 0.8), ("tone", 0.3))
    assert np.array_equal(keep_pauses(x, SR, 1.0), x)
    with pytest.raises(ValueError, match="slowdown"):
        keep_pauses(x, SR, 0.0)


@pytest.mark.unit
def test_speech_gaps_and_measure_gaps_on_a_known_clip() -> None:
    x = _clip(("tone", 0.5), ("sil", 0.3), ("tone", 0.5), ("sil", 0.7), ("tone", 0.5))
    assert speech_gaps(x, SR, [0.65, 1.65, 0.2]) == pytest.approx([0.3, 0.7, 0.0], abs=0.02)
    words = [WordTiming("One.", 0.0, 0.5), WordTiming("Two", 0.8, 1.3),
             WordTiming("three.", 2.0, 2.5)]
    g = measure_gaps(x, SR, words)
    assert g.sentence_gap_median_s == pytest.approx(0.3, abs=0.02)  # only "One." ends one
    assert g.sentence_gap_max_s == pytest.approx(0.3, abs=0.02)
    assert g.longest_gap_s == pytest.approx(0.7, abs=0.02)


# --- the real engine and VAD -------------------------------------------------------------

@pytest.fixture(scope="module")
def renders(tmp_path_factory) -> dict:
    from rig.answers import load_bank
    from rig.campaign.call import render_call_audio
    from rig.pipeline import Telephony
    from rig.profiles import load_profiles

    cache = tmp_path_factory.mktemp("pace-cache")
    core = load_profiles(ROOT / "profiles" / "core")
    answer = next(a for _, a in load_bank(ROOT / "answer_bank" / "core").answers()
                  if a.answer_id == "q03_strong")
    return {pid: render_call_audio(answer, core.get(pid), 0, cache_dir=cache,
                                   telephony=Telephony())
            for pid in ("baseline", "slow", "fast")}


@pytest.mark.integration
def test_slow_and_fast_keep_the_baselines_gaps_and_change_the_rate(renders) -> None:
    m = {pid: measure_gaps(c.rendered.audio.samples, c.rendered.audio.sample_rate_hz,
                           c.rendered.words) for pid, c in renders.items()}
    wpm = {pid: c.rendered.wpm_measured for pid, c in renders.items()}
    base = m["baseline"]
    for pid in ("slow", "fast"):
        assert abs(m[pid].sentence_gap_median_s - base.sentence_gap_median_s) <= 0.08, (pid, m)
        assert m[pid].sentence_gap_max_s <= base.sentence_gap_max_s + 0.12, (pid, m)
        assert m[pid].longest_gap_s <= base.longest_gap_s + 0.12, (pid, m)
    assert wpm["slow"] < 0.75 * wpm["baseline"] < wpm["baseline"] < 1.1 * wpm["baseline"] \
        < wpm["fast"], wpm


@pytest.mark.integration
def test_slow_no_longer_closes_the_turn_at_a_comma(renders) -> None:
    from rig.vad import TurnParams, detect_turn

    for pid in ("baseline", "slow"):
        c = renders[pid]
        t = detect_turn(c.audio, TurnParams())  # the reference pipeline's 800 ms timer
        assert t.turn_close_s >= c.rendered.speech_end_s, (pid, t)


@pytest.mark.integration
def test_profiles_check_measure_prints_the_gaps() -> None:
    from rig.cli import app

    res = CliRunner().invoke(app, ["profiles", "check", str(ROOT / "profiles" / "demo"),
                                   "--measure", "q01_weak"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "sentence_gap_median_s" in res.output and "longest_gap_s" in res.output
    row = next(line for line in res.output.splitlines() if "long_pauses" in line)
    assert "1.6" in row  # the pauses dimension shows in the gaps
