"""rig.monitor with fake VAD and ASR: metadata, bins, SNR estimate, store, weekly statistics
checked against an independent pandas/statsmodels computation, alerts, privacy, CLI."""

from __future__ import annotations

import hashlib
import json
import wave
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import typer
from statsmodels.stats.proportion import proportions_ztest
from typer.testing import CliRunner

from rig.asr.whisper import AsrSegment, Transcript
from rig.audio import Audio, write_wav
from rig.errors import ConfigError, RigError
from rig.monitor.alerts import analyse_week, week_label
from rig.monitor.config import MonitorConfig, load_config
from rig.monitor.ingest import ingest_folder
from rig.monitor.meta import iter_calls, parse_meta
from rig.monitor.report import build_report, parse_week, write_report
from rig.monitor.segments import bin_label, bin_labels, bin_sql, dimensions
from rig.monitor.signals import (
    SignalStages,
    channel_class,
    count_repeat_requests,
    count_truncations,
    detect_g711,
    estimate_snr_db,
)
from rig.monitor.simulate import LEAD_S, WeekDesign, expected_selection_ratio, write_week
from rig.monitor.store import MonitorStore
from rig.synth.noise import mix_at_snr, white_noise
from rig.vad import Turn

pytestmark = pytest.mark.unit

WEEK0 = date(2025, 1, 6)  # a Monday
N_PER_WEEK = 150


def _fixed_turns(audio: Audio, params) -> tuple[Turn, ...]:
    """The synthetic recordings hold speech from LEAD_S for 0.8 s (rig.monitor.simulate)."""
    end = LEAD_S + 0.8
    return (Turn(LEAD_S, end, min(audio.duration_s, end + params.silence_timeout_ms / 1000),
                 "silence_timeout"),)


def _fake_asr(audio: Audio, options) -> Transcript:
    seg = AsrSegment(0.0, audio.duration_s, "one two three four five", -0.25, 0.04)
    return Transcript(seg.text, -0.25, 0.04, audio.duration_s, (seg,), "en")


FAKES = SignalStages(_fixed_turns, _fake_asr)


def _designs() -> list[WeekDesign]:
    """Weeks 0-3 without effect; week 4: the noisy calls score 15 points lower."""
    return [WeekDesign(WEEK0 + timedelta(days=7 * k), n_calls=N_PER_WEEK,
                       noisy_mean=55.0 if k == 4 else 70.0) for k in range(5)]


