"""The engine registry: a profile's ``voice.engine`` name to a loaded synthesizer.

Each engine lives in its own module and is imported only when asked for, so an engine that is
not installed costs nothing until a profile names it: ``hibari`` (:mod:`rig.synth.hibari`),
``piper`` (:mod:`rig.synth.piper`), ``espeak-ng`` and ``mbrola`` (:mod:`rig.synth.espeak`),
``kokoro`` (:mod:`rig.synth.kokoro`).
``recorded`` is not a synthesizer (:mod:`rig.synth.recorded` reads recordings). ``coqui``
(:mod:`rig.synth.coqui`) loads a model from files the profile names: :func:`engine_for_voice`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from rig.synth.base import Engine

#: The engine names :func:`get_engine` knows.
ENGINES: tuple[str, ...] = ("hibari", "piper", "espeak-ng", "mbrola", "kokoro")


@lru_cache(maxsize=8)
def get_engine(engine: str, voice_id: str) -> Engine:
    """The engine for a profile's voice, loaded once per process.

    Raises:
        EngineUnavailable: the engine or voice is not installed (the message says how).
        ValueError: an unknown engine (``recorded`` is not a synthesizer).
    """
    if engine == "hibari":
        from rig.synth.hibari import HibariEngine
        return HibariEngine(voice_id)
    if engine == "piper":
        from rig.synth.piper import PiperEngine
        return PiperEngine(voice_id)
    if engine == "espeak-ng":
        from rig.synth.espeak import EspeakEngine
        return EspeakEngine(voice_id)
    if engine == "mbrola":
        from rig.synth.espeak import MbrolaEngine
        return MbrolaEngine(voice_id)
    if engine == "kokoro":
        from rig.synth.kokoro import KokoroEngine
        return KokoroEngine(voice_id)
    if engine == "coqui":
        raise ValueError("the coqui engine loads the files a profile's voice names: "
                         "use engine_for_voice(profile.voice, resolve_path)")
    raise ValueError(f"no synthesis engine {engine!r}; use {', '.join(ENGINES)}")


def engine_for_voice(voice, resolve_path: Callable[[str], Path] | None = None) -> Engine:
    """The engine of a profile's ``voice`` block: :func:`get_engine` for a named voice,
    :func:`rig.synth.coqui.coqui_engine` for ``coqui`` (its paths through ``resolve_path``,
    relative to the profile file).

    Raises:
        EngineUnavailable, ValueError: as :func:`get_engine`; ConfigError: a coqui file is
            missing or wrong.
    """
    if voice.engine == "coqui":
        from rig.synth.coqui import coqui_engine
        return coqui_engine(voice, resolve_path)
    return get_engine(voice.engine, voice.voice_id)
