"""rig replay's logic on fake stages (tone-burst "words", an energy VAD, a word-counting
scorer): pairing, truncation, B = A, resume, bad input, logged A, the gate, and the
statistics against independent computations. The real stages: test_replay_integration.py."""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from replay_fakes import answer_samples, fake_signal_stages, fake_stages, write_call

from rig.errors import ConfigError
from rig.replay.inputs import ReplayFields, parse_fields
from rig.replay.run import run_replay
from rig.replay.stats import cluster_bootstrap_ci, pair_rows, segment_stats, sign_flip_p
from rig.replay.summary import write_outputs

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "answer_bank" / "core"
LONG, SHORT = [0.3] * 5 + [1.3] + [0.3] * 5, [0.3] * 11  # 12 words; one 1.3 s pause


def _pipeline(tmp: Path, name: str, timer_ms: int) -> Path:
    text = (ROOT / "pipelines" / "reference.yaml").read_text()
    text = text.replace("name: reference", f"name: {name}").replace(
        "silence_timeout_ms: 800", f"silence_timeout_ms: {timer_ms}")
    p = tmp / f"{name}.yaml"
    p.write_text(text)
    return p


def _fakes(counter: dict | None = None):
    st = fake_stages()
    if counter is not None:
        inner = st.transcribe

        def counting(audio, opts):
            counter["n"] = counter.get("n", 0) + 1
            return inner(audio, opts)

        st = dataclasses.replace(st, transcribe=counting)
    return {"A": st, "B": st}, fake_signal_stages()


def _recordings(tmp: Path) -> Path:
    rec = tmp / "rec"
    for i, gaps in enumerate([LONG, LONG, SHORT, SHORT, LONG, SHORT]):
        write_call(rec, f"c{i}", answer_samples(gaps), question_id="q01_conflict",
                   employer="acme" if i % 2 else "globex", score=80.0, decision="advance",
                   transcript="word " * 12)
    return rec


def _run(tmp: Path, rec: Path, a_ms: int, b_ms: int, out: str = "out", **kw):
    a, b = _pipeline(tmp, "a", a_ms), _pipeline(tmp, "b" if b_ms != a_ms else "a", b_ms)
    res = run_replay(rec, bank=BANK, pipeline_a=a, pipeline_b=b, out=tmp / out,
                     fakes=kw.pop("fakes", None) or _fakes(), **kw)
    return res, write_outputs(tmp / out, res.rows, res.problems)


def test_shorter_timer_truncates_the_long_pause_turns_and_their_segment_shows_it(tmp_path):
    _, s = _run(tmp_path, _recordings(tmp_path), 2000, 700)
    pairs = pd.read_parquet(tmp_path / "out" / "pairs.parquet")
    assert len(pairs) == 6 and pairs["paired"].all()
    long_ = pairs[pairs["call_id"].isin(["c0", "c1", "c4"])]
    assert long_["truncated_b"].all() and not long_["truncated_a"].any()
    assert (long_["delta"] < 0).all() and (long_["words_lost_b"] == 6).all()
    short = pairs[~pairs["call_id"].isin(["c0", "c1", "c4"])]
    assert (short["delta"] == 0).all() and not short["truncated_b"].any()
    seg = s["segments"]["longest_pause_s"]
    assert set(seg) == {"[1, 2) s", "<0.5 s"}
    assert seg["[1, 2) s"]["mean_delta"] == pytest.approx(long_["delta"].mean())
    assert seg["<0.5 s"]["mean_delta"] == 0
    assert s["overall"]["flips"] == 3 and s["overall"]["flips_advance_to_reject"] == 3
    assert s["overall"]["truncation_rate_b"] == 0.5
    rows = pd.read_parquet(tmp_path / "out" / "calls.parquet")
    assert len(rows) == 12 and rows["row_id"].is_unique
    html = (tmp_path / "out" / "report.html").read_text()
    assert "advance -&gt; reject" in html and "c0.wav#t=" in html