@pytest.fixture(scope="module")
def monitored(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("monitor")
    truth = {}
    for k, d in enumerate(_designs()):
        truth[k] = pd.DataFrame(write_week(root / "in" / f"week{k}", d, seed=100 + k,
                                           fmt="ulaw" if k == 2 else "wav",
                                           layout="manifest" if k == 1 else "sidecar"))
    db = root / "monitor.duckdb"
    with MonitorStore(db) as store:
        res = ingest_folder(root / "in", store, MonitorConfig(), stages=FAKES)
        digest = store.table_digest()
    return {"root": root, "db": db, "truth": truth, "result": res, "digest": digest}


def _segment(report, dimension: str, segment: str):
    return next(s for s in report.analysis.segments
                if s.dimension == dimension and s.segment == segment)


# --- the checks of the issue -----------------------------------------------------------------

def test_every_call_is_ingested_and_binned_by_its_measured_snr(monitored):
    res = monitored["result"]
    assert res.n_ingested == 5 * N_PER_WEEK and not res.bad and res.n_duplicates == 0
    truth = pd.concat(monitored["truth"].values())
    with MonitorStore(monitored["db"], read_only=True) as store:
        got = store.con.execute("SELECT call_id, snr_db, codec, codec_source, channel_class "
                                "FROM calls").df().set_index("call_id")
    got = got.join(truth.set_index("call_id"))
    err = got["snr_db"] - got["snr_db_mixed"]
    assert err.abs().max() < 1.0, err.abs().max()  # exact speech bounds: the estimator only
    edges = MonitorConfig().segments.snr_db.edges
    bins = got["snr_db"].map(lambda v: bin_label(v, edges, "dB"))
    assert set(bins[got["noisy"]]) == {"<10 dB"} and set(bins[~got["noisy"]]) == {">=30 dB"}
    assert set(got["channel_class"]) == {"narrowband"}
    ulaw = got["file"].str.endswith(".ulaw")
    assert (got.loc[ulaw, "codec"] == "mulaw").all()
    assert got.loc[~ulaw, "codec"].isna().all()  # linear PCM of a synthetic mix: not G.711


def test_injected_effect_is_detected_with_the_right_ratio(monitored):
    cfg = MonitorConfig()
    with MonitorStore(monitored["db"], read_only=True) as store:
        report = build_report(store, cfg, WEEK0 + timedelta(days=28))
    t = monitored["truth"][4]
    # independent computation: pandas and statsmodels on the call-level truth
    med = t["score"].median()
    above = t["score"] > med
    adv = t["decision"] == "advance"
    noisy, clean = t["noisy"], ~t["noisy"]
    sc_ratio = above[noisy].mean() / above[clean].mean()
    se_ratio = adv[noisy].mean() / adv[clean].mean()
    z_sc, p_sc = proportions_ztest([above[noisy].sum(), above[clean].sum()],
                                   [noisy.sum(), clean.sum()])
    z_se, p_se = proportions_ztest([adv[noisy].sum(), adv[clean].sum()],
                                   [noisy.sum(), clean.sum()])
    s = _segment(report, "snr_db", "<10 dB")
    ref = _segment(report, "snr_db", ">=30 dB")
    assert ref.scoring_reference and ref.selection_reference
    assert report.median_score == pytest.approx(med)
    assert s.impact_ratio == pytest.approx(sc_ratio, rel=1e-12)
    assert s.selection_ratio == pytest.approx(se_ratio, rel=1e-12)
    assert s.scoring_z == pytest.approx(z_sc, rel=1e-9)
    assert s.scoring_p == pytest.approx(p_sc, rel=1e-6)
    assert s.selection_z == pytest.approx(z_se, rel=1e-9)
    assert s.selection_p == pytest.approx(p_se, rel=1e-6)
    assert s.mean_score == pytest.approx(t.loc[noisy, "score"].mean())
    # ... and against the population truth of the design (delta-method SE of a ratio)
    truth_ratio = expected_selection_ratio(_designs()[4])
    p1, p2, n1, n2 = adv[noisy].mean(), adv[clean].mean(), noisy.sum(), clean.sum()
    se = truth_ratio * np.sqrt((1 - p1) / (n1 * p1) + (1 - p2) / (n2 * p2))
    print(f"injected week: impact ratio {s.impact_ratio:.3f}, selection ratio "
          f"{s.selection_ratio:.3f} (design truth {truth_ratio:.3f}, SE {se:.3f}), "
          f"n {n1} noisy vs {n2} clean")
    assert abs(s.selection_ratio - truth_ratio) < 3 * se, (s.selection_ratio, truth_ratio)
    kinds = {(a.kind, a.dimension, a.segment) for a in report.analysis.alerts}
    assert ("scoring_impact_ratio", "snr_db", "<10 dB") in kinds
    assert ("selection_ratio", "snr_db", "<10 dB") in kinds
    assert ("mean_shift", "snr_db", "<10 dB") in kinds
    assert not any(a.segment == ">=30 dB" for a in report.analysis.alerts)


def test_a_week_without_effect_raises_no_alert(monitored):
    with MonitorStore(monitored["db"], read_only=True) as store:
        report = build_report(store, MonitorConfig(), WEEK0 + timedelta(days=21))
    assert report.analysis.baseline_weeks == tuple(WEEK0 + timedelta(days=7 * k)
                                                   for k in range(3))
    assert report.analysis.n_tests > 10
    assert report.analysis.alerts == ()
    s = _segment(report, "snr_db", "<10 dB")
    assert s.noise_floor_source == "week_to_week" and s.sd_week_to_week is not None


def test_reingesting_the_same_files_changes_nothing(monitored):
    with MonitorStore(monitored["db"]) as store:
        res = ingest_folder(monitored["root"] / "in", store, MonitorConfig(), stages=FAKES)
        assert res.n_ingested == 0 and res.n_duplicates == 5 * N_PER_WEEK and not res.bad
        assert store.table_digest() == monitored["digest"]


def test_noise_floor_and_shift_match_an_independent_computation(monitored):
    cfg = MonitorConfig()
    with MonitorStore(monitored["db"], read_only=True) as store:
        report = build_report(store, cfg, WEEK0 + timedelta(days=28))
    calls = pd.concat([t.assign(week=k) for k, t in monitored["truth"].items()])
    seg = calls[calls["noisy"]]
    weekly = seg[seg["week"] < 4].groupby("week")["score"].mean()
    s = _segment(report, "snr_db", "<10 dB")
    assert s.baseline_mean == pytest.approx(seg.loc[seg["week"] < 4, "score"].mean())
    assert s.shift == pytest.approx(seg.loc[seg["week"] == 4, "score"].mean() - s.baseline_mean)
    assert s.sd_week_to_week == pytest.approx(weekly.std(ddof=1))
    assert s.noise_floor == pytest.approx(cfg.alerts.noise_floor_k * weekly.std(ddof=1))
    from scipy import stats

    welch = stats.ttest_ind(seg.loc[seg["week"] == 4, "score"],
                            seg.loc[seg["week"] < 4, "score"], equal_var=False)
    assert s.shift_t == pytest.approx(welch.statistic) and s.shift_p == pytest.approx(
        welch.pvalue, rel=1e-6)


def test_bad_files_are_skipped_with_their_names(tmp_path):
    folder = tmp_path / "in"
    write_week(folder, WeekDesign(WEEK0, n_calls=4), seed=1)
    good = sorted(folder.glob("*.json"))
    meta = json.loads(good[0].read_text())
    (folder / "corrupt.wav").write_bytes(b"RIFF\x00\x00not a wav")
    (folder / "corrupt.json").write_text(json.dumps({**meta, "call_id": "corrupt"}))
    write_wav(folder / "orphan.wav", Audio(np.zeros(800, np.float32), 8000))
    (folder / "noscore.wav").write_bytes((folder / f"{meta['call_id']}.wav").read_bytes())
    (folder / "noscore.json").write_text(json.dumps(
        {k: v for k, v in {**meta, "call_id": "noscore"}.items() if k != "score"}))
    (folder / "empty.ulaw").write_bytes(b"")
    (folder / "empty.json").write_text(json.dumps({**meta, "call_id": "empty"}))
    (folder / "badjson.wav").write_bytes(b"")
    (folder / "badjson.json").write_text("{not json")
    with wave.open(str(folder / "three.wav"), "wb") as w:
        w.setnchannels(3)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(np.zeros(3 * 800, np.int16).tobytes())
    (folder / "three.json").write_text(json.dumps({**meta, "call_id": "three"}))
    (folder / "lonely.json").write_text(json.dumps({**meta, "call_id": "lonely"}))
    with MonitorStore(tmp_path / "m.duckdb") as store:
        res = ingest_folder(folder, store, MonitorConfig(), stages=FAKES)
        assert res.n_ingested == 4 and store.count() == 4
        # the same call id with another score: reported, the stored row is kept
        clash = dict(meta, score=1.0)
        other = tmp_path / "in2"
        other.mkdir()
        (other / "clash.wav").write_bytes((folder / f"{meta['call_id']}.wav").read_bytes())
        (other / "clash.json").write_text(json.dumps(clash))
        res2 = ingest_folder(other, store, MonitorConfig(), stages=FAKES)
        assert store.con.execute("SELECT score FROM calls WHERE call_id = ?",
                                 [meta["call_id"]]).fetchone()[0] == meta["score"]
    reasons = {Path(b.source).name: b.reason for b in res.bad}
    assert set(reasons) == {"corrupt.wav", "orphan.wav", "noscore.json", "empty.ulaw",
                            "badjson.json", "three.wav", "lonely.json"}
    assert "cannot decode audio" in reasons["corrupt.wav"]
    assert "no metadata" in reasons["orphan.wav"]
    assert "noscore.json: score: Field required" in reasons["noscore.json"]
    assert "empty file" in reasons["empty.ulaw"]
    assert "not valid JSON" in reasons["badjson.json"]
    assert "3 channels" in reasons["three.wav"]
    assert "no recording beside it" in reasons["lonely.json"]
    assert all(str(folder) in r for r in reasons.values())
    assert len(res2.bad) == 1 and "already stored with another metadata" in res2.bad[0].reason


def test_null_weeks_raise_few_false_alerts():
    """200 simulated weeks without any effect, at the aggregate level: the share of weeks
    with any alert stays near or under alpha (Holm over the week's tests)."""
    cfg = MonitorConfig()
    dims = [d for d in dimensions(cfg.segments) if d.name in ("snr_db", "employer")]
    rng = np.random.default_rng(7)
    weeks_with_alert = 0
    for _ in range(200):
        rows = []
        for w in range(5):
            n = 400
            snr = (rng.random(n) < 0.3).astype(int)  # 1: "<10 dB"
            emp = rng.integers(0, 3, n)
            score = np.round(rng.normal(70, 10, n))
            above, adv = score > np.median(score), score >= 60
            for dim, codes, labels in (("snr_db", snr, [">=30 dB", "<10 dB"]),
                                       ("employer", emp, ["a", "b", "c"])):
                for c, seg in enumerate(labels):
                    m = codes == c
                    rows.append({"week_start": WEEK0 + timedelta(days=7 * w),
                                 "dimension": dim, "segment": seg, "n_calls": int(m.sum()),
                                 "n_scored": int(m.sum()), "n_above_median": int(above[m].sum()),
                                 "n_decided": int(m.sum()), "n_advanced": int(adv[m].sum()),
                                 "sum_score": score[m].sum(),
                                 "sum_sq_score": (score[m] ** 2).sum(),
                                 "median_score": np.median(score)})
        res = analyse_week(pd.DataFrame(rows), WEEK0 + timedelta(days=28), dims, cfg.alerts)
        weeks_with_alert += bool(res.alerts)
        # two ratios per non-reference segment (1 + 2) and a shift per segment (2 + 3)
        assert res.n_tests == 2 * 3 + 5
    print(f"null weeks with an alert: {weeks_with_alert}/200")
    assert weeks_with_alert / 200 <= 0.08, weeks_with_alert


# --- pieces --------------------------------------------------------------------------------

def test_bins_in_sql_and_python_agree():
    import duckdb

    cfg = MonitorConfig()
    values = [None, -50.0, 9.99, 10.0, 19.999, 20.0, 29.0, 30.0, 75.0]
    con = duckdb.connect()
    con.execute("CREATE TABLE t (snr_db DOUBLE)")
    con.executemany("INSERT INTO t VALUES (?)", [[v] for v in values])
    sql = bin_sql("snr_db", cfg.segments.snr_db, "dB")
    got = [r[0] for r in con.execute(f"SELECT {sql} FROM t").fetchall()]
    assert got == [bin_label(v, cfg.segments.snr_db.edges, "dB") for v in values]
    assert got == ["unknown", "<10 dB", "<10 dB", "[10, 20) dB", "[10, 20) dB",
                   "[20, 30) dB", "[20, 30) dB", ">=30 dB", ">=30 dB"]
    assert bin_labels((1.0, 2.0), counts=True) == ["0", "1", "2+", "unknown"]
    assert bin_labels((1.0, 3.0), counts=True) == ["0", "1-2", "3+", "unknown"]


def test_config_overrides_and_errors(tmp_path):
    p = tmp_path / "monitor.yaml"
    p.write_text("segments:\n  snr_db: {edges: [5, 15]}\nalerts:\n  min_n: 50\n")
    cfg = load_config(p)
    assert cfg.segments.snr_db.edges == (5.0, 15.0) and cfg.alerts.min_n == 50
    assert cfg.segments.pace_wpm == MonitorConfig().segments.pace_wpm
    p.write_text("segments:\n  snr_db: {edges: [20, 10]}\n")
    with pytest.raises(ConfigError, match=r"monitor.yaml: segments.snr_db.edges: .*strictly "
                                          r"increasing.*got \[20, 10\]"):
        load_config(p)
    p.write_text("alerts:\n  alpha: 2\n")
    with pytest.raises(ConfigError, match=r"alerts.alpha: .*got 2"):
        load_config(p)
    p.write_text("alerts:\n  minimum_n: 2\n")
    with pytest.raises(ConfigError, match=r"alerts.minimum_n: Extra inputs"):
        load_config(p)
    assert MonitorConfig().signals_version() != load_config(None).model_copy(update={
        "signals": MonitorConfig().signals.model_copy(update={"silence_timeout_ms": 500})
    }).signals_version()


def test_metadata_fields_and_sources(tmp_path):
    m = parse_meta({"call_id": "c1", "timestamp": "2025-01-07T09:30:00Z", "employer": "e",
                    "job_family": "j", "score": 71.5, "decision": "Yes",
                    "candidate_name": "Jane Doe", "phone": "+15550100"}, "x.json")
    assert m.decision == "advance" and m.score == 71.5 and m.timestamp.tzinfo is not None
    assert "candidate_name" not in m.model_dump() and "phone" not in m.model_dump()
    m2 = parse_meta({"call_id": "c1", "timestamp": "2025-01-07T10:30:00+01:00",
                     "employer": "e", "job_family": "j", "score": None, "decision": None},
                    "y.json")
    assert m2.timestamp == m.timestamp and m2.score is None
    with pytest.raises(ConfigError, match=r"x.json: decision: .*advance or reject.*maybe"):
        parse_meta({"call_id": "c", "timestamp": "2025-01-07T00:00Z", "employer": "e",
                    "job_family": "j", "score": 1, "decision": "maybe"}, "x.json")
    with pytest.raises(ConfigError, match=r"x.json: timestamp: timestamp has no time zone"):
        parse_meta({"call_id": "c", "timestamp": "2025-01-07T09:30:00", "employer": "e",
                    "job_family": "j", "score": 1, "decision": None}, "x.json")
    with pytest.raises(ConfigError, match=r"x.json: score: score outside .*\[0, 100\].*170"):
        parse_meta({"call_id": "c", "timestamp": "2025-01-07T09:30:00Z", "employer": "e",
                    "job_family": "j", "score": 170, "decision": None}, "x.json", (0, 100))
    folder = tmp_path / "csv"
    write_week(folder, WeekDesign(WEEK0, n_calls=3), seed=2, layout="manifest")
    rows = [json.loads(x) for x in (folder / "manifest.jsonl").read_text().splitlines()]
    (folder / "manifest.jsonl").unlink()
    pd.DataFrame([*rows, dict(rows[0], call_id="ghost", audio="ghost.wav")]).to_csv(
        folder / "manifest.csv", index=False)
    items = list(iter_calls(folder))
    assert [i.meta.call_id for i in items if i.meta] == [r["call_id"] for r in rows]
    assert items[-1].error and "manifest.csv:5: audio: file not found" in items[-1].error
    with pytest.raises(ConfigError, match="input folder not found"):
        list(iter_calls(tmp_path / "nope"))


def test_snr_estimate_on_white_noise_with_known_turns():
    rng = np.random.default_rng(3)
    from rig.monitor.simulate import synthetic_speech

    sr = 8000
    speech = np.concatenate([np.zeros(4000, np.float32), synthetic_speech(2.0, sr, rng),
                             np.zeros(4000, np.float32)])
    turns = (Turn(0.5, 2.5, 3.0, "silence_timeout"),)
    for snr in (0.0, 5.0, 10.0, 20.0, 30.0, 45.0):
        mix, measured = mix_at_snr(Audio(speech, sr), white_noise(len(speech), rng), snr)
        est, why = estimate_snr_db(mix, turns)
        assert why is None and est == pytest.approx(measured, abs=0.6), (snr, est)
    assert estimate_snr_db(Audio(speech, sr), ()) == (None, "no speech detected")
    assert estimate_snr_db(Audio(speech, sr), (Turn(0.0, 3.0, 3.0, "end_of_audio"),))[0] is None
    assert estimate_snr_db(Audio(speech, sr), turns)[0] == 60.0  # digital silence: clipped


def test_channel_class_codec_and_counts():
    rng = np.random.default_rng(4)
    wide = Audio(white_noise(16000, rng) * 0.1, 16000)
    assert channel_class(wide)[0] == "wideband"
    narrow = Audio((white_noise(8000, rng) * 0.1).astype(np.float32), 8000)
    assert channel_class(narrow) == ("narrowband", None)
    up = narrow.resample(16000)
    cls, ratio = channel_class(up)
    assert cls == "narrowband" and ratio < -35
    from rig.channel.codecs import encode
    from rig.channel.g711 import alaw_decode, mulaw_decode

    codes = encode(narrow, "mulaw")
    assert detect_g711(mulaw_decode(codes)) == "mulaw"
    assert detect_g711(alaw_decode(encode(narrow, "alaw"))) == "alaw"
    assert detect_g711(narrow.to_pcm16()) is None
    t = [Turn(0.0, 1.0, 1.8, "silence_timeout"), Turn(2.5, 3.0, 3.8, "silence_timeout"),
         Turn(7.0, 8.0, 8.0, "end_of_audio")]
    assert count_truncations(t, 1000) == 1 and count_truncations(t, 500) == 0
    assert count_truncations(t, 4000) == 2
    phrases = MonitorConfig().signals.repeat_phrases
    assert count_repeat_requests(["Sorry, I didn't catch that. Could you repeat that?",
                                  "Great. Next question.", "Pardon? Say that again.",
                                  "We repeated the test"], phrases) == 2


def test_report_files_hold_aggregates_only(monitored, tmp_path):
    cfg = MonitorConfig(privacy={"min_cell": 1000})
    with MonitorStore(monitored["db"], read_only=True) as store:
        report = build_report(store, cfg)
        transcripts = store.con.execute("SELECT DISTINCT transcript FROM calls").fetchall()
    paths = write_report(report, tmp_path / "out")
    assert report.week == week_label(WEEK0 + timedelta(days=28)) == "2025-W06"
    texts = {k: p.read_text() for k, p in paths.items()}
    ids = pd.concat(monitored["truth"].values())["call_id"]
    for text in texts.values():
        assert not any(cid in text for cid in ids)
        assert not any(t[0] and t[0] in text for t in transcripts)
    summary = json.loads(texts["summary"])
    seg = summary["dimensions"]["snr_db"][0]
    assert seg["n_calls"] > 0 and seg["mean_score"] is None  # under min_cell: count only
    assert "suppressed" in seg["not_computable"]
    for dim in summary["dimensions"].values():  # no statistic can reveal a lone call
        for cell in dim:
            assert all(cell[k] is None for k in ("scoring_z", "selection_z", "selection_p",
                                                 "shift_t", "mean_score"))
    assert summary["median_score"] is None  # the week itself is under min_cell
    assert "<script" not in texts["report"] and "http" not in texts["report"].split(
        "<body>")[1]


def test_parse_week():
    assert parse_week("2025-W03") == date(2025, 1, 13)
    assert parse_week("2025-01-15") == date(2025, 1, 13)
    with pytest.raises(RigError, match="--week"):
        parse_week("last week")


def test_export_hashes_call_ids_with_a_key(monitored, tmp_path, monkeypatch):
    from rig.monitor.privacy import call_key, export_calls

    cfg = MonitorConfig()
    monkeypatch.delenv("RIG_MONITOR_HASH_KEY", raising=False)
    with MonitorStore(monitored["db"], read_only=True) as store:
        with pytest.raises(RigError, match="RIG_MONITOR_HASH_KEY"):
            export_calls(store, tmp_path / "x.parquet", cfg)
        monkeypatch.setenv("RIG_MONITOR_HASH_KEY", "k" * 32)
        n = export_calls(store, tmp_path / "x.parquet", cfg, batch_rows=100)
    df = pd.read_parquet(tmp_path / "x.parquet")
    ids = pd.concat(monitored["truth"].values())["call_id"]
    assert n == len(df) == len(ids)
    assert set(df["call_key"]) == {call_key(c, b"k" * 32) for c in ids}
    assert df["call_key"].str.len().eq(16).all() and not set(ids) & set(df["call_key"])
    assert "transcript" not in df.columns and "call_id" not in df.columns
    assert call_key("a", b"k" * 32) != call_key("a", b"j" * 32)


# --- CLI -----------------------------------------------------------------------------------

def test_cli_report_exit_codes(monitored, tmp_path, monkeypatch):
    from rig.cli.monitor import monitor_app

    app = typer.Typer()
    app.add_typer(monitor_app, name="monitor")
    runner = CliRunner()
    db = str(monitored["db"])
    r = runner.invoke(app, ["monitor", "report", "--db", db, "--out", str(tmp_path / "a"),
                            "--fail-on-alert"])
    assert r.exit_code == 1, r.output
    assert "alert" in r.stdout and (tmp_path / "a" / "alerts.json").is_file()
    r = runner.invoke(app, ["monitor", "report", "--db", db, "--out", str(tmp_path / "b"),
                            "--week", "2025-W05", "--fail-on-alert", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["n_alerts"] == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("alerts: {ratio_threshold: 1.5}\n")
    r = runner.invoke(app, ["monitor", "report", "--db", db, "--config", str(bad)])
    assert r.exit_code == 2 and "bad.yaml: alerts.ratio_threshold" in r.stderr
    r = runner.invoke(app, ["monitor", "report", "--db", str(tmp_path / "none.duckdb")])
    assert r.exit_code == 2 and "no monitoring database" in r.stderr
    r = runner.invoke(app, ["monitor", "segments"])
    assert r.exit_code == 0 and "<10 dB" in r.stdout


def test_the_same_sql_on_an_export_gives_the_same_report(monitored, tmp_path, monkeypatch):
    """The scale-out path: the hashed Parquet export, aggregated by the printed SQL in a
    separate engine (a fresh in-memory DuckDB standing in for Spark/Trino over Parquet), then
    reported from the aggregates alone, matches the report from the database."""
    import duckdb

    from rig.monitor.privacy import export_calls
    from rig.monitor.report import report_from_aggregates
    from rig.monitor.segments import weekly_aggregate_sql

    cfg = MonitorConfig()
    monkeypatch.setenv("RIG_MONITOR_HASH_KEY", "k" * 32)
    week = WEEK0 + timedelta(days=28)
    with MonitorStore(monitored["db"], read_only=True) as store:
        export_calls(store, tmp_path / "calls.parquet", cfg)
        direct = build_report(store, cfg, week)
    sql = weekly_aggregate_sql(cfg.segments, f"read_parquet('{tmp_path / 'calls.parquet'}')",
                               week_sql="week_start", first_week="DATE '2024-12-02'",
                               last_week=f"DATE '{week.isoformat()}'")
    agg = duckdb.connect().execute(sql).df()
    agg.to_parquet(tmp_path / "agg.parquet")
    remote = report_from_aggregates(pd.read_parquet(tmp_path / "agg.parquet"), cfg)
    assert remote.week == direct.week and remote.median_score == direct.median_score
    assert [s.to_dict() for s in remote.analysis.segments] == [
        s.to_dict() for s in direct.analysis.segments]
    assert remote.analysis.alerts == direct.analysis.alerts


def test_stereo_layout_and_repeat_requests_with_fakes(tmp_path):
    import io

    import soundfile as sf

    from rig.monitor.meta import CallMeta
    from rig.monitor.recording import RecordingError, read_call_audio
    from rig.monitor.signals import measure_call

    rng = np.random.default_rng(5)
    left, right = (white_noise(16000, rng) * 0.1 for _ in range(2))
    buf = io.BytesIO()
    sf.write(buf, np.stack([left, right], axis=1), 8000, format="WAV", subtype="PCM_16")
    data = buf.getvalue()
    a = read_call_audio(data, "wav", "candidate_right")
    assert a.n_channels == 2 and a.layout == "candidate_right"
    assert np.allclose(a.candidate.samples, right, atol=1e-4)
    assert np.allclose(a.interviewer.samples, left, atol=1e-4)
    assert read_call_audio(data, "wav", None).layout == "candidate_left"
    with pytest.raises(RecordingError, match="does not fit a 2-channel file"):
        read_call_audio(data, "wav", "mono")
    calls = []

    def asr(audio, options):
        calls.append(audio.duration_s)
        seg = AsrSegment(0.0, audio.duration_s, "Sorry, could you repeat that?", -0.3, 0.1)
        return Transcript(seg.text, -0.3, 0.1, audio.duration_s, (seg,), "en")

    meta = CallMeta(call_id="s", timestamp="2025-01-06T10:00:00Z", employer="e",
                    job_family="j", score=1.0, decision="reject")
    s = measure_call(a, meta, MonitorConfig().signals, SignalStages(_fixed_turns, asr))
    assert (s.repeat_requests, s.repeat_source, len(calls)) == (1, "interviewer_transcript", 2)
    calls.clear()
    s = measure_call(a, meta.model_copy(update={"repeat_requests": 4}),
                     MonitorConfig().signals, SignalStages(_fixed_turns, asr))
    assert (s.repeat_requests, s.repeat_source, len(calls)) == (4, "metadata", 1)
    mono = read_call_audio(data, "mulaw", None)  # any bytes read as raw mu-law
    assert mono.codec == "mulaw" and mono.candidate.sample_rate_hz == 8000
    s = measure_call(mono, meta, MonitorConfig().signals, SignalStages(_fixed_turns, asr))
    assert s.repeat_requests is None and s.repeat_source == "none"


def test_a_number_written_as_text_is_refused_in_json_and_read_in_a_csv_row() -> None:
    rec = {"call_id": "c1", "timestamp": "2025-01-07T09:30:00Z", "employer": "e",
           "job_family": "j", "score": "71.5", "decision": "advance"}
    with pytest.raises(ConfigError, match=r"^x.json: score: score must be a number \(or null\)"
                                          r", not text.*\(got '71.5'\)$"):
        parse_meta(rec, "x.json")
    with pytest.raises(ConfigError, match=r"x.json: score: .*not text.*\(got ''\)"):
        parse_meta(dict(rec, score=""), "x.json")  # JSON has null for no score
    with pytest.raises(ConfigError, match=r"x.json: repeat_requests: .*not text.*got '2'"):
        parse_meta(dict(rec, score=71.5, repeat_requests="2"), "x.json")
    row = parse_meta(dict(rec, repeat_requests="2"), "m.csv:2", text_values=True)
    assert row.score == 71.5 and row.repeat_requests == 2
    assert parse_meta(dict(rec, score=""), "m.csv:2", text_values=True).score is None


def test_a_numeric_timestamp_is_unix_time_utc() -> None:
    from datetime import UTC, datetime

    rec = {"call_id": "c1", "employer": "e", "job_family": "j", "score": 1, "decision": None}
    want = datetime(2025, 1, 7, 10, 0, tzinfo=UTC)
    assert parse_meta(dict(rec, timestamp=1736244000), "x.json").timestamp == want
    assert parse_meta(dict(rec, timestamp=1736244000000), "x.json").timestamp == want  # ms
    assert parse_meta(dict(rec, timestamp="1736244000"), "m.csv:2",
                      text_values=True).timestamp == want


def test_a_streaming_wav_whose_sizes_say_zero_is_read_to_the_end() -> None:
    import io
    import struct

    import soundfile as sf

    from rig.audio import fill_streaming_sizes
    from rig.monitor.recording import RecordingError, read_call_audio

    buf = io.BytesIO()
    sf.write(buf, np.full(8000, 0.1, np.float32), 8000, format="WAV", subtype="PCM_16")
    live = bytearray(buf.getvalue())
    i = live.find(b"data")
    live[4:8] = live[i + 4:i + 8] = struct.pack("<I", 0)  # a writer that cannot seek back
    a = read_call_audio(bytes(live), "wav", None)
    assert a.candidate.duration_s == pytest.approx(1.0)
    assert a.sha256 == hashlib.sha256(bytes(live)).hexdigest()  # the file as given
    # a data chunk that really is empty, then a LIST chunk: not samples, still refused
    empty = io.BytesIO()
    sf.write(empty, np.zeros(0, np.float32), 8000, format="WAV", subtype="PCM_16")
    info = b"INFOISFT" + struct.pack("<I", 4) + b"rig\x00"
    tail = empty.getvalue() + b"LIST" + struct.pack("<I", len(info)) + info
    assert fill_streaming_sizes(tail) == tail
    with pytest.raises(RecordingError, match=r"no samples \(the data chunk is empty\)"):
        read_call_audio(tail, "wav", None)
    with pytest.raises(RecordingError, match=r"no samples"):
        read_call_audio(empty.getvalue(), "wav", None)


def test_a_wav_cut_mid_data_is_refused_not_stored_short() -> None:
    import io

    import soundfile as sf

    from rig.monitor.recording import RecordingError, read_call_audio

    buf = io.BytesIO()
    sf.write(buf, np.zeros(8000, np.float32), 8000, format="WAV", subtype="PCM_16")
    whole = buf.getvalue()
    assert read_call_audio(whole, "wav", None).candidate.duration_s == pytest.approx(1.0)
    with pytest.raises(RecordingError, match="truncated: the data chunk declares 16000 bytes"):
        read_call_audio(whole[: len(whole) // 2], "wav", None)


def test_undecodable_audio_reason_has_no_buffer_repr_and_sql_week_order() -> None:
    from typer.testing import CliRunner

    from rig.cli import app
    from rig.monitor.recording import RecordingError, read_call_audio

    with pytest.raises(RecordingError) as e:
        read_call_audio(b"garbage" * 10, "wav", None)
    assert "BytesIO" not in str(e.value) and "cannot decode audio" in str(e.value)
    res = CliRunner().invoke(app, ["monitor", "sql", "--first-week", "2026-W48",
                                   "--last-week", "2026-W47"])
    assert res.exit_code == 2 and "before --first-week" in res.output
