"""The engine registry: a profile's ``voice.engine`` name to a loaded synthesizer.

Each engine lives in its own module and is imported only when asked for, so an engine that is
not installed costs nothing until a profile names it: ``hibari`` (:mod:`rig.synth.hibari`),
``piper`` (:mod:`rig.synth.piper`), ``espeak-ng`` and ``mbrola`` (:mod:`rig.synth.espeak`),
``kokoro`` (:mod:`rig.synth.kokoro`).
``recorded`` is not a synthesizer (:mod:`rig.synth.recorded` reads recordings).
"""

from __future__ import annotations

from functools import lru_cache

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
    raise ValueError(f"no synthesis engine {engine!r}; use {', '.join(ENGINES)}")
