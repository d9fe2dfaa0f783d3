"""One answer of a recording through one pipeline version: turn detection, ASR, scorer.

The recorded audio is already on a line: it is resampled to the pipeline's rate and, only
when asked (``codec_reapplied``), sent through the pipeline's codec again. With a caller
profile, its noise and caller channel (codec chain, packet loss, jitter, band limit) are
applied to the real speech first; the profile's voice, pace, pause, filler, delay and
interruption settings shape synthetic speech only and do not apply.

**Truncation without a script.** A recording has no script to count lost words against, so
the version's own VAD and timer are run over the whole answer span: the first turn's close is
where the version's interviewer takes the turn (what it heard ends there); any speech the VAD
finds after it (``speech_after_close_s``, more turns) is the candidate still answering, lost
to that version: ``truncated``. ``words_lost`` counts the words the version's ASR finds in the
audio after the close (``lost_text``).

**Heard nothing.** When the version's VAD finds no speech in the answer (too short or too
quiet for it), its interviewer never heard the answer: the row says ``closed_by: no_speech``
and ``parse_status: no_speech``, and nothing is transcribed or graded (never a score for an
answer the interviewer did not hear). The pair is then not paired; the summary counts such
turns per version (``heard_nothing_a``/``_b``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from rig.answers import Question
from rig.asr.transcript import scorer_text
from rig.asr.wer import wer
from rig.asr.whisper import AsrOptions, Transcript
from rig.audio import Audio
from rig.campaign.call import decision_for
from rig.pipeline import PipelineConfig
from rig.profiles import Profile
from rig.scorer.base import Scorer
from rig.vad import Turn, TurnParams

_WORD = re.compile(r"[\w']+")


@dataclass(frozen=True)
class Version:
    """A pipeline version under replay: ``label`` A or B, its configuration and
    ``pipeline_version``; ``logged``: A's results are read from the metadata, not replayed."""
    label: str
    pipeline: PipelineConfig
    version: str
    logged: bool = False


@dataclass
class VersionStages:
    """A version's stages as callables (real: :func:`rig.replay.worker.build_version_stages`;
    fakes in unit tests)."""
    scorer: Scorer | None
    transcribe: Callable[[Audio, AsrOptions], Transcript]
    detect_turns: Callable[[Audio, TurnParams], tuple[Turn, ...]]
    scorer_device: str | None = None


def line_audio(clip: Audio, pipeline: PipelineConfig, profile: Profile | None, seed: int,
               codec_reapplied: bool) -> Audio:
    """What the version's interviewer receives of ``clip`` (float32 mono, the pipeline's
    rate): the profile's noise and caller channel when given, then resampling (anti-aliased,
    soxr) and, with ``codec_reapplied``, the pipeline's G.711 codec.

    Raises:
        ValueError, FileNotFoundError: the profile's noise cannot be made (see
            :func:`rig.synth.noise.add_noise`)."""
    if profile is not None:
        from rig.channel import apply_caller_channel
        from rig.synth.noise import add_noise

        clip, _ = add_noise(clip, profile.noise, seed)
        clip = apply_caller_channel(clip, profile.channel, seed)
    tel = pipeline.telephony
    if codec_reapplied and tel.codec != "none":
        from rig.channel import telephony_path

        return telephony_path(clip, sample_rate_hz=tel.sample_rate_hz, codec=tel.codec)
    return clip.resample(tel.sample_rate_hz)


def asr_options(pipeline: PipelineConfig) -> AsrOptions:
    """The pipeline's ASR settings."""
    a = pipeline.asr
    return AsrOptions(model=a.model, language=a.whisper_language, beam_size=a.beam_size,
                      compute_type=a.compute_type, word_timestamps=a.word_timestamps)


