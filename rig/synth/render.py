"""Rendering a scripted answer under a caller profile: plan, speak, time, cache, add noise.

Order of operations (every step deterministic given the seed):

1. :func:`rig.synth.plan.make_plan` turns the script, the profile's pauses and its fillers into
   chunks of text and exact silences.
2. Each chunk is synthesized on its own (:class:`rig.synth.base.Engine`), resampled to the
   output rate (soxr), trimmed of its leading and trailing silence, and any silence inside it
   is capped at ``MAX_CHUNK_SILENCE_S`` (at rate 0.5 hibari stretches a comma to 0.94 s,
   longer than an 800 ms endpointing timer: pace and pauses must stay separate dimensions).
   Chunks are joined with a short natural gap (``SENTENCE_GAP_S`` after a sentence,
   ``PHRASE_GAP_S`` inside one) unless a pause stands between them, in which case the pause
   alone is the silence. At a rate or stretch other than 1.0, the pauses inside each chunk
   first get back the length they have at the engine's natural pace
   (:func:`rig.synth.pauses.keep_pauses`): pace changes the speech rate, not the pauses.
   A ``pace.wpm`` target is met on the output (:mod:`rig.synth.pace`): the words per minute
   of the render are measured and the engine's rate adjusted (then, when the rate alone
   cannot get there, the chunks time-stretched) until within 3% of the target; every try is
   a cached render of its own. A chunk in a code-switched span (``[lang en] ... [/lang]``,
   :mod:`rig.script`) is synthesized by the profile's ``span_voices`` voice of that language
   (the profile's own voice when it names none); the span voices enter the render key.
3. ``response_delay_s`` of silence goes before, ``trailing_silence_s`` after.
4. The whole render is scaled to an active speech level of ``TARGET_LEVEL_DB`` dBFS (peaks
   kept at or below ``PEAK_LIMIT``), so engines and recordings reach the line at one level.
5. That speech render is cached on disk as ``<render_key>.wav`` (float32, bit-exact) plus
   ``<render_key>.json`` (word timings), written atomically (:mod:`rig.synth.cache`).
   Recorded speech is not cached (reading the recording costs what reading the cache would).
6. Noise is mixed over the whole clip at the profile's SNR (:mod:`rig.synth.noise`; babble
   talker tracks are cached beside the renders, in ``babble/``).

Word timings: a chunk's boundaries are exact (it is synthesized alone and trimmed), so every
word's chunk is known to the sample. Inside a chunk the trimmed speech span is shared among its
words in proportion to their length in characters; that is an approximation (a long word with
short phonemes, or a comma pause, shifts the internal boundaries by a few hundred ms at most,
never across a chunk boundary, hence never across a pause). Recorded speech has no chunks: its
words share the whole trimmed speech span the same way.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np

from rig.audio import Audio, active_speech_power
from rig.profiles.profile import Profile
from rig.synth.base import (
    Engine,
    RenderedAnswer,
    WordTiming,
    cap_silences,
    speech_bounds,
    trim,
)
from rig.synth.cache import SYNTH_VERSION, default_cache_dir, load_render, store_render
from rig.synth.engines import engine_for_voice
from rig.synth.noise import add_noise
from rig.synth.pace import (
    DEFAULT_RATE_RANGE,
    fit_wpm,
    inner_pauses_s,
    measure_wpm,
    time_stretch,
)
from rig.synth.pauses import MIN_PAUSE_S, PAUSE_FLOOR_DB, keep_pauses
from rig.synth.plan import PHRASE_GAP_S, SENTENCE_GAP_S, Chunk, Silence, Step, make_plan

#: Active speech level of every render, dBFS (float scale: 0 dB is an RMS of 1.0).
TARGET_LEVEL_DB = -20.0
#: Largest absolute sample of a clean render after levelling (about -1 dBFS).
PEAK_LIMIT = 0.89
#: Longest silence left inside one chunk (s): a slow rate must not stretch a comma into a
#: pause as long as an endpointing timer; deliberate pauses are the ``pauses`` dimension's.
MAX_CHUNK_SILENCE_S = 0.5


def _sha256(payload: dict) -> str:
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _step_json(step: Step) -> list:
    if isinstance(step, Silence):
        return ["silence", step.duration_s]
    out = ["chunk", step.text, step.is_filler, step.ends_sentence]
    out = [*out, "repetition"] if step.kind == "repetition" else out
    return [*out, "lang", step.language] if step.language else out


SpanEngines = Mapping[str, Engine]


def _engine_of(step: Chunk, engine: Engine, span_engines: SpanEngines) -> Engine:
    """The engine that speaks a chunk: its span language's, else the profile's voice."""
    return span_engines.get(step.language, engine) if step.language else engine


def render_key(plan: list[Step], engine: Engine, rate: float, response_delay_s: float,
               trailing_silence_s: float, sample_rate_hz: int, stretch: float = 1.0,
               span_engines: SpanEngines | None = None) -> str:
    """sha256 of everything that shapes a synthesized render.

    The plan stands for the script, the extra pauses and the fillers with their seed: two
    inputs with the same plan render the same audio, and a seed that places no filler does
    not change the key. A time-stretch enters the key only when it is not 1.0 (renders made
    before time-stretching existed keep their keys).
    """
    extra = {"stretch": float(stretch), "stretch_version": "wsola-1"} if stretch != 1.0 else {}
    used = {s.language for s in plan if isinstance(s, Chunk) and s.language}
    spans = {lang: [e.name, e.voice_id, e.version]
             for lang, e in sorted((span_engines or {}).items()) if lang in used}
    if spans:  # a code-switched span spoken by another voice (plans without spans: as before)
        extra["span_voices"] = spans
    if stretch != 1.0 or rate != 1.0:
        extra["pauses_kept"] = f"v1 {PAUSE_FLOOR_DB:g} dB {MIN_PAUSE_S:g} s"
    return _sha256({**extra,
        "synth_version": SYNTH_VERSION, "engine": engine.name, "engine_version": engine.version,
        "voice_id": engine.voice_id, "rate": float(rate), "plan": [_step_json(s) for s in plan],
        "sentence_gap_s": SENTENCE_GAP_S, "phrase_gap_s": PHRASE_GAP_S,
        "response_delay_s": float(response_delay_s),
        "trailing_silence_s": float(trailing_silence_s), "sample_rate_hz": int(sample_rate_hz),
        "level_db": TARGET_LEVEL_DB, "peak_limit": PEAK_LIMIT,
        "max_chunk_silence_s": MAX_CHUNK_SILENCE_S,
    })


_WORD_KIND = {"words": "word", "filler": "filler", "repetition": "repetition"}


def _share_by_chars(words: tuple[str, ...], start: int, end: int, sr: int,
                    is_filler: bool, kind: str = "words") -> list[WordTiming]:
    lengths = np.array([max(1, len(w)) for w in words], np.float64)
    edges = start + (end - start) * np.concatenate([[0.0], np.cumsum(lengths)]) / lengths.sum()
    return [WordTiming(w, float(edges[i]) / sr, float(edges[i + 1]) / sr, is_filler,
                       _WORD_KIND[kind]) for i, w in enumerate(words)]


def _level(samples: np.ndarray, sample_rate_hz: int) -> np.ndarray:
    power = active_speech_power(samples, sample_rate_hz)
    if power <= 0:
        raise ValueError("the render holds no audible speech")
    gain = 10 ** (TARGET_LEVEL_DB / 20) / np.sqrt(power)
    peak = float(np.max(np.abs(samples)))
    gain = min(gain, PEAK_LIMIT / peak)
    return (samples * gain).astype(np.float32)


def _synthesize(texts: list[str], engine: Engine, rate: float) -> list[Audio]:
    batch = getattr(engine, "synthesize_all", None)
    return batch(texts, rate) if batch else [engine.synthesize(t, rate) for t in texts]


def _speak(plan: list[Step], engine: Engine, rate: float, response_delay_s: float,
           trailing_silence_s: float, sr: int, stretch: float = 1.0,
           span_engines: SpanEngines | None = None) -> tuple[Audio, list[WordTiming]]:
    spans = span_engines or {}
    chunks = list(dict.fromkeys((s.text, s.language) for s in plan if isinstance(s, Chunk)))
    by_engine: dict[int, tuple[Engine, list[tuple[str, str | None]]]] = {}
    for text, lang in chunks:
        eng = _engine_of(Chunk(text, (), language=lang), engine, spans)
        by_engine.setdefault(id(eng), (eng, []))[1].append((text, lang))
    audio_of: dict[tuple[str, str | None], np.ndarray] = {}
    for eng, keys in by_engine.values():
        spoken = _synthesize([t for t, _ in keys], eng, rate)
        audio_of.update({k: trim(a.resample(sr)).samples
                         for k, a in zip(keys, spoken, strict=True)})
    if stretch != 1.0:
        audio_of = {t: time_stretch(a, sr, stretch) for t, a in audio_of.items()}
    if stretch != 1.0 or rate != 1.0:  # pace changes the speech, not its pauses
        audio_of = {t: keep_pauses(a, sr, stretch / rate) for t, a in audio_of.items()}
    audio_of = {t: cap_silences(a, sr, MAX_CHUNK_SILENCE_S) for t, a in audio_of.items()}

    parts = [np.zeros(round(response_delay_s * sr), np.float32)]
    pos = len(parts[0])
    words: list[WordTiming] = []
    prev: Chunk | None = None  # the chunk just before, when no silence came in between
    for step in plan:
        if isinstance(step, Silence):
            part, prev = np.zeros(round(step.duration_s * sr), np.float32), None
        else:
            if prev is not None:
                gap_s = SENTENCE_GAP_S if prev.ends_sentence else PHRASE_GAP_S
                gap = np.zeros(round(gap_s * sr), np.float32)
                parts.append(gap)
                pos += len(gap)
            part, prev = audio_of[(step.text, step.language)], step
            words += _share_by_chars(step.words, pos, pos + len(part), sr, step.is_filler,
                                     step.kind)
        parts.append(part)
        pos += len(part)
    parts.append(np.zeros(round(trailing_silence_s * sr), np.float32))
    samples = _level(np.concatenate(parts), sr)
    return Audio(samples, sr), words


def _render_recorded(script: str, profile: Profile, answer_id: str,
                     resolve_path: Callable[[str], Path] | None, trailing_silence_s: float,
                     sr: int) -> tuple[Audio, list[WordTiming], str]:
    from rig.profiles.settings import Disfluency, Pace, Pauses
    from rig.synth.recorded import file_sha256, load_recording, recording_path

    unusable = [name for name, value, neutral in (
        ("pace", profile.pace, Pace()), ("pauses", profile.pauses, Pauses()),
        ("disfluency", profile.disfluency, Disfluency())) if value != neutral]
    if unusable:
        raise ValueError(f"profile {profile.profile_id!r}: a recorded voice is used as spoken; "
                         f"{', '.join(unusable)} cannot be applied to it")
    path = recording_path(profile.voice.voice_id, answer_id, resolve_path)
    rec = load_recording(path, sr).samples
    start, end = speech_bounds(rec, sr)
    if end <= start:
        raise ValueError(f"{path}: the recording is silent")
    delay = round(profile.response_delay_s * sr)
    speech = rec[start:end]
    samples = np.concatenate([np.zeros(delay, np.float32), speech,
                              np.zeros(round(trailing_silence_s * sr), np.float32)])
    spoken = [s for s in make_plan(script, Pauses(), Disfluency(), 0) if isinstance(s, Chunk)]
    flat = [(w, s.is_filler) for s in spoken for w in s.words]
    lengths = np.array([max(1, len(w)) for w, _ in flat], np.float64)
    edges = delay + len(speech) * np.concatenate([[0.0], np.cumsum(lengths)]) / lengths.sum()
    words = [WordTiming(w, float(edges[i]) / sr, float(edges[i + 1]) / sr, f)
             for i, (w, f) in enumerate(flat)]
    key = _sha256({"synth_version": SYNTH_VERSION, "engine": "recorded",
                   "voice_id": profile.voice.voice_id, "answer_id": answer_id,
                   "recording_sha256": file_sha256(path), "script": script,
                   "response_delay_s": profile.response_delay_s,
                   "trailing_silence_s": trailing_silence_s, "sample_rate_hz": sr,
                   "level_db": TARGET_LEVEL_DB, "peak_limit": PEAK_LIMIT})
    return Audio(_level(samples, sr), sr), words, key


def _speak_cached(plan: list[Step], eng: Engine, rate: float, profile: Profile,
                  trailing_silence_s: float, sr: int, folder: Path, use_cache: bool,
                  stretch: float = 1.0, span_engines: SpanEngines | None = None
                  ) -> tuple[Audio, list[WordTiming], str]:
    key = render_key(plan, eng, rate, profile.response_delay_s, trailing_silence_s, sr,
                     stretch, span_engines)
    cached = load_render(folder, key) if use_cache else None
    if cached is not None:
        return cached[0], cached[1], key
    audio, words = _speak(plan, eng, rate, profile.response_delay_s, trailing_silence_s, sr,
                          stretch, span_engines)
    if use_cache:
        store_render(folder, key, audio, words, eng)
    return audio, words, key


def _speak_at_wpm(plan: list[Step], eng: Engine, profile: Profile, trailing_silence_s: float,
                  sr: int, folder: Path, use_cache: bool,
                  span_engines: SpanEngines | None = None
                  ) -> tuple[Audio, list[WordTiming], str, float, float]:
    """Render at the rate (and, failing that, the time-stretch) whose measured words per
    minute meets ``profile.pace.wpm`` (:func:`rig.synth.pace.fit_wpm`); every try is cached.

    Raises:
        PaceError: the best render is more than 10% off the target (a script of at least
            :data:`rig.synth.pace.MIN_PACE_WORDS` spoken tokens; a shorter one takes the
            closest render).
    """
    pauses_s = inner_pauses_s(plan)
    n_words = sum(len(step.words) for step in plan if isinstance(step, Chunk))

    def attempt(rate: float, stretch: float):
        audio, words, key = _speak_cached(plan, eng, rate, profile, trailing_silence_s, sr,
                                          folder, use_cache, stretch, span_engines)
        return (audio, words, key), measure_wpm(words, pauses_s)

    (audio, words, key), rate, stretch, _ = fit_wpm(
        attempt, float(profile.pace.wpm), getattr(eng, "rate_range", DEFAULT_RATE_RANGE),
        f"{eng.name}:{eng.voice_id}", n_words)
    return audio, words, key, rate, stretch


def render_speech(script: str, profile: Profile, seed: int, *, answer_id: str = "",
                  resolve_path: Callable[[str], Path] | None = None,
                  cache_dir: Path | None = None, trailing_silence_s: float = 2.0,
                  sample_rate_hz: int = 16000, engine: Engine | None = None,
                  use_cache: bool = True) -> RenderedAnswer:
    """The clean speech render (no noise; ``snr_db_measured`` is None). Arguments as for
    :func:`render_answer`; ``use_cache=False`` neither reads nor writes the cache."""
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    pauses_s, rate, stretch, version = 0.0, None, 1.0, ""
    if profile.voice.engine == "recorded" and engine is None:
        audio, words, key = _render_recorded(script, profile, answer_id, resolve_path,
                                             trailing_silence_s, sample_rate_hz)
        name, voice_id, version = "recorded", profile.voice.voice_id, "recording"
    else:
        eng = engine or engine_for_voice(profile.voice, resolve_path)
        plan = make_plan(script, profile.pauses, profile.disfluency, seed)
        used = {s.language for s in plan if isinstance(s, Chunk) and s.language}
        spans = {lang: engine_for_voice(v, resolve_path)
                 for lang, v in profile.span_voices.items() if lang in used}
        pauses_s = inner_pauses_s(plan)
        folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        if profile.pace.wpm is not None:
            audio, words, key, rate, stretch = _speak_at_wpm(
                plan, eng, profile, trailing_silence_s, sample_rate_hz, folder, use_cache,
                spans)
        else:
            rate = float(profile.pace.rate)
            audio, words, key = _speak_cached(plan, eng, rate, profile, trailing_silence_s,
                                              sample_rate_hz, folder, use_cache, stretch,
                                              spans)
        name, voice_id, version = eng.name, eng.voice_id, eng.version
    spoken = [w for w in words if w.end_s > w.start_s] or words
    return RenderedAnswer(audio=audio, words=tuple(words), speech_start_s=spoken[0].start_s,
                          speech_end_s=spoken[-1].end_s, snr_db_measured=None, engine=name,
                          voice_id=voice_id, render_key=key, engine_version=version,
                          rate=rate, stretch=stretch, wpm_measured=measure_wpm(words, pauses_s),
                          pauses_total_s=pauses_s)


def render_answer(script: str, profile: Profile, seed: int, *, answer_id: str = "",
                  resolve_path: Callable[[str], Path] | None = None,
                  cache_dir: Path | None = None, trailing_silence_s: float = 2.0,
                  sample_rate_hz: int = 16000, engine: Engine | None = None) -> RenderedAnswer:
    """Render ``script`` as ``profile``'s caller would say it, with the profile's noise.

    Args:
        script: the answer script, with ``[pause 1.2s]``, ``[um]`` and ``[lang en]`` marks.
        profile: voice, pace, pauses, response delay, fillers and noise to apply (the channel is
            applied later, by :mod:`rig.channel`).
        seed: the call's repeat seed (>= 0): places the profile's fillers and repetitions and
            draws the noise.
        answer_id: finds the recording of a ``recorded`` voice (``<voice_id>/<answer_id>.wav``).
        resolve_path: turns a path named in the profile (noise file, recording folder) into a
            file path, usually ``ProfileSet.resolve_path`` bound to the profile; default: as
            given, relative to the working folder.
        cache_dir: speech render cache; default :func:`rig.synth.cache.default_cache_dir`.
        trailing_silence_s: silence after the last word (s), so a VAD sees the turn end.
        sample_rate_hz: output rate (soxr resampling).
        engine: a synthesizer to use instead of the profile's (tests use a fake).

    Returns:
        :class:`RenderedAnswer`: float32 mono audio at ``sample_rate_hz`` and the word timings
        (every clean reference word in order, plus fillers).

    Raises:
        ValueError: a bad script mark, pauses that cannot be placed, a silent render, or
            pace/pauses/fillers asked of a recorded voice.
        PaceError: (a ValueError) a ``wpm`` target more than 10% out of the engine's reach.
        EngineUnavailable: the profile's engine or voice (or a babble voice) is not installed.
        FileNotFoundError: a missing recording or noise file (named).
    """
    speech = render_speech(script, profile, seed, answer_id=answer_id, resolve_path=resolve_path,
                           cache_dir=cache_dir, trailing_silence_s=trailing_silence_s,
                           sample_rate_hz=sample_rate_hz, engine=engine)
    audio, snr = add_noise(speech.audio, profile.noise, seed, resolve_path, cache_dir=cache_dir)
    return replace(speech, audio=audio, snr_db_measured=snr, noise_kind=profile.noise.kind)
