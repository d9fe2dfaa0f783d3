"""The example interviewer bot (examples/pipecat_interviewer/bot.py), deaf: the same file,
unmodified, loaded here as its own module instance with its VAD analyzer dropped (its
``SileroVADAnalyzer`` made to give None), as an installed pipecat that silently drops a VAD
setting would leave it. Without a VAD its user aggregator raises no user-speech event and its
segmented Whisper STT never transcribes: it hears nothing.

Test-only: in-process (``tests/test_bot_inproc_integration.py``: ``--interviewer
pipecat:tests/data/bots/deaf_bot.py:run_bot``) and over WebRTC under pipecat's development
runner (``python tests/data/bots/deaf_bot.py -t webrtc --port P``: the example's own ``bot``
entry, on this deaf instance).
"""

from __future__ import annotations

from pathlib import Path

from rig.paths import import_file

_EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "pipecat_interviewer" / "bot.py"
_example = import_file(_EXAMPLE, "rig_test_deaf_example_")  # not the example's own instance
_example.SileroVADAnalyzer = lambda *args, **kwargs: None  # no VAD, no turn detector

run_bot = _example.run_bot
bot = _example.bot  # the runner's entry point, on the deaf instance

if __name__ == "__main__":
    from pipecat.runner.run import main

    main()
