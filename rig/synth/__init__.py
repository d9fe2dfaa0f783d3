"""Synthesis: a scripted answer rendered under a caller profile.

    from rig.synth import render_answer
    r = render_answer(answer.script, profile, seed=0, answer_id=answer.answer_id,
                      resolve_path=lambda rel: profiles.resolve_path(profile, rel))
    r.audio          # Audio: float32 mono (n,), 16 kHz, noise mixed in
    r.words          # WordTiming per clean reference word (+ fillers), seconds into r.audio

Engines (one module each): ``hibari`` (default, Apache-2.0), ``piper`` (GPL extra:
``pip install 'rig[piper]'``), ``espeak`` (espeak-ng program: ``apt-get install espeak-ng``),
``recorded`` (a folder of human recordings). ``noise`` mixes white, pink or file noise at an SNR
measured on active speech. See :mod:`rig.synth.render` for the order of operations, the word
timing approximation and the cache.
"""

from rig.synth.base import Engine, RenderedAnswer, WordTiming
from rig.synth.render import (
    SYNTH_VERSION,
    default_cache_dir,
    get_engine,
    render_answer,
    render_speech,
)

__all__ = [
    "SYNTH_VERSION",
    "Engine",
    "RenderedAnswer",
    "WordTiming",
    "default_cache_dir",
    "get_engine",
    "render_answer",
    "render_speech",
]
