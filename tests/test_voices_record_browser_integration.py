"""``rig voices record`` in headless Chromium with a fake microphone, then ``rig voices check``
and a campaign on the recorded voice.

The fake microphone plays a WAV built from a real recording (CMU ARCTIC prompts in
tests/data, an Indian English and a US English speaker: see tests/data/NOTICE): Chromium's
``--use-file-for-fake-audio-capture`` starts the file again each time the page opens the
microphone, and the page opens it at Record. Two
browser sessions, each with its own file, record two answers of a three-answer bank whose
scripts are those recordings' transcripts (the second session sees the first's take: progress
across sessions). Then the files and ``speaker.json`` are checked, ``rig voices check`` runs
on the folder, and ``rig campaign run`` runs the baseline and the recorded voice over the two
answers (4 calls).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from browser import need_chromium, screenshot, set_viewport

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
TAKES = {"read_a": "cmu_arctic_us_axb_a0006.wav", "read_b": "cmu_arctic_us_aew_a0003.wav"}
ACCENT = "I grew up near Leeds; my parents speak Punjabi at home."
LEAD_S, TAIL_S = 1.0, 1.0

BANK = """question_id: q_read
category: reading
question: Please read the sentence on your screen aloud.
rubric_version: 1
cutoff: 60
rubric:
  - id: accuracy
    points: 100
    description: Reads the whole sentence, every word as written, in order.
answers:
  - answer_id: read_a
    tier: strong
    script: "God bless 'em, I hope I'll go on seeing them forever."
    reference_grades: [{grader_id: t1, score: 90}, {grader_id: t2, score: 90}]
  - answer_id: read_b
    tier: borderline
    script: "For the twentieth time that evening [pause 0.5s] the two men shook hands."
    reference_grades: [{grader_id: t1, score: 60}, {grader_id: t2, score: 62}]
  - answer_id: read_c
    tier: weak
    script: "Unless to be rather cold hearted and rather selfish is to be ill disposed."
    reference_grades: [{grader_id: t1, score: 20}, {grader_id: t2, score: 25}]
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _fake_mic(src: Path, out: Path) -> float:
    """A 48 kHz mono 16-bit WAV: LEAD_S of silence, the recording, 20 s of silence (Chromium
    loops the file); returns the recording's duration in seconds."""
    import soundfile as sf

    from rig.audio import read_wav

    speech = read_wav(src, 48000).samples
    sf.write(str(out), np.concatenate([np.zeros(int(LEAD_S * 48000), np.float32), speech,
                                       np.zeros(20 * 48000, np.float32)]), 48000,
             subtype="PCM_16")
    return len(speech) / 48000


def _mic_browser(wav: Path):
    """Chromium whose microphone plays ``wav`` (and asks no permission)."""
    from browser import chromium

    return chromium(1280, 900, ("--use-fake-ui-for-media-stream",
                                "--use-fake-device-for-media-stream",
                                f"--use-file-for-fake-audio-capture={wav}"))


def _wait(driver, js: str, timeout_s: float = 60.0):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        value = driver.execute_script("return " + js)
        if value:
            return value
        time.sleep(0.1)
    shown = driver.execute_script("return document.getElementById('status').textContent")
    raise AssertionError(f"not true within {timeout_s} s: {js} (status: {shown!r})")


def _record(driver, seconds: float) -> str:
    """Press Record, wait ``seconds`` of recording, press Stop; the status line once saved."""
    driver.find_element("id", "rec").click()
    _wait(driver, "document.getElementById('stop').disabled === false")
    time.sleep(seconds)
    driver.find_element("id", "stop").click()
    return _wait(driver, "(t => /^(saved|not saved)/.test(t) && t)"
                         "(document.getElementById('status').textContent)")


def _fidelity(source: Path, take: Path) -> tuple[float, float]:
    """The take against the microphone's source, aligned by cross-correlation: the gain
    (least squares) and the residual's power under the signal's (dB)."""
    from scipy.signal import correlate

    from rig.audio import read_wav

    rec = read_wav(take)
    x, src = rec.samples, read_wav(source, rec.sample_rate_hz).samples
    lag = int(np.argmax(np.abs(correlate(x, src, method="fft")))) - (len(src) - 1)
    n = min(len(src), len(x) - lag)
    seg, ref = x[lag:lag + n], src[:n]
    gain = float(np.dot(seg, ref) / np.dot(ref, ref))
    res = seg - gain * ref
    return gain, float(10 * np.log10(np.mean(res**2) / np.mean((gain * ref) ** 2)))


