"""rig sweep on the real stages: a timer sweep over the long-pause profile (two 1.6 s pauses)
re-runs turn detection (pipecat Silero, 8 kHz mu-law line), ASR (faster-whisper tiny.en) and
scoring (llama.cpp Qwen2.5-Coder-1.5B) from the campaign's cached renders: no speech is
synthesised again, and truncation falls to 0 once the timer exceeds the pause."""

import json

import pandas as pd
import pytest

from rig.sweep import parse_vary, recompute, run_sweep
from rig.synth import render as render_mod
from rig.synth.cache import default_cache_dir

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def swept(tmp_path_factory, real_serial_reference):
    # the campaign: conftest's 4 real calls (q01_strong and q03_strong x baseline and
    # long_pauses on reference.yaml), run once per session and shared with the executor and
    # kill tests (tests/xdist_plan.py); copied, as the sweep must not touch that folder
    import shutil

    base = tmp_path_factory.mktemp("sweep")
    shutil.copytree(real_serial_reference[1].out_dir, base / "camp")
    cache = default_cache_dir()
    before = sorted(p.name for p in cache.rglob("*") if p.is_file())
    stored = []
    mp = pytest.MonkeyPatch()
    real_store = render_mod.store_render
    mp.setattr(render_mod, "store_render",
               lambda *a, **k: (stored.append(a[1]), real_store(*a, **k))[1])
    try:
        res = run_sweep(base / "camp", [parse_vary("endpointing.silence_timeout_ms=1200,2000")],
                        base / "sweep", n_boot=500, margin=10.0)
    finally:
        mp.undo()
    after = sorted(p.name for p in cache.rglob("*") if p.is_file())
    return base, res, stored, before, after


def test_no_speech_is_synthesised_during_the_sweep(swept):
    _base, res, stored, before, after = swept
    assert res.n_run == 2 * 4
    assert stored == [] and before == after


def test_truncation_falls_to_zero_once_the_timer_exceeds_the_pause(swept):
    _base, res, _s, _b, _a = swept
    t = {(r["variant"], r["profile_id"]): r for r in res.sweep["table"]}
    assert t[("campaign", "long_pauses")]["truncation_rate"] == 1.0
    assert t[("endpointing.silence_timeout_ms=1200", "long_pauses")]["truncation_rate"] == 1.0
    assert t[("endpointing.silence_timeout_ms=2000", "long_pauses")]["truncation_rate"] == 0.0
    assert t[("endpointing.silence_timeout_ms=2000", "baseline")]["truncation_rate"] == 0.0
    lp = t[("endpointing.silence_timeout_ms=2000", "long_pauses")]
    assert abs(lp["mean_delta"]) < abs(t[("campaign", "long_pauses")]["mean_delta"])
    assert lp["dead_air_added_s"] == pytest.approx(1.2)


def test_only_downstream_stages_ran_and_the_table_recomputes(swept):
    base, res, _s, _b, _a = swept
    df = pd.read_parquet(base / "sweep" / "sweep.parquet")
    camp = df[df["variant"] == "campaign"].set_index(["answer_id", "profile_id"])
    long_ = df[df["variant"] == "endpointing.silence_timeout_ms=2000"].set_index(
        ["answer_id", "profile_id"])
    assert (long_["status"] == "ok").all(), long_["error"].tolist()
    assert (long_["silence_timeout_ms"] == 2000).all()
    # same renders (cache), new turns: the long-pause turn closes later
    assert (long_["audio_duration_s"] == camp.loc[long_.index, "audio_duration_s"]).all()
    lp = long_.xs("long_pauses", level="profile_id")
    assert (lp["turn_close_s"] > camp.xs("long_pauses", level="profile_id").loc[
        lp.index, "turn_close_s"]).all()
    assert json.loads(json.dumps(recompute(base / "sweep"))) == json.loads(
        json.dumps(res.sweep["table"]))
