"""ASR: the candidate's turn to text, and what the rig measures on that text.

Modules, in the order a call uses them:

* :mod:`rig.asr.whisper` - faster-whisper on the turn's audio (:func:`transcribe`,
  :class:`AsrOptions`, :class:`Transcript` with its :class:`AsrSegment`s); faster_whisper is
  imported inside the function that loads the model, never at import time.
* :mod:`rig.asr.checks` - ASR and turn failure modes flagged per call (``asr_suspect``,
  ``turn_suspect``).
* :mod:`rig.asr.transcript` - what the scorer reads of the transcript (filler words dropped
  or kept).
* :mod:`rig.asr.wer` - word error rate against the script (jiwer, Whisper's English
  normaliser), clean and verbatim reference policies.
* :mod:`rig.asr.similarity` - content similarity of transcript and script (sentence
  embeddings; the ``similarity`` extra).

The names below are the stage's face; the modules themselves import only from each other.
"""

from rig.asr.wer import WerResult, normalize, wer, wer_verbatim
from rig.asr.whisper import (
    ASR_SAMPLE_RATE_HZ,
    AsrOptions,
    AsrSegment,
    AsrWord,
    Transcript,
    transcribe,
)

__all__ = [
    "ASR_SAMPLE_RATE_HZ",
    "AsrOptions",
    "AsrSegment",
    "AsrWord",
    "Transcript",
    "WerResult",
    "normalize",
    "transcribe",
    "wer",
    "wer_verbatim",
]
