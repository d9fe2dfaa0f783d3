"""The real kokoro engine, offline: hibari's English phonemes (US and British rules) in
Kokoro's alphabet, and a non-US Kokoro voice (jf_alpha, British phonemes) rendering English
that Whisper transcribes, with every network connection refused while the engine loads and
speaks."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from rig.asr.wer import wer
from rig.asr.whisper import AsrOptions, transcribe
from rig.channel import telephony_path
from rig.errors import EngineUnavailable
from rig.profiles import Profile, Voice
from rig.synth import get_engine, render_speech

pytestmark = pytest.mark.integration

#: Two sentences of q03_weak (answer_bank/core), numbers and a contraction included.
SCRIPT = ("There was a bug once where some reports were wrong. I think it was a date issue, "
          "and after two days we found it and fixed it.")
VOICE_ID = "jf_alpha.en-gb"


@pytest.fixture(scope="module")
def offline():
    """Refuse every socket connection (no model hub, nothing fetched) for the module."""
    mp = pytest.MonkeyPatch()

    def refuse(self, *args, **kwargs):
        raise OSError("network refused: the kokoro engine must run offline")

    mp.setattr(socket.socket, "connect", refuse)
    mp.setattr(socket.socket, "connect_ex", refuse)
    mp.setenv("HF_HUB_OFFLINE", "1")
    yield
    mp.undo()


@pytest.fixture(scope="module")
def engine(offline):
    try:
        return get_engine("kokoro", VOICE_ID)
    except EngineUnavailable as exc:
        pytest.skip(f"kokoro is not installed here: {exc}")


@pytest.fixture(scope="module")
def rendered(engine, tmp_path_factory: pytest.TempPathFactory):
    prof = Profile(profile_id="k", voice=Voice(engine="kokoro", voice_id=VOICE_ID),
                   accent_label="synthetic: Kokoro voice jf_alpha reading English")
    return render_speech(SCRIPT, prof, 0, cache_dir=tmp_path_factory.mktemp("kokoro"),
                         trailing_silence_s=1.0)


def test_english_phonemes_in_kokoros_alphabet(engine) -> None:
    from rig.synth.kokoro import english_phonemes

    us = english_phonemes("Hello there, I fixed the water heater.", "en-us")
    gb = english_phonemes("Hello there, I fixed the water heater.", "en-gb")
    assert len(us) == len(gb) == 1
    assert us != gb
    assert "ɹ" in us[0].split()[-1] and "ɹ" not in gb[0].split()[-1]  # heater: rhotic or not
    assert set(us[0] + gb[0]) <= set(engine._vocab)


def test_non_us_voice_reads_english_that_whisper_transcribes(engine, rendered) -> None:
    assert rendered.engine == "kokoro" and rendered.voice_id == VOICE_ID
    assert rendered.audio.samples.dtype == np.float32 and rendered.audio.sample_rate_hz == 16000
    assert "kokoro-82m-v1.0-int8" in rendered.engine_version
    assert 100 < rendered.wpm_measured < 280, rendered.wpm_measured
    line = telephony_path(rendered.audio)  # 8 kHz G.711 mu-law
    hyp = transcribe(line, AsrOptions(model="whisper-tiny.en")).text
    result = wer(SCRIPT, hyp)
    assert result.wer < 0.35, (result, hyp)


def test_render_is_deterministic_and_rate_is_kokoros_speed(engine) -> None:
    normal = engine.synthesize("We shipped it two weeks early.", 1.0)
    again = engine.synthesize("We shipped it two weeks early.", 1.0)
    slow = engine.synthesize("We shipped it two weeks early.", 0.7)
    assert np.array_equal(normal.samples, again.samples) and normal.duration_s > 0.5
    assert slow.duration_s / normal.duration_s > 1.2


def test_model_is_assembled_and_verified(engine) -> None:
    from rig.models import MODELS, ensure_model

    spec = MODELS["kokoro-82m-v1.0-int8"]
    path = ensure_model(spec.name)  # the sha256 was checked when the engine loaded it
    assert path.name == "model.onnx" and path.stat().st_size == 92_361_271
    assert spec.extra == "kokoro" and len(spec.parts) == 4
