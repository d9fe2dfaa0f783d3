"""The coqui engine's XTTS path (voice cloning from ``speaker_wav``) on real coqui-tts: a tiny,
randomly initialised XTTS (one GPT layer of 32 channels, a 45-character BPE vocabulary; its
HiFi-GAN decoder and speaker encoder have XTTS's fixed sizes, 22.5 M parameters in all) built
from coqui-tts's own config classes, saved as ``model.pth`` + ``config.json`` + ``vocab.json``
and loaded back through a profile's voice block with a real human recording as the speaker.
Its audio is noise: the tests check shape, rate, finiteness, determinism and speed.

Marked ``coqui``: the main run leaves them out (tests/conftest.py); ``.ci/run`` runs them in
its coqui step.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rig.profiles import Voice
from rig.synth import engine_for_voice
from rig.synth.coqui import CoquiEngine, _import_coqui

pytestmark = [pytest.mark.integration, pytest.mark.coqui]

SPEAKER = Path(__file__).parent / "data" / "cmu_arctic_us_aew_a0003.wav"  # a real speaker
SPECIAL = ["[STOP]", "[UNK]", "[SPACE]", "[START]", "[en]"]
CHARS = list("abcdefghijklmnopqrstuvwxyz0123456789.,!?'-;:\"")


def build_tiny_xtts(folder: Path, seed: int = 0) -> Path:
    """A randomly initialised XTTS saved as coqui-tts's trainer saves one."""
    _import_coqui()
    import torch
    from tokenizers import Tokenizer
    from tokenizers.models import BPE
    from TTS.tts.configs.xtts_config import XttsArgs, XttsConfig
    from TTS.tts.layers.xtts.tokenizer import VoiceBpeTokenizer
    from TTS.tts.models.xtts import Xtts

    folder.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(BPE(vocab={t: i for i, t in enumerate(SPECIAL + CHARS)}, merges=[],
                        unk_token="[UNK]"))
    tok.add_special_tokens(SPECIAL)
    tok.save(str(folder / "vocab.json"))
    torch.manual_seed(seed)
    args = XttsArgs(gpt_layers=1, gpt_n_model_channels=32, gpt_n_heads=2,
                    gpt_num_audio_tokens=34, gpt_start_audio_token=32, gpt_stop_audio_token=33,
                    gpt_max_audio_tokens=24, gpt_max_text_tokens=200, gpt_max_prompt_tokens=70,
                    decoder_input_dim=32, gpt_use_perceiver_resampler=True)
    config = XttsConfig(model_args=args, languages=["en"])
    model = Xtts(config)
    model.tokenizer = VoiceBpeTokenizer(str(folder / "vocab.json"))
    model.init_models()  # the GPT is sized by the tokenizer
    torch.save({"model": model.state_dict()}, folder / "model.pth")
    config.save_json(str(folder / "config.json"))
    return folder


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> CoquiEngine:
    root = tmp_path_factory.mktemp("xtts-profile")
    build_tiny_xtts(root / "models" / "xtts")
    (root / "voices").mkdir()
    (root / "voices" / "aew.wav").write_bytes(SPEAKER.read_bytes())
    voice = Voice(engine="coqui", voice_id="aew-xtts", model_path="models/xtts",
                  speaker_wav="voices/aew.wav")
    eng = engine_for_voice(voice, lambda rel: root / rel)  # relative to the profile's folder
    assert isinstance(eng, CoquiEngine)
    return eng


def test_xtts_loads_with_the_speaker(engine):
    assert engine.files.model == "xtts" and engine.files.speaker_wav.name == "aew.wav"
    assert engine.sample_rate_hz == 24000  # XTTS's decoder output rate
    assert "xtts sha256 " in engine.version and "speaker_wav sha256 " in engine.version


def test_xtts_clones_deterministically_and_speed_stretches(engine):
    text = "I led a team of five engineers."
    a = engine.synthesize(text, 1.0)
    b = engine.synthesize(text, 1.0)
    assert a.sample_rate_hz == 24000 and a.samples.dtype == np.float32 and a.samples.ndim == 1
    assert len(a.samples) > 0 and np.all(np.isfinite(a.samples))
    assert np.max(np.abs(a.samples)) > 0  # not all zeros
    np.testing.assert_array_equal(a.samples, b.samples)  # torch seeded: GPT sampling repeats
    slow = engine.synthesize(text, 0.5)  # XTTS's speed: its latents stretched by 1 / speed
    assert len(slow.samples) == 2 * len(a.samples)
