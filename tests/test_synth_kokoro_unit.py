"""The kokoro engine's logic on a fake ONNX session: voice ids, the phoneme bridge's
chunking, what is fed to the model (tokens, style row, speed), and the profile validation.
The real model is exercised in test_synth_kokoro_integration.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

import rig.synth.kokoro as kk
from rig.errors import ConfigError, EngineUnavailable
from rig.profiles import Voice, load_profiles
from rig.profiles.settings import KOKORO_VOICE_IDS

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]


def test_voice_ids_are_voice_dot_phonemes() -> None:
    assert kk.parse_voice_id("jf_alpha.en-gb") == ("jf_alpha", "en-gb")
    assert kk.parse_voice_id("jm_kumo.en-us") == ("jm_kumo", "en-us")
    assert len(KOKORO_VOICE_IDS) == 10


@pytest.mark.parametrize("bad", ["jf_alpha", "af_heart.en-us", "jf_alpha.en-au", "heart"])
def test_unknown_voice_names_the_voices(bad: str) -> None:
    with pytest.raises(EngineUnavailable) as exc:
        kk.parse_voice_id(bad)
    assert repr(bad) in str(exc.value) and "jf_alpha.en-gb" in str(exc.value)
    with pytest.raises(ValidationError, match=r"jf_tebukuro\.en-us"):
        Voice(engine="kokoro", voice_id=bad)


def test_profile_with_an_unknown_kokoro_voice_names_file_and_field(tmp_path: Path) -> None:
    (tmp_path / "baseline.yaml").write_text(
        (ROOT / "profiles" / "core" / "baseline.yaml").read_text())
    bad = tmp_path / "kokoro.yaml"
    bad.write_text("profile_id: kokoro\nvoice: {engine: kokoro, voice_id: jf_alpha}\n"
                   "accent_label: synthetic Kokoro voice jf_alpha\n")
    with pytest.raises(ConfigError) as exc:
        load_profiles(tmp_path)
    assert "kokoro.yaml" in str(exc.value) and "voice" in str(exc.value)
    assert "jf_alpha.en-gb" in str(exc.value)


def test_split_phonemes_keeps_short_strings_whole() -> None:
    assert kk.split_phonemes("həlˈQ ðˈɛː.") == ["həlˈQ ðˈɛː."]
    assert kk.split_phonemes("") == []


def test_split_phonemes_cuts_after_clause_punctuation() -> None:
    clause = "ə" * 30 + ","
    ps = " ".join([clause] * 10)  # 319 characters
    parts = kk.split_phonemes(ps, max_len=100)
    assert all(len(p) <= 100 for p in parts)
    assert all(p.endswith(",") for p in parts)
    assert " ".join(parts) == ps


def test_split_phonemes_cuts_hard_without_punctuation() -> None:
    ps = "a" * 250
    parts = kk.split_phonemes(ps, max_len=100)
    assert [len(p) for p in parts] == [100, 100, 50] and "".join(parts) == ps


class FakeSession:
    """Returns 100 samples per token (pads included) divided by the speed, value 0.5."""

    def __init__(self) -> None:
        self.feeds: list[dict] = []

    def run(self, _outputs, feed):
        self.feeds.append(feed)
        n = round(feed["tokens"].shape[1] * 100 / float(feed["speed"][0]))
        return [np.full((1, n), 0.5, np.float32)]


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch):
    session = FakeSession()
    vocab = {"a": 1, "b": 2, " ": 3, ".": 4}
    styles = {v: np.arange(510 * 256, dtype=np.float32).reshape(510, 256)
              for v in ("jf_alpha", "jm_kumo")}
    monkeypatch.setattr(kk, "_load_model", lambda: (session, vocab, styles, "fake 1"))
    monkeypatch.setattr(kk, "_g2p", lambda phonemes: None)
    monkeypatch.setattr(kk, "english_phonemes",
                        lambda text, phonemes: ["ab ba.", "a."] if phonemes == "en-gb" else [])
    return kk.KokoroEngine("jf_alpha.en-gb"), session


def test_engine_feeds_tokens_style_row_and_speed(engine) -> None:
    eng, session = engine
    assert eng.name == "kokoro" and eng.voice_id == "jf_alpha.en-gb"
    assert eng.version == "fake 1; en-gb phonemes"
    out = eng.from_phonemes("abzx b", rate=1.25)  # z, x: not in the vocabulary, dropped
    feed = session.feeds[-1]
    assert feed["tokens"].tolist() == [[0, 1, 2, 3, 2, 0]]
    assert feed["tokens"].dtype == np.int64
    # the style row is the phoneme count minus one (Kokoro's rule): 4 tokens -> row 3
    assert feed["style"].shape == (1, 256) and feed["style"][0, 0] == 3 * 256
    assert feed["speed"].tolist() == [1.25] and feed["speed"].dtype == np.float32
    assert out.dtype == np.float32 and out.shape == (round(6 * 100 / 1.25),)


def test_engine_truncates_to_the_model_context(engine) -> None:
    eng, session = engine
    eng.from_phonemes("a" * 700)
    feed = session.feeds[-1]
    assert feed["tokens"].shape == (1, kk.MAX_PHONEMES + 2)
    assert feed["style"][0, 0] == (kk.MAX_PHONEMES - 1) * 256
    assert eng.from_phonemes("zzz").shape == (0,)  # nothing speakable


def test_synthesize_joins_the_sentences_with_a_short_gap(engine) -> None:
    eng, session = engine
    audio = eng.synthesize("Ab ba. A.", 1.0)
    assert len(session.feeds) == 2
    assert audio.sample_rate_hz == kk.SAMPLE_RATE_HZ == 24000
    gap = round(0.1 * 24000)
    first, second = (6 + 2) * 100, (2 + 2) * 100  # tokens and the two pads, 100 samples each
    assert len(audio.samples) == first + gap + second
    assert np.all(audio.samples[first:first + gap] == 0)


def test_shipped_profile_is_labelled_honestly() -> None:
    s = load_profiles(ROOT / "profiles" / "core")
    p = s.get("accent_kokoro_jf_alpha")
    assert p.dimensions_changed(s.baseline) == ["voice"]
    assert (p.voice.engine, p.voice.voice_id) == ("kokoro", "jf_alpha.en-gb")
    assert p.accent_label.startswith("synthetic: Kokoro voice jf_alpha reading English")
