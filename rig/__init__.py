"""rig: a voice-channel test rig for AI phone interviewers.

The package is laid out by pipeline stage: ``synth`` -> ``channel`` -> ``vad`` -> ``asr`` ->
``scorer``, run call by call by ``campaign`` and summarised by ``stats`` (see README.md).
"""

__version__ = "0.1.0"