def replay_turn(clip: Audio, question: Question, version: Version, stages: VersionStages, *,
                profile: Profile | None = None, codec_reapplied: bool = False, seed: int = 0,
                reference: str | None = None) -> dict:
    """Replay one answer under ``version``; the row's turn, ASR and scorer columns
    (:class:`rig.replay.rows.ReplayRow`). A scorer failure or a reply that cannot be parsed
    is recorded (``parse_status``, ``scorer_error``), never a score.

    Args:
        clip: the candidate's answer span, float32 mono at the recording's rate.
        question: the bank question (its rubric as the version's scorer grades it).
        reference: what the candidate said (a person's transcript), for ``wer``.

    Raises:
        Exception: a stage failed (the caller records it on the row).
    """
    p = version.pipeline
    line = line_audio(clip, p, profile, seed, codec_reapplied)
    t0 = time.perf_counter()
    turns = stages.detect_turns(line, TurnParams.from_pipeline(p))
    t_vad = time.perf_counter() - t0
    if turns:
        first, after = turns[0], turns[1:]
        close, closed_by, start = first.close_s, first.closed_by, first.start_s
    else:  # the version's interviewer never heard the answer start: nothing to grade
        return {"turn_duration_s": line.duration_s, "speech_start_s": None,
                "turn_close_s": None, "closed_by": "no_speech", "truncated": None,
                "speech_after_close_s": None, "words_lost": None, "transcript": None,
                "reference_transcript": reference, "parse_status": "no_speech",
                "cutoff": question.cutoff, "t_vad_s": t_vad}
    opts = asr_options(p)
    t0 = time.perf_counter()
    tr = stages.transcribe(line.head(close), opts)
    lost_text = None
    if after:
        lost_text = stages.transcribe(line.slice(close), opts).text
    t_asr = time.perf_counter() - t0
    row = {
        "turn_duration_s": line.duration_s, "speech_start_s": start, "turn_close_s": close,
        "closed_by": closed_by, "truncated": bool(after),
        "speech_after_close_s": float(sum(t.speech_s for t in after)),
        "words_lost": len(_WORD.findall(lost_text)) if lost_text is not None else 0,
        "lost_text": lost_text, "transcript": tr.text, "asr_avg_logprob": tr.avg_logprob,
        "asr_no_speech_prob": tr.no_speech_prob, "reference_transcript": reference,
        "wer": wer(reference, tr.text).wer if reference else None,
        "cutoff": question.cutoff, "t_vad_s": t_vad, "t_asr_s": t_asr,
    }
    row.update(score_text(question, scorer_text(tr.text, p.transcript.fillers), version,
                          stages, seed))
    return row


def score_text(question: Question, text: str, version: Version, stages: VersionStages,
               seed: int) -> dict:
    """The scorer's columns for ``text`` (score, parse status, decision by the question's
    cutoff, criteria, seconds)."""
    import json

    assert stages.scorer is not None
    graded = question.scored_rubric(version.pipeline.scorer.style_criteria)
    t0 = time.perf_counter()
    res = stages.scorer.score(graded, text, seed)
    return {
        "score": res.score, "parse_status": res.parse_status, "scorer_error": res.error,
        "scorer_criteria_json": (json.dumps([c.to_dict() for c in res.criteria])
                                 if res.criteria else None),
        "decision": decision_for(res.score, question.cutoff),
        "t_scorer_s": time.perf_counter() - t0,
    }


def logged_row(question: Question, transcript: str | None, score: float | None,
               decision: str | None, reference: str | None) -> dict:
    """Version A's row from the results stored with the recording (``--logged-a``): no turn
    close is known; the decision is the stored one, else the score against the bank's cutoff.

    Raises:
        ValueError: no logged score and no logged decision for this answer."""
    if score is None and decision is None:
        raise ValueError("no logged score or decision of version A for this answer (score / "
                         "turns[i].score in the metadata)")
    return {
        "transcript": transcript, "reference_transcript": reference,
        "wer": wer(reference, transcript).wer if reference and transcript is not None else None,
        "score": score, "parse_status": "ok" if score is not None else "not_scored",
        "decision": decision or decision_for(score, question.cutoff),
        "cutoff": question.cutoff,
    }
