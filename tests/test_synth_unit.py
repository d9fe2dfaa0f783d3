"""Synthesis logic with a fake engine: chunking, pauses, fillers, word timings, cache, noise."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from rig.audio import Audio, active_speech_mask, write_wav
from rig.errors import EngineUnavailable
from rig.profiles import Disfluency, Noise, Pace, Pauses, Profile, Voice
from rig.script import reference_text
from rig.synth import render_answer, render_speech
from rig.synth.base import cap_silences, speech_bounds
from rig.synth.noise import make_noise, mix_at_snr
from rig.synth.plan import PHRASE_GAP_S, SENTENCE_GAP_S, Chunk, Silence, make_plan

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data"
DISHES = DATA / "noise_dishes_10s.wav"
SR = 16000

SCRIPT = ("I led a team of five engineers. We shipped the billing system two weeks early! "
          "[pause 1.5s] Was it hard? The data migration was the hardest part, [um] honestly. "
          "Dr. Lee reviewed every step with us.")


class FakeEngine:
    """A deterministic stand-in: one 60 ms / rate tone burst per character, a 300 ms / rate gap
    at each comma, 200 ms of leading and 300 ms of trailing silence, at 24 kHz."""

    name = "fake"
    version = "1"
    sample_rate_hz = 24000

    def __init__(self, voice_id: str = "tone") -> None:
        self.voice_id = voice_id
        self.calls: list[tuple[str, float]] = []

    def synthesize(self, text: str, rate: float) -> Audio:
        self.calls.append((text, rate))
        sr = self.sample_rate_hz
        parts = [np.zeros(int(0.2 * sr), np.float32)]
        for ch in text:
            if ch == ",":
                parts.append(np.zeros(int(0.3 / rate * sr), np.float32))
                continue
            n = int(0.06 / rate * sr)
            f = 200 + 10 * (ord(ch) % 40)
            parts.append((0.3 * np.sin(2 * np.pi * f * np.arange(n) / sr)).astype(np.float32))
        parts.append(np.zeros(int(0.3 * sr), np.float32))
        return Audio(np.concatenate(parts), sr)


def profile(**kw) -> Profile:
    return Profile(profile_id=kw.pop("profile_id", "p"), **kw)


def render(script: str = SCRIPT, prof: Profile | None = None, seed: int = 0,
           tmp: Path | None = None, engine: FakeEngine | None = None, **kw):
    return render_answer(script, prof or profile(), seed, engine=engine or FakeEngine(),
                         cache_dir=tmp, **kw)


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def chunk_texts(steps) -> list:
    return [s.text if isinstance(s, Chunk) else ("pause", s.duration_s, s.source) for s in steps]


# --- plan: chunking, pauses, fillers ---------------------------------------------------------

def test_script_is_cut_into_sentences_pauses_and_fillers() -> None:
    steps = make_plan(SCRIPT, Pauses(), Disfluency(), seed=0)
    assert chunk_texts(steps) == [
        "I led a team of five engineers.", "We shipped the billing system two weeks early!",
        ("pause", 1.5, "script"), "Was it hard?", "The data migration was the hardest part,",
        "um", "honestly.", "Dr. Lee reviewed every step with us."]
    fillers = [s for s in steps if isinstance(s, Chunk) and s.is_filler]
    assert [f.words for f in fillers] == [("um",)]
    assert [s.ends_sentence for s in steps if isinstance(s, Chunk)] == [
        True, True, True, False, False, True, True]


def test_sentence_end_pauses_are_evenly_spaced_and_never_after_the_last_sentence() -> None:
    script = " ".join(f"Sentence number {i} is here." for i in range(5))
    steps = make_plan(script, Pauses(count=2, pause_s=2.0), Disfluency(), seed=0)
    texts = chunk_texts(steps)
    # 4 candidate ends (after sentences 0..3): pauses take candidates 1 and 3.
    assert texts[2] == ("pause", 2.0, "profile") and texts[5] == ("pause", 2.0, "profile")
    assert isinstance(steps[-1], Chunk)
    one = chunk_texts(make_plan(script, Pauses(count=1, pause_s=2.0), Disfluency(), 0))
    assert one.index(("pause", 2.0, "profile")) == 3  # after the third of five sentences


def test_mid_sentence_pauses_split_sentences_in_the_middle() -> None:
    script = "One two three four five six. Alpha beta gamma delta. Red green blue."
    steps = make_plan(script, Pauses(count=3, pause_s=1.0, placement="mid_sentence"),
                      Disfluency(), 0)
    assert chunk_texts(steps) == [
        "One two three", ("pause", 1.0, "profile"), "four five six.", "Alpha beta",
        ("pause", 1.0, "profile"), "gamma delta.", "Red", ("pause", 1.0, "profile"),
        "green blue."]


def test_more_pauses_than_sentence_ends_spread_over_word_boundaries() -> None:
    steps = make_plan("just one long sentence of eight words here.", Pauses(count=2, pause_s=1),
                      Disfluency(), 0)
    assert sum(isinstance(s, Silence) for s in steps) == 2
    with pytest.raises(ValueError, match="cannot place 3 pauses"):
        make_plan("three words here.", Pauses(count=3, pause_s=1), Disfluency(), 0)


def test_profile_pause_adds_to_a_script_pause_at_the_same_place() -> None:
    steps = make_plan("First part. [pause 1s] Second half.", Pauses(count=1, pause_s=2.0),
                      Disfluency(), 0)
    silences = [s.duration_s for s in steps if isinstance(s, Silence)]
    assert sorted(silences) == [1.0, 2.0]
    r = render_speech("First part. [pause 1s] Second half.",
                      profile(pauses=Pauses(count=1, pause_s=2.0)), 0, engine=FakeEngine(),
                      use_cache=False)
    w = {x.word: x for x in r.words}
    assert w["Second"].start_s - w["part."].end_s == pytest.approx(3.0, abs=1 / SR)


def test_filler_rate_is_exact_seeded_and_varies_with_the_seed() -> None:
    script = " ".join(f"word{i}" for i in range(200)) + "."
    dis = Disfluency(fillers_per_100_words=5.0, filler_words=("um", "uh"))
    plans = [make_plan(script, Pauses(), dis, seed) for seed in (0, 0, 1)]
    fillers = [[s.text for s in p if isinstance(s, Chunk) and s.is_filler] for p in plans]
    assert len(fillers[0]) == 10
    assert plans[0] == plans[1] and plans[0] != plans[2]
    words = {s.text for s in plans[0] if isinstance(s, Chunk) and s.is_filler}
    assert words <= {"um", "uh"}
    # no filler count change for a seed, and never two fillers in a row
    for p in plans:
        kinds = [isinstance(s, Chunk) and s.is_filler for s in p]
        assert not any(a and b for a, b in itertools.pairwise(kinds))


def test_filler_count_rounds_half_up() -> None:
    script = " ".join(["word"] * 30) + "."
    steps = make_plan(script, Pauses(), Disfluency(fillers_per_100_words=5.0), 0)
    assert sum(isinstance(s, Chunk) and s.is_filler for s in steps) == 2  # 1.5 -> 2


def test_bad_mark_and_negative_seed_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown script mark"):
        make_plan("hello [cough] there", Pauses(), Disfluency(), 0)
    with pytest.raises(ValueError, match="seed"):
        make_plan("hello", Pauses(), Disfluency(), -1)


# --- rendering and word timings --------------------------------------------------------------

def test_words_are_the_clean_reference_plus_flagged_fillers(cache: Path) -> None:
    prof = profile(disfluency=Disfluency(fillers_per_100_words=10.0))
    r = render(prof=prof, seed=4, tmp=cache)
    assert [w.word for w in r.words if not w.is_filler] == reference_text(SCRIPT).split()
    assert [w.word for w in r.script_words] == reference_text(SCRIPT).split()
    fillers = [w for w in r.words if w.is_filler]
    assert len(fillers) == 1 + 3  # the scripted [um] + round(10 * 30 / 100)
    assert {w.word for w in fillers} <= {"um", "uh"}


def test_word_timings_are_monotonic_and_inside_the_clip(cache: Path) -> None:
    prof = profile(response_delay_s=0.7, pauses=Pauses(count=1, pause_s=3.0))
    r = render(prof=prof, tmp=cache, trailing_silence_s=1.5)
    starts = np.array([w.start_s for w in r.words])
    ends = np.array([w.end_s for w in r.words])
    assert np.all(ends > starts)
    assert np.all(starts[1:] >= ends[:-1] - 1e-9)
    assert r.speech_start_s == pytest.approx(0.7, abs=1e-6)
    assert r.speech_end_s == pytest.approx(r.audio.duration_s - 1.5, abs=1e-3)
    assert r.audio.samples.dtype == np.float32 and r.audio.sample_rate_hz == SR


def test_pauses_and_gaps_are_exact_silences(cache: Path) -> None:
    r = render(tmp=cache)
    w = {x.word: x for x in r.words}
    # the script's [pause 1.5s] between "early!" and "Was"
    assert w["Was"].start_s - w["early!"].end_s == pytest.approx(1.5, abs=1 / SR)
    # a sentence gap between "engineers." and "We", a phrase gap around the filler
    assert w["We"].start_s - w["engineers."].end_s == pytest.approx(SENTENCE_GAP_S, abs=1 / SR)
    assert w["um"].start_s - w["part,"].end_s == pytest.approx(PHRASE_GAP_S, abs=1 / SR)
    # the audio is silent inside the pause and speaking inside the words
    s, sr = r.audio.samples, r.audio.sample_rate_hz
    pause = s[int(w["early!"].end_s * sr) + 1:int(w["Was"].start_s * sr) - 1]
    assert np.max(np.abs(pause)) == 0.0
    word = s[int(w["migration"].start_s * sr):int(w["migration"].end_s * sr)]
    assert np.sqrt(np.mean(word ** 2)) > 0.01


def test_chunk_timings_match_the_engine_audio(cache: Path) -> None:
    # Each chunk is trimmed and placed whole: the first and last word of a chunk bound the
    # audio that the engine produced for it (to within the trimming margin).
    r = render("Hello there friend.", tmp=cache, trailing_silence_s=0.5)
    s = r.audio.samples
    a, b = speech_bounds(s, SR, margin_s=0.0)
    assert abs(a / SR - r.speech_start_s) <= 0.03 and abs(b / SR - r.speech_end_s) <= 0.03


def test_slower_rate_gives_longer_speech(cache: Path) -> None:
    fast = render(prof=profile(pace=Pace(rate=1.0)), tmp=cache)
    slow = render(prof=profile(pace=Pace(rate=0.5)), tmp=cache)
    span = (slow.speech_end_s - slow.speech_start_s) / (fast.speech_end_s - fast.speech_start_s)
    assert span > 1.5


def test_each_distinct_chunk_is_synthesized_once(cache: Path) -> None:
    eng = FakeEngine()
    render(prof=profile(disfluency=Disfluency(fillers_per_100_words=20.0,
                                              filler_words=("um",))), tmp=cache, engine=eng)
    texts = [t for t, _ in eng.calls]
    assert len(texts) == len(set(texts)) and "um" in texts


def test_long_silences_inside_a_chunk_are_capped(cache: Path) -> None:
    # At rate 0.5 the fake engine leaves 0.6 s at a comma: capped to 0.5 s.
    r = render("Well, yes.", prof=profile(pace=Pace(rate=0.5)), tmp=cache)
    s = r.audio.samples[int(r.speech_start_s * SR):int(r.speech_end_s * SR)]
    quiet = np.abs(s) < 1e-4
    longest = max(len(run) for run in "".join("q" if q else "." for q in quiet).split("."))
    assert longest / SR <= 0.5 + 0.01
    x = np.concatenate([np.ones(100), np.zeros(16000), np.ones(100)]).astype(np.float32)
    assert len(cap_silences(x, 16000, 0.5)) == pytest.approx(200 + 8000, abs=160)


def test_render_is_levelled(cache: Path) -> None:
    r = render(tmp=cache)
    assert 0 < np.max(np.abs(r.audio.samples)) <= 0.89 + 1e-6


# --- cache and determinism -------------------------------------------------------------------

def key(prof: Profile | None = None, seed: int = 0, script: str = SCRIPT, **kw) -> str:
    return render_speech(script, prof or profile(), seed, engine=FakeEngine(kw.pop("voice", "t")),
                         use_cache=False, **kw).render_key


def test_cache_key_changes_with_everything_that_shapes_the_speech() -> None:
    base = key()
    changed = {
        "script": key(script=SCRIPT + " Thanks."),
        "voice": key(voice="other"),
        "rate": key(profile(pace=Pace(rate=0.8))),
        "pauses": key(profile(pauses=Pauses(count=1, pause_s=2.0))),
        "placement": key(profile(pauses=Pauses(count=1, pause_s=2.0,
                                               placement="mid_sentence"))),
        "fillers": key(profile(disfluency=Disfluency(fillers_per_100_words=10.0))),
        "delay": key(profile(response_delay_s=1.0)),
        "tail": key(trailing_silence_s=3.0),
        "rate_hz": key(sample_rate_hz=8000),
    }
    assert all(v != base for v in changed.values()), changed
    assert len(set(changed.values())) == len(changed)
    # the seed moves fillers: it matters when there are fillers, not otherwise
    fill = profile(disfluency=Disfluency(fillers_per_100_words=10.0))
    assert key(fill, seed=1) != key(fill, seed=2)
    assert key(seed=1) == key(seed=2) == base
    # noise is mixed after the cache; ids and descriptions shape nothing
    assert key(profile(noise=Noise(kind="white", snr_db=10.0))) == base
    assert key(profile(profile_id="other", description="x")) == base


def test_cache_hit_is_bit_identical_and_skips_the_engine(cache: Path) -> None:
    eng = FakeEngine()
    a = render(tmp=cache, engine=eng)
    n = len(eng.calls)
    b = render(tmp=cache, engine=eng)
    assert len(eng.calls) == n
    np.testing.assert_array_equal(a.audio.samples, b.audio.samples)
    assert a.words == b.words and a.render_key == b.render_key
    assert (cache / f"{a.render_key}.wav").is_file()


def test_damaged_cache_entry_is_rendered_again(cache: Path) -> None:
    a = render(tmp=cache)
    (cache / f"{a.render_key}.wav").write_bytes(b"not a wav")
    eng = FakeEngine()
    b = render(tmp=cache, engine=eng)
    assert eng.calls and np.array_equal(a.audio.samples, b.audio.samples)


def test_cache_dir_defaults_to_the_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RIG_AUDIO_CACHE", str(tmp_path / "env-cache"))
    r = render_answer("Hello.", profile(), 0, engine=FakeEngine())
    assert (tmp_path / "env-cache" / f"{r.render_key}.json").is_file()


def test_rendering_is_deterministic_given_the_seed(cache: Path) -> None:
    prof = profile(disfluency=Disfluency(fillers_per_100_words=8.0),
                   noise=Noise(kind="pink", snr_db=15.0))
    a = render(prof=prof, seed=5, tmp=cache / "a")
    b = render(prof=prof, seed=5, tmp=cache / "b")
    c = render(prof=prof, seed=6, tmp=cache / "a")
    np.testing.assert_array_equal(a.audio.samples, b.audio.samples)
    assert a.words == b.words
    assert not np.array_equal(a.audio.samples, c.audio.samples)


# --- noise -----------------------------------------------------------------------------------

def independent_snr_db(speech: np.ndarray, mix: np.ndarray) -> float:
    mask = active_speech_mask(speech, SR)
    noise = mix.astype(np.float64) - speech
    return 10 * np.log10(np.mean(speech[mask].astype(np.float64) ** 2) /
                         np.mean(noise[mask] ** 2))


@pytest.fixture
def fake_voices(monkeypatch):
    """Babble talkers spoken by the fake engine (one per voice id), not by real TTS."""
    from rig.synth import babble

    engines: dict[str, FakeEngine] = {}

    def get_engine(engine: str, voice_id: str) -> FakeEngine:
        return engines.setdefault(f"{engine}:{voice_id}", FakeEngine(f"{engine}-{voice_id}"))

    monkeypatch.setattr(babble, "get_engine", get_engine)
    return engines


@pytest.mark.parametrize("kind", ["white", "pink", "street", "babble", "file"])
@pytest.mark.parametrize("snr_db", [5.0, 10.0, 20.0])
def test_noise_is_mixed_at_the_target_snr(cache: Path, kind: str, snr_db: float,
                                          fake_voices) -> None:
    noise = Noise(kind=kind, snr_db=snr_db, path=str(DISHES) if kind == "file" else None)
    prof = profile(noise=noise, pauses=Pauses(count=1, pause_s=2.0))
    clean = render_speech(SCRIPT, prof, 3, engine=FakeEngine(), cache_dir=cache)
    r = render(prof=prof, seed=3, tmp=cache)
    assert r.snr_db_measured is not None
    assert abs(r.snr_db_measured - snr_db) <= 0.5
    assert abs(independent_snr_db(clean.audio.samples, r.audio.samples) - snr_db) <= 0.5
    assert np.max(np.abs(r.audio.samples)) <= 1.0
    # noise continues through the pause and the tail
    tail = r.audio.samples[-SR:]
    assert np.sqrt(np.mean(tail.astype(np.float64) ** 2)) > 1e-4


def test_no_noise_means_no_snr(cache: Path) -> None:
    assert render(tmp=cache).snr_db_measured is None


def test_pink_noise_falls_3_db_per_octave_and_white_is_flat() -> None:
    n = SR * 20

    def band_db(x: np.ndarray, lo: float, hi: float) -> float:
        p = np.abs(np.fft.rfft(x)) ** 2
        f = np.fft.rfftfreq(len(x), 1 / SR)
        return 10 * np.log10(p[(f >= lo) & (f < hi)].mean())

    pink, white = make_noise("pink", n, SR, 0), make_noise("white", n, SR, 0)
    # mean power density 4 octaves apart: -12 dB for pink, 0 dB for white
    assert band_db(pink, 100, 200) - band_db(pink, 1600, 3200) == pytest.approx(12.0, abs=1.0)
    assert band_db(white, 100, 200) - band_db(white, 1600, 3200) == pytest.approx(0.0, abs=0.5)
    for x in (pink, white):
        assert x.dtype == np.float32 and x.shape == (n,)
        assert np.mean(x.astype(np.float64) ** 2) == pytest.approx(1.0, rel=1e-3)


def test_noise_is_seeded(fake_voices, tmp_path: Path) -> None:
    for kind in ("white", "pink", "street", "babble", "file"):
        a = make_noise(kind, 4000, SR, 1, DISHES, cache_dir=tmp_path)
        np.testing.assert_array_equal(a, make_noise(kind, 4000, SR, 1, DISHES,
                                                    cache_dir=tmp_path))
        assert not np.array_equal(a, make_noise(kind, 4000, SR, 2, DISHES, cache_dir=tmp_path))


def test_file_noise_loops_past_its_end() -> None:
    long = make_noise("file", SR * 25, SR, 0, DISHES)  # the file holds 10 s
    assert long.shape == (SR * 25,) and np.all(np.isfinite(long))
    blocks = long.reshape(25, SR).astype(np.float64)
    assert np.all(np.sqrt(np.mean(blocks ** 2, axis=1)) > 0.05)


def test_noise_file_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"nope\.wav"):
        make_noise("file", 100, SR, 0, tmp_path / "nope.wav")
    silent = tmp_path / "silent.wav"
    sf.write(str(silent), np.zeros(SR, np.float32), SR)
    with pytest.raises(ValueError, match=r"silent\.wav"):
        make_noise("file", 100, SR, 0, silent)


def test_noise_path_is_resolved_against_the_profile(cache: Path) -> None:
    prof = profile(noise=Noise(kind="file", snr_db=10.0, path="noise_dishes_10s.wav"))
    r = render(prof=prof, tmp=cache, resolve_path=lambda rel: DATA / rel)
    assert abs(r.snr_db_measured - 10.0) <= 0.5


def test_mix_refuses_a_silent_speech_track() -> None:
    with pytest.raises(ValueError, match="speech"):
        mix_at_snr(Audio(np.zeros(SR, np.float32), SR), np.ones(SR), 10.0)


# --- recorded voice --------------------------------------------------------------------------

@pytest.fixture
def recordings(tmp_path: Path) -> Path:
    folder = tmp_path / "speaker_a"
    sr = 22050
    t = np.arange(int(1.5 * sr)) / sr
    speech = (0.2 * np.sin(2 * np.pi * 180 * t)).astype(np.float32)
    write_wav(folder / "q1_strong.wav",
              Audio(np.concatenate([np.zeros(sr // 2, np.float32), speech,
                                    np.zeros(sr, np.float32)]), sr))
    return tmp_path


def test_recorded_voice_uses_the_file_with_delay_and_tail(recordings: Path, cache: Path) -> None:
    prof = profile(voice=Voice(engine="recorded", voice_id="speaker_a"), response_delay_s=0.3)
    r = render_answer("We shipped it. [um] On time.", prof, 0, answer_id="q1_strong",
                      resolve_path=lambda rel: recordings / rel, cache_dir=cache)
    assert r.engine == "recorded" and r.voice_id == "speaker_a"
    assert [w.word for w in r.words] == ["We", "shipped", "it.", "um", "On", "time."]
    assert r.speech_start_s == pytest.approx(0.3, abs=1e-3)
    assert r.audio.duration_s == pytest.approx(0.3 + 1.5 + 0.04 + 2.0, abs=0.05)


def test_recorded_voice_refuses_pace_and_missing_files(recordings: Path) -> None:
    slow = profile(voice=Voice(engine="recorded", voice_id="speaker_a"), pace=Pace(rate=0.7))
    with pytest.raises(ValueError, match="pace"):
        render_answer("Hi.", slow, 0, answer_id="q1_strong",
                      resolve_path=lambda rel: recordings / rel)
    ok = profile(voice=Voice(engine="recorded", voice_id="speaker_a"))
    with pytest.raises(FileNotFoundError, match="q9_weak"):
        render_answer("Hi.", ok, 0, answer_id="q9_weak", resolve_path=lambda rel: recordings / rel)


def test_recorded_key_follows_the_recording(recordings: Path) -> None:
    prof = profile(voice=Voice(engine="recorded", voice_id="speaker_a"))

    def k() -> str:
        return render_answer("Hi.", prof, 0, answer_id="q1_strong",
                             resolve_path=lambda rel: recordings / rel).render_key

    first = k()
    path = recordings / "speaker_a" / "q1_strong.wav"
    data, sr = sf.read(str(path), dtype="float32")
    sf.write(str(path), data * 0.5, sr, subtype="PCM_16")
    assert k() != first


# --- missing engines -------------------------------------------------------------------------

def test_missing_espeak_names_the_apt_package(monkeypatch) -> None:
    from rig.synth import espeak

    espeak._binary.cache_clear()
    monkeypatch.setattr(espeak.shutil, "which", lambda name: None)
    try:
        with pytest.raises(EngineUnavailable, match="apt-get install espeak-ng"):
            espeak.EspeakEngine("en-us")
    finally:
        espeak._binary.cache_clear()


def test_missing_piper_names_the_extra(monkeypatch) -> None:
    from rig.synth import piper

    piper._load.cache_clear()
    monkeypatch.setitem(sys.modules, "piper", None)
    try:
        with pytest.raises(EngineUnavailable, match=r"pip install -e '\.\[piper\]'"):
            piper.PiperEngine("joe")
    finally:
        piper._load.cache_clear()


def test_espeak_wav_stream_parser_reads_placeholder_sizes() -> None:
    from rig.synth.espeak import parse_wav_stream

    pcm = (np.arange(100, dtype=np.int16) * 100).tobytes()
    header = (b"RIFF" + (0x7FFFF024).to_bytes(4, "little") + b"WAVE" + b"fmt " +
              (16).to_bytes(4, "little") + (1).to_bytes(2, "little") +
              (1).to_bytes(2, "little") + (22050).to_bytes(4, "little") +
              (44100).to_bytes(4, "little") + (2).to_bytes(2, "little") +
              (16).to_bytes(2, "little") + b"data" + (0x7FFFF000).to_bytes(4, "little"))
    samples, rate = parse_wav_stream(header + pcm)
    assert rate == 22050 and samples.dtype == np.float32 and len(samples) == 100
    assert samples[1] == pytest.approx(100 / 32768)
    with pytest.raises(ValueError):
        parse_wav_stream(b"garbage")


# --- street-like and babble noise ----------------------------------------------------------------

def test_street_noise_is_low_heavy_unit_power_and_varies_in_level() -> None:
    x = make_noise("street", SR * 30, SR, 0)
    assert x.dtype == np.float32 and x.shape == (SR * 30,)
    assert np.mean(x.astype(np.float64) ** 2) == pytest.approx(1.0, rel=1e-3)
    p = np.abs(np.fft.rfft(x)) ** 2
    f = np.fft.rfftfreq(len(x), 1 / SR)
    assert p[(f > 40) & (f < 400)].sum() > 10 * p[f > 2000].sum()
    # passing vehicles: the level of 1 s blocks varies by several dB
    blocks = 10 * np.log10(np.mean(x.reshape(30, SR).astype(np.float64) ** 2, axis=1))
    assert blocks.max() - blocks.min() > 3.0


def test_babble_sums_several_cached_talker_tracks(fake_voices, tmp_path: Path) -> None:
    from rig.synth.babble import SENTENCES, talker_rate, talker_texts

    x = make_noise("babble", SR * 5, SR, 0, talkers=5, voices=("hibari:heart", "espeak-ng:en-us"),
                   cache_dir=tmp_path)
    assert x.dtype == np.float32 and np.mean(x.astype(np.float64) ** 2) == pytest.approx(1, 1e-3)
    assert len(list((tmp_path / "babble").glob("*.wav"))) == 5  # one track per talker
    assert set(fake_voices) == {"hibari:heart", "espeak-ng:en-us"}
    calls = [c for e in fake_voices.values() for c in e.calls]
    assert {rate for _, rate in calls} == {talker_rate(i) for i in range(5)}
    assert all(0.85 <= talker_rate(i) <= 1.15 for i in range(16))
    assert {t for t, _ in calls} <= set(SENTENCES) and talker_texts(0) != talker_texts(1)
    # a second draw reads the tracks from the cache and never calls the engines
    n_calls = len(calls)
    make_noise("babble", SR * 5, SR, 1, talkers=5, voices=("hibari:heart", "espeak-ng:en-us"),
               cache_dir=tmp_path)
    assert sum(len(e.calls) for e in fake_voices.values()) == n_calls
    # no holes: every 100 ms of the crowd carries sound
    blocks = np.sqrt(np.mean(x.reshape(50, SR // 10).astype(np.float64) ** 2, axis=1))
    assert blocks.min() > 0.2


def test_babble_voices_are_validated() -> None:
    with pytest.raises(ValueError, match="engine:voice_id"):
        Noise(kind="babble", snr_db=10, voices=("heart",))
    with pytest.raises(ValueError, match="talkers"):
        Noise(kind="babble", snr_db=10, talkers=1)


# --- repetitions and the reference policies ------------------------------------------------------

def test_repetitions_are_exact_seeded_and_said_twice() -> None:
    script = " ".join(f"word{i}," for i in range(100)) + " end."
    dis = Disfluency(repetitions_per_100_words=4.0)
    plans = [make_plan(script, Pauses(), dis, seed) for seed in (0, 0, 1)]
    reps = [[s for s in p if isinstance(s, Chunk) and s.kind == "repetition"] for p in plans]
    assert len(reps[0]) == 4 and plans[0] == plans[1] and plans[0] != plans[2]
    chunks = [s for s in plans[0] if isinstance(s, Chunk)]
    for i, c in enumerate(chunks):
        if c.kind == "repetition":
            assert c.is_filler and "," not in c.text
            assert chunks[i + 1].words[0].startswith(c.text)  # then said as written
    # repetitions and fillers draw from separate streams: adding one leaves the other alone
    both = make_plan(script, Pauses(), Disfluency(fillers_per_100_words=5.0,
                                                  repetitions_per_100_words=4.0), 0)
    only_f = make_plan(script, Pauses(), Disfluency(fillers_per_100_words=5.0), 0)
    assert [s.text for s in both if isinstance(s, Chunk) and s.kind == "filler"] == \
        [s.text for s in only_f if isinstance(s, Chunk) and s.kind == "filler"]


def test_rendered_references_keep_or_drop_the_disfluencies(cache: Path) -> None:
    prof = profile(disfluency=Disfluency(fillers_per_100_words=10.0,
                                         repetitions_per_100_words=10.0))
    r = render(prof=prof, tmp=cache)
    assert r.reference("clean") == reference_text(SCRIPT)
    verbatim = r.reference("verbatim").split()
    assert len(verbatim) == len(r.words) > len(reference_text(SCRIPT).split())
    assert r.count("repetition") == 3 and r.count("filler") == 3 + 1  # + the script's [um]
    assert {w.kind for w in r.words} == {"word", "filler", "repetition"}
    assert all(w.is_filler == (w.kind != "word") for w in r.words)
    with pytest.raises(ValueError, match="clean"):
        r.reference("exact")  # type: ignore[arg-type]


def test_word_timing_kind_defaults_from_the_filler_flag() -> None:
    from rig.synth.base import WordTiming

    assert WordTiming("um", 0, 1, True).kind == "filler"
    assert WordTiming("we", 0, 1).kind == "word"
    assert WordTiming("the", 0, 1, True, "repetition").kind == "repetition"


# --- pace in words per minute ---------------------------------------------------------------------

def test_measure_wpm_leaves_the_deliberate_pauses_out() -> None:
    from rig.synth import measure_wpm
    from rig.synth.base import WordTiming

    words = [WordTiming(f"w{i}", 0.5 + 0.5 * i, 0.9 + 0.5 * i) for i in range(10)]
    assert measure_wpm(words, 0.0) == pytest.approx(60 * 10 / 4.9)
    assert measure_wpm(words, 0.9) == pytest.approx(60 * 10 / 4.0)
    assert measure_wpm([], 0.0) is None


@pytest.mark.parametrize("target", [110.0, 150.0, 230.0])
def test_wpm_target_is_met_on_the_output(cache: Path, target: float) -> None:
    prof = profile(pace=Pace(wpm=target), pauses=Pauses(count=1, pause_s=1.5))
    r = render(prof=prof, tmp=cache)
    assert abs(r.wpm_measured / target - 1) <= 0.03
    assert r.pauses_total_s == pytest.approx(3.0)  # the script's 1.5 s mark + the profile's
    # measured independently: spoken tokens over the span less the plan's silences
    span = r.speech_end_s - r.speech_start_s - r.pauses_total_s
    assert 60 * len(r.words) / span == pytest.approx(r.wpm_measured)
    assert r.rate is not None and 0.5 <= r.rate <= 2.0
    again = render(prof=prof, tmp=cache)
    np.testing.assert_array_equal(again.audio.samples, r.audio.samples)


def test_rate_profiles_record_their_measured_pace(cache: Path) -> None:
    normal = render(tmp=cache)
    slow = render(prof=profile(pace=Pace(rate=0.7)), tmp=cache)
    assert normal.rate == 1.0 and slow.rate == 0.7
    assert slow.wpm_measured < 0.85 * normal.wpm_measured


def test_unreachable_wpm_target_raises(cache: Path) -> None:
    from rig.synth import PaceError

    class Deaf(FakeEngine):
        def synthesize(self, text: str, rate: float) -> Audio:
            return super().synthesize(text, 1.0)  # ignores the rate

    natural = render(engine=Deaf(), tmp=cache).wpm_measured
    # beyond what time-stretching may do (at most 1.4 times longer)
    with pytest.raises(PaceError, match="not reached"):
        render(prof=profile(pace=Pace(wpm=natural * 0.6)), engine=Deaf(), tmp=cache)
    # within reach of the stretch: the rate does nothing, the stretch does the rest
    close = render(prof=profile(pace=Pace(wpm=natural * 1.15)), engine=Deaf(), tmp=cache)
    assert abs(close.wpm_measured / (natural * 1.15) - 1) <= 0.03
    assert close.stretch < 0.95


def test_a_one_or_two_word_script_takes_the_closest_render_not_a_pace_error(cache: Path) -> None:
    """Over one or two words a wpm target is the length of a word (rig.synth.pace
    MIN_PACE_WORDS): the closest render is kept and its measured pace recorded; three words
    are held to the target as before."""
    from rig.synth import PaceError
    from rig.synth.pace import MIN_PACE_WORDS

    class Deaf(FakeEngine):
        def synthesize(self, text: str, rate: float) -> Audio:
            return super().synthesize(text, 1.0)  # ignores the rate

    assert MIN_PACE_WORDS == 3
    for script in ("Absolutely.", "Yes, immediately."):
        natural = render(script, engine=Deaf(), tmp=cache).wpm_measured
        r = render(script, prof=profile(pace=Pace(wpm=natural * 2)), engine=Deaf(), tmp=cache)
        assert r.wpm_measured is not None and r.wpm_measured < natural * 2 * 0.9
    natural = render("Yes, right away.", engine=Deaf(), tmp=cache).wpm_measured
    with pytest.raises(PaceError, match="not reached"):
        render("Yes, right away.", prof=profile(pace=Pace(wpm=natural * 2)), engine=Deaf(),
               tmp=cache)


@pytest.mark.parametrize("factor", [0.75, 0.9, 1.2, 1.4])
def test_time_stretch_changes_duration_not_pitch(factor: float) -> None:
    from rig.synth import time_stretch

    t = np.arange(SR) / SR
    x = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    y = time_stretch(x, SR, factor)
    assert y.dtype == np.float32 and len(y) == round(SR * factor)
    mid = y[len(y) // 4: 3 * len(y) // 4].astype(np.float64)
    spectrum = np.abs(np.fft.rfft(mid * np.hanning(len(mid))))
    peak_hz = np.fft.rfftfreq(len(mid), 1 / SR)[np.argmax(spectrum)]
    assert peak_hz == pytest.approx(220, abs=3)
    assert np.sqrt(np.mean(mid ** 2)) == pytest.approx(0.3 / np.sqrt(2), rel=0.05)
    np.testing.assert_array_equal(time_stretch(x, SR, 1.0), x)


def test_pace_takes_a_rate_or_a_wpm_not_both() -> None:
    assert Pace().rate == 1.0 and Pace(wpm=120).rate is None
    with pytest.raises(ValueError, match="not both"):
        Pace(rate=1.1, wpm=120)
    with pytest.raises(ValueError):
        Pace(wpm=20)


def test_recorded_voice_refuses_a_wpm_target(recordings: Path) -> None:
    prof = profile(voice=Voice(engine="recorded", voice_id="speaker_a"), pace=Pace(wpm=150))
    with pytest.raises(ValueError, match="pace"):
        render_answer("Hi.", prof, 0, answer_id="q1_strong",
                      resolve_path=lambda rel: recordings / rel)


def test_render_records_engine_and_noise_facts(cache: Path) -> None:
    r = render(prof=profile(noise=Noise(kind="white", snr_db=12.0)), tmp=cache)
    assert r.engine_version == "1" and r.noise_kind == "white" and r.rate == 1.0
    assert r.wpm_measured is not None and r.pauses_total_s == pytest.approx(1.5)


def test_mbrola_voice_without_mbrola_names_the_packages(monkeypatch) -> None:
    from rig.synth import espeak

    monkeypatch.setattr(espeak.shutil, "which",
                        lambda name: None if name == "mbrola" else "/usr/bin/" + name)
    espeak._binary.cache_clear()
    monkeypatch.setattr(espeak.subprocess, "run", lambda *a, **k: type(
        "P", (), {"stdout": "eSpeak NG text-to-speech: 1.51", "returncode": 0})())
    try:
        with pytest.raises(EngineUnavailable, match="apt-get install mbrola mbrola-en1"):
            espeak.MbrolaEngine("en1")
        with pytest.raises(EngineUnavailable, match="mbrola-de1"):
            espeak.EspeakEngine("mb-de1")
        monkeypatch.setattr(espeak.shutil, "which", lambda name: "/usr/bin/" + name)
        monkeypatch.setattr(espeak, "mbrola_database", lambda voice: None)
        with pytest.raises(EngineUnavailable, match="database"):
            espeak.MbrolaEngine("us1")
    finally:
        espeak._binary.cache_clear()


def test_a_noise_file_shorter_than_a_second_is_refused(tmp_path: Path) -> None:
    short = tmp_path / "short.wav"
    sf.write(str(short), np.random.default_rng(0).normal(0, 0.1, SR // 10).astype(np.float32), SR)
    with pytest.raises(ValueError, match=r"short\.wav.*0\.10 s long"):
        make_noise("file", 100, SR, 0, short)
