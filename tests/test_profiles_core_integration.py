"""Every shipped profile in profiles/core renders with the real engines and measures what it
claims: pace (words per minute within 10% of a wpm target), SNR (within 0.5 dB of the target,
re-measured here from the clean render and the mix), packet loss (the report's counts, and the
long-run share pooled over seeds), response delay, pauses, disfluencies, clipping; durations
survive the channel; everything is deterministic given the seed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from typer.testing import CliRunner

from rig.audio import active_speech_mask
from rig.channel import FRAME_MS, apply_caller_channel_report
from rig.errors import EngineUnavailable
from rig.profiles import Profile, load_profiles
from rig.synth import render_answer, render_speech
from rig.synth.plan import filler_count

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]
CORE = load_profiles(ROOT / "profiles" / "core")
# short, three sentences (room for two sentence-end pauses), 31 words
SCRIPT = ("I led a small team that rebuilt our billing system last spring. We tested every "
          "step against real invoices and shipped two weeks early. The hardest part was "
          "keeping finance informed.")
N_WORDS = len(SCRIPT.split())
SR = 16000
SEED = 0


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("core-cache")


@pytest.fixture(scope="module")
def renders(cache: Path) -> dict[str, tuple]:
    """profile id -> (render, clean render, channel output, report), made once."""
    out: dict[str, tuple] = {}
    for p in CORE.profiles:
        def resolve(rel: str, p: Profile = p) -> Path:
            return CORE.resolve_path(p, rel)
        try:
            r = render_answer(SCRIPT, p, SEED, answer_id="t", resolve_path=resolve,
                              cache_dir=cache)
        except EngineUnavailable as exc:
            out[p.profile_id] = (exc,)
            continue
        clean = render_speech(SCRIPT, p, SEED, resolve_path=resolve, cache_dir=cache)
        audio, report = apply_caller_channel_report(r.audio, p.channel, SEED)
        out[p.profile_id] = (r, clean, audio, report)
    return out


def got(renders: dict, pid: str) -> tuple:
    entry = renders[pid]
    if isinstance(entry[0], EngineUnavailable):
        pytest.skip(f"{pid}: {entry[0]}")
    return entry


IDS = [p.profile_id for p in CORE.profiles]


@pytest.mark.parametrize("pid", IDS)
def test_profile_renders_speech_and_survives_its_channel(renders, pid) -> None:
    r, _, audio, report = got(renders, pid)
    p = CORE.get(pid)
    assert r.audio.samples.dtype == np.float32 and r.audio.sample_rate_hz == SR
    assert np.all(np.isfinite(audio.samples)) and np.max(np.abs(audio.samples)) <= 1.0
    assert abs(audio.duration_s - r.audio.duration_s) <= FRAME_MS / 1000
    assert report.chain == p.channel.describe()
    assert [w.word for w in r.script_words] == SCRIPT.split()
    assert r.engine == p.voice.engine and r.voice_id == p.voice.voice_id
    assert r.speech_start_s == pytest.approx(p.response_delay_s, abs=0.03)


@pytest.mark.parametrize("pid", IDS)
def test_profile_meets_its_pace(renders, pid) -> None:
    r, clean, _, _ = got(renders, pid)
    p = CORE.get(pid)
    assert r.wpm_measured is not None and 80 < r.wpm_measured < 320
    if p.pace.wpm is None:
        assert r.rate == p.pace.rate
        return
    assert abs(r.wpm_measured / p.pace.wpm - 1) <= 0.10
    # re-measured from the audio: energy-based speech span of the clean render, less the
    # deliberate pauses and the 20 ms margins speech_bounds keeps on both sides
    from rig.synth.base import speech_bounds

    a, b = speech_bounds(clean.audio.samples, SR)
    talk_s = (b - a) / SR - 0.04 - clean.pauses_total_s
    assert abs(60 * len(clean.words) / talk_s / p.pace.wpm - 1) <= 0.10


@pytest.mark.parametrize("pid", [p.profile_id for p in CORE.profiles if p.noise.kind != "none"])
def test_profile_meets_its_snr_on_active_speech(renders, pid) -> None:
    r, clean, _, _ = got(renders, pid)
    target = CORE.get(pid).noise.snr_db
    assert abs(r.snr_db_measured - target) <= 0.5
    s = clean.audio.samples.astype(np.float64)
    mix = r.audio.samples.astype(np.float64)
    scale = float(np.dot(mix, s) / np.dot(s, s))  # the mix may have been scaled to fit
    noise = mix - scale * s
    mask = active_speech_mask(clean.audio.samples, SR)
    snr = 10 * np.log10(np.mean((scale * s[mask]) ** 2) / np.mean(noise[mask] ** 2))
    assert abs(snr - target) <= 0.5, snr
    assert np.sqrt(np.mean(noise[-SR:] ** 2)) > 1e-4  # the noise runs through the tail


@pytest.mark.parametrize("pid", [p.profile_id for p in CORE.profiles
                                 if any(s.kind in ("packet_loss", "jitter")
                                        for s in p.channel.steps)])
def test_profile_meets_its_packet_loss(renders, pid) -> None:
    r, _, _, report = got(renders, pid)
    p = CORE.get(pid)
    assert report.packets >= r.audio.duration_s * 50
    assert report.packets_missing == sum(s.packets_missing for s in report.steps
                                         if s.packets_missing is not None)
    expected = report.expected_missing_pct
    # the long-run share, pooled over seeds (a 13 s call sends ~650 packets: too few alone)
    missing = packets = 0
    for seed in range(12):
        _, rep = apply_caller_channel_report(r.audio, p.channel, seed)
        missing, packets = missing + rep.packets_missing, packets + rep.packets
    assert 100 * missing / packets == pytest.approx(expected, abs=1.0)


def test_clipping_profile_clips(renders) -> None:
    _, _, audio, report = got(renders, "hot_mic_clipping")
    assert report.clipped_samples > 0 and float(np.max(np.abs(audio.samples))) == 1.0


def test_pauses_delay_and_disfluencies_are_in_the_audio(renders) -> None:
    r, _, _, _ = got(renders, "long_pauses")
    p = CORE.get("long_pauses").pauses
    gaps = [b.start_s - a.end_s for a, b in zip(r.words, r.words[1:], strict=False)]
    assert sum(g >= p.pause_s - 1e-3 for g in gaps) == p.count
    r, _, _, _ = got(renders, "long_response_delay")
    assert r.speech_start_s == pytest.approx(3.0, abs=0.03)
    r, _, _, _ = got(renders, "fillers")
    assert r.count("filler") == filler_count(N_WORDS, 8.0)
    r, _, _, _ = got(renders, "repetitions")
    assert r.count("repetition") == filler_count(N_WORDS, 4.0)
    assert r.reference("clean") == SCRIPT


@pytest.mark.parametrize("pid", IDS)
def test_profile_is_deterministic_given_its_seed(renders, cache, pid) -> None:
    r, _, audio, report = got(renders, pid)
    p = CORE.get(pid)

    def resolve(rel: str) -> Path:
        return CORE.resolve_path(p, rel)

    again = render_answer(SCRIPT, p, SEED, answer_id="t", resolve_path=resolve, cache_dir=cache)
    np.testing.assert_array_equal(again.audio.samples, r.audio.samples)
    audio2, report2 = apply_caller_channel_report(again.audio, p.channel, SEED)
    np.testing.assert_array_equal(audio2.samples, audio.samples)
    assert report2 == report


def test_render_command_writes_what_a_person_can_listen_to(tmp_path: Path, monkeypatch) -> None:
    from rig.cli import app

    monkeypatch.setenv("RIG_AUDIO_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "x.wav"
    res = CliRunner().invoke(app, ["profiles", "render", "mobile_amr_nb_loss3", "q05_weak",
                                   "--out", str(out)], env={"COLUMNS": "300"})
    assert res.exit_code == 0, res.output
    data, sr = sf.read(str(out))
    assert sr == 8000 and data.ndim == 1 and len(data) > sr
    assert "packets concealed" in res.output and "wpm" in res.output
    bad = CliRunner().invoke(app, ["profiles", "render", "nope", "q05_weak", "--out", str(out)])
    assert bad.exit_code == 2
