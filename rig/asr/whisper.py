"""ASR: faster-whisper on the audio of the candidate's turn (up to turn close).

Why not pipecat's ``WhisperSTTService`` here: in offline mode the turn is already cut by
:mod:`rig.vad`, so a direct ``WhisperModel.transcribe`` on that audio is the same computation
without an asyncio pipeline per call; the real-call transports use pipecat's service.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np

from rig.audio import Audio
from rig.cpus import blas_one_thread
from rig.errors import EngineUnavailable
from rig.models import ensure_model

ASR_SAMPLE_RATE_HZ = 16000


@dataclass(frozen=True)
class AsrOptions:
    """faster-whisper settings. ``model`` names a verified model in :mod:`rig.models`;
    ``language`` None lets a multilingual model detect it (English-only ``.en`` models always
    decode English).

    ``cpu_threads`` (CTranslate2's intra-op threads) and ``device`` (``cpu`` or ``cuda``,
    already resolved: see :func:`rig.runtime.resolve_device`) say how the model runs, not
    what it computes: they are not pipeline settings and not in ``pipeline_version``;
    :func:`rig.runtime.build_stages` sets them from a :class:`rig.runtime.Runtime`."""
    model: str = "whisper-tiny.en"
    language: str | None = "en"
    beam_size: int = 1
    compute_type: str = "int8"
    cpu_threads: int = 2
    device: str = "cpu"
    vad_filter: bool = False
    condition_on_previous_text: bool = False
    word_timestamps: bool = False


@dataclass(frozen=True)
class AsrWord:
    """One word of a segment when ``AsrOptions.word_timestamps`` is on (faster-whisper's
    cross-attention alignment, ``WhisperModel.transcribe(word_timestamps=True)``): times in
    seconds from the start of the transcribed audio, ``probability`` the word's token
    probability (0-1). Predicted, like the segment times: clamped to the audio with them
    (:func:`rig.asr.checks.clamp_timestamps`)."""
    start_s: float
    end_s: float
    word: str
    probability: float


@dataclass(frozen=True)
class AsrSegment:
    """One faster-whisper segment: times in seconds from the start of the transcribed audio,
    ``avg_logprob`` the mean log-probability of its tokens (natural log, <= 0),
    ``no_speech_prob`` Whisper's probability that the window holds no speech (0-1),
    ``compression_ratio`` the gzip compression ratio of its text (Whisper's repetition
    signal: its decoder treats a ratio over 2.4 as a failed decoding); None when unknown.
    ``words``: the segment's words with their times (:class:`AsrWord`), empty unless
    ``AsrOptions.word_timestamps`` was on."""
    start_s: float
    end_s: float
    text: str
    avg_logprob: float
    no_speech_prob: float
    compression_ratio: float | None = None
    words: tuple[AsrWord, ...] = ()


@dataclass(frozen=True)
class Transcript:
    """ASR output. ``avg_logprob`` is the duration-weighted mean of segment log-probabilities
    (natural log, per token); ``no_speech_prob`` the maximum over segments (0-1).

    ``segments`` holds each segment's own figures (empty when nothing was transcribed or when
    a caller built the value by hand); ``language`` is the language the model decoded in (the
    one passed, or Whisper's detection when ``AsrOptions.language`` is None), None when the
    model never ran. ``language_probability`` is Whisper's probability of that language
    (0-1) when it detected it; 1.0 when the language was passed; None when the model never
    ran."""
    text: str
    avg_logprob: float | None
    no_speech_prob: float | None
    audio_s: float
    segments: tuple[AsrSegment, ...] = ()
    language: str | None = None
    language_probability: float | None = None


@lru_cache(maxsize=4)
def _model(name: str, compute_type: str, cpu_threads: int, device: str = "cpu"):
    try:
        from faster_whisper import WhisperModel
    except ImportError as exc:  # pragma: no cover
        raise EngineUnavailable("ASR needs faster-whisper: pip install 'faster-whisper==1.2.1'"
                                " (or 'rig[pipeline]')") from exc
    path = ensure_model(name)
    blas_one_thread()  # the features' rounding must not depend on the BLAS pool (rig.cpus)
    return WhisperModel(str(path), device=device, compute_type=compute_type,
                        cpu_threads=cpu_threads)


#: Transcripts of this process by (the 16 kHz samples' sha256, the options but the threads):
#: decoding is deterministic (temperature 0, a fixed beam), so equal audio is transcribed once
#: (a sweep's variants that cut a turn alike, a replay's A and B, repeats; issue 31 item 2)
_MEMO: OrderedDict[tuple, Transcript] = OrderedDict()
_MEMO_MAX = 512
_MEMO_LOCK = threading.Lock()
#: False while :func:`rig.stages.memos_off` holds: every transcription runs the model
_MEMO_ON = [True]


def forget_transcripts() -> None:
    """Clear the process's transcript memo: the next :func:`transcribe` of any audio runs
    the model (a test or benchmark that measures the ASR's own work)."""
    with _MEMO_LOCK:
        _MEMO.clear()


def transcribe(audio: Audio, options: AsrOptions = AsrOptions()) -> Transcript:
    """Transcribe float32 mono audio (any rate; resampled to 16 kHz with soxr).

    Equal 16 kHz samples with equal options (``cpu_threads`` aside: CTranslate2's threads
    change the speed, not the result; numpy's BLAS pool would change it and is pinned to one
    thread, :func:`rig.cpus.blas_one_thread`) are transcribed once per process and the transcript
    reused (the last 512 kept).

    Raises:
        ModelMissingError: the model package is not installed.
    """
    audio16 = audio.resample(ASR_SAMPLE_RATE_HZ)
    if audio16.duration_s < 0.1:
        return Transcript("", None, None, audio16.duration_s)
    if not _MEMO_ON[0]:
        return _transcribe(audio16, options)
    samples = np.ascontiguousarray(audio16.samples, dtype=np.float32)
    key = (hashlib.sha256(samples.tobytes()).hexdigest(),
           dataclasses.replace(options, cpu_threads=0))
    with _MEMO_LOCK:
        if key in _MEMO:
            _MEMO.move_to_end(key)
            return _MEMO[key]
    tr = _transcribe(audio16, options)
    with _MEMO_LOCK:
        _MEMO[key] = tr
        while len(_MEMO) > _MEMO_MAX:
            _MEMO.popitem(last=False)
    return tr


def _transcribe(audio16: Audio, options: AsrOptions) -> Transcript:
    model = _model(options.model, options.compute_type, options.cpu_threads, options.device)
    segments, info = model.transcribe(
        audio16.samples, language=options.language, beam_size=options.beam_size,
        vad_filter=options.vad_filter, temperature=0.0,
        condition_on_previous_text=options.condition_on_previous_text,
        word_timestamps=options.word_timestamps)
    segs = list(segments)
    text = " ".join(s.text.strip() for s in segs).strip()
    language = getattr(info, "language", None) or options.language
    prob = getattr(info, "language_probability", None)
    prob = None if prob is None else float(prob)
    if not segs:
        return Transcript("", None, None, audio16.duration_s, (), language, prob)
    dur = np.array([max(s.end - s.start, 1e-3) for s in segs])
    lp = float(np.average([s.avg_logprob for s in segs], weights=dur))
    nsp = float(max(s.no_speech_prob for s in segs))
    parts = tuple(AsrSegment(float(s.start), float(s.end), s.text.strip(), float(s.avg_logprob),
                             float(s.no_speech_prob), float(s.compression_ratio),
                             tuple(AsrWord(float(w.start), float(w.end), w.word.strip(),
                                           float(w.probability)) for w in (s.words or ())))
                  for s in segs)
    return Transcript(text, lp, nsp, audio16.duration_s, parts, language, prob)


@dataclass(frozen=True)
class RuntimeTranscribe:
    """The ASR stage run with these threads on this (resolved) device: a picklable callable
    ``(audio, AsrOptions) -> Transcript`` that overrides the options' ``cpu_threads`` and
    ``device`` (the pipeline's settings, from :func:`rig.campaign.call.run_call`, stay)."""
    cpu_threads: int
    device: Literal["cpu", "cuda"] = "cpu"

    def __call__(self, audio, options):
        return transcribe(audio, dataclasses.replace(options, cpu_threads=self.cpu_threads,
                                                     device=self.device))


def build_asr(cpu_threads: int, device: Literal["cpu", "cuda"] = "cpu") -> RuntimeTranscribe:
    """The ASR stage of :class:`rig.stages.Stages`: :func:`transcribe` run with
    ``cpu_threads`` CPU threads (>= 1; ignored on CUDA) on ``device`` (already resolved,
    :func:`rig.runtime.resolve_device`). The model, beam and language stay the pipeline's
    (the :class:`AsrOptions` each call passes); the model loads on the first call."""
    return RuntimeTranscribe(cpu_threads, device)
