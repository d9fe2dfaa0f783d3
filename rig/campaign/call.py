"""One call: an answer rendered under a profile, over the line, through the interviewer.

render (TTS, pauses, fillers, delay, noise) -> caller channel -> telephony path (8 kHz G.711)
-> VAD + endpointing (turn close) -> ASR on the audio up to turn close -> scorer -> decision.

Every stage is a field of :class:`rig.stages.Stages`, real by default; unit tests replace some
with fakes.

Besides the results, a row records the condition the call ran under: the profile's settings
(``profile_json`` and flat columns such as ``pace_wpm_target``, ``snr_db_target``,
``barge_in_offset_s``), what the render measured (``pace_wpm_measured``, ``snr_db_measured``,
``fillers_spoken``, ...) and what the caller channel did (``channel_chain``,
``channel_loss_pct``, ... from :meth:`rig.channel.ChannelReport.to_row`; the report comes from
the default caller-channel stage, and is left empty when a test replaces that stage).
``wer`` uses the clean reference (``wer_reference_policy``); ``wer_verbatim`` is the same
transcript against every word as spoken, fillers and repetitions included (fillers are kept
as words on both sides: Whisper's normaliser would otherwise drop "um" and "uh", and the two
policies would never differ on them). ``content_similarity`` is the cosine of the script's and
the transcript's sentence embeddings (:mod:`rig.asr.similarity`); it is null, with the reason in
``content_similarity_error``, when the ``similarity`` extra is not installed (the call goes
on). Stage attribution: :mod:`rig.campaign.attribution`. The scorer reads the transcript as
``transcript.fillers`` says (:mod:`rig.asr.transcript`); ``transcript`` and WER are as heard. The
transport columns (:data:`TRANSPORT_COLUMNS`) are on every row: ``transport`` is ``sim``
here, and what a real transport measures is null.

The row is a :class:`rig.campaign.row.CallRow` (its columns and types; ``ROW_TYPES`` and
``TRANSPORT_COLUMNS`` are re-exported here from :mod:`rig.campaign.row`), returned as a plain
dict. A call runs in two halves so that ASR and scoring can run in different places:
:func:`run_call_front` (render to ASR, WER and similarity) returns a picklable
:class:`FrontResult`, and :func:`finish_call` scores it and returns the row;
:func:`run_call` is both.
"""

from __future__ import annotations

import hashlib
import json
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rig.answers import Answer, Question
from rig.asr.checks import clamp_timestamps, suspect_columns
from rig.asr.wer import wer_columns
from rig.asr.whisper import AsrOptions
from rig.campaign.attribution import attribution_columns
from rig.campaign.faults import fault_columns, vad_missed
from rig.campaign.front import FrontResult
from rig.campaign.line_outage import line_outage
from rig.campaign.metrics import content_similarity_columns
from rig.campaign.row import (  # noqa: F401 - ROW_TYPES, TRANSPORT_COLUMNS: re-exported
    ROW_TYPES,
    TRANSPORT_COLUMNS,
    CallRow,
    with_transport_columns,
)
from rig.pipeline import PipelineConfig
from rig.profiles import Profile
from rig.scorer.base import ScoreResult
from rig.stages import (
    Stages,
    default_caller_channel,
    default_caller_channel_report,
    default_render,
    default_telephony,
)
from rig.vad import TurnParams

#: Bumped when the call procedure changes in a way that changes results.
CALL_PROCEDURE_VERSION = 1


def call_id(question: Question, answer: Answer, profile: Profile, repeat: int, seed: int,
            pipeline_version: str) -> str:
    """Stable id of a call: sha256 of (the question's rubric, answer content, profile content,
    repeat, seed, pipeline version), 16 hex digits. A rerun of the same campaign finds the
    same ids; editing one question's rubric or cutoff re-runs that question's calls only."""
    key = "|".join([question.rubric_hash, answer.answer_id, answer.script, profile.profile_id,
                    profile.content_hash, str(repeat), str(seed), pipeline_version,
                    str(CALL_PROCEDURE_VERSION)])
    return hashlib.sha256(key.encode()).hexdigest()[:16]