def test_b_equal_to_a_gives_zero_deltas_and_no_flips(tmp_path):
    _, s = _run(tmp_path, _recordings(tmp_path), 800, 800)
    assert s["negative_control"] is True
    assert s["overall"]["mean_delta"] == 0 and s["overall"]["flips"] == 0
    assert s["overall"]["ci95"] == [0.0, 0.0]
    for segs in s["segments"].values():
        for g in segs.values():
            assert g["mean_delta"] == 0 and g["flips"] == 0


def test_rerun_resumes_without_losing_or_repeating_a_row(tmp_path):
    rec = _recordings(tmp_path)
    counter: dict = {}
    res1, _ = _run(tmp_path, rec, 2000, 700, fakes=_fakes(counter))
    n_first = counter["n"]
    lines = (tmp_path / "out" / "rows.jsonl").read_text().splitlines()
    # a kill mid-write: the last recording's marker is lost and a torn line left behind
    marks = (tmp_path / "out" / "recordings.jsonl").read_text().splitlines()
    (tmp_path / "out" / "recordings.jsonl").write_text("\n".join(marks[:-1]) + "\n")
    with (tmp_path / "out" / "rows.jsonl").open("a") as f:
        f.write('{"row_id": "torn')
    counter.clear()
    res2, _ = _run(tmp_path, rec, 2000, 700, fakes=_fakes(counter))
    assert counter.get("n", 0) == 0  # its rows were logged ok: nothing replayed twice
    assert sorted(r["row_id"] for r in res2.rows) == sorted(r["row_id"] for r in res1.rows)
    assert res2.n_skipped_done == 5 and n_first > 0
    assert len(lines) == 12


def test_bad_input_is_named_and_the_rest_goes_on(tmp_path):
    rec = tmp_path / "rec"
    write_call(rec, "good", answer_samples(SHORT), question_id="q01_conflict")
    x = answer_samples(SHORT)
    write_call(rec, "past_end", np.concatenate([x, x]), turns=[
        {"question_id": "q01_conflict", "start_s": 0.0, "end_s": 5.0},
        {"question_id": "q02_upset_customer", "start_s": 5.0, "end_s": 99.0}])
    write_call(rec, "unknown_q", x, question_id="q99_nope")
    write_call(rec, "stereo", np.stack([x, x], axis=1))
    write_call(rec, "empty", x)
    (rec / "empty.wav").write_bytes(b"")
    write_call(rec, "mono_nothing", x)
    res, s = _run(tmp_path, rec, 800, 800)
    text = "\n".join(res.problems)
    assert "turns[1].end_s: past the recording's end" in text and "(got 99)" in text
    assert "question_id: not in the answer bank (got 'q99_nope')" in text
    assert "stereo.wav: layout: a stereo recording needs layout" in text
    assert "empty.wav: empty file" in text
    assert "mono_nothing.wav: question_id / turns: missing" in text
    assert {r["call_id"] for r in res.rows} == {"good", "past_end"}
    assert len(s["left_out"]) == 5


def test_logged_a_reads_the_stored_results_and_says_so(tmp_path):
    rec = _recordings(tmp_path)
    res, s = _run(tmp_path, rec, 800, 700, logged_a=True)
    a = [r for r in res.rows if r["version"] == "A"]
    assert a and all(r["result_source"] == "logged" and r["score"] == 80.0 for r in a)
    assert s["versions"]["A"]["result_source"] == "logged"
    assert "logged result" in (tmp_path / "out" / "report.html").read_text()


def test_turns_of_a_whole_interview_are_replayed_each(tmp_path):
    rec = tmp_path / "rec"
    x, y = answer_samples(LONG), answer_samples(SHORT)
    d = len(x) / 8000
    write_call(rec, "iv", np.concatenate([x, y]), turns=[
        {"question_id": "q01_conflict", "start_s": 0.0, "end_s": d},
        {"question_id": "q02_upset_customer", "start_s": d, "end_s": d + len(y) / 8000,
         "reference_transcript": "word " * 12}])
    _, s = _run(tmp_path, rec, 2000, 700)
    pairs = pd.read_parquet(tmp_path / "out" / "pairs.parquet").sort_values("turn_index")
    assert list(pairs["question_id"]) == ["q01_conflict", "q02_upset_customer"]
    assert list(pairs["truncated_b"]) == [True, False]
    assert pairs["wer_b"].iloc[1] == 0.0
    assert s["overall"]["n_calls"] == 1 and s["overall"]["ci95"] is None


