"""One call: an answer rendered under a profile, over the line, through the interviewer.

render (TTS, pauses, fillers, delay, noise) -> caller channel -> telephony path (8 kHz G.711)
-> VAD + endpointing (turn close) -> ASR on the audio up to turn close -> scorer -> decision.

Every stage is a field of :class:`Stages`, real by default; unit tests replace some with fakes.

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
the transcript's sentence embeddings (:mod:`rig.similarity`); it is null, with the reason in
``content_similarity_error``, when the ``similarity`` extra is not installed (the call goes
on). The transport columns (:data:`TRANSPORT_COLUMNS`) are on every row: ``transport`` is
``sim`` here, and what a real transport measures is null.
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
from rig.asr import AsrOptions, Transcript
from rig.errors import EngineUnavailable, RigError
from rig.pipeline import PipelineConfig
from rig.profiles import Profile
from rig.scorer.base import Scorer, ScoreResult
from rig.vad import TurnParams, TurnResult
from rig.wer import wer, wer_verbatim

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


def _default_render(*args, **kwargs):
    from rig.synth import render_answer

    return render_answer(*args, **kwargs)


def _default_caller_channel(audio, channel, seed):
    from rig.channel import apply_caller_channel

    return apply_caller_channel(audio, channel, seed)


def _default_caller_channel_report(audio, channel, seed):
    from rig.channel import apply_caller_channel_report

    return apply_caller_channel_report(audio, channel, seed)


#: The transport columns of every row. ``transport`` is ``sim`` on a simulated call (this
#: module) and ``webrtc``, ``twilio`` or ``sip`` on a real one (:mod:`rig.calls.campaign`);
#: the others are what the real transport measured, and null on a simulated call, so both
#: kinds of campaign write the same columns. ``transport_packets_sent``/``_received``/``_lost``
#: count what ``transport_packet_unit`` names: ``rtp`` (RTP packets: WebRTC, SIP) or
#: ``media_message`` (Twilio Media Streams ``media`` messages; those from the interviewer's
#: side carry chunks of any length, not one 20 ms packet each). ``transport_underruns`` counts
#: 20 ms ticks at which the caller agent's playout ran dry inside one of the interviewer's
#: talkspurts (audio resumed within 250 ms): a sender that sends nothing while silent
#: (pipecat's websocket output to Twilio) and one that sends silence (WebRTC, SIP) count alike.
#: Two delays, each on one side's clock: ``response_delay_measured_s`` is the caller agent's
#: own, from the end of the question as the agent heard it (its VAD) to the first frame of its
#: first answer, which is what the profile's ``response_delay_s`` sets (at least the agent's
#: 300 ms end-of-speech timer; negative by the offset achieved on a barge-in);
#: ``interviewer_gap_s`` is the interviewer's, from the end of its last prompt before the
#: graded turn (the question, or its last repeat request) leaving it to the start of speech
#: its VAD detected in that turn, so it adds the transport's latency both ways and the VADs'
#: onset estimates. Both are null on a simulated call (no caller agent: the render puts
#: exactly ``response_delay_s`` of silence before the answer).
TRANSPORT_COLUMNS: tuple[str, ...] = (
    "transport", "transport_codec", "transport_packet_unit", "transport_packets_sent",
    "transport_packets_received", "transport_packets_lost", "transport_jitter_ms",
    "transport_call_duration_s", "transport_underruns", "transport_hung_up_by",
    "repeat_requests", "repeat_requests_heard", "time_to_first_answer_s",
    "response_delay_measured_s", "interviewer_gap_s", "interviewer_status", "recording_path")

_STRING, _FLOAT, _INT, _BOOL = "string", "float64", "int64", "bool"
#: The type of every column of a call row in ``calls.parquet`` (``string``, ``float64``,
#: ``int64``, ``bool``). A column that is null on every row of a campaign (the transport
#: columns of a simulated one, ``error`` when no call failed) is still written with its type,
#: so the ``calls.parquet`` of any two campaigns, simulated or over a real transport, have the
#: same types and read together (``duckdb``, ``pyarrow.dataset``).
ROW_TYPES: dict[str, str] = {
    **dict.fromkeys((
        "campaign_id", "call_id", "answer_id", "question_id", "category", "tier", "profile_id",
        "profile_hash", "pipeline_version", "script", "asr_model", "scorer_model",
        "oracle_parse_status", "oracle_decision", "status", "error", "traceback",
        "parse_status", "decision", "profile_json", "accent_label", "language",
        "pauses_placement", "noise_kind", "channel_chain", "channel_steps",
        "wer_reference_policy", "voice_engine", "voice_id", "voice_version", "turn_closed_by",
        "transcript", "scorer_raw", "scorer_reason", "scorer_error", "transport",
        "transport_codec", "transport_packet_unit", "transport_hung_up_by",
        "interviewer_status", "recording_path", "scorer_mode", "scorer_criteria_json",
        "content_similarity_error"), _STRING),
    **dict.fromkeys((
        "reference_score", "cutoff", "temperature", "oracle_score", "score", "pace_rate",
        "pace_wpm_target", "pauses_pause_s", "response_delay_s", "fillers_per_100_words",
        "repetitions_per_100_words", "barge_in_offset_s", "snr_db_target", "channel_loss_pct",
        "channel_late_pct", "channel_missing_pct", "channel_missing_pct_expected",
        "channel_clipped_pct", "audio_duration_s", "speech_start_s", "speech_end_s",
        "snr_db_measured", "turn_speech_start_s", "turn_close_s", "words_lost_share",
        "pace_rate_used", "pace_wpm_measured", "pauses_total_s", "asr_avg_logprob",
        "asr_no_speech_prob", "wer", "wer_spoken", "wer_verbatim", "content_similarity",
        "score_minus_oracle",
        "t_synth_s", "t_channel_s", "t_vad_s", "t_asr_s", "t_scorer_s",
        "transport_jitter_ms", "transport_call_duration_s", "time_to_first_answer_s",
        "response_delay_measured_s", "interviewer_gap_s", "scorer_top_prob_min",
        "scorer_entropy_mean_bits"), _FLOAT),
    **dict.fromkeys((
        "repeat", "seed", "silence_timeout_ms", "pauses_count", "channel_output_rate_hz",
        "channel_packets", "channel_packets_lost", "channel_packets_late", "words_total",
        "words_lost", "fillers_spoken", "repetitions_spoken", "transport_packets_sent",
        "transport_packets_received", "transport_packets_lost", "transport_underruns",
        "repeat_requests", "repeat_requests_heard"), _INT),
    "truncated": _BOOL,
}


def with_transport_columns(row: dict) -> dict:
    """``row`` with every transport column (a row logged before they existed, on resume or
    ``rig campaign summarize``, was a simulated call: ``transport`` ``sim``, facts null)."""
    out = dict(row)
    for c in TRANSPORT_COLUMNS:
        out.setdefault(c, None)
    if out["transport"] is None:
        out["transport"] = "sim"
    return out


#: The columns of a caller-channel report (None when the stage gives no report).
_CHANNEL_COLUMNS = ("channel_steps", "channel_output_rate_hz", "channel_packets",
                    "channel_packets_lost", "channel_packets_late", "channel_loss_pct",
                    "channel_late_pct", "channel_missing_pct", "channel_missing_pct_expected",
                    "channel_clipped_pct")


def _default_telephony(audio, sample_rate_hz, codec):
    from rig.channel import telephony_path

    return telephony_path(audio, sample_rate_hz=sample_rate_hz, codec=codec)


def _default_detect_turn(audio, params: TurnParams) -> TurnResult:
    from rig.vad import detect_turn

    return detect_turn(audio, params)


def _default_transcribe(audio, options: AsrOptions) -> Transcript:
    from rig.asr import transcribe

    return transcribe(audio, options)


def _default_content_similarity(reference: str, hypothesis: str) -> float:
    from rig.similarity import content_similarity

    return content_similarity(reference, hypothesis)


def content_similarity_columns(similarity: Callable[[str, str], float], script: str,
                               transcript: str) -> dict:
    """``content_similarity`` of the transcript to the script and, when it cannot be computed,
    ``content_similarity_error`` (the reason; the extra missing reads
    :data:`rig.similarity.EXTRA_MISSING`). Never raises: the metric failing never fails the
    call."""
    try:
        return {"content_similarity": float(similarity(script, transcript)),
                "content_similarity_error": None}
    except EngineUnavailable:
        from rig.similarity import EXTRA_MISSING

        reason = EXTRA_MISSING
    except RigError as exc:  # the model package missing or altered: the message says how
        reason = str(exc)
    except Exception as exc:  # a metric's bug must not lose the call's score
        reason = f"{type(exc).__name__}: {exc}"
    return {"content_similarity": None, "content_similarity_error": reason}


@dataclass
class Stages:
    """The pipeline's stages as callables (real by default)."""
    scorer: Scorer
    render: Callable = _default_render
    caller_channel: Callable = _default_caller_channel
    telephony: Callable = _default_telephony
    detect_turn: Callable = _default_detect_turn
    transcribe: Callable = _default_transcribe
    content_similarity: Callable[[str, str], float] = _default_content_similarity
    audio_cache_dir: Path | None = None
    #: where ASR and the judge run (``cpu``/``cuda``; None: not known), set by
    #: :func:`rig.runtime.build_stages`; a row's ``asr_device``/``scorer_device``
    asr_device: str | None = None
    scorer_device: str | None = None


