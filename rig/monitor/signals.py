"""Signals measured from each call's audio: no clean reference, no demographics.

For one call (:func:`measure_call`), from the candidate's channel:

* **Turns** - :func:`rig.vad.detect_turns`: pipecat's Silero VAD with the endpointing timer
  (``signals.silence_timeout_ms``) over the whole recording, at 8 kHz (narrowband files) or
  16 kHz (anything wider is resampled with soxr).
* **Estimated SNR** (``snr_db``) - :func:`rig.monitor.snr.estimate_snr_db` (which frames are
  noise, and when it is not measurable, is explained there): the VAD-segmented energy ratio
  (Vondrasek and Pollak, "Methods for speech SNR estimation: evaluation tool and analysis of VAD
  dependency", Radioengineering 14(1), 2005): the noise power is the mean power of the 20 ms
  frames outside every turn (100 ms after a turn, 600 ms before one and 1 s before the
  first: the VAD's confirmation delay), the speech power the mean power of the frames
  inside the turns minus that noise power; SNR = 10 log10(speech / noise). This is the
  quantity :mod:`rig.synth.noise` mixes at (speech power over its active frames against the
  noise under them) as far as the VAD's turns match the active frames. Measured accuracy
  (``tests/test_monitor_integration.py``, real speech with white, pink and recorded kitchen
  noise mixed at 0-30 dB at the estimator's own rate): see ``docs/monitoring.md``. It assumes
  the noise is roughly stationary over the call, reads the noise of the recording itself
  (room, line hiss) as noise, and is clipped to [-10, 60] dB; it is ``None`` (reason in
  ``notes``) when the call has under 0.2 s outside speech (speech from the first frame to the
  last), no speech at all, or speech frames no louder than the noise frames.
* **Channel class** - :func:`channel_class`: ``narrowband`` when the file's rate is 8 kHz or
  less, or when the energy from 4.2 to 7 kHz is more than ``narrowband_below_db`` (default
  -35 dB) under the energy from 0.3 to 3.4 kHz (a narrowband call stored at a higher rate);
  else ``wideband``. The codec comes from the metadata, else the file (a mu-law or A-law WAV,
  a raw ``.ulaw``), else is detected when every 16-bit sample is a G.711 decoder output value
  (a G.711 call saved as linear PCM); ``None`` when unknown.
* **ASR confidence** - faster-whisper on the candidate's turns (cut from 0.6 s before each
  turn's onset, 1 s before the first, to 0.2 s after its speech, and joined with 0.5 s of
  silence, one decoding per call; the early cut is the VAD's confirmation delay: with 0.2 s,
  a recording that starts in speech lost its first word or two, 7 of 8 studio clips):
  ``asr_avg_logprob`` the duration-weighted mean of the segments' average token
  log-probability (natural log; Whisper treats a segment under -1.0 as a failed decoding) and
  ``asr_no_speech_prob`` the duration-weighted mean of their no-speech probability (0-1).
* **Not measurable.** A signal its input cannot support is None with the reason in
  ``notes`` (``snr_db: ...``, ``asr: ...``, ``pace_wpm: ...``, ``channel_class: ...``,
  ``repeat_requests: ...``), never a clipped or default value.
* **Pace** (``pace_wpm``) - words of that transcript (runs of letters, digits and
  apostrophes; Whisper writes numbers as digits, which counts "thirty" and "30" alike) per
  minute of turn speech (turn onset to last speech, pauses shorter than the timer included).
* **Truncation events** - :func:`count_truncations`: turns the timer closed after which the
  candidate resumed speaking within ``resume_within_ms`` (default 1000 ms): the interviewer
  would have taken the turn while the candidate was still answering.
* **Repeat requests** - the metadata's ``repeat_requests`` when given; else, for a stereo
  recording, :func:`count_repeat_requests` on the interviewer channel's turns (VAD and ASR as
  for the candidate; a turn that contains one of ``signals.repeat_phrases`` counts once);
  else unknown. The interviewer channel is transcribed only for this.
* **Language** - the metadata's; else Whisper's detection when the ASR model is multilingual;
  else ``unknown``. Nothing here estimates accent, sex, age or any other trait of a person.
"""

from __future__ import annotations

import itertools
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import signal as sps

