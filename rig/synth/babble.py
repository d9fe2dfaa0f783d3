"""Babble: the background chatter of several people, built from synthesized voices.

Talker ``i`` of ``talkers`` speaks with voice ``voices[i % len(voices)]`` ("engine:voice_id"),
at its own rate (0.85 ... 1.15 of natural) and from its own starting
place in a fixed list of neutral sentences (:data:`SENTENCES`, nothing an interview answer
would contain). Each talker's track is synthesized once, trimmed, with the silences inside it
capped at 0.15 s so that the crowd has no holes, levelled to unit power and cached
(``<cache>/babble/<sha256>.wav``). A call's babble sums every talker's track looped from an
offset drawn with the call's noise generator, so the babble is a pure function of the seed and
differs between repeats. Several voices are synthetic and some come from one engine: this is
babble-like noise (speech spectrum, speech-like modulation), not a recording of a crowd; for
that, mix a recording with ``kind: file``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import soundfile as sf

from rig.synth.base import cap_silences, trim
from rig.synth.cache import atomic_write, default_cache_dir
from rig.synth.engines import get_engine

#: Bump when the babble construction changes (invalidates the cached tracks).
BABBLE_VERSION = "1"
#: Silences inside a talker's track are capped at this (s).
MAX_GAP_S = 0.15
#: Sentences per talker track.
SENTENCES_PER_TALKER = 6

SENTENCES: tuple[str, ...] = (
    "The bus was late again this morning, so I walked the last few blocks.",
    "Could you pass me the menu when you have a second?",
    "They are painting the house next door a very bright shade of green.",
    "I think the game starts at seven, but we should get there early.",
    "My sister found a small bakery near the station that opens at six.",
    "We ran out of coffee filters, so put them on the list for Saturday.",
    "The weather report said rain in the afternoon and wind after dark.",
    "Have you seen the new bridge they built over the river last spring?",
    "He keeps a notebook of every bird he has seen from the kitchen window.",
    "Let's meet by the fountain and decide where to have lunch.",
    "The library moved the travel books upstairs next to the old maps.",
    "Somebody left a blue umbrella on the train this morning.",
)


def talker_rate(index: int) -> float:
    """Rate multiplier of talker ``index``: 0.85-1.15, spread by the golden ratio."""
    return round(0.85 + 0.3 * ((index * 0.6180339887) % 1.0), 3)


def talker_texts(index: int) -> list[str]:
    start = (index * 5) % len(SENTENCES)
    return [SENTENCES[(start + k) % len(SENTENCES)] for k in range(SENTENCES_PER_TALKER)]


def talker_track(voice: str, index: int, sample_rate_hz: int,
                 cache_dir: Path | None) -> np.ndarray:
    """Talker ``index``'s track: float32, unit power, at ``sample_rate_hz`` (cached).

    Raises:
        EngineUnavailable: the voice's engine is not installed.
    """
    engine_name, _, voice_id = voice.partition(":")
    engine = get_engine(engine_name, voice_id)
    rate, texts = talker_rate(index), talker_texts(index)
    key = hashlib.sha256(json.dumps({
        "babble_version": BABBLE_VERSION, "engine": engine.name, "version": engine.version,
        "voice_id": engine.voice_id, "rate": rate, "texts": texts, "sr": sample_rate_hz,
        "max_gap_s": MAX_GAP_S}, sort_keys=True).encode()).hexdigest()
    folder = (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / "babble"
    path = folder / f"{key}.wav"
    if path.is_file():
        try:
            data, sr = sf.read(str(path), dtype="float32", always_2d=False)
            if sr == sample_rate_hz and data.ndim == 1 and len(data):
                return np.ascontiguousarray(data, np.float32)
        except (OSError, RuntimeError, ValueError):
            pass  # a damaged entry is synthesized again
    parts = []
    gap = np.zeros(round(0.12 * sample_rate_hz), np.float32)
    for text in texts:
        spoken = trim(engine.synthesize(text, rate).resample(sample_rate_hz)).samples
        parts += [spoken, gap]
    track = cap_silences(np.concatenate(parts), sample_rate_hz, MAX_GAP_S)
    power = float(np.mean(np.square(track, dtype=np.float64)))
    track = (track / np.sqrt(power)).astype(np.float32) if power > 0 else track
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda p: sf.write(str(p), track, sample_rate_hz, subtype="FLOAT",
                                          format="WAV"))
    return track


def babble_noise(n: int, sample_rate_hz: int, rng: np.random.Generator, talkers: int,
                 voices: tuple[str, ...], cache_dir: Path | None = None) -> np.ndarray:
    """``n`` samples of babble, float32, unit mean power (see the module docstring)."""
    out = np.zeros(n, np.float64)
    for i in range(talkers):
        track = talker_track(voices[i % len(voices)], i, sample_rate_hz, cache_dir)
        start = int(rng.integers(len(track)))
        out += np.take(track, (start + np.arange(n)) % len(track))
    p = float(np.mean(out ** 2)) if n else 0.0
    return (out / np.sqrt(p)).astype(np.float32) if p > 0 else out.astype(np.float32)

