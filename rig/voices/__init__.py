"""Voices: real speakers and the synthetic voices a profile can name, and their validation.

* :mod:`~rig.voices.speaker`   ``speaker.json``: what a recorded speaker folder says about its
  speaker, in the speaker's own words (never inferred from the voice).
"""
