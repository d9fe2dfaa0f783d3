"""Code-switched scripts (issue 32, item 5): ``[lang en] ... [/lang]`` spans parsed, planned
into their own chunks, spoken by the profile's ``span_voices`` voice, keyed in the render
cache, and kept in the WER reference. Fake engines; the real voices and ASR are in
tests/test_codeswitch_integration.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rig.answers import load_bank
from rig.audio import Audio
from rig.profiles import Profile, Voice, load_profiles
from rig.profiles.settings import Disfluency, Pauses
from rig.script import Filler, Words, parse_script, reference_text, span_languages
from rig.synth import render as render_mod
from rig.synth import render_speech
from rig.synth.plan import Chunk, make_plan

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
MIXED = "Yo soy muy organizada, [lang en] so normally I don't [um] have that problem. [/lang] Y ya."


class Tone:
    """One 50 ms tone per character at a pitch of its own per voice, 16 kHz."""

    name = "fake"
    version = "1"

    def __init__(self, voice_id: str, f_hz: float) -> None:
        self.voice_id, self.f_hz, self.texts = voice_id, f_hz, []

    def synthesize(self, text: str, rate: float) -> Audio:
        self.texts.append(text)
        n = int(0.05 * 16000) * len(text)
        t = np.arange(n) / 16000
        return Audio((0.3 * np.sin(2 * np.pi * self.f_hz * t)).astype(np.float32), 16000)


def test_parse_spans_and_reference() -> None:
    segs = parse_script(MIXED)
    assert segs[0] == Words("Yo soy muy organizada,")
    assert segs[1] == Words("so normally I don't", "en")
    assert segs[2] == Filler("um")
    assert segs[3] == Words("have that problem.", "en")
    assert segs[4] == Words("Y ya.")
    assert reference_text(MIXED) == ("Yo soy muy organizada, so normally I don't have that "
                                     "problem. Y ya.")
    assert span_languages(MIXED) == ("en",) and span_languages("Hola.") == ()


@pytest.mark.parametrize("script,message", [
    ("Hola [lang en] a [lang fr] b [/lang] [/lang]", "do not nest"),
    ("Hola [/lang] a", "closes no span"),
    ("Hola [lang en] a b", "never closed"),
    ("Hola [lang en] [pause 1s] [/lang] a", "has no words"),
    ("Hola [lang xx] a [/lang]", "not a language Whisper knows"),
    ("Hola [langen] a", "unknown script mark"),
])
def test_bad_spans_refused(script: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_script(script)


def test_plan_splits_chunks_at_a_language_change() -> None:
    plan = make_plan(MIXED, Pauses(), Disfluency(), 0)
    chunks = [(s.text, s.language) for s in plan if isinstance(s, Chunk)]
    assert chunks == [("Yo soy muy organizada,", None), ("so normally I don't", "en"),
                      ("um", None), ("have that problem.", "en"), ("Y ya.", None)]
    plain = make_plan("Yo soy muy organizada, so normally. Y ya.", Pauses(), Disfluency(), 0)
    assert all(s.language is None for s in plain if isinstance(s, Chunk))


def _profile(**kw) -> Profile:
    return Profile(profile_id="p", voice=Voice(engine="espeak-ng", voice_id="es"),
                   accent_label="synthetic", language="es", **kw)


def test_span_voice_speaks_the_span(tmp_path: Path, monkeypatch) -> None:
    es, en = Tone("es", 300.0), Tone("en-us", 900.0)
    monkeypatch.setattr(render_mod, "engine_for_voice", lambda voice, resolve=None: en)
    prof = _profile(span_voices={"en": Voice(engine="espeak-ng", voice_id="en-us")})
    r = render_speech(MIXED, prof, 0, engine=es, cache_dir=tmp_path)
    assert es.texts == ["Yo soy muy organizada,", "um", "Y ya."]
    assert en.texts == ["so normally I don't", "have that problem."]
    spoken = [w.word for w in r.words if not w.is_filler]
    assert " ".join(spoken) == reference_text(MIXED)
    # the words of the span sit where the English voice's pitch is
    w = next(w for w in r.words if w.word == "normally")
    seg = r.audio.samples[int(w.start_s * 16000):int(w.end_s * 16000)]
    spec = np.abs(np.fft.rfft(seg))
    assert abs(np.argmax(spec) * 16000 / len(seg) - 900.0) < 20
    # without a span voice the profile's voice speaks the span, under another render key
    es2 = Tone("es", 300.0)
    r2 = render_speech(MIXED, _profile(), 0, engine=es2, cache_dir=tmp_path)
    assert "so normally I don't" in es2.texts and r2.render_key != r.render_key


def test_render_key_unchanged_without_spans(tmp_path: Path, monkeypatch) -> None:
    """A script without spans keeps its key whatever span_voices say (old renders stay valid),
    and a profile with no span_voices keeps its content hash."""
    monkeypatch.setattr(render_mod, "engine_for_voice",
                        lambda voice, resolve=None: Tone("en-us", 900.0))
    with_spans = _profile(span_voices={"en": Voice(engine="espeak-ng", voice_id="en-us")})
    a = render_speech("Hola a todos.", with_spans, 0, engine=Tone("es", 300.0),
                      cache_dir=tmp_path)
    b = render_speech("Hola a todos.", _profile(), 0, engine=Tone("es", 300.0),
                      cache_dir=tmp_path)
    assert a.render_key == b.render_key
    assert "span_voices" not in _profile().model_dump(exclude_defaults=True)
    assert with_spans.content_hash != _profile().content_hash
    assert with_spans.dimensions_changed(_profile()) == ["voice"]
    assert "[en] espeak-ng:en-us" in with_spans.setting("voice")


@pytest.mark.parametrize("spans,message", [
    ({"EN": {"engine": "espeak-ng", "voice_id": "en-us"}}, "lower case"),
    ({"xx": {"engine": "espeak-ng", "voice_id": "en-us"}}, "not a language"),
    ({"en": {"engine": "recorded", "voice_id": "voices/x"}}, "recorded voice cannot"),
])
def test_bad_span_voices_refused(spans: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _profile(span_voices=spans)


def test_shipped_codeswitch_bank_and_profiles() -> None:
    """Each code-switched answer repeats its monolingual twin's grades, tier and rubric, and
    switches into English for at least one clause; the profile set differs only in voice."""
    es = {a.answer_id: (q, a) for q, a in load_bank(ROOT / "answer_bank" / "es").answers()}
    bank = load_bank(ROOT / "answer_bank" / "es_codeswitch")
    assert bank.meta.language == "es"
    for q, a in bank.answers():
        eq, ea = es[a.twin_of]
        assert (a.tier, a.reference_grades, q.cutoff, q.question) == (
            ea.tier, ea.reference_grades, eq.cutoff, eq.question)
        assert [c.model_dump() for c in q.rubric] == [c.model_dump() for c in eq.rubric]
        assert span_languages(a.script) == ("en",)
        n_en = sum(len(s.text.split()) for s in parse_script(a.script)
                   if isinstance(s, Words) and s.language == "en")
        assert n_en >= 6, a.answer_id
        ratio = len(a.clean_text.split()) / len(ea.clean_text.split())
        assert 0.8 <= ratio <= 1.2, (a.answer_id, ratio)
    ps = load_profiles(ROOT / "profiles" / "es_codeswitch")
    spans = next(p for p in ps.profiles if p.profile_id == "en_spans")
    assert spans.dimensions_changed(ps.baseline) == ["voice"]
    assert spans.span_voices["en"].voice_id == "en-us"
