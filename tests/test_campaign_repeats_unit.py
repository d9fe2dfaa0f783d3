"""Repeats vary what a real repeat varies (seed r: noise, filler placement, packet loss and
jitter, the scorer's sampling; never the speech render), and a campaign does not spend calls
on repeats that cannot differ: it skips them with the reason, and the noise floor of a
deterministic pipeline is reported as not measured."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from rig.asr.whisper import Transcript
from rig.audio import Audio
from rig.campaign.repeats import repeat_variation
from rig.campaign.runner import CampaignSpec, plan_campaign, run_campaign
from rig.campaign.summary import build_summary
from rig.pipeline import PipelineConfig, ScorerSettings, load_pipeline
from rig.profiles import Profile, load_profiles
from rig.scorer.fake import FakeScorer
from rig.stages import Stages
from rig.stats.noise import NOT_MEASURED
from rig.synth.base import RenderedAnswer, WordTiming
from rig.vad import TurnResult

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
REFERENCE = load_pipeline(ROOT / "pipelines" / "reference.yaml")


def _profile(**kw) -> Profile:
    return Profile(profile_id="x", **kw)


# -- what a repeat varies ------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["white", "pink", "street"])
def test_noise_sample_changes_with_the_seed_and_only_with_it(kind: str) -> None:
    from rig.synth.noise import make_noise

    a, b = make_noise(kind, 8000, 16000, 0), make_noise(kind, 8000, 16000, 1)
    assert not np.allclose(a, b)
    assert np.array_equal(a, make_noise(kind, 8000, 16000, 0))


def test_noise_file_offset_changes_with_the_seed(tmp_path: Path) -> None:
    from rig.audio import write_wav
    from rig.synth.noise import make_noise

    path = tmp_path / "n.wav"
    write_wav(path, Audio(np.random.default_rng(1).standard_normal(32000).astype(np.float32)
                          * 0.1, 16000))
    a, b = (make_noise("file", 4000, 16000, s, path) for s in (0, 1))
    assert not np.allclose(a, b)


def test_babble_offsets_change_with_the_seed(monkeypatch) -> None:
    import rig.synth.babble as babble
    from rig.synth.noise import make_noise

    track = np.random.default_rng(2).standard_normal(20000).astype(np.float32)
    monkeypatch.setattr(babble, "talker_track", lambda *a, **k: track)
    a, b = (make_noise("babble", 4000, 16000, s) for s in (0, 1))
    assert not np.allclose(a, b)
    assert np.array_equal(a, make_noise("babble", 4000, 16000, 0))


@pytest.mark.parametrize("step", [
    {"kind": "packet_loss", "loss_pct": 10.0, "concealment": "silence"},
    {"kind": "packet_loss", "model": "gilbert_elliott", "loss_pct": 5.0,
     "mean_burst_frames": 3.0, "concealment": "repeat"},
    {"kind": "jitter", "jitter_ms": 20.0, "buffer_ms": 40.0, "concealment": "silence"}])
def test_loss_and_jitter_patterns_change_with_the_seed(step: dict) -> None:
    from rig.channel import Channel, apply_caller_channel_report

    audio = Audio(np.sin(np.arange(48000) / 7.0).astype(np.float32) * 0.3, 16000)
    chan = Channel(steps=[step])
    a, b = (apply_caller_channel_report(audio, chan, s)[0] for s in (0, 1))
    assert not np.array_equal(a.samples, b.samples)
    assert np.array_equal(a.samples, apply_caller_channel_report(audio, chan, 0)[0].samples)


def test_fillers_move_with_the_seed_but_the_speech_plan_does_not_without_them() -> None:
    from rig.profiles import Disfluency, Pauses
    from rig.synth.plan import make_plan

    script = ("I led the project from the start. We met every week and I kept the plan "
              "simple, so that everyone knew what came next and who owned each part.")
    with_fillers = Disfluency(fillers_per_100_words=10.0)
    assert make_plan(script, Pauses(), with_fillers, 0) != make_plan(script, Pauses(),
                                                                     with_fillers, 1)
    # same voice, same script, no seeded element: the same render plan (and render key)
    pauses = Pauses(count=1, pause_s=1.0)
    assert make_plan(script, pauses, Disfluency(), 0) == make_plan(script, pauses,
                                                                   Disfluency(), 3)


def test_repeat_r_gives_the_scorer_seed_r(tmp_path: Path) -> None:
    seeds = []

    def reply(user, seed):
        seeds.append(seed)
        return FakeScorer()._complete("", user, "", seed)

    scorer = FakeScorer(reply)
    scorer.temperature = 0.8  # sampling: the seed matters, nothing is memoised
    sp = _spec(tmp_path, repeats=3, profile_ids=("short_pauses",),
               answer_ids=("q01_strong",))
    res = run_campaign(sp, stages=_stages(scorer), progress=False)
    rows = pd.DataFrame(res.rows)
    assert sorted(rows["repeat"]) == sorted(rows["seed"]) == [0, 0, 1, 1, 2, 2]
    assert res.n_repeats_skipped == 0
    assert sorted(set(seeds)) == [0, 1, 2]  # oracle and calls graded with the repeat's seed


# -- when repeats cannot differ ------------------------------------------------------------


@pytest.mark.parametrize(("folder", "pid", "differs"), [
    ("demo", "baseline", False), ("demo", "long_pauses", False), ("demo", "slow", False),
    ("demo", "voice_kokoro_gb", False), ("demo", "noise_10db", True),
    ("core", "babble_10db", True), ("core", "street_5db", True), ("core", "fillers", True),
    ("core", "repetitions", True), ("core", "mobile_amr_nb_loss3", True),
    ("core", "webrtc_opus_jitter", True), ("core", "webrtc_opus", False),
    ("core", "pstn_alaw", False), ("core", "hot_mic_clipping", False)])
def test_which_profiles_can_vary_between_repeats(folder: str, pid: str, differs: bool) -> None:
    prof = load_profiles(ROOT / "profiles" / folder).get(pid)
    v = repeat_variation(prof, REFERENCE)
    assert v.can_differ is differs
    if not differs:
        assert v.reason.startswith("deterministic:") and repr(pid) in v.reason
        assert "temperature 0" in v.reason


def test_the_pipeline_and_transport_can_make_any_profile_vary() -> None:
    quiet = _profile()
    assert not repeat_variation(quiet, REFERENCE).can_differ
    hot = REFERENCE.model_copy(update={"scorer": ScorerSettings(temperature=0.7)})
    assert repeat_variation(quiet, hot).can_differ
    assert repeat_variation(quiet, REFERENCE, temperature=0.3).can_differ
    endpoint = PipelineConfig(name="ep", scorer=ScorerSettings(
        backend="openai", model="m", base_url="http://127.0.0.1:1/v1"))
    v = repeat_variation(quiet, endpoint)  # temperature 0, but not reproducible
    assert v.can_differ and "OpenAI-compatible" in v.reason
    assert repeat_variation(quiet, REFERENCE, transport="webrtc").can_differ
    lossless = _profile(channel={"steps": [{"kind": "packet_loss", "loss_pct": 0.0}]})
    assert not repeat_variation(lossless, REFERENCE).can_differ
    # the embedded judge in expected mode samples nothing, whatever its temperature
    expected_hot = REFERENCE.model_copy(update={"scorer": REFERENCE.scorer.model_copy(
        update={"temperature": 0.7})})
    assert expected_hot.scorer.mode == "expected"
    assert not repeat_variation(quiet, expected_hot).can_differ


def test_demo_plan_skips_the_second_baseline_repeat() -> None:
    from rig.answers import load_bank
    from rig.paths import DEFAULTS

    d = DEFAULTS
    spec = CampaignSpec(answers_path=d.answer_bank / "core", profiles_path=d.profiles / "demo",
                        pipeline_path=d.pipelines / "reference.yaml", out_dir=Path("unused"),
                        repeats=1, answer_ids=d.demo_answer_ids, baseline_repeats=2)
    plan = plan_campaign(spec, load_bank(spec.answers_path), load_profiles(spec.profiles_path),
                         "v", REFERENCE)
    assert len(plan.calls) == 30
    skipped = plan.repeats_skipped
    assert skipped["n"] == 5 and list(skipped["by_profile"]) == ["baseline"]
    assert skipped["reason"].startswith("deterministic:") and "'baseline'" in skipped["reason"]
    assert all(c.repeat == 0 for c in plan.calls)


# -- a campaign with fake stages -----------------------------------------------------------


def _spec(tmp_path: Path, **kw) -> CampaignSpec:
    base = dict(answers_path=ROOT / "answer_bank" / "core",
                profiles_path=ROOT / "profiles" / "demo",
                pipeline_path=ROOT / "pipelines" / "reference.yaml", out_dir=tmp_path / "c",
                repeats=2, profile_ids=("long_pauses", "noise_10db"),
                question_ids=("q01_conflict",), n_boot=200)
    base.update(kw)
    return CampaignSpec(**base)


def _stages(scorer=None) -> Stages:
    """Fake render, line, turn detection and ASR: one word every 0.3 s, a pause profile's
    pause after word 5 closes the turn when it is longer than the timer; the ASR hears the
    script words spoken before the close. Deterministic, like the reference pipeline."""
    from rig.script import reference_text

    state: dict = {}

    def render(script, profile, seed, *, answer_id="", resolve_path=None, cache_dir=None):
        words, t = [], profile.response_delay_s
        for i, w in enumerate(reference_text(script).split()):
            if profile.pauses.count and i == 5:
                t += profile.pauses.pause_s
            words.append(WordTiming(w, t, t + 0.25))
            t += 0.3
        state["words"] = words
        audio = Audio(np.zeros(int((t + 2) * 8000), np.float32), 8000)
        return RenderedAnswer(audio=audio, words=tuple(words),
                              speech_start_s=words[0].start_s, speech_end_s=t,
                              snr_db_measured=None, engine="fake", voice_id="x",
                              render_key="fake", engine_version="fake 1", rate=1.0,
                              wpm_measured=None, pauses_total_s=0.0)

    def detect(audio, params):
        words, gap = state["words"], params.silence_timeout_ms / 1000
        for a, b in itertools.pairwise(words):
            if b.start_s - a.end_s > gap:
                return TurnResult(words[0].start_s, a.end_s + gap, "silence_timeout", ())
        return TurnResult(words[0].start_s, words[-1].end_s + gap, "silence_timeout", ())

    def transcribe(audio, options):
        heard = [w.word for w in state["words"] if w.start_s < audio.duration_s]
        return Transcript(" ".join(heard), -0.2, 0.01, audio.duration_s)

    return Stages(scorer=scorer or FakeScorer(), render=render,
                  caller_channel=lambda a, c, s: a, telephony=lambda a, sr, codec: a,
                  detect_turn=detect, transcribe=transcribe)


def test_deterministic_repeats_are_skipped_and_reported(tmp_path: Path) -> None:
    res = run_campaign(_spec(tmp_path), stages=_stages(), progress=False)
    df = pd.read_parquet(tmp_path / "c" / "calls.parquet")
    n_answers = df["answer_id"].nunique()
    reps = df.groupby("profile_id")["repeat"].nunique()
    assert reps["baseline"] == 1 and reps["long_pauses"] == 1 and reps["noise_10db"] == 2
    assert len(df) == n_answers * 4 and res.n_repeats_skipped == 2 * n_answers
    meta = json.loads((tmp_path / "c" / "campaign.json").read_text())
    summary = json.loads((tmp_path / "c" / "summary.json").read_text())
    for rec in (meta["repeats_skipped"], summary["repeats_skipped"], res.repeats_skipped):
        assert rec["n"] == 2 * n_answers
        assert set(rec["by_profile"]) == {"baseline", "long_pauses"}
        assert rec["reason"].startswith("deterministic:") and "temperature 0" in rec["reason"]
    nf = summary["noise_floor"]
    assert nf["measured"] is False and nf["reason"].startswith(NOT_MEASURED)
    assert nf["repeat_sd"] is None and nf["sd_repeat_diff"] is None
    html = (tmp_path / "c" / "report.html").read_text()
    assert NOT_MEASURED in html and "planned repeats not run" in html
    # summary.json is a pure function of the rows and campaign.json's record
    again = build_summary(df, campaign_id=summary["campaign_id"],
                          pipeline_version=summary["pipeline_version"], n_boot=200,
                          repeats_skipped=meta["repeats_skipped"],
                          floor_advice=meta["noise_floor_advice"])
    assert "--vary-delivery 5" in nf["reason"]  # the step that measures it (issue 33)
    for k in ("n_log_rows_not_in_plan", "pipeline", "judge_validity_bank"):
        summary.pop(k)  # what a campaign run adds (the bank-wide verdict: this machine's)
    assert json.loads(json.dumps(again)) == summary
    # a rerun finds nothing to do and still reports the skip
    again_run = run_campaign(_spec(tmp_path), stages=_stages(), progress=False)
    assert again_run.n_run == 0 and again_run.n_repeats_skipped == 2 * n_answers


def test_identical_repeats_run_on_request_measure_nothing(tmp_path: Path) -> None:
    sp = _spec(tmp_path, profile_ids=("long_pauses",), skip_deterministic_repeats=False)
    res = run_campaign(sp, stages=_stages(), progress=False)
    assert res.n_repeats_skipped == 0 and res.summary.repeats_skipped.n == 0
    nf = res.summary.noise_floor
    assert nf.measured is False and nf.reason.startswith(NOT_MEASURED)
    assert "same score and transcript" in nf.reason
    assert nf.n_identical_repeat_pairs == nf.n_repeat_pairs > 0


def test_a_sampling_scorer_runs_every_repeat(tmp_path: Path) -> None:
    scorer = FakeScorer()
    scorer.temperature = 0.5
    res = run_campaign(_spec(tmp_path, profile_ids=("long_pauses",)), stages=_stages(scorer),
                       progress=False)
    assert res.n_repeats_skipped == 0
    assert pd.DataFrame(res.rows).groupby("profile_id")["repeat"].nunique().min() == 2


def test_cli_says_what_was_skipped_and_that_the_floor_is_not_measured(tmp_path, monkeypatch
                                                                         ) -> None:
    import rig.campaign.runner as runner
    from rig.cli import app

    real = runner.run_campaign
    monkeypatch.setattr(runner, "run_campaign", lambda spec, progress=True, **_kw: real(
        spec, stages=_stages(), progress=False))
    out = tmp_path / "c"
    args = ["campaign", "run", "--answers", str(ROOT / "answer_bank" / "core"), "--profiles",
            str(ROOT / "profiles" / "demo"), "--question", "q01_conflict", "--profile",
            "long_pauses", "--repeats", "2", "--out", str(out), "--no-progress",
            "--pipeline", str(ROOT / "pipelines" / "reference.yaml")]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    text = " ".join((res.stdout + res.stderr).split())
    assert "repeats skipped, deterministic:" in text
    assert f"noise floor: {NOT_MEASURED}" in text
    summarized = CliRunner().invoke(app, ["campaign", "summarize", str(out)])
    assert summarized.exit_code == 0, summarized.output
    assert f"noise floor: {NOT_MEASURED}" in " ".join(summarized.stdout.split())
    assert json.loads((out / "summary.json").read_text())["repeats_skipped"]["n"] > 0
    forced = CliRunner().invoke(app, [*args, "--run-deterministic-repeats"])
    assert forced.exit_code == 0, forced.output
    assert pd.read_parquet(out / "calls.parquet")["repeat"].nunique() == 2
