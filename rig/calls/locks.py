"""Locks that let K real calls run at once in one process (``--concurrency K``).

A campaign over a real transport places K calls from K driver threads at once; the in-process
reference interviewer serves them all from one event loop. What the calls share:

* **faster-whisper** (:func:`rig.asr.whisper.transcribe`: one ``WhisperModel`` per (model, compute
  type, threads), cached per process). The caller agent transcribes the interviewer's
  utterances in each call's thread and the interviewer transcribes each caller turn in its
  worker threads. CTranslate2 queues concurrent ``generate`` calls to its workers (one by
  default), and faster-whisper's README allows calls "from multiple Python threads", but the
  rig does not rely on it: :func:`transcribe_serial` takes one lock per model, so every
  transcription is the same computation as on a serial campaign (same text, same log
  probabilities), whatever ran beside it.
* **llama.cpp**: one ``Llama`` (KV cache, token position) per model; not safe from two
  threads. :meth:`rig.scorer.llamacpp.LlamaCppScorer.score` holds a lock per loaded model (so
  the runner's oracle grading and the interviewer's gradings take turns too).
* **TTS**: the interviewer's prompts are synthesised before it serves
  (:func:`rig.calls.interviewer.session.warm_tts`), so no call's audio stalls while another's prompt
  is spoken for the first time.

Each call's Silero VAD (caller agent and interviewer session) is its own analyzer, and each
call its own sockets (ephemeral ports: SIP signalling and RTP, ICE candidates, websockets).
Serialising the two models costs little wall time: a turn's ASR takes well under a second on
tiny.en while a call lasts tens of seconds of real time.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable

from rig.asr.whisper import AsrOptions, Transcript
from rig.audio import Audio

_GUARD = threading.Lock()
_LOCKS: dict[tuple, threading.Lock] = {}


def model_lock(*key: Hashable) -> threading.Lock:
    """The process-wide lock of the model object named by ``key`` (the same key, the same
    lock)."""
    with _GUARD:
        return _LOCKS.setdefault(key, threading.Lock())


def transcribe_serial(audio: Audio, options: AsrOptions) -> Transcript:
    """:func:`rig.asr.whisper.transcribe` under the lock of its model name (same arguments, same
    result, same errors; one lock per name covers every ``WhisperModel`` loaded for it)."""
    from rig.asr.whisper import transcribe

    with model_lock("faster-whisper", options.model):
        return transcribe(audio, options)
