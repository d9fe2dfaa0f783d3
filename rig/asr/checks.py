"""ASR and turn-detection failure modes, flagged per call instead of scored as normal.

A call's transcript and turn are taken at face value by the scorer; these checks say when
they should not be (``docs/measurement.md``, "Suspect ASR and turns"). Each check returns
``(suspect, reason)``: ``suspect`` True with every failed rule named in ``reason``
(``; ``-joined, each ``rule: detail``), False when every rule passed, None when there was
nothing to check (the call failed before the stage ran).

ASR rules (:func:`asr_suspect`):

* ``text_without_speech`` - Whisper wrote words on a turn where the VAD found no speech, or
  a segment lies wholly outside every VAD speech segment (by more than
  :data:`SPEECH_MARGIN_S`): Whisper's known hallucination on silence and noise
  (Radford et al., "Robust Speech Recognition via Large-Scale Weak Supervision", 2022,
  section 4.5 and appendix; Koenecke et al., "Careless Whisper", FAccT 2024). With word
  timestamps on (the pipeline's ``asr.word_timestamps``) each word is checked, so words a
  segment appends in the silence after the answer are found although the segment begins
  inside the speech.
* ``no_speech`` - a segment with text whose ``no_speech_prob`` is at least
  :data:`NO_SPEECH_PROB` (Whisper's own ``no_speech_threshold``, 0.6).
* ``repetition_loop`` - a phrase of 1 to :data:`MAX_NGRAM` words repeated back to back at
  least :data:`MIN_REPEATS` times, or a segment whose gzip compression ratio exceeds 2.4
  (Whisper's ``compression_ratio_threshold``: the decoder's own repetition test); the
  reason carries the transcript's ``avg_logprob`` (a loop is often decoded with high
  confidence, so the log-probability alone does not catch it).
* ``language_mismatch`` - the transcript's language differs from the language the answer
  was spoken in (its bank's ``language``): Whisper detected another language (``asr.language:
  auto``; accented speech can be detected as another language, ``../shared/STACK.md``), or
  the pipeline fixed a language the candidate did not speak (:func:`rig.language.
  language_mismatch`).
* ``timestamps_past_end`` - a segment ending more than :data:`END_TOLERANCE_S` (2 s) after
  the end of the audio transcribed. Whisper predicts its timestamps, and the last one of a
  correct transcript can overshoot: 1.1 s on a clean 36.4 s answer (whisper-tiny.en, the
  second 30 s window; ``tests/test_suspect_call_integration.py``), hence the margin.
  Every segment and word is then clamped to the audio (:func:`clamp_timestamps`), overshoot
  or not, and the call's ``asr_timestamps_clamped`` counts the segments that needed it (a
  segment whose own times or any word's times lay outside the audio).

Turn rules (:func:`turn_suspect`):

* ``no_speech_detected`` - the VAD never confirmed speech (``closed_by='no_speech'``) although
  the answer had speech: the interviewer heard no answer.
* ``closed_before_speech`` - the turn closed before the answer's speech began (noise or a
  click opened and closed it).
* ``short_speech`` - the speech the VAD found in the turn is shorter than twice its start
  window (``start_ms``): a one-word answer, whose onset and close the start window and
  timer decide more than the speech does, or which the VAD may miss altogether.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rig.asr.whisper import Transcript

NO_SPEECH_PROB = 0.6
COMPRESSION_RATIO_MAX = 2.4
MAX_NGRAM = 8
MIN_REPEATS = 4
SPEECH_MARGIN_S = 1.0
END_TOLERANCE_S = 2.0
_WORD = re.compile(r"[\w']+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def longest_repeat(text: str, max_ngram: int = MAX_NGRAM) -> tuple[str, int]:
    """The phrase (1 to ``max_ngram`` words, case and punctuation ignored) repeated back to
    back the most times in ``text``, and that count; ``("", 0)`` for empty text. Ties go to
    the shorter phrase, then the earlier one."""
    words = _words(text)
    best, best_k = "", 0
    for n in range(1, max_ngram + 1):
        for i in range(len(words) - n + 1):
            gram = words[i:i + n]
            k = 1
            while words[i + k * n:i + (k + 1) * n] == gram:
                k += 1
            if k > best_k:
                best, best_k = " ".join(gram), k
    return best, best_k


def _outside(start_s: float, end_s: float, speech: Sequence[tuple[float, float]]) -> bool:
    m = SPEECH_MARGIN_S
    return all(end_s < a - m or start_s > b + m for a, b in speech)


def asr_suspect(tr: Transcript | None, speech_segments_s: Sequence[tuple[float, float]],
                audio_s: float, spoken_language: str | None = None,
                language_setting: str = "en") -> tuple[bool | None, str | None]:
    """Check a transcript against the audio it came from (rules in the module docstring).

    Args:
        tr: the ASR output (segment times in seconds from the start of the transcribed
            audio); None when ASR did not run.
        speech_segments_s: the VAD's speech segments, (start, end) seconds on the same clock
            (:attr:`rig.vad.TurnResult.speech_segments_s`); empty when it found none.
        audio_s: duration of the transcribed audio, seconds.
        spoken_language: the answer's language (None: not checked).
        language_setting: the pipeline's ``asr.language`` (``auto`` or a code).

    Returns:
        ``(suspect, reason)`` as described in the module docstring.
    """
    if tr is None:
        return None, None
    reasons: list[str] = []
    text = tr.text.strip()
    if text and not speech_segments_s:
        reasons.append(f"text_without_speech: {text[:40]!r} where the VAD found no speech")
    elif text:
        away = [(s.text, s.start_s, s.end_s) for s in tr.segments
                if s.text and not s.words and _outside(s.start_s, s.end_s, speech_segments_s)]
        away += [(w.word, w.start_s, w.end_s) for s in tr.segments for w in s.words
                 if w.word and _outside(w.start_s, w.end_s, speech_segments_s)]
        if away:
            what, a, b = min(away, key=lambda x: x[1])
            reasons.append(f"text_without_speech: {what[:40]!r} at {a:.2f}-{b:.2f} s, "
                           "outside the VAD's speech")
    loud = [s for s in tr.segments if s.text and s.no_speech_prob >= NO_SPEECH_PROB]
    if loud:
        reasons.append(f"no_speech: no_speech_prob {loud[0].no_speech_prob:.2f} >= "
                       f"{NO_SPEECH_PROB:g} on {loud[0].text[:40]!r}")
    phrase, k = longest_repeat(text)
    ratio = max((s.compression_ratio for s in tr.segments
                 if s.compression_ratio is not None), default=None)
    lp = "n/a" if tr.avg_logprob is None else f"{tr.avg_logprob:.2f}"
    if k >= MIN_REPEATS:
        reasons.append(f"repetition_loop: {phrase!r} x{k} (avg_logprob {lp})")
    elif ratio is not None and ratio > COMPRESSION_RATIO_MAX:
        reasons.append(f"repetition_loop: compression ratio {ratio:.2f} > "
                       f"{COMPRESSION_RATIO_MAX:g} (avg_logprob {lp})")
    if text:
        from rig.language import language_mismatch

        why = language_mismatch(spoken_language, tr.language, language_setting,
                                tr.language_probability)
        if why:
            reasons.append(why)
    late = max((s.end_s for s in tr.segments), default=0.0)
    if late > audio_s + END_TOLERANCE_S:
        reasons.append(f"timestamps_past_end: a segment ends at {late:.2f} s, audio "
                       f"{audio_s:.2f} s")
    return bool(reasons), "; ".join(reasons) or None


def turn_suspect(speech_start_s: float | None, turn_close_s: float, closed_by: str,
                 speech_segments_s: Sequence[tuple[float, float]],
                 answer_speech_start_s: float | None, start_ms: int,
                 ) -> tuple[bool | None, str | None]:
    """Check a detected turn (rules in the module docstring).

    Args:
        speech_start_s, turn_close_s, closed_by, speech_segments_s: the turn
            (:class:`rig.vad.TurnResult`), seconds from the start of the audio.
        answer_speech_start_s: where the answer's speech really began (the render's
            ``speech_start_s``), seconds; None when unknown or when the answer has none.
        start_ms: the VAD's start window (``TurnParams.start_ms``), ms.

    Returns:
        ``(suspect, reason)`` as described in the module docstring.
    """
    reasons: list[str] = []
    if closed_by == "no_speech" or speech_start_s is None:
        if answer_speech_start_s is not None:
            reasons.append("no_speech_detected: the VAD never confirmed the answer's speech")
    elif answer_speech_start_s is not None and turn_close_s <= answer_speech_start_s:
        reasons.append(f"closed_before_speech: closed at {turn_close_s:.2f} s, speech began "
                       f"at {answer_speech_start_s:.2f} s")
    else:
        speech = sum(max(0.0, b - a) for a, b in speech_segments_s)
        if speech < 2 * start_ms / 1000:
            reasons.append(f"short_speech: {speech:.2f} s of speech < 2 x start window "
                           f"({start_ms} ms)")
    return bool(reasons), "; ".join(reasons) or None


def suspect_columns(tr: Transcript | None, turn, heard_s: float,
                    answer_speech_start_s: float | None, start_ms: int,
                    spoken_language: str | None = None, language_setting: str = "en") -> dict:
    """The row's ``asr_suspect``, ``asr_suspect_reason``, ``turn_suspect`` and
    ``turn_suspect_reason`` for one call: :func:`asr_suspect` of ``tr`` on the heard audio
    (``heard_s`` seconds; the answer spoken in ``spoken_language``, the pipeline's
    ``asr.language`` ``language_setting``) and :func:`turn_suspect` of ``turn``
    (:class:`rig.vad.TurnResult`)."""
    a, a_why = asr_suspect(tr, turn.speech_segments_s, heard_s, spoken_language,
                           language_setting)
    t, t_why = turn_suspect(turn.speech_start_s, turn.turn_close_s, turn.closed_by,
                            turn.speech_segments_s, answer_speech_start_s, start_ms)
    return {"asr_suspect": a, "asr_suspect_reason": a_why, "turn_suspect": t,
            "turn_suspect_reason": t_why}


def clamp_timestamps(tr: Transcript, audio_s: float) -> tuple[Transcript, int]:
    """``tr`` with every segment's and word's start and end clamped to ``[0, audio_s]``
    (seconds of the transcribed audio), and the number of segments that needed it (their own
    times or a word's). Whisper predicts its
    timestamps and may place one past the end (``timestamps_past_end`` flags an overshoot
    beyond :data:`END_TOLERANCE_S`, checked on the transcript before clamping); nothing that
    reads the segments afterwards sees time the audio does not have."""
    import dataclasses

    def clamp(x: float) -> float:
        return min(max(0.0, x), audio_s)

    out, n = [], 0
    for s in tr.segments:
        words = tuple(dataclasses.replace(w, start_s=clamp(w.start_s), end_s=clamp(w.end_s))
                      for w in s.words)
        a, b = clamp(s.start_s), clamp(s.end_s)
        if (a, b) != (s.start_s, s.end_s) or words != s.words:
            n += 1
            s = dataclasses.replace(s, start_s=a, end_s=b, words=words)
        out.append(s)
    return (dataclasses.replace(tr, segments=tuple(out)) if n else tr), n
