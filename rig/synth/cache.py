"""The on-disk render cache: where it lives, atomic writes, and speech renders by key.

A speech render is stored as ``<key>.wav`` (float32, bit-exact) plus ``<key>.json`` (the key,
the engine and the word timings), each written atomically (a temporary file in the same
folder, then :func:`os.replace`), so concurrent campaigns never read half a file. A damaged
or mismatched entry reads as missing and is rendered again. The key is the caller's
(:func:`rig.synth.render.render_key`); babble talker tracks live in ``babble/`` below the
same folder (:mod:`rig.synth.babble`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import soundfile as sf

from rig.audio import Audio
from rig.paths import atomic_write
from rig.synth.base import Engine, WordTiming

#: Bump when the rendering code changes what it produces (invalidates the cache).
SYNTH_VERSION = "1"


def default_cache_dir() -> Path:
    """``$RIG_AUDIO_CACHE``, else ``audio/cache`` in the repository (or the working folder
    when rig is installed outside one)."""
    env = os.environ.get("RIG_AUDIO_CACHE")
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[2]
    base = repo if (repo / "pyproject.toml").is_file() else Path.cwd()
    return base / "audio" / "cache"




def _paths(cache_dir: Path, key: str) -> tuple[Path, Path]:
    return cache_dir / f"{key}.wav", cache_dir / f"{key}.json"


def load_render(cache_dir: Path, key: str) -> tuple[Audio, list[WordTiming]] | None:
    """The cached speech render of ``key`` (audio, word timings), or None when there is none
    or it is damaged."""
    wav, meta = _paths(cache_dir, key)
    if not (wav.is_file() and meta.is_file()):
        return None
    try:
        info = json.loads(meta.read_text(encoding="utf-8"))
        data, sr = sf.read(str(wav), dtype="float32", always_2d=False)
        if info.get("key") != key or data.ndim != 1:
            return None
        words = [WordTiming(*w) for w in info["words"]]  # [word, start, end, filler(, kind)]
        return Audio(np.ascontiguousarray(data, np.float32), int(sr)), words
    except (OSError, ValueError, KeyError, TypeError, RuntimeError):
        return None  # a damaged entry is rendered again and overwritten


def store_render(cache_dir: Path, key: str, audio: Audio, words: list[WordTiming],
                 engine: Engine) -> None:
    """Write a speech render under ``key`` (creates ``cache_dir``)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    wav, meta = _paths(cache_dir, key)
    atomic_write(wav, lambda p: sf.write(str(p), audio.samples, audio.sample_rate_hz,
                                         subtype="FLOAT", format="WAV"))
    info = {"key": key, "synth_version": SYNTH_VERSION, "engine": engine.name,
            "engine_version": engine.version, "voice_id": engine.voice_id,
            "words": [[w.word, w.start_s, w.end_s, w.is_filler, w.kind] for w in words]}
    atomic_write(meta, lambda p: p.write_text(json.dumps(info), encoding="utf-8"))