def test_gate_blocks_a_shorter_timer_and_passes_b_equal_to_a(tmp_path):
    from rig.gate.replay import run_replay_gate

    rec = _recordings(tmp_path)
    _run(tmp_path, rec, 2000, 700, out="short")
    _run(tmp_path, rec, 2000, 2000, out="same")
    blocked = run_replay_gate(tmp_path / "short")
    assert blocked.verdict == "block"
    assert any(c.subject == "longest_pause_s=[1, 2) s" and c.blocked for c in blocked.checks)
    assert run_replay_gate(tmp_path / "same").verdict == "pass"
    assert json.loads((tmp_path / "same" / "gate.json").read_text())["verdict"] == "pass"


def test_replay_fields_errors_name_the_field():
    with pytest.raises(ConfigError, match="not both"):
        parse_fields({"question_id": "q", "turns": [{"question_id": "q", "start_s": 0,
                                                     "end_s": 1}]}, "x.json")
    with pytest.raises(ConfigError, match=r"turns.0"):
        parse_fields({"turns": [{"question_id": "q", "start_s": 2, "end_s": 1}]}, "x.json")
    f = ReplayFields.model_validate({"turns": '[{"question_id": "q", "start_s": 0, '
                                              '"end_s": 1.5}]'})
    assert f.turns[0].end_s == 1.5  # a CSV manifest's JSON text


