"""Monitor signals on real recordings whose input cannot support some signals (issue 19,
item 6): studio speech from the first frame to the last, all-silence recordings, and stereo
calls whose candidate side is silent while the interviewer speaks. Each signal is then None
with its reason in ``notes``, never a clipped or default value. Real speech from
../shared/data/speech (skipped without it) and tests/data; real Silero and Whisper.

What was wrong (before rig.monitor.snr's onset guards): on a recording whose speech starts at
the first frame the VAD's first turn starts 0.52-0.84 s in (pipecat's smoothed volume and
Silero's state warm up, and the onset is dated back by start_ms only), so that first stretch
of speech was taken as noise and the SNR sat at the -10 dB clip on clean and noisy copies.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rig.audio import Audio, active_speech_mask, read_wav
from rig.channel.codecs import decode, encode
from rig.monitor.config import SignalsConfig
from rig.monitor.meta import CallMeta
from rig.monitor.signals import CallAudio, estimate_snr_db, measure_call
from rig.synth.noise import mix_at_snr, white_noise
from rig.vad import TurnParams, detect_turns

pytestmark = pytest.mark.integration
DATA = Path(__file__).resolve().parent / "data"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "speech"
META = CallMeta(call_id="c", timestamp="2025-01-06T10:00:00Z", employer="e", job_family="j",
                score=50.0, decision="reject")
SR = 8000


def _studio() -> list[Path]:
    found = sorted([*SHARED.glob("cmu-arctic/*.wav"), *SHARED.glob("coqui-tts-ljspeech/*.wav"),
                    *SHARED.glob("pocketsphinx/librivox/*.wav")])
    return found or sorted(DATA.glob("*.wav"))[:3]


def _trimmed(path: Path) -> Audio:
    """The recording at 8 kHz cut to its speech (first to last frame within 25 dB of the
    loudest) and through G.711 mu-law: speech from the first frame to the last."""
    a = read_wav(path, SR)
    idx = np.flatnonzero(active_speech_mask(a.samples, SR, floor_db=25.0))
    return Audio(a.samples[idx[0]:idx[-1] + 1], SR)


def _line(a: Audio) -> Audio:
    return decode(encode(a, "mulaw"), "mulaw", SR)


def _mono(a: Audio) -> CallAudio:
    return CallAudio(a, None, 1, "mono", None, None, "test", "")


def test_speech_from_first_to_last_frame_gives_no_snr_clean_or_noisy() -> None:
    rng = np.random.default_rng(0)
    files = _studio()
    for path in files:
        clean = _trimmed(path)
        noisy, _ = mix_at_snr(clean, white_noise(len(clean.samples), rng), 5.0)
        for tag, audio in (("clean", _line(clean)), ("5 dB", _line(noisy))):
            turns = detect_turns(audio, TurnParams())
            snr, why = estimate_snr_db(audio, turns)
            assert snr is None, (path.name, tag, turns, snr)
            assert why.startswith("under 0.2 s of audio outside speech"), why


def test_every_signal_of_a_speech_only_call_says_what_it_can_and_cannot_measure() -> None:
    s = measure_call(_mono(_line(_trimmed(DATA / "cmu_arctic_us_aew_a0003.wav"))), META,
                     SignalsConfig())
    assert s.snr_db is None and any(n.startswith("snr_db: under 0.2 s") for n in s.notes)
    assert s.n_turns == 1 and s.asr_avg_logprob is not None and "shook" in s.transcript.lower()
    # the ASR cut starts before the VAD's late onset: the first words are heard (with 0.2 s
    # before the onset it read "20th time that evening, ...")
    assert s.transcript.lower().startswith("for the"), s.transcript
    assert s.pace_wpm is not None and 100 < s.pace_wpm < 300
    assert s.channel_class == "narrowband" and s.truncation_events == 0


@pytest.mark.parametrize("sr, kind", [(8000, "zeros"), (16000, "zeros"), (8000, "hiss"),
                                      (16000, "hiss")])
def test_an_all_silence_recording_measures_nothing_it_cannot(sr: int, kind: str) -> None:
    n = 5 * sr
    x = (np.zeros(n, np.float32) if kind == "zeros"
         else (white_noise(n, np.random.default_rng(1)) * 3e-3).astype(np.float32))
    s = measure_call(_mono(Audio(x, sr)), META, SignalsConfig())
    assert (s.n_turns, s.speech_s, s.n_words, s.truncation_events) == (0, 0.0, 0, 0)
    assert s.snr_db is None and s.asr_avg_logprob is None and s.asr_no_speech_prob is None
    assert s.pace_wpm is None and s.transcript == ""
    notes = " | ".join(s.notes)
    for field in ("snr_db: no speech detected", "asr: no speech detected",
                  "pace_wpm: under 1 s of speech", "repeat_requests:"):
        assert field in notes, notes
    if sr == 16000 and kind == "zeros":
        assert s.channel_class == "unknown" and "channel_class:" in notes
    else:
        assert "channel_class:" not in notes


def test_stereo_with_a_silent_candidate_while_the_interviewer_speaks() -> None:
    iv = read_wav(DATA / "cmu_arctic_us_axb_a0006.wav", SR)
    cand_answer = read_wav(DATA / "cmu_arctic_us_aew_a0003.wav", SR)
    gap = Audio.silence(1.0, SR)
    # interviewer asks, candidate silent; then the candidate answers, interviewer silent
    interviewer = Audio.concat([iv, gap, Audio.silence(cand_answer.duration_s, SR), gap])
    candidate = Audio.concat([Audio.silence(iv.duration_s, SR), gap, cand_answer, gap])
    call = CallAudio(_line(candidate), _line(interviewer), 2, "stereo", "mulaw", "file",
                     "test", "")
    s = measure_call(call, META, SignalsConfig())
    assert s.n_turns == 1 and "shook" in s.transcript.lower()
    assert "bless" not in s.transcript.lower()  # nothing of the interviewer's side
    assert "bless" in (s.interviewer_transcript or "").lower()
    assert s.snr_db is not None and s.snr_db >= 30  # the silent side is the noise: clean
    assert s.repeat_requests == 0 and s.repeat_source == "interviewer_transcript"
    # the candidate never speaks: every candidate signal is not measurable
    mute = CallAudio(_line(Audio.silence(interviewer.duration_s, SR)), _line(interviewer), 2,
                     "stereo", "mulaw", "file", "test", "")
    m = measure_call(mute, META, SignalsConfig())
    assert (m.n_turns, m.transcript, m.snr_db, m.pace_wpm, m.asr_avg_logprob) == (
        0, "", None, None, None)
    assert "bless" in (m.interviewer_transcript or "").lower()
    assert any(n.startswith("snr_db: no speech detected") for n in m.notes)


def test_ingesting_speech_only_calls_stores_no_snr_and_says_why(tmp_path: Path) -> None:
    """Issue 19's case through `rig monitor ingest`: 8 kHz studio recordings with speech from
    the first frame to the last, clean and with white noise at 5 dB. Before, every one
    stored snr_db at or near -10 (the clip floor) and the SNR segment put all in "<10 dB";
    now none stores an SNR, each says why, and the segment is "unknown"."""
    import json

    import typer
    from typer.testing import CliRunner

    from rig.audio import write_wav
    from rig.cli.monitor import monitor_app
    from rig.monitor.store import MonitorStore

    folder = tmp_path / "calls"
    folder.mkdir()
    rng = np.random.default_rng(5)
    for i, path in enumerate(_studio()[:3]):
        clean = _trimmed(path)
        noisy, _ = mix_at_snr(clean, white_noise(len(clean.samples), rng), 5.0)
        for stem, audio in ((f"clean{i}", clean), (f"noisy{i}", noisy)):
            write_wav(folder / f"{stem}.wav", _line(audio))
            (folder / f"{stem}.json").write_text(json.dumps({
                "call_id": stem, "timestamp": "2025-01-07T10:00:00Z", "employer": "acme",
                "job_family": "support", "language": "en", "score": 60,
                "decision": "advance"}))
    app = typer.Typer()
    app.add_typer(monitor_app, name="monitor")
    db = tmp_path / "monitor.duckdb"
    r = CliRunner().invoke(app, ["monitor", "ingest", str(folder), "--db", str(db)])
    assert r.exit_code == 0, r.output
    with MonitorStore(db, read_only=True) as store:
        rows = store.con.execute("SELECT call_id, snr_db, notes, asr_avg_logprob FROM calls "
                                 "ORDER BY call_id").df()
    assert len(rows) == 6 and rows["snr_db"].isna().all(), rows
    assert rows["notes"].str.contains("snr_db: under 0.2 s of audio outside speech").all()
    assert rows["asr_avg_logprob"].notna().all()  # what can be measured still is