from rig.asr.whisper import AsrOptions, Transcript
from rig.audio import Audio
from rig.channel.codecs import CODECS
from rig.monitor.config import SignalsConfig
from rig.monitor.meta import CallMeta
from rig.monitor.snr import (  # noqa: F401 - re-exported: the SNR estimate's home was here
    FIRST_ONSET_GUARD_MS,
    FRAME_MS,
    GUARD_MS,
    MIN_NOISE_S,
    ONSET_GUARD_MS,
    SNR_RANGE_DB,
    estimate_snr_db,
    frame_powers,
)
from rig.vad import Turn, TurnParams

ChannelClass = Literal["narrowband", "wideband", "unknown"]
TURN_MARGIN_S = 0.2
TURN_GAP_S = 0.5
_WORD = re.compile(r"[\w']+")


def _g711_lookup(values: np.ndarray) -> np.ndarray:
    """A boolean table over every int16 bit pattern (as uint16): True for decoder outputs."""
    lut = np.zeros(65536, bool)
    lut[values.astype(np.int16).view(np.uint16)] = True
    return lut


#: Per G.711 law of the codec registry (mulaw, alaw), its decoder's outputs.
_G711_LUT = {c.name: _g711_lookup(c.decode_pcm16(np.arange(256, dtype=np.uint8)))
             for c in CODECS.values() if c.step_kind == "g711"}


@dataclass(frozen=True)
class CallAudio:
    """A decoded recording. ``candidate``/``interviewer``: float32 mono, shape ``(n,)``, at the
    file's rate; ``interviewer`` None for mono files. ``codec``: what the file itself says or
    shows (``mulaw``/``alaw``), None for linear PCM of unknown origin; ``codec_source``:
    ``file``, ``detected`` or None. ``sha256`` of the file's bytes."""
    candidate: Audio
    interviewer: Audio | None
    n_channels: int
    layout: str
    codec: str | None
    codec_source: str | None
    file_format: str
    sha256: str


@dataclass(frozen=True)
class CallSignals:
    """What :func:`measure_call` measured (units in the names; None = not measurable, with the
    reason in ``notes``). ``t_*_s``: wall seconds spent in the VAD, in the other signal
    computations (resampling, SNR, channel, counts), and in ASR."""
    duration_s: float
    speech_s: float
    n_turns: int
    snr_db: float | None
    channel_class: ChannelClass
    hf_ratio_db: float | None
    codec: str | None
    codec_source: str | None
    asr_avg_logprob: float | None
    asr_no_speech_prob: float | None
    n_words: int
    pace_wpm: float | None
    truncation_events: int
    repeat_requests: int | None
    repeat_source: str
    language: str
    language_source: str
    asr_language: str | None
    transcript: str
    interviewer_transcript: str | None
    t_vad_s: float
    t_signals_s: float
    t_asr_s: float
    notes: tuple[str, ...] = ()


def _default_detect_turns(audio: Audio, params: TurnParams) -> tuple[Turn, ...]:
    from rig.vad import detect_turns

    return detect_turns(audio, params)


def _default_transcribe(audio: Audio, options: AsrOptions) -> Transcript:
    from rig.asr.whisper import transcribe

    return transcribe(audio, options)


@dataclass(frozen=True)
class SignalStages:
    """The two model-backed steps as callables: real by default, fakes in unit tests."""
    detect_turns: Callable[[Audio, TurnParams], tuple[Turn, ...]] = _default_detect_turns
    transcribe: Callable[[Audio, AsrOptions], Transcript] = _default_transcribe


def vad_rate(sample_rate_hz: int) -> int:
    """The rate the VAD runs at (Silero takes 8 or 16 kHz): 8000 Hz for files under 16 kHz,
    else 16000 Hz."""
    return 8000 if sample_rate_hz < 16000 else 16000


def channel_class(audio: Audio, narrowband_below_db: float = -35.0
                  ) -> tuple[ChannelClass, float | None]:
    """Narrowband or wideband, and the high-band energy ratio in dB (None at <= 8 kHz).

    The ratio is the Welch power (1024-point segments) summed over 4.2-7 kHz (up to 0.95 of
    Nyquist) over the sum over 0.3-3.4 kHz. ``unknown`` for silent audio.
    """
    sr = audio.sample_rate_hz
    if sr <= 8000:
        return "narrowband", None
    x = audio.samples.astype(np.float64)
    if len(x) < 256 or not np.any(x):
        return "unknown", None
    f, pxx = sps.welch(x, fs=sr, nperseg=min(1024, len(x)))
    lo = float(pxx[(f >= 300) & (f <= 3400)].sum())
    hi = float(pxx[(f >= 4200) & (f <= min(7000.0, 0.95 * sr / 2))].sum())
    if lo <= 0:
        return "unknown", None
    ratio = 10.0 * math.log10(hi / lo) if hi > 0 else -200.0
    return ("narrowband" if ratio < narrowband_below_db else "wideband"), ratio


