"""Voices: real speakers and the synthetic voices a profile can name, and their validation.

* :mod:`~rig.voices.speaker`   ``speaker.json``: what a recorded speaker folder says about its
  speaker, in the speaker's own words (never inferred from the voice).
* :mod:`~rig.voices.record`    ``rig voices record``: the local recording page's server
  (:mod:`~rig.voices.record_page`: the page).
* :mod:`~rig.voices.check`     ``rig voices check``: coverage, level, clipping, SNR, WER and
  speaking rate of a speaker folder.
"""