def _frame(deltas_by_call: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame([{"call_id": c, "delta": d} for c, ds in deltas_by_call.items()
                         for d in ds])


def test_cluster_bootstrap_matches_an_independent_loop():
    df = _frame({"a": [-10, -20], "b": [0], "c": [-5, -5, -5], "d": [3], "e": [-1, 2],
                 "f": [-30]})
    ci = cluster_bootstrap_ci(df, "delta", n_boot=2000, seed=0)
    rng = np.random.default_rng(0)
    groups = [df[df.call_id == c]["delta"].to_numpy() for c in sorted(df.call_id.unique())]
    idx = rng.integers(0, 6, size=(2000, 6))
    stats = [np.concatenate([groups[i] for i in row]).mean() for row in idx]
    assert ci == pytest.approx(list(np.percentile(stats, [2.5, 97.5])))
    # under 5 interviews a cluster bootstrap has almost no spread: no interval
    assert cluster_bootstrap_ci(_frame({"a": [-10], "b": [-12], "c": [-11], "d": [-9]}),
                                "delta") is None


def test_sign_flip_p_matches_scipy_permutation_test():
    from scipy.stats import permutation_test

    df = _frame({"a": [-10, -20], "b": [1], "c": [-5, -5, -5], "d": [3], "e": [-7]})
    sums = df.groupby("call_id")["delta"].sum().to_numpy()
    n_turns = len(df)
    res = permutation_test((sums,), lambda x: np.sum(x) / n_turns, permutation_type="samples",
                           n_resamples=np.inf, alternative="two-sided")
    assert sign_flip_p(df) == pytest.approx(res.pvalue)
    # every sign pattern by hand
    obs = abs(sums.sum())
    hits = sum(abs(np.dot(s, sums)) >= obs - 1e-9
               for s in itertools.product((1, -1), repeat=len(sums)))
    assert sign_flip_p(df) == pytest.approx(hits / 2 ** len(sums))


def test_holm_across_segments_matches_statsmodels():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(3)
    rows = []
    for i in range(16):
        seg = "x" if i < 8 else "y"
        for _ in range(2):
            rows.append({"turn_key": f"t{i}{_}", "call_id": f"c{i}", "paired": True,
                         "delta": rng.normal(-5 if seg == "x" else 0, 3),
                         "seg_longest_pause_s": seg, "employer": "e" + str(i % 2),
                         "flip": False, "flip_direction": None, "truncated_a": False,
                         "truncated_b": False, "wer_b_vs_a": 0.0, "score_a": 50.0,
                         "score_b": 50.0})
    segs = segment_stats(pd.DataFrame(rows))
    flat = [(d, s, g) for d, ss in segs.items() for s, g in ss.items()]
    want = multipletests([g["p"] for *_, g in flat], method="holm")[1]
    assert [g["p_holm"] for *_, g in flat] == pytest.approx(list(want))


def test_pair_rows_pairs_only_turns_scored_by_both():
    base = {"call_id": "c", "source": "s", "turn_index": 0, "question_id": "q",
            "status": "ok", "decision": "advance", "transcript": "a b", "truncated": False}
    rows = pd.DataFrame([
        {**base, "turn_key": "t1", "version": "A", "score": 70.0},
        {**base, "turn_key": "t1", "version": "B", "score": None, "parse_status": "unparsed",
         "decision": None},
        {**base, "turn_key": "t2", "version": "A", "score": 70.0},
        {**base, "turn_key": "t2", "version": "B", "score": 40.0, "decision": "reject"}])
    p = pair_rows(rows).set_index("turn_key")
    assert not p.loc["t1", "paired"] and p.loc["t1", "flip"] is None
    assert p.loc["t2", "delta"] == -30.0 and p.loc["t2", "flip_direction"] == \
        "advance -> reject"


def _comparable(rows: list[dict]) -> list[dict]:
    return sorted(({k: v for k, v in r.items() if not k.startswith("t_")} for r in rows),
                  key=lambda r: r["row_id"])


def test_local_workers_give_the_serial_rows(tmp_path):
    rec = _recordings(tmp_path)
    serial, _ = _run(tmp_path, rec, 2000, 700, out="serial")
    local, _ = _run(tmp_path, rec, 2000, 700, out="local", executor="local", workers=2)
    assert _comparable(local.rows) == _comparable(serial.rows)


def test_a_flac_recording_is_replayed_and_a_misnamed_one_refused(tmp_path):
    import soundfile as sf

    rec = tmp_path / "rec"
    write_call(rec, "f", answer_samples(SHORT), question_id="q01_conflict")
    (rec / "f.wav").unlink()
    sf.write(rec / "f.flac", answer_samples(SHORT), 8000, format="FLAC", subtype="PCM_16")
    write_call(rec, "g", answer_samples(SHORT), question_id="q01_conflict")
    (rec / "g.wav").rename(rec / "g.flac")
    res, _ = _run(tmp_path, rec, 800, 800)
    assert {r["call_id"] for r in res.rows} == {"f"}
    assert any("g.flac: not a FLAC file" in m for m in res.problems)


def test_a_profile_puts_the_real_speech_on_its_line_and_is_recorded(tmp_path):
    from rig.audio import Audio
    from rig.pipeline import load_pipeline
    from rig.profiles import load_profiles
    from rig.replay.version import line_audio

    prof = load_profiles(ROOT / "profiles" / "core").get("mobile_amr_nb_loss3")
    clip = Audio(answer_samples(SHORT, sr=16000), 16000)
    p = load_pipeline(ROOT / "pipelines" / "reference.yaml")
    plain = line_audio(clip, p, None, 0, False)
    lossy = line_audio(clip, p, prof, 0, False)
    assert plain.sample_rate_hz == lossy.sample_rate_hz == 8000
    assert len(plain.samples) == len(lossy.samples)
    assert float(abs(plain.samples - lossy.samples).max()) > 0.01  # AMR-NB and 3% loss
    assert line_audio(clip, p, prof, 0, False).samples.tolist() == lossy.samples.tolist()
    rec = _recordings(tmp_path)
    res, s = _run(tmp_path, rec, 800, 700, profile=prof)
    assert {r["profile_id"] for r in res.rows} == {"mobile_amr_nb_loss3"}
    assert s["profile_id"] == "mobile_amr_nb_loss3"


def test_gate_fails_closed_on_too_few_interviews_and_prints_each_subject(tmp_path):
    from typer.testing import CliRunner

    from rig.cli import app
    from rig.gate.replay import run_replay_gate

    rec = _recordings(tmp_path)
    _run(tmp_path, rec, 2000, 700, out="short")
    res = CliRunner().invoke(app, ["gate", str(tmp_path / "short")])
    assert res.exit_code == 1
    blocked = [ln for ln in res.output.splitlines() if ln.startswith("blocked:")]
    assert any("[employer=globex]" in ln for ln in blocked), res.output  # not eaten as markup
    small = tmp_path / "small"
    for name in ("c0.wav", "c0.json", "c2.wav", "c2.json"):
        small.mkdir(exist_ok=True)
        (small / name).write_bytes((rec / name).read_bytes())
    _run(tmp_path, small, 2000, 2000, out="two")
    g = run_replay_gate(tmp_path / "two")  # B = A, but 2 interviews cannot show it is safe
    assert g.verdict == "block" and "under min_calls 3" in g.reasons[0]


def test_logged_a_without_a_score_or_off_scale_is_left_out_by_name(tmp_path):
    rec = tmp_path / "rec"
    write_call(rec, "ok", answer_samples(SHORT), question_id="q01_conflict", score=70.0)
    write_call(rec, "none", answer_samples(SHORT), question_id="q01_conflict")
    write_call(rec, "ten", answer_samples(SHORT), question_id="q01_conflict", score=150.0)
    write_call(rec, "typo", answer_samples(SHORT), questionid="q01_conflict", score=70.0)
    res, s = _run(tmp_path, rec, 800, 700, logged_a=True)
    text = "\n".join(s["left_out"])
    assert "none.json" not in text and "none.wav: score: --logged-a needs version A's" in text
    assert "ten.wav: score: version A's logged score must be on the bank's 0-100 scale, " \
           "as B's is (got 150)" in text
    assert "typo.wav: question_id / turns: missing (the metadata has 'questionid' (did you " \
           "mean question_id?))" in text
    assert {r["call_id"] for r in res.rows} == {"ok"}


def test_copy_audio_on_a_resumed_replay_copies_every_turn(tmp_path):
    rec = _recordings(tmp_path)
    _run(tmp_path, rec, 2000, 700)
    counter: dict = {}
    _run(tmp_path, rec, 2000, 700, copy_audio=True, fakes=_fakes(counter))
    assert len(list((tmp_path / "out" / "audio").glob("*.flac"))) == 6
    html = (tmp_path / "out" / "report.html").read_text()
    assert "audio/" in html and "c0.wav#t=" not in html
    assert counter.get("n", 0) == 0  # nothing graded again: the rows were logged


def test_an_answer_the_vad_never_hears_is_not_graded_and_is_counted(tmp_path):
    rec = tmp_path / "rec"
    for i in range(5):
        write_call(rec, f"c{i}", answer_samples(SHORT), question_id="q01_conflict")
    quiet = answer_samples(SHORT) * 0.05  # under the fake VAD's energy threshold
    write_call(rec, "quiet", quiet, question_id="q01_conflict")
    res, s = _run(tmp_path, rec, 800, 700)
    q = [r for r in res.rows if r["call_id"] == "quiet"]
    assert len(q) == 2 and all(r["score"] is None and r["parse_status"] == "no_speech"
                               and r["transcript"] is None for r in q)
    assert s["overall"]["heard_nothing_a"] == s["overall"]["heard_nothing_b"] == 1
    assert s["overall"]["n_pairs"] == 5
    assert "heard no speech in 1 answers under B" in (tmp_path / "out" / "report.html"
                                                       ).read_text()


def test_a_recording_over_the_length_limit_is_refused_before_it_is_read(tmp_path,
                                                                        monkeypatch):
    import rig.audio
    from rig.audio import AudioFileError, read_wav, recording_too_long
    from rig.monitor.config import MonitorConfig
    from rig.monitor.ingest import ingest_folder

    rec = tmp_path / "rec"
    write_call(rec, "long", answer_samples(SHORT), question_id="q01_conflict")
    (rec / "raw.ulaw").write_bytes(b"\xff" * 80000)
    (rec / "raw.json").write_text((rec / "long.json").read_text().replace('"long"', '"raw"'))
    assert recording_too_long(rec / "long.wav") is None
    monkeypatch.setattr(rig.audio, "MAX_RECORDING_S", 3.0)
    why = recording_too_long(rec / "long.wav")
    assert why.startswith("0.0 h of audio; rig reads a recording whole (about 0.0 GB")
    assert "refuses recordings over 0.000833333 h" in why
    assert recording_too_long(rec / "raw.ulaw")  # 10 s of raw mu-law
    with pytest.raises(AudioFileError, match=r"long\.wav: 0\.0 h of audio"):
        read_wav(rec / "long.wav")  # noise files and recorded voices too
    # a streaming WAV (data size 0: no length in its header) is bounded by its file size
    stream = bytearray((rec / "long.wav").read_bytes())
    at = stream.index(b"data")
    stream[at + 4:at + 8] = (0).to_bytes(4, "little")
    (tmp_path / "stream.wav").write_bytes(bytes(stream))
    assert recording_too_long(tmp_path / "stream.wav").startswith("0.0 h of audio")
    monkeypatch.setattr(rig.audio, "MAX_RECORDING_S", 3 * 3600.0)
    monkeypatch.setattr(rig.audio, "MAX_RECORDING_BYTES", 1000.0)  # a memory bound as well
    assert "over rig's limit of 1e-06 GB" in recording_too_long(rec / "long.wav")
    monkeypatch.setattr(rig.audio, "MAX_RECORDING_S", 3.0)
    monkeypatch.setattr(rig.audio, "MAX_RECORDING_BYTES", 4e9)
    res, _ = _run(tmp_path, rec, 800, 800)
    assert not res.rows and any("long.wav: 0.0 h of audio" in m for m in res.problems)

    class Store:  # never reached: the file is refused before it is read
        def fingerprint(self, call_id):
            raise AssertionError("read")

    out = ingest_folder(rec, Store(), MonitorConfig())
    assert out.n_ingested == 0 and len(out.bad) == 2
    assert all("h of audio" in b.reason for b in out.bad)


def test_wer_is_pooled_beside_the_mean_and_empty_references_are_counted_apart():
    from rig.replay.stats import wer_figures

    pairs = pd.DataFrame({"reference_transcript": ["a b c d e f g h i j", "x", "", None],
                          "transcript_b": ["a b c d e f g h i j", "y z w", "hello", "q"]})
    f = wer_figures(pairs, "b")
    assert f["n_wer_b"] == 2 and f["n_empty_reference"] == 1
    assert f["wer_mean_b"] == pytest.approx((0.0 + 3.0) / 2)  # one short turn swamps the mean
    assert f["wer_pooled_b"] == pytest.approx(3 / 11)  # 3 errors over 11 reference words


def test_the_word_level_change_from_a_to_b_is_in_the_pairs():
    from rig.replay.stats import transcript_diff

    assert transcript_diff("I fixed the bug and then I wrote a test", "I fixed the bug") == \
        json.dumps([["delete", w, None] for w in ["and", "then", "i", "wrote", "a", "test"]])
    assert transcript_diff("same words", "Same words.") == "[]"
    assert transcript_diff(None, "x") is None


def test_a_negative_control_with_nothing_replayed_does_not_claim_a_difference():
    """A = B with every recording refused: the verdict says nothing was compared, not that
    the replay is not reproducible (fresh-clone tester, issue 30)."""
    from rig.replay.report import verdict_sentences

    summary = {"versions": {"A": {"name": "a", "result_source": "replayed"},
                            "B": {"name": "a", "result_source": "replayed"}},
               "negative_control": True, "overall": {"n_pairs": 0, "mean_delta": None,
                                                     "flips": 0}}
    text = " ".join(verdict_sentences(summary))
    assert "NOT zero" not in text and "nothing to compare" in text
    summary["overall"] = None
    assert "NOT zero" not in " ".join(verdict_sentences(summary))
