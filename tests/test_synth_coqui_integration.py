"""The coqui engine on real coqui-tts: a tiny, randomly initialised VITS model built here from
coqui-tts's own config classes, saved as a checkpoint and ``config.json``, and loaded back
through rig's engine code (no Coqui model ships anywhere; its audio is noise, so the tests
check shape, rate, finiteness, level and determinism, not words).

Marked ``coqui``: the main run leaves them out (tests/conftest.py); ``.ci/run`` runs them in
its coqui step after installing the extra (``pytest -m coqui``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rig.audio import Audio
from rig.profiles import load_profiles
from rig.synth import render_speech
from rig.synth.coqui import CoquiEngine, _import_coqui, resolve_files

pytestmark = [pytest.mark.integration, pytest.mark.coqui]

SAMPLE_RATE_HZ = 16000
BASELINE = """profile_id: baseline
voice: {engine: hibari, voice_id: heart}
accent_label: "US English (synthetic, hibari 'heart')"
"""
COQUI = """profile_id: coqui_tiny
voice: {engine: coqui, voice_id: tiny-vits, model_path: models/tiny}
accent_label: "random VITS (synthetic, coqui: noise, not speech)"
"""


def build_tiny_vits(folder: Path, seed: int = 0, phonemes: bool = False,
                    checkpoint: str = "model.pth", sample_rate_hz: int = SAMPLE_RATE_HZ) -> Path:
    """A randomly initialised VITS (about 0.25 M parameters; characters, or espeak-ng phonemes
    as Coqui's LJSpeech VITS uses) saved as ``folder/<checkpoint>`` + ``folder/config.json``,
    as coqui-tts's trainer saves one."""
    _import_coqui()
    import torch
    from TTS.tts.configs.vits_config import VitsArgs, VitsConfig
    from TTS.tts.models.vits import Vits

    torch.manual_seed(seed)
    args = VitsArgs(hidden_channels=16, hidden_channels_ffn_text_encoder=32,
                    num_layers_text_encoder=1, num_layers_posterior_encoder=1, num_layers_flow=1,
                    upsample_initial_channel_decoder=16, resblock_kernel_sizes_decoder=[3],
                    resblock_dilation_sizes_decoder=[[1, 3, 5]], init_discriminator=False,
                    use_sdp=False)
    config = VitsConfig(model_args=args, use_phonemes=phonemes, text_cleaner="english_cleaners",
                        phonemizer="espeak" if phonemes else None, phoneme_language="en-us")
    config.audio.sample_rate = sample_rate_hz
    model = Vits(config)
    folder.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict()}, folder / checkpoint)
    config.save_json(str(folder / "config.json"))
    return folder


@pytest.fixture(scope="module")
def profile_set(tmp_path_factory):
    root = tmp_path_factory.mktemp("coqui-profiles")
    build_tiny_vits(root / "models" / "tiny")
    (root / "baseline.yaml").write_text(BASELINE, encoding="utf-8")
    (root / "coqui_tiny.yaml").write_text(COQUI, encoding="utf-8")
    return load_profiles(root)


@pytest.fixture(scope="module")
def engine(profile_set) -> CoquiEngine:
    from rig.synth import engine_for_voice

    p = profile_set.get("coqui_tiny")
    eng = engine_for_voice(p.voice, lambda rel: profile_set.resolve_path(p, rel))
    assert isinstance(eng, CoquiEngine)
    return eng


def test_tiny_vits_loads_from_its_files(engine, profile_set):
    root = profile_set.path
    assert engine.files.checkpoint == root / "models" / "tiny" / "model.pth"
    assert engine.files.config == root / "models" / "tiny" / "config.json"
    assert engine.files.model == "vits"
    assert engine.sample_rate_hz == SAMPLE_RATE_HZ
    assert engine.version.startswith("coqui-tts 0.28.0; vits sha256 ")
    assert "config sha256" in engine.version and "seed 0" in engine.version


