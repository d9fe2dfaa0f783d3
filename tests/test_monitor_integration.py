"""rig.monitor on real components: Silero VAD (pipecat), faster-whisper tiny.en, the hibari
voice for an interviewer channel, real human speech and a real noise recording
(tests/data/NOTICE)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from rig.asr.wer import wer
from rig.audio import Audio, read_wav, write_wav
from rig.channel.codecs import decode, encode
from rig.monitor.config import SignalsConfig
from rig.monitor.meta import CallMeta
from rig.monitor.signals import CallAudio, estimate_snr_db, measure_call
from rig.monitor.store import MonitorStore
from rig.synth.noise import file_noise, mix_at_snr, pink_noise, white_noise
from rig.vad import TurnParams, detect_turns

pytestmark = pytest.mark.integration
DATA = Path(__file__).resolve().parent / "data"
A = ("cmu_arctic_us_aew_a0003.wav", "For the twentieth time that evening the two men shook "
     "hands.")
B = ("cmu_arctic_us_axb_a0006.wav", "God bless 'em, I hope I'll go on seeing them forever.")
C = ("sense_and_sensibility_01_austen_64kb-0870.wav", "and mister john dashwood had then "
     "leisure to consider how much there might be prudently in his power to do for them")
META = CallMeta(call_id="c", timestamp="2025-01-06T10:00:00Z", employer="e", job_family="j",
                score=50.0, decision="reject")


def _speech(sr: int, gap_s: float = 1.5) -> Audio:
    parts = [Audio.silence(0.6, sr)]
    for name, _ in (A, B, C):
        parts += [read_wav(DATA / name, sr), Audio.silence(gap_s, sr)]
    return Audio.concat(parts)


def _noise(kind: str, n: int, sr: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "white":
        return white_noise(n, rng)
    if kind == "pink":
        return pink_noise(n, rng)
    return file_noise(DATA / "noise_dishes_10s.wav", n, sr, rng)


def _mono(audio: Audio) -> CallAudio:
    return CallAudio(audio, None, 1, "mono", None, None, "test", "")


@pytest.mark.parametrize("sr", [8000, 16000])
def test_snr_estimate_on_real_speech_and_noise(sr):
    """Real speech (three speakers), white, pink and kitchen noise mixed at 0-30 dB at the rate
    the estimator runs at; at 8 kHz through G.711 mu-law as a phone line delivers it."""
    clean = _speech(sr)
    rng = np.random.default_rng(0)
    errors = []
    for kind in ("white", "pink", "dishes"):
        for snr in (0, 5, 10, 15, 20, 30):
            mix, truth = mix_at_snr(clean, _noise(kind, len(clean.samples), sr, rng), snr)
            if sr == 8000:
                mix = decode(encode(mix, "mulaw"), "mulaw", 8000)
            est, why = estimate_snr_db(mix, detect_turns(mix, TurnParams()))
            assert why is None, (kind, snr, why)
            errors.append(est - truth)
    err = np.abs(errors)
    print(f"SNR estimate at {sr} Hz: mean abs error {err.mean():.2f} dB, max {err.max():.2f} dB,"
          f" bias {np.mean(errors):+.2f} dB over {len(err)} mixes")
    assert err.mean() <= 1.5 and err.max() <= 4.5


def test_truncation_events_pace_and_asr_confidence_from_real_vad_and_asr():
    sr = 8000
    a, b = read_wav(DATA / A[0], sr), read_wav(DATA / B[0], sr)
    cfg = SignalsConfig()  # 800 ms timer, resume within 1000 ms
    found = {}
    for gap in (0.3, 1.2, 3.0):
        audio = Audio.concat([Audio.silence(0.5, sr), a, Audio.silence(gap, sr), b,
                              Audio.silence(1.5, sr)])
        found[gap] = s = measure_call(_mono(audio), META, cfg)
        assert wer(f"{A[1]} {B[1]}", s.transcript).wer <= 0.25, s.transcript
        assert -1.0 < s.asr_avg_logprob < 0 and 0 <= s.asr_no_speech_prob < 0.5
        assert 120 < s.pace_wpm < 280 and s.n_words >= 18
        assert s.t_asr_s > 0 and s.t_vad_s > 0
    assert [found[g].truncation_events for g in (0.3, 1.2, 3.0)] == [0, 1, 0]
    assert [found[g].n_turns for g in (0.3, 1.2, 3.0)] == [1, 2, 2]
    # the same speech under 0 dB of kitchen noise: Whisper is less sure of it
    rng = np.random.default_rng(1)
    clean = Audio.concat([Audio.silence(0.5, sr), a, Audio.silence(0.3, sr), b,
                          Audio.silence(1.5, sr)])
    noisy, _ = mix_at_snr(clean, _noise("dishes", len(clean.samples), sr, rng), 0.0)
    s = measure_call(_mono(noisy), META, cfg)
    assert s.snr_db < 5 and s.asr_avg_logprob < found[0.3].asr_avg_logprob


def test_repeat_requests_from_the_interviewer_channel():
    from rig.synth.engines import get_engine

    sr = 8000
    voice = get_engine("hibari", "heart")
    ask = voice.synthesize("Sorry, I didn't catch that. Could you repeat that, please?",
                           1.0).resample(sr)
    nxt = voice.synthesize("Thank you. Tell me about a time you solved a hard problem.",
                           1.0).resample(sr)
    a, b = read_wav(DATA / A[0], sr), read_wav(DATA / B[0], sr)
    sil = Audio.silence
    interviewer = Audio.concat([sil(0.5, sr), ask, sil(a.duration_s + 1.0, sr), nxt,
                                sil(b.duration_s + 1.0, sr)])
    candidate = Audio.concat([sil(1.0 + ask.duration_s, sr), a,
                              sil(1.0 + nxt.duration_s, sr), b, sil(0.5, sr)])
    n = max(len(interviewer.samples), len(candidate.samples))
    left, right = (np.pad(x.samples, (0, n - len(x.samples))) for x in (candidate, interviewer))
    s = measure_call(CallAudio(Audio(left, sr), Audio(right, sr), 2, "candidate_left", None,
                               None, "test", ""), META, SignalsConfig())
    assert s.repeat_requests == 1 and s.repeat_source == "interviewer_transcript"
    assert "repeat" in s.interviewer_transcript.lower()
    assert "repeat" not in s.transcript.lower() and s.n_turns == 2
    with_meta = META.model_copy(update={"repeat_requests": 3})
    s2 = measure_call(CallAudio(Audio(left, sr), Audio(right, sr), 2, "candidate_left", None,
                                None, "test", ""), with_meta, SignalsConfig())
    assert s2.repeat_requests == 3 and s2.repeat_source == "metadata"


def test_ingest_a_folder_on_the_real_pipeline_twice(tmp_path):
    """Real VAD and ASR behind `rig monitor ingest`: a wideband WAV and a raw mu-law call per
    speaker; ingesting the folder again changes nothing."""
    from rig.cli.monitor import monitor_app

    folder = tmp_path / "calls"
    folder.mkdir()
    rng = np.random.default_rng(2)
    for i, (name, _) in enumerate((A, C)):
        clip = read_wav(DATA / name, 16000)
        clean = Audio.concat([Audio.silence(0.5, 16000), clip, Audio.silence(1.0, 16000)])
        write_wav(folder / f"clean{i}.wav", mix_at_snr(
            clean, white_noise(len(clean.samples), rng), 35.0)[0])
        line = clean.resample(8000)
        noisy, _ = mix_at_snr(line, white_noise(len(line.samples), rng), 3.0)
        (folder / f"noisy{i}.ulaw").write_bytes(encode(noisy, "mulaw").tobytes())
        for stem in (f"clean{i}", f"noisy{i}"):
            (folder / f"{stem}.json").write_text(json.dumps({
                "call_id": stem, "timestamp": "2025-01-07T10:00:00Z", "employer": "acme",
                "job_family": "support", "language": "en", "score": 60 + i,
                "decision": "advance"}))
    app = typer.Typer()
    app.add_typer(monitor_app, name="monitor")
    runner = CliRunner()
    db = tmp_path / "monitor.duckdb"
    r = runner.invoke(app, ["monitor", "ingest", str(folder), "--db", str(db)])
    assert r.exit_code == 0, r.output
    assert "4 calls ingested, 0 already stored, 0 skipped" in r.stdout
    with MonitorStore(db, read_only=True) as store:
        rows = store.con.execute("SELECT call_id, snr_db, channel_class, codec, "
                                 "asr_avg_logprob, transcript, n_turns FROM calls "
                                 "ORDER BY call_id").df().set_index("call_id")
        digest = store.table_digest()
    assert (rows.loc[["noisy0", "noisy1"], "snr_db"] < 10).all(), rows
    assert (rows.loc[["clean0", "clean1"], "snr_db"] > 25).all(), rows
    assert list(rows["channel_class"]) == ["wideband", "wideband", "narrowband", "narrowband"]
    assert list(rows["codec"].fillna("-")) == ["-", "-", "mulaw", "mulaw"]
    assert wer(A[1], rows.loc["clean0", "transcript"]).wer <= 0.2
    assert (rows["n_turns"] >= 1).all()
    r = runner.invoke(app, ["monitor", "ingest", str(folder), "--db", str(db)])
    assert "0 calls ingested, 4 already stored, 0 skipped" in r.stdout
    with MonitorStore(db, read_only=True) as store:
        assert store.table_digest() == digest
    r = runner.invoke(app, ["monitor", "report", "--db", str(db), "--out",
                            str(tmp_path / "report"), "--fail-on-alert"])
    assert r.exit_code == 0, r.output
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert summary["n_calls"] == 4 and "snr_db" in summary["dimensions"]
