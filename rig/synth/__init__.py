"""Synthesis: a scripted answer rendered under a caller profile.

    from rig.synth import render_answer
    r = render_answer(answer.script, profile, seed=0, answer_id=answer.answer_id,
                      resolve_path=lambda rel: profiles.resolve_path(profile, rel))
    r.audio          # Audio: float32 mono (n,), 16 kHz, noise mixed in
    r.words          # WordTiming per clean reference word (+ fillers), seconds into r.audio

Engines (one module each): ``hibari`` (default, Apache-2.0), ``piper`` (GPL extra:
``pip install -e '.[piper]'``), ``espeak`` (espeak-ng program: ``apt-get install espeak-ng``),
``mbrola`` (MBROLA diphone voices through espeak-ng, when installed), ``recorded`` (a folder of
human recordings). ``noise`` mixes white, pink, babble (:mod:`rig.synth.babble`), street-like or
file noise at an SNR measured on active speech. ``pace`` measures words per minute on a render
and meets a ``wpm`` target (engine rate, then WSOLA time-stretching). See
:mod:`rig.synth.render` for the order of operations and the word timing approximation.

Modules: ``base`` (the values returned, the engine interface, silence trimming), ``engines``
(the registry: engine name to a loaded synthesizer), ``plan`` (script, pauses and fillers to
chunks and silences), ``render`` (the render of one answer), ``cache`` (the on-disk render
cache), ``pace``, ``noise``, ``babble``, and one module per engine.
"""

from rig.synth.base import Engine, RenderedAnswer, WordTiming
from rig.synth.cache import SYNTH_VERSION, default_cache_dir
from rig.synth.engines import engine_for_voice, get_engine
from rig.synth.pace import PaceError, measure_wpm, time_stretch
from rig.synth.render import render_answer, render_speech

__all__ = [
    "SYNTH_VERSION",
    "Engine",
    "PaceError",
    "RenderedAnswer",
    "WordTiming",
    "default_cache_dir",
    "engine_for_voice",
    "get_engine",
    "measure_wpm",
    "render_answer",
    "render_speech",
    "time_stretch",
]