#: The columns of a caller-channel report (None when the stage gives no report).
_CHANNEL_COLUMNS = ("channel_steps", "channel_output_rate_hz", "channel_packets",
                    "channel_packets_lost", "channel_packets_late", "channel_loss_pct",
                    "channel_late_pct", "channel_missing_pct", "channel_missing_pct_expected",
                    "channel_clipped_pct")


def decision_for(score: float | None, cutoff: float) -> str | None:
    """``advance`` when score >= cutoff, ``reject`` below; None when there is no score."""
    if score is None:
        return None
    return "advance" if score >= cutoff else "reject"


def _failure(stage: str, exc: BaseException) -> dict:
    return {"status": "error", "error": f"{stage}: {type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc(limit=6)}


def run_call_front(*, question: Question, answer: Answer, profile: Profile, repeat: int,
                   seed: int, pipeline: PipelineConfig, pipeline_version: str,
                   campaign_id: str, stages: Stages, oracle: ScoreResult,
                   resolve_path: Callable | None = None) -> FrontResult:
    """The first half of :func:`run_call` (same arguments): render, caller channel,
    telephony, VAD and endpointing, ASR, WER and content similarity. Never raises: a failure
    in a stage is recorded in the result's row (``status`` ``error``, ``error`` naming the
    stage) and the transcript is None."""
    cid = call_id(question, answer, profile, repeat, seed, pipeline_version)
    row: dict = {
        "campaign_id": campaign_id, "call_id": cid, "answer_id": answer.answer_id,
        "question_id": question.question_id, "category": question.category,
        "tier": answer.tier, "reference_score": answer.reference_score,
        "cutoff": question.cutoff, "profile_id": profile.profile_id,
        "profile_hash": profile.content_hash, "repeat": repeat, "seed": seed,
        "pipeline_version": pipeline_version, "script": answer.clean_text,
        "asr_model": pipeline.asr.model, "scorer_model": pipeline.scorer.model,
        "temperature": pipeline.scorer.temperature,
        "silence_timeout_ms": pipeline.endpointing.silence_timeout_ms,
        "asr_device": stages.asr_device,
        "vad_engine": pipeline.vad.engine, "turn_model": pipeline.turn.model,
        "oracle_score": oracle.score, "oracle_parse_status": oracle.parse_status,
        "oracle_decision": decision_for(oracle.score, question.cutoff),
        "status": "ok", "error": None, "parse_status": "not_scored", "score": None,
        "decision": None, **profile.record(), "channel_chain": profile.channel.describe(),
        "wer_reference_policy": "clean",
        **with_transport_columns({"transport": "sim"}),
    }
    t: dict[str, float] = {}
    text: str | None = None
    turn_text: str | None = None
    stage = "render"
    try:
        t0 = time.perf_counter()
        rendered = stages.render(answer.script, profile, seed, answer_id=answer.answer_id,
                                 resolve_path=resolve_path, cache_dir=stages.audio_cache_dir)
        t["synth"] = time.perf_counter() - t0
        stage = "channel"
        t0 = time.perf_counter()
        if stages.caller_channel is default_caller_channel:
            caller, report = default_caller_channel_report(rendered.audio, profile.channel,
                                                            seed)
            row.update(report.to_row())
        else:
            caller = stages.caller_channel(rendered.audio, profile.channel, seed)
            row.update(dict.fromkeys(_CHANNEL_COLUMNS))
        line = stages.telephony(caller, pipeline.telephony.sample_rate_hz,
                                pipeline.telephony.codec)
        t["channel"] = time.perf_counter() - t0
        stage = "vad"
        t0 = time.perf_counter()
        turn_params = TurnParams.from_pipeline(pipeline)
        cut = line_outage(stages, line, turn_params, profile, rendered, pipeline)
        turn = cut.turn
        if profile.outage.duration_s:
            row.update({"outage_s": profile.outage.duration_s, "outage_start_s": cut.start_s})
        t["vad"] = time.perf_counter() - t0
        if stages.audio_dir is not None:  # the drill-down's audio (issue 17)
            stage = "audio"
            from rig.drilldown.audio import write_call_audio

            write_call_audio(stages.audio_dir, cid, caller, line, rendered, turn)
        script_words = [w for w in rendered.words if not w.is_filler]
        before = [w for w in script_words if cut.heard_word(w.start_s)]
        lost = len(script_words) - len(before)
        turn_text = " ".join(w.word for w in before) if lost else None
        row.update({
            "audio_duration_s": rendered.audio.duration_s,
            "speech_start_s": rendered.speech_start_s, "speech_end_s": rendered.speech_end_s,
            "snr_db_measured": rendered.snr_db_measured, "voice_engine": rendered.engine,
            "voice_id": rendered.voice_id, "turn_speech_start_s": turn.speech_start_s,
            "turn_close_s": turn.turn_close_s, "turn_closed_by": turn.closed_by,
            "words_total": len(script_words), "words_lost": lost,
            "truncated": lost > 0,
            "words_lost_share": lost / len(script_words) if script_words else 0.0,
            "voice_version": rendered.engine_version, "pace_rate_used": rendered.rate,
            "pace_wpm_measured": rendered.wpm_measured,
            "pauses_total_s": rendered.pauses_total_s,
            "fillers_spoken": rendered.count("filler"),
            "repetitions_spoken": rendered.count("repetition"),
        })
        stage = "asr"
        t0 = time.perf_counter()
        heard = cut.heard
        # an answer the VAD missed never reaches a VAD-gated interviewer's ASR (rig.campaign.faults)
        missed = vad_missed(len(script_words), len(before), turn.closed_by)
        tr = None if missed else stages.transcribe(heard, AsrOptions(
            model=pipeline.asr.model, language=pipeline.asr.whisper_language,
            beam_size=pipeline.asr.beam_size, compute_type=pipeline.asr.compute_type,
            word_timestamps=pipeline.asr.word_timestamps))
        t["asr"] = time.perf_counter() - t0
        lang = question.language  # the bank's: rig.language, WER or CER per language
        row["spoken_language"] = lang
        if tr is not None or pipeline.faults.vad_missed == "grade_empty":
            text = "" if tr is None else tr.text
            row.update(wer_columns(answer.clean_text, " ".join(w.word for w in before),
                                   " ".join(w.word for w in rendered.words), text, lang))
            row.update({"transcript": text,
                        "asr_avg_logprob": None if tr is None else tr.avg_logprob,
                        "asr_no_speech_prob": None if tr is None else tr.no_speech_prob,
                        "asr_language": None if tr is None else tr.language,
                        "asr_language_prob": None if tr is None else tr.language_probability,
                        **content_similarity_columns(stages.content_similarity,
                                                     answer.clean_text, text)})
        row.update(suspect_columns(tr, turn, heard.duration_s, rendered.speech_start_s,
                                   turn_params.start_ms, lang,
                                   pipeline.asr.language))  # rig.asr.checks
        if tr is not None:  # checked as the ASR wrote them, then clamped to the audio
            tr, row["asr_timestamps_clamped"] = clamp_timestamps(tr, heard.duration_s)
        row.update(fault_columns(row, pipeline.faults))
        if row["fault_excluded"]:
            text = None  # kept out of the scorer: finish_call grades nothing
    except Exception as exc:  # one failing call is recorded and the campaign goes on
        row.update(_failure(stage, exc))
        turn_text = None
    from rig.asr.transcript import scorer_text

    return FrontResult(row=row, question=question, transcript=text, seed=seed,
                       oracle_score=oracle.score, timings_s=t, turn_text=turn_text,
                       scorer_text=(None if text is None
                                    else scorer_text(text, pipeline.transcript.fillers)))


def finish_call(front: FrontResult, stages: Stages) -> dict:
    """The second half of :func:`run_call`: score ``front``'s transcript, decide, and return
    the whole row (``CallRow.to_dict()``: every column, see :mod:`rig.campaign.row`). A
    scorer failure is recorded in ``status``/``error``; a front that failed is returned
    unscored.

    Raises:
        RigError: only on a bug: a stage returned a value of the wrong type for its column
            (:class:`rig.campaign.row.CallRow` names it)."""
    row = dict(front.row)
    row["scorer_device"] = stages.scorer_device
    t = dict(front.timings_s)
    # a read-speech prompt (rig.answers.ReadSpeechQuestion) is never scored: not_scored
    if front.question.graded and not front.failed and front.transcript is not None:
        try:
            t0 = time.perf_counter()
            graded = front.scorer_text if front.scorer_text is not None else front.transcript
            res = stages.scorer.score(front.question, graded, front.seed)
            t["scorer"] = time.perf_counter() - t0
            row.update({
                "score": res.score, "parse_status": res.parse_status, "scorer_raw": res.raw,
                "scorer_reason": res.reason, "scorer_error": res.error,
                "scorer_mode": res.mode, "scorer_top_prob_min": res.top_prob_min,
                "scorer_entropy_mean_bits": res.entropy_mean_bits,
                "scorer_criteria_json": (json.dumps([c.to_dict() for c in res.criteria])
                                         if res.criteria else None),
                "decision": decision_for(res.score, front.question.cutoff),
                "score_minus_oracle": (res.score - front.oracle_score
                                       if res.score is not None
                                       and front.oracle_score is not None else None),
            })
        except Exception as exc:  # one failing call is recorded and the campaign goes on
            row.update(_failure("scorer", exc))
    row.update(attribution_columns(front, row, stages.turn_text_scorer or stages.scorer))
    for k in ("synth", "channel", "vad", "asr", "scorer"):
        row[f"t_{k}_s"] = t.get(k)
    return CallRow.from_dict(row).to_dict()


def run_call(*, question: Question, answer: Answer, profile: Profile, repeat: int, seed: int,
             pipeline: PipelineConfig, pipeline_version: str, campaign_id: str,
             stages: Stages, oracle: ScoreResult, resolve_path: Callable | None = None,
             ) -> dict:
    """Run one call and return its row (see README, "calls.parquet"):
    ``finish_call(run_call_front(...), stages)``. Never raises: a failure in any stage is
    recorded in ``status``/``error`` and the row has no score."""
    return finish_call(run_call_front(
        question=question, answer=answer, profile=profile, repeat=repeat, seed=seed,
        pipeline=pipeline, pipeline_version=pipeline_version, campaign_id=campaign_id,
        stages=stages, oracle=oracle, resolve_path=resolve_path), stages)


if TYPE_CHECKING:  # the types of render_call_audio (imported where the stages run)
    from rig.audio import Audio
    from rig.channel.chain import ChannelReport
    from rig.pipeline import Telephony
    from rig.synth.base import RenderedAnswer


@dataclass(frozen=True)
class CallAudio:
    """One answer's audio as a simulated call makes it, up to the interviewer's VAD.

    Attributes:
        rendered: the render (voice, pace, pauses, fillers, delay, noise) and what was measured
            on it (words per minute, SNR, word timings).
        audio: float32 mono after the caller channel, and after the telephony path when one
            was given (its rate, 8 kHz G.711 by default).
        channel_report: what the caller channel did (:class:`rig.channel.ChannelReport`).
    """
    rendered: RenderedAnswer
    audio: Audio
    channel_report: ChannelReport


def render_call_audio(answer: Answer, profile: Profile, seed: int, *,
                      resolve_path: Callable | None = None, cache_dir: Path | None = None,
                      telephony: Telephony | None = None) -> CallAudio:
    """Render ``answer`` under ``profile`` and pass it through the caller channel and, with
    ``telephony``, the interviewer's line: the default stages of :func:`run_call`, in its
    order, with the same seed. ``rig profiles render`` writes what this returns.

    Raises:
        RigError: an engine the profile names is not installed, or the render cannot meet
            its pace target; FileNotFoundError: a noise file or recording it names is
            missing; ValueError: settings a recorded voice cannot take (see
            :func:`rig.synth.render_answer`).
    """
    rendered = default_render(answer.script, profile, seed, answer_id=answer.answer_id,
                               resolve_path=resolve_path, cache_dir=cache_dir)
    audio, report = default_caller_channel_report(rendered.audio, profile.channel, seed)
    if telephony is not None:
        audio = default_telephony(audio, telephony.sample_rate_hz, telephony.codec)
    return CallAudio(rendered, audio, report)