def detect_g711(pcm: np.ndarray) -> str | None:
    """``mulaw`` or ``alaw`` when every int16 sample is a value that G.711 decoder outputs
    (and the audio is not silent), else None."""
    if pcm.size == 0 or not np.any(pcm):
        return None
    bits = np.ascontiguousarray(pcm, dtype=np.int16).view(np.uint16)
    for name, lut in _G711_LUT.items():
        if lut[bits].all():
            return name
    return None


def count_truncations(turns: Sequence[Turn], resume_within_ms: int) -> int:
    """Turns closed by the timer after which the next turn starts within ``resume_within_ms``
    of the close."""
    within = resume_within_ms / 1000
    return sum(1 for a, b in itertools.pairwise(turns)
               if a.closed_by == "silence_timeout" and b.start_s - a.close_s <= within)


def _normalise(text: str) -> str:
    return " ".join(re.sub(r"[^\w' ]+", " ", text.lower().replace("’", "'")).split())


def count_repeat_requests(turn_texts: Sequence[str], phrases: Sequence[str]) -> int:
    """Interviewer turns that contain at least one of ``phrases`` (whole words, case and
    punctuation ignored)."""
    pats = [re.compile(rf"(?<![\w']){re.escape(_normalise(p))}(?![\w'])") for p in phrases]
    return sum(1 for text in turn_texts if any(p.search(_normalise(text)) for p in pats))


def _join_turns(audio: Audio, turns: Sequence[Turn]) -> tuple[Audio, list[tuple[float, float]]]:
    """The turns cut from ``audio`` (with margins: the module docstring) joined by silence,
    and each turn's span in the joined audio (seconds)."""
    sr = audio.sample_rate_hz
    gap = np.zeros(round(TURN_GAP_S * sr), np.float32)
    parts: list[np.ndarray] = []
    spans: list[tuple[float, float]] = []
    pos = 0
    for i, tr in enumerate(turns):
        # the VAD confirms an onset late (most at the recording's start): cut from well before
        before = (FIRST_ONSET_GUARD_MS if i == 0 else ONSET_GUARD_MS) / 1000
        a = max(0, round((tr.start_s - before) * sr))
        b = min(len(audio.samples), round((tr.speech_end_s + TURN_MARGIN_S) * sr))
        if b <= a:
            continue
        if parts:
            parts.append(gap)
            pos += len(gap)
        parts.append(audio.samples[a:b])
        spans.append((pos / sr, (pos + b - a) / sr))
        pos += b - a
    if not parts:
        return Audio(np.zeros(0, np.float32), sr), []
    return Audio(np.concatenate(parts).astype(np.float32), sr), spans


def _texts_by_turn(tr: Transcript, spans: list[tuple[float, float]]) -> list[str]:
    """Each turn's text: the segments whose midpoint lies in (or nearest to) the turn's span."""
    if not tr.segments:
        return [tr.text] if tr.text else []
    texts = [""] * len(spans)
    for seg in tr.segments:
        mid = (seg.start_s + seg.end_s) / 2
        dist = [0.0 if a <= mid <= b else min(abs(mid - a), abs(mid - b)) for a, b in spans]
        i = int(np.argmin(dist)) if dist else 0
        if texts:
            texts[i] = f"{texts[i]} {seg.text}".strip()
    return texts


def _asr_figures(tr: Transcript) -> tuple[float | None, float | None]:
    if not tr.segments:
        return tr.avg_logprob, tr.no_speech_prob
    w = np.array([max(s.end_s - s.start_s, 1e-3) for s in tr.segments])
    lp = float(np.average([s.avg_logprob for s in tr.segments], weights=w))
    ns = float(np.average([s.no_speech_prob for s in tr.segments], weights=w))
    return lp, ns


def _asr_options(cfg: SignalsConfig, meta: CallMeta) -> AsrOptions:
    if cfg.asr_model.endswith(".en"):
        return AsrOptions(model=cfg.asr_model, language="en")
    lang = (meta.language or "").split("-")[0].split("_")[0].lower() or None
    try:
        from faster_whisper.tokenizer import _LANGUAGE_CODES as codes
    except ImportError:  # pragma: no cover - faster-whisper missing: transcribe says so
        codes = ()
    return AsrOptions(model=cfg.asr_model, language=lang if lang in codes else None)


