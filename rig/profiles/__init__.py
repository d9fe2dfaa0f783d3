"""Caller profiles: audio conditions under which a scripted answer is delivered.

A profile is an audio condition (voice, pace, pauses, response delay, disfluency, barge-in,
noise, channel, language), never a demographic category: nothing in rig infers or labels race,
sex or national origin. ``accent_label`` describes the audio condition ("British English,
synthetic, espeak-ng formant 'en-gb'"), and a TTS accent is not the range of real speakers of
that accent; recordings of real speakers (``voice.engine: recorded``) are the only faithful
source of accents.

Every field is typed, carries its unit in its name (``_s``, ``_db``, ``_pct``, ``_hz``,
``_bps``, ``wpm``) and is validated; a call records the profile it ran under (see
:mod:`rig.campaign.call`).

A profile set is a folder of YAML files. ``baseline.yaml`` is complete (every field has a
default); every other file holds only what it changes, merged onto the baseline (mappings merge
key by key, except ``pace``, whose ``rate`` and ``wpm`` are alternatives: a profile's ``pace``
replaces the baseline's). A profile may change one dimension of the baseline; changing more is
rejected unless the file lists every changed dimension under ``changes:``.

Modules: ``settings`` (the models of each dimension: :class:`Voice`, :class:`Pace`,
:class:`Pauses`, :class:`Disfluency`, :class:`Interruption`, :class:`Noise`), ``profile``
(:class:`Profile`, the dimensions, the content hash), ``loader`` (:func:`load_profiles`,
:class:`ProfileSet`). Everything public is importable from here.
"""

from rig.channel.steps import Channel
from rig.profiles.loader import ProfileSet, load_profiles
from rig.profiles.profile import DIMENSIONS, OFFLINE_RECORD_ONLY, Dimension, Profile
from rig.profiles.settings import (
    DEFAULT_BABBLE_VOICES,
    HIBARI_RATE_RANGE,
    Disfluency,
    Interruption,
    Noise,
    NoiseKind,
    Pace,
    Pauses,
    Voice,
)

__all__ = ["DEFAULT_BABBLE_VOICES", "DIMENSIONS", "HIBARI_RATE_RANGE", "OFFLINE_RECORD_ONLY",
           "Channel", "Dimension", "Disfluency", "Interruption", "Noise", "NoiseKind", "Pace",
           "Pauses", "Profile", "ProfileSet", "Voice", "load_profiles"]