def decision_for(score: float | None, cutoff: float) -> str | None:
    """``advance`` when score >= cutoff, ``reject`` below; None when there is no score."""
    if score is None:
        return None
    return "advance" if score >= cutoff else "reject"


def run_call(*, question: Question, answer: Answer, profile: Profile, repeat: int, seed: int,
             pipeline: PipelineConfig, pipeline_version: str, campaign_id: str,
             stages: Stages, oracle: ScoreResult, resolve_path: Callable | None = None,
             ) -> dict:
    """Run one call and return its row (see README, "calls.parquet"). Never raises: a failure
    in any stage is recorded in ``status``/``error`` and the row has no score."""
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
        "oracle_score": oracle.score, "oracle_parse_status": oracle.parse_status,
        "oracle_decision": decision_for(oracle.score, question.cutoff),
        "status": "ok", "error": None, "parse_status": "not_scored", "score": None,
        "decision": None, **profile.record(), "channel_chain": profile.channel.describe(),
        "wer_reference_policy": "clean",
        **with_transport_columns({"transport": "sim"}),
    }
    t: dict[str, float] = {}
    stage = "render"
    try:
        t0 = time.perf_counter()
        rendered = stages.render(answer.script, profile, seed, answer_id=answer.answer_id,
                                 resolve_path=resolve_path, cache_dir=stages.audio_cache_dir)
        t["synth"] = time.perf_counter() - t0
        stage = "channel"
        t0 = time.perf_counter()
        if stages.caller_channel is _default_caller_channel:
            caller, report = _default_caller_channel_report(rendered.audio, profile.channel,
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
        turn = stages.detect_turn(line, TurnParams(
            silence_timeout_ms=pipeline.endpointing.silence_timeout_ms,
            start_ms=pipeline.vad.start_ms, confidence=pipeline.vad.confidence,
            min_volume=pipeline.vad.min_volume))
        t["vad"] = time.perf_counter() - t0
        script_words = [w for w in rendered.words if not w.is_filler]
        before = [w for w in script_words if w.start_s < turn.turn_close_s]
        lost = len(script_words) - len(before)
        row.update({
            "audio_duration_s": rendered.audio.duration_s,
            "speech_start_s": rendered.speech_start_s, "speech_end_s": rendered.speech_end_s,
            "snr_db_measured": rendered.snr_db_measured, "voice_engine": rendered.engine,
            "voice_id": rendered.voice_id, "turn_speech_start_s": turn.speech_start_s,
            "turn_close_s": turn.turn_close_s, "turn_closed_by": turn.closed_by,
            "words_total": len(script_words), "words_lost": lost,
            "truncated": lost > 0,
            "words_lost_share": lost / len(script_words) if script_words else 0.0,
            "voice_version": getattr(rendered, "engine_version", None),
            "pace_rate_used": getattr(rendered, "rate", None),
            "pace_wpm_measured": getattr(rendered, "wpm_measured", None),
            "pauses_total_s": getattr(rendered, "pauses_total_s", None),
            "fillers_spoken": sum(getattr(w, "kind", "filler" if w.is_filler else "word")
                                  == "filler" for w in rendered.words),
            "repetitions_spoken": sum(getattr(w, "kind", None) == "repetition"
                                      for w in rendered.words),
        })
        stage = "asr"
        t0 = time.perf_counter()
        heard = line.head(turn.turn_close_s)
        tr = stages.transcribe(heard, AsrOptions(
            model=pipeline.asr.model, language=pipeline.asr.language,
            beam_size=pipeline.asr.beam_size, compute_type=pipeline.asr.compute_type))
        t["asr"] = time.perf_counter() - t0
        w_full = wer(answer.clean_text, tr.text)
        w_spoken = wer(" ".join(w.word for w in before), tr.text)
        w_verbatim = wer_verbatim(" ".join(w.word for w in rendered.words), tr.text)
        row.update({
            "transcript": tr.text, "asr_avg_logprob": tr.avg_logprob,
            "asr_no_speech_prob": tr.no_speech_prob, "wer": w_full.wer,
            "wer_spoken": w_spoken.wer, "wer_verbatim": w_verbatim.wer,
            **content_similarity_columns(stages.content_similarity, answer.clean_text,
                                         tr.text),
        })
        stage = "scorer"
        t0 = time.perf_counter()
        res = stages.scorer.score(question, tr.text, seed)
        t["scorer"] = time.perf_counter() - t0
        row.update({
            "score": res.score, "parse_status": res.parse_status, "scorer_raw": res.raw,
            "scorer_reason": res.reason, "scorer_error": res.error,
            "scorer_mode": res.mode, "scorer_top_prob_min": res.top_prob_min,
            "scorer_entropy_mean_bits": res.entropy_mean_bits,
            "scorer_criteria_json": (json.dumps([c.to_dict() for c in res.criteria])
                                     if res.criteria else None),
            "decision": decision_for(res.score, question.cutoff),
            "score_minus_oracle": (res.score - oracle.score
                                   if res.score is not None and oracle.score is not None
                                   else None),
        })
    except Exception as exc:  # one failing call is recorded and the campaign goes on
        row.update({"status": "error", "error": f"{stage}: {type(exc).__name__}: {exc}",
                    "traceback": traceback.format_exc(limit=6)})
    for k in ("synth", "channel", "vad", "asr", "scorer"):
        row[f"t_{k}_s"] = t.get(k)
    return row


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
    rendered = _default_render(answer.script, profile, seed, answer_id=answer.answer_id,
                               resolve_path=resolve_path, cache_dir=cache_dir)
    audio, report = _default_caller_channel_report(rendered.audio, profile.channel, seed)
    if telephony is not None:
        audio = _default_telephony(audio, telephony.sample_rate_hz, telephony.codec)
    return CallAudio(rendered, audio, report)