def turn_params(cfg: SignalsConfig) -> TurnParams:
    """The endpointing settings of ``cfg``."""
    return TurnParams(silence_timeout_ms=cfg.silence_timeout_ms, start_ms=cfg.start_ms,
                      confidence=cfg.vad_confidence, min_volume=cfg.vad_min_volume)


def measure_call(audio: CallAudio, meta: CallMeta, cfg: SignalsConfig,
                 stages: SignalStages | None = None) -> CallSignals:
    """Every signal of one call (see the module docstring for each definition).

    Raises:
        ValueError: the candidate channel is empty.
        RigError: a model is missing (ASR, VAD).
    """
    stages = stages or SignalStages()
    cand = audio.candidate
    if len(cand.samples) == 0:
        raise ValueError("the candidate channel holds no samples")
    notes: list[str] = []
    params = turn_params(cfg)
    clock = {"vad": 0.0, "asr": 0.0}

    def timed(kind: str, fn: Callable, *args):
        t = time.perf_counter()
        try:
            return fn(*args)
        finally:
            clock[kind] += time.perf_counter() - t

    t_start = time.perf_counter()
    vad_audio = cand.resample(vad_rate(cand.sample_rate_hz))
    turns = timed("vad", stages.detect_turns, vad_audio, params)
    snr, why = estimate_snr_db(vad_audio, turns)
    if why:
        notes.append(f"snr_db: {why}")
    cls, hf = channel_class(cand, cfg.narrowband_below_db)
    if cls == "unknown":  # a speech-free 8 kHz file is still narrowband: the rate says so
        notes.append("channel_class: silent or too short to measure a spectrum")
    codec, codec_source = (meta.codec.lower(), "metadata") if meta.codec else (
        audio.codec, audio.codec_source)
    truncations = count_truncations(turns, cfg.resume_within_ms)
    speech_s = float(sum(t.speech_s for t in turns))

    options = _asr_options(cfg, meta)
    lp = ns = None
    text, asr_lang = "", None
    joined, _spans = _join_turns(vad_audio, turns)
    if joined.duration_s > 0:
        tr = timed("asr", stages.transcribe, joined, options)
        text, asr_lang = tr.text, tr.language
        lp, ns = _asr_figures(tr)
    else:
        notes.append("asr: no speech detected")
    n_words = len(_WORD.findall(text))
    pace = n_words / (speech_s / 60.0) if n_words and speech_s >= 1.0 else None
    if pace is None:
        notes.append("pace_wpm: " + ("under 1 s of speech" if speech_s < 1.0
                                     else "no words transcribed"))
    repeats, repeat_source, itext = meta.repeat_requests, "metadata", None
    if audio.interviewer is not None and repeats is None:  # transcribed only when needed
        iv = audio.interviewer.resample(vad_rate(audio.interviewer.sample_rate_hz))
        iturns = timed("vad", stages.detect_turns, iv, params)
        ijoined, ispans = _join_turns(iv, iturns)
        itext = ""
        if ijoined.duration_s > 0:
            itr = timed("asr", stages.transcribe, ijoined, options)
            itext = itr.text
            repeats = count_repeat_requests(_texts_by_turn(itr, ispans), cfg.repeat_phrases)
        else:
            repeats = 0
        repeat_source = "interviewer_transcript"
    if repeats is None:
        repeat_source = "none"
        notes.append("repeat_requests: no interviewer channel and none in the metadata")
    t_sig = time.perf_counter() - t_start - clock["vad"] - clock["asr"]
    if meta.language:
        language, language_source = meta.language, "metadata"
    elif not cfg.asr_model.endswith(".en") and asr_lang:
        language, language_source = asr_lang, "asr"
    else:
        language, language_source = "unknown", "none"
    return CallSignals(
        duration_s=cand.duration_s, speech_s=speech_s, n_turns=len(turns), snr_db=snr,
        channel_class=cls, hf_ratio_db=hf, codec=codec, codec_source=codec_source,
        asr_avg_logprob=lp, asr_no_speech_prob=ns, n_words=n_words, pace_wpm=pace,
        truncation_events=truncations, repeat_requests=repeats, repeat_source=repeat_source,
        language=language, language_source=language_source, asr_language=asr_lang,
        transcript=text, interviewer_transcript=itext, t_vad_s=clock["vad"],
        t_signals_s=max(0.0, t_sig), t_asr_s=clock["asr"], notes=tuple(notes))