def test_tiny_vits_synthesizes_deterministic_audio(engine):
    a = engine.synthesize("I led a team of five engineers.", 1.0)
    b = engine.synthesize("I led a team of five engineers.", 1.0)
    assert isinstance(a, Audio) and a.sample_rate_hz == SAMPLE_RATE_HZ
    assert a.samples.dtype == np.float32 and a.samples.ndim == 1
    assert np.all(np.isfinite(a.samples)) and np.max(np.abs(a.samples)) <= 1.0
    assert a.samples.std() > 1e-3  # not silent
    np.testing.assert_array_equal(a.samples, b.samples)  # seeded: same text, same audio
    # VITS's decoder upsamples by hop_length: the output is a whole number of frames
    assert len(a.samples) % engine._config.audio.hop_length == 0
    other = engine.synthesize("We shipped the billing system two weeks early.", 1.0)
    assert not np.array_equal(other.samples[: len(a.samples)], a.samples[: len(other.samples)])


def test_rate_changes_the_length(engine):
    text = "The data migration was the hardest part, honestly."
    natural = engine.synthesize(text, 1.0)
    slow = engine.synthesize(text, 0.5)
    # rate 0.5 doubles VITS's length_scale: every duration doubles before rounding up
    assert 1.6 * len(natural.samples) < len(slow.samples) < 2.4 * len(natural.samples) + 4096


def test_render_through_the_profile(profile_set, tmp_path):
    p = profile_set.get("coqui_tiny")
    r = render_speech("I led a team of five engineers. We shipped it early.", p, seed=0,
                      answer_id="q01_strong", cache_dir=tmp_path,
                      resolve_path=lambda rel: profile_set.resolve_path(p, rel))
    assert r.engine == "coqui" and r.voice_id == "tiny-vits"
    assert r.engine_version.startswith("coqui-tts 0.28.0; vits sha256 ")
    assert r.audio.sample_rate_hz == 16000 and r.audio.samples.dtype == np.float32
    assert np.all(np.isfinite(r.audio.samples)) and r.audio.samples.std() > 1e-3
    assert [w.word for w in r.script_words][:3] == ["I", "led", "a"]
    assert 0 < r.speech_start_s < r.speech_end_s <= r.audio.duration_s
    again = render_speech("I led a team of five engineers. We shipped it early.", p, seed=0,
                          answer_id="q01_strong", cache_dir=tmp_path, use_cache=False,
                          resolve_path=lambda rel: profile_set.resolve_path(p, rel))
    assert again.render_key == r.render_key
    np.testing.assert_array_equal(again.audio.samples, r.audio.samples)


def test_another_checkpoint_is_another_version(tmp_path, engine):
    other = build_tiny_vits(tmp_path / "other", seed=1)
    eng = CoquiEngine("tiny-vits", resolve_files(other, None, None))
    assert eng.version != engine.version  # the render cache key follows the weights
    assert not np.array_equal(eng.synthesize("Hello there.", 1.0).samples,
                              engine.synthesize("Hello there.", 1.0).samples)


def test_profiles_check_engines_speaks_the_model(profile_set):
    from typer.testing import CliRunner

    from rig.cli import app

    res = CliRunner().invoke(app, ["profiles", "check", "--engines", str(profile_set.path)])
    assert res.exit_code == 0, res.output
    assert "2 profiles OK" in res.output


def test_the_similarity_extra_still_works_beside_it():
    """transformers imports torchaudio when it is installed; the CUDA wheel's extension must
    not break content_similarity in a process that never touched Coqui (a fresh one)."""
    import subprocess
    import sys

    code = ("from rig.asr.similarity import content_similarity; "
            "print(round(content_similarity('I led a team of five.', 'I led a team of 5.'), 3))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert 0.8 < float(res.stdout.split()[-1]) <= 1.0


def test_a_phoneme_vits_in_the_ljspeech_layout(tmp_path):
    """Coqui's en/ljspeech/vits: ``model_file.pth`` + ``config.json``, 22.05 kHz, espeak-ng
    phonemes (Debian's espeak-ng, as in the README's set-up)."""
    folder = build_tiny_vits(tmp_path / "ljspeech-vits", phonemes=True,
                             checkpoint="model_file.pth", sample_rate_hz=22050)
    eng = CoquiEngine("lj", resolve_files(folder / "model_file.pth", None, None))
    assert eng.sample_rate_hz == 22050
    assert eng._model.tokenizer.phonemizer.name() == "espeak"
    a = eng.synthesize("I led a team of five engineers.", 1.0)
    assert a.sample_rate_hz == 22050 and np.all(np.isfinite(a.samples)) and a.samples.std() > 0
    np.testing.assert_array_equal(a.samples, eng.synthesize("I led a team of five engineers.",
                                                            1.0).samples)