def _severe(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Two browser sessions recording read_a and read_b; returns (bank, voice folder, page
    facts)."""
    need_chromium()
    tmp = tmp_path_factory.mktemp("rec")
    bank = tmp / "bank"
    bank.mkdir()
    (bank / "q_read.yaml").write_text(BANK, encoding="utf-8")
    voice = tmp / "voices" / "spk01"
    durations = {aid: _fake_mic(DATA / name, tmp / f"{aid}.wav") for aid, name in TAKES.items()}
    port = _free_port()
    log = (tmp / "server.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "rig.cli", "voices", "record", "--answers",
                             str(bank), "--out", str(voice), "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, env=_env())
    url = f"http://127.0.0.1:{port}/"
    facts: dict = {}
    try:
        end = time.monotonic() + 120
        while "recording page" not in (tmp / "server.log").read_text():
            assert proc.poll() is None and time.monotonic() < end, (tmp / "server.log").read_text()
            time.sleep(0.2)
        with _mic_browser(tmp / "read_a.wav") as d:  # session 1: consent, form, a take, a re-take
            d.get(url)
            _wait(d, "document.body.dataset.ready === '1'")
            facts["consent_shown"] = d.find_element("id", "consenttext").text
            d.find_element("id", "agree").click()
            d.find_element("id", "continue").click()
            d.find_element("id", "micbtn").click()
            _wait(d, "document.getElementById('save').disabled === false")
            facts["device_prefilled"] = d.execute_script(
                "return document.getElementById('device').value")
            d.find_element("id", "accent").send_keys(ACCENT)
            d.find_element("id", "languages").send_keys("English, Punjabi")
            d.find_element("id", "save").click()
            _wait(d, "!document.getElementById('record').classList.contains('hidden')")
            facts["first"] = d.find_element("id", "qid").text
            facts["take1"] = _record(d, LEAD_S + durations["read_a"] + TAIL_S)
            facts["retake_label"] = d.find_element("id", "rec").text
            facts["take2"] = _record(d, LEAD_S + durations["read_a"] + TAIL_S)
            _wait(d, "document.getElementById('player').dataset.loaded === 'read_a'")
            facts["playback_s"] = d.execute_async_script(
                "const done = arguments[0], p = document.getElementById('player');"
                "if (p.readyState >= 1) done(p.duration);"
                "else p.addEventListener('loadedmetadata', () => done(p.duration));")
            facts["errors1"] = _severe(d)
        with _mic_browser(tmp / "read_b.wav") as d:  # session 2: progress kept, no consent again
            d.get(url)
            _wait(d, "document.body.dataset.ready === '1'")
            facts["consent_hidden"] = d.execute_script(
                "return document.getElementById('consent').classList.contains('hidden')")
            facts["count2"] = d.find_element("id", "count").text
            facts["second"] = d.find_element("id", "qid").text
            facts["script2"] = d.find_element("id", "script").text
            facts["take3"] = _record(d, LEAD_S + durations["read_b"] + TAIL_S)
            facts["count3"] = d.find_element("id", "count").text
            screenshot(d, tmp / "record_page.png")  # for a person to look at
            set_viewport(d, 390)
            screenshot(d, tmp / "record_page_390.png")
            facts["errors2"] = _severe(d)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()
    return bank, voice, facts, durations


def test_page_records_takes_and_speaker(recorded):
    from rig.voices.record import CONSENT_TEXT
    from rig.voices.speaker import read_speaker

    _, voice, facts, durations = recorded
    assert facts["consent_shown"] == CONSENT_TEXT
    assert facts["device_prefilled"]  # Chromium's fake device label
    assert facts["first"].startswith("read_a")
    assert facts["take1"].startswith("saved read_a.wav"), facts["take1"]
    assert facts["retake_label"] == "Re-take"
    assert facts["take2"].startswith("saved read_a.wav"), facts["take2"]
    assert facts["playback_s"] == pytest.approx(LEAD_S + durations["read_a"] + TAIL_S, abs=1.0)
    assert facts["consent_hidden"] is True
    assert facts["count2"] == "1 of 3 answers recorded"
    assert facts["second"].startswith("read_b")  # the first answer without a take
    assert "pause 0.5 s" in facts["script2"]
    assert facts["take3"].startswith("saved read_b.wav"), facts["take3"]
    assert facts["count3"] == "2 of 3 answers recorded"
    assert facts["errors1"] == [] and facts["errors2"] == []

    import soundfile as sf

    assert sorted(p.name for p in voice.iterdir()) == ["read_a.wav", "read_b.wav",
                                                       "speaker.json"]
    for aid in TAKES:
        info = sf.info(str(voice / f"{aid}.wav"))
        assert (info.channels, info.subtype, info.format) == (1, "PCM_16", "WAV")
        assert info.samplerate >= 16000
        assert info.duration == pytest.approx(LEAD_S + durations[aid] + TAIL_S, abs=1.0)
        # the take is the microphone's signal: no gain control or noise suppression on the
        # way (measured here: gain 0.9999, residual -71 and -73 dB, the 48 -> 44.1 kHz
        # resampling and 16-bit rounding)
        gain, residual_db = _fidelity(DATA / TAKES[aid], voice / f"{aid}.wav")
        assert gain == pytest.approx(1.0, abs=0.02) and residual_db < -40, (gain, residual_db)
    sp = read_speaker(voice)
    assert (sp.speaker_id, sp.source) == ("spk01", "recorded")
    assert sp.consent.text == CONSENT_TEXT
    assert sp.consent.date[:10] == dt.datetime.now(dt.UTC).date().isoformat()
    assert sp.device == facts["device_prefilled"]
    assert (sp.accent_description, sp.language_background) == (ACCENT, "English, Punjabi")
    assert sp.sample_rate_hz >= 16000


def test_check_and_campaign_on_the_recorded_voice(recorded, tmp_path):
    bank, voice, _, _ = recorded
    run = subprocess.run([sys.executable, "-m", "rig.cli", "voices", "check", str(voice),
                          "--answers", str(bank), "--json"], capture_output=True, text=True,
                         env=_env(), timeout=300)
    assert run.returncode in (0, 1), run.stderr
    out = json.loads(run.stdout)
    assert out["missing"] == ["read_c"] and out["n_recorded"] == 2
    assert out["speaker"]["accent_description"] == ACCENT
    by_id = {f["answer_id"]: f for f in out["files"]}
    for aid in TAKES:
        f = by_id[aid]
        assert f["wer"] is not None and f["wer"] <= 0.2, f
        assert "re-take: misread?" not in f["flags"]
        assert f["clipped_fraction"] == 0.0
        assert -45 < f["level_dbfs"] < -5
        assert f["wpm"] is not None and 80 < f["wpm"] < 300, f
    assert run.returncode == (1 if any(f["flags"] for f in out["files"]) else 0)

    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "baseline.yaml").write_text(
        (ROOT / "profiles" / "demo" / "baseline.yaml").read_text(encoding="utf-8"))
    (profiles / "spk01.yaml").write_text(
        "profile_id: spk01\ndescription: speaker spk01 reading the bank (rig voices record)\n"
        f"voice: {{engine: recorded, voice_id: {voice}}}\n"
        "accent_label: \"recorded: spk01, as the speaker describes it\"\n", encoding="utf-8")
    camp = tmp_path / "camp"
    run = subprocess.run([sys.executable, "-m", "rig.cli", "campaign", "run", "--answers",
                          str(bank), "--profiles", str(profiles), "--pipeline",
                          str(ROOT / "pipelines" / "reference.yaml"), "--out", str(camp),
                          "--profile", "spk01", "--answer-id", "read_a", "--answer-id",
                          "read_b", "--no-progress", "--n-boot", "200"],
                         capture_output=True, text=True, env=_env(), timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    import pandas as pd

    rows = pd.read_parquet(camp / "calls.parquet")
    assert len(rows) == 4
    rec = rows[rows.profile_id == "spk01"]
    assert sorted(rec.answer_id) == ["read_a", "read_b"]
    assert set(rec.voice_engine) == {"recorded"}
    assert set(rec.status) == {"ok"}, rec[["answer_id", "error"]]
    # heard through the 8 kHz mu-law line by tiny.en; whisper-base on the files: WER 0.08
    # (read_a: "them" for "'em") and 0
    assert (rec.wer < 0.5).all() and rec.score.notna().all(), rec[["answer_id", "wer"]]
