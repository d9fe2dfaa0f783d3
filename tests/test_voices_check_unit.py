"""``rig voices check``'s measures, recomputed independently on synthetic signals, and the
folder check with a fake VAD and ASR (the real ones run in
tests/test_voices_record_browser_integration.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from rig.vad import Turn

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "answer_bank" / "mini"


def _turn(a: float, b: float) -> Turn:
    return Turn(a, b, b + 0.3, "silence_timeout")


def test_levels_and_clipping():
    from rig.voices.check import clipped_fraction, level_dbfs, peak_dbfs

    sr = 16000
    t = np.arange(sr) / sr
    sine = (0.5 * np.sin(2 * np.pi * 200 * t)).astype(np.float32)
    assert level_dbfs(sine, sr) == pytest.approx(20 * np.log10(0.5 / np.sqrt(2)), abs=0.05)
    assert level_dbfs(np.ones(sr, np.float32), sr) == pytest.approx(0.0, abs=1e-6)
    assert level_dbfs(np.zeros(sr, np.float32), sr) is None
    assert peak_dbfs(sine) == pytest.approx(20 * np.log10(0.5), abs=0.01)
    assert peak_dbfs(np.zeros(4, np.float32)) is None
    # int16 full scale as soundfile reads it: -32768 -> -1.0, 32767 -> 32767/32768
    pcm = np.zeros(1000, np.int16)
    pcm[:7], pcm[7:10], pcm[10] = 32767, -32768, 32766
    assert clipped_fraction(pcm.astype(np.float32) / 32768) == pytest.approx(10 / 1000)
    assert clipped_fraction(sine) == 0.0


def test_tokens_cues_and_rate():
    from rig.voices.check import pause_cues, script_tokens, speaking_rate_wpm

    script = "So [um] I waited for them. [pause 1.5s] Then [uh] we talked it over."
    assert script_tokens(script) == 12 and pause_cues(script) == 1
    turns = [_turn(0.5, 3.5), _turn(4.5, 6.5)]  # span 6 s, one 1 s gap
    assert speaking_rate_wpm(10, turns, 1) == pytest.approx(60 * 10 / 5.0)
    assert speaking_rate_wpm(10, turns, 0) == pytest.approx(60 * 10 / 6.0)
    assert speaking_rate_wpm(10, turns, 3) == pytest.approx(60 * 10 / 5.0)  # cues > gaps
    three = [_turn(0, 2), _turn(2.2, 4), _turn(6, 8)]  # gaps 0.2 and 2.0: the longest goes
    assert speaking_rate_wpm(12, three, 1) == pytest.approx(60 * 12 / 6.0)
    assert speaking_rate_wpm(10, [], 0) is None


def test_missed_run_finds_a_skipped_line():
    from rig.voices.check import missed_run

    ref = "I asked for ten minutes after the shift and I listened to their reason"
    hyp = "I asked for ten minutes and I listened to their reason"
    assert missed_run(ref, hyp) == (3, "after the shift")
    assert missed_run(ref, ref) == (0, "")
    assert missed_run(ref, "") == (14, ref.lower().replace(" ten ", " 10 "))  # normalised
    assert missed_run("", "anything") == (0, "")


def test_flags():
    from rig.voices.check import FileCheck, Thresholds, flags_for

    ok = FileCheck("a", "a.wav", 48000, 1, 3.0, -24.0, -6.0, 0.0, 35.0, 0.05, 1, "x", "t", 150)
    assert flags_for(ok, Thresholds()) == ()
    from dataclasses import replace

    assert flags_for(replace(ok, wer=0.3), Thresholds()) == ("re-take: misread?",)
    assert flags_for(replace(ok, longest_missed_run=4), Thresholds()) == ("re-take: misread?",)
    assert flags_for(replace(ok, wer=0.3), Thresholds(max_wer=0.5)) == ()
    assert flags_for(replace(ok, clipped_fraction=0.01, level_dbfs=-50.0, snr_db=12.0,
                             sample_rate_hz=8000), Thresholds()) == (
        "clipped", "quiet", "noisy", "rate under 16 kHz")
    assert flags_for(replace(ok, snr_db=None), Thresholds()) == ()  # not measurable: no flag


class _Stages:
    """The VAD and ASR of rig.monitor.signals.SignalStages, faked: one turn per file, the
    transcript from a table keyed by duration."""

    def __init__(self, texts: dict[float, str]) -> None:
        self.texts = texts

    def detect_turns(self, audio, params):
        assert audio.sample_rate_hz == 16000 and params.silence_timeout_ms == 300
        return (_turn(0.5, audio.duration_s - 0.5),)

    def transcribe(self, audio, options):
        from rig.asr.whisper import Transcript

        assert options.model == "whisper-base"
        return Transcript(self.texts[round(audio.duration_s, 1)], -0.2, 0.01,
                          audio.duration_s)


def _wav(path: Path, seconds: float, amp: float = 0.1, rate: int = 48000) -> None:
    rng = np.random.default_rng(0)
    x = np.zeros(int(seconds * rate), np.float32)
    n = int(0.5 * rate)
    x[n:-n] = amp * np.sin(2 * np.pi * 180 * np.arange(len(x) - 2 * n) / rate)
    sf.write(str(path), x + 1e-3 * rng.standard_normal(len(x)).astype(np.float32), rate,
             subtype="PCM_16")  # white noise at -60 dBFS


def test_check_voice_coverage_and_files(tmp_path):
    from rig.answers import load_bank
    from rig.voices.check import check_voice

    bank = load_bank(BANK)
    scripts = {a.answer_id: a for _, a in bank.answers()}
    folder = tmp_path / "spk"
    folder.mkdir()
    _wav(folder / "q01_strong.wav", 6.0)
    _wav(folder / "q03_weak.wav", 5.0)
    _wav(folder / "not_in_bank.wav", 2.0)
    sf.write(str(folder / "q01_strong.flac"), np.zeros(100, np.float32), 16000)  # shadowed
    stages = _Stages({6.0: scripts["q01_strong"].clean_text,
                      5.0: "something else entirely"})
    res = check_voice(folder, BANK, stages=stages)
    assert res.n_answers == len(scripts)
    assert set(res.missing) == set(scripts) - {"q01_strong", "q03_weak"}
    assert res.extra == ("not_in_bank",)
    assert res.speaker is None and res.speaker_problem == "no speaker.json"
    by = {f.answer_id: f for f in res.files}
    good, bad = by["q01_strong"], by["q03_weak"]
    assert good.wer == 0.0 and good.flags == () and good.longest_missed_run == 0
    assert good.file == "q01_strong.wav" and good.sample_rate_hz == 48000
    assert good.level_dbfs == pytest.approx(20 * np.log10(0.1 / np.sqrt(2)), abs=0.2)
    # measured at 16 kHz: a third of the 48 kHz white noise's power is left below 8 kHz
    assert good.snr_db == pytest.approx(10 * np.log10(0.1**2 / 2 / (1e-6 / 3)), abs=0.5)
    assert good.notes == ()
    from rig.voices.check import pause_cues, script_tokens

    s = scripts["q01_strong"].script
    assert good.wpm == pytest.approx(60 * script_tokens(s) / 5.0, abs=0.1)
    assert pause_cues(s) == 0
    assert "re-take: misread?" in bad.flags and bad.wer > 0.9
    out = res.to_json()
    json.dumps(out, allow_nan=False)
    assert out["n_recorded"] == 2 and out["files"][0]["answer_id"] == "q01_strong"


def test_check_voice_bad_inputs(tmp_path):
    from rig.errors import ConfigError, RigError
    from rig.voices.check import check_voice

    with pytest.raises(ConfigError, match="speaker folder not found"):
        check_voice(tmp_path / "none", BANK)
    folder = tmp_path / "spk"
    folder.mkdir()
    (folder / "q01_strong.wav").write_bytes(b"ID3 not a wav")
    (folder / "speaker.json").write_text("{}")
    with pytest.raises(RigError, match=r"q01_strong\.wav"):
        check_voice(folder, BANK, stages=_Stages({}))
    (folder / "q01_strong.wav").unlink()
    res = check_voice(folder, BANK, stages=_Stages({}))
    assert "speaker_id" in res.speaker_problem


def test_cli_check_json_and_exit_code(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import rig.monitor.signals as signals
    from rig.cli import app

    folder = tmp_path / "spk"
    folder.mkdir()
    _wav(folder / "q01_strong.wav", 6.0)
    fake = _Stages({6.0: "nothing like the script"})
    monkeypatch.setattr(signals, "SignalStages", lambda: fake)
    r = CliRunner().invoke(app, ["voices", "check", str(folder), "--answers", str(BANK),
                                 "--json"])
    assert r.exit_code == 1, r.output
    out = json.loads(r.stdout)
    assert out["files"][0]["flags"] == ["re-take: misread?"]
    r = CliRunner().invoke(app, ["voices", "check", str(folder), "--answers", str(BANK),
                                 "--max-wer", "2", "--json"])
    assert r.exit_code == 1  # the missed run still flags it
    r = CliRunner().invoke(app, ["voices", "check", str(folder), "--answers", str(BANK)])
    assert "re-take: misread?" in r.stdout and "missing" in r.stdout
    r = CliRunner().invoke(app, ["voices", "check", str(tmp_path / "none"), "--answers",
                                 str(BANK)])
    assert r.exit_code == 2 and "speaker folder not found" in r.output
    r = CliRunner().invoke(app, ["voices", "check", str(folder), "--answers", str(BANK),
                                 "--asr-model", "whisper-huge"])
    assert r.exit_code == 2 and "--asr-model: unknown model 'whisper-huge'" in r.output
    # no flagged file, but no speaker.json: a problem to fix (exit 1), printed
    r = CliRunner().invoke(app, ["voices", "check", str(folder), "--answers", str(BANK),
                                 "--max-wer", "2"])
    assert r.exit_code == 1 and "speaker.json" in r.stdout
