"""The stages of a real-transport call that read what the call returned, and the stage
columns of its row (:class:`rig.calls.run.caller.TransportCaller`).

The call's telephony stage places the call and fills ``got`` (the agent's result, the
interviewer's result, the bot's record, the graded answer's span, and the score source chosen,
``got['source']``, with what it needs: :meth:`rig.calls.run.score.ScoreChoice.
_choose_score`). The stages :func:`call_stages` puts after it in :func:`rig.campaign.call.
run_call` read ``got``:

* turn detection: the bot's own turn close (the interviewer's result, an in-process bot's
  frames), else the rig's view (the answer's span as the caller agent heard it);
* ASR: the interviewer's transcript, the bot's own transcript of the answer, else the rig's
  ASR of the answer's audio;
* scorer: the interviewer's or the extractor's score, else the campaign's scorer (a rig grade).

:func:`score_source` and :func:`stage_columns` give the row's ``score_source`` and the stage
times, devices and suspect checks that follow from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from rig.asr.whisper import Transcript
from rig.audio import Audio
from rig.calls.bots.score_sources import RIG_GRADES
from rig.scorer.base import Scorer, ScoreResult
from rig.stages import Stages
from rig.vad import TurnResult


def call_stages(stages: Stages, got: dict, seed: int, telephony: Callable[..., Audio],
                answer_audio: Callable[[dict], Audio], external_interviewer: bool) -> Stages:
    """``stages`` with the telephony stage ``telephony`` (it fills ``got``) and the turn
    detection, ASR and scorer stages that read ``got``; ``answer_audio(got)`` is the graded
    answer's audio for the rig's own ASR. ``external_interviewer``: the interviewer is not
    the in-process loopback one (where its scorer ran is not known here)."""

    def detect_turn(_line: Audio, _params) -> TurnResult:
        if got["source"] != "interviewer" and got.get("bot_q") is None:
            sp = got["span"]  # the rig's view: the answer's span
            return TurnResult(sp.start_s - sp.origin_s, sp.end_s - sp.origin_s,
                              "interviewer_spoke" if sp.end_by == "interviewer_spoke"
                              else "end_of_audio", ())
        q, origin = got.get("q") or got["bot_q"], got["origin"]
        start = q["turn_speech_start_epoch_s"]
        closed_by = {"silence_timeout": "silence_timeout", "no_speech": "no_speech",
                     "interviewer_spoke": "interviewer_spoke",
                     "media_outage": "media_outage"}.get(q["turn_closed_by"],
                                                                   "end_of_audio")
        return TurnResult(None if start is None else start - origin,
                          q["turn_close_epoch_s"] - origin, closed_by, ())

    def transcribe(audio: Audio, options) -> Transcript:
        if got["source"] == "interviewer":
            q = got["q"]
            return Transcript(q["transcript"], q["asr_avg_logprob"],
                              q["asr_no_speech_prob"], audio.duration_s)
        if got.get("text"):  # the bot's own transcript of the answer
            return Transcript(got["text"], None, None, audio.duration_s)
        return stages.transcribe(answer_audio(got), options)  # the rig's ASR

    def scorer_result() -> ScoreResult:
        if got["source"] == "extractor":
            ex = got["extracted"]
            return ScoreResult(ex.score, "ok" if ex.score is not None else "missing_field",
                               ex.raw, ex.reason, None, 0.0, stages.scorer.temperature,
                               seed, None if ex.score is not None else
                               "the extractor found no score", stages.scorer.mode)
        q = got["q"]
        return ScoreResult(q["score"], q["parse_status"], q["scorer_raw"],
                           q["scorer_reason"], None, q["t_scorer_s"],
                           stages.scorer.temperature, seed, q["scorer_error"],
                           stages.scorer.mode)

    class _Chosen(Scorer):
        """The interviewer's or the extractor's score; the campaign's scorer for a rig
        grade (``got['source']`` is known when the scorer stage runs)."""
        name = "score_source"
        temperature = stages.scorer.temperature
        mode = stages.scorer.mode

        def score(self, q, transcript, seed_):
            if got.get("source") in ("interviewer", "extractor"):
                return scorer_result()
            return stages.scorer.score(q, transcript, seed_)

        def _complete(self, *a, **k):  # pragma: no cover - unused
            raise NotImplementedError

    # the interviewer's ASR ran where its own process put it (unknown here); its scorer
    # is the campaign's when the interviewer is the in-process loopback one
    # score_turn_text is graded by the campaign's own scorer (the oracle's; always here)
    return replace(stages, scorer=_Chosen(),
                   turn_text_scorer=stages.turn_text_scorer or stages.scorer,
                   telephony=telephony, detect_turn=detect_turn, transcribe=transcribe,
                   asr_device=None,
                   scorer_device=None if external_interviewer else stages.scorer_device)


def score_source(got: dict, row: dict) -> str | None:
    """The row's ``score_source``: the source chosen, or None when none gave a score."""
    src = got.get("source")
    if src == "interviewer" and row.get("parse_status") == "not_scored":
        src = None  # the bot's own result held no score: no source gave one
    return src


def stage_columns(src: str | None, got: dict, stages: Stages) -> dict:
    """The stage times, devices and suspect checks of a real call's row whose score came
    from ``src``."""
    # the suspect checks read the VAD's speech segments, which a real call's interviewer
    # does not report (detect_turn above has none): not checked, rather than all flagged
    cols: dict = {"t_vad_s": None, "asr_suspect": None, "asr_suspect_reason": None,
                  "turn_suspect": None, "turn_suspect_reason": None}
    if src == "interviewer":
        # the detect_turn, transcribe and scorer stages above only read the interviewer's
        # result: their stage times would be near zero. The interviewer's own, when given.
        q = got.get("q") or {}
        cols.update({"t_asr_s": q.get("t_asr_s"), "t_scorer_s": q.get("t_scorer_s")})
        return cols
    # the rig's ASR and scorer ran here (or none did: the bot's text, an extractor)
    cols.update({"asr_device": stages.asr_device if (
        src in ("rig_grade_rig_asr", "rig_grade_sent_audio")
        or (src == "extractor" and not got.get("text"))) else None,
        "scorer_device": stages.scorer_device if src in RIG_GRADES else None})
    if src == "extractor":  # no scorer of the rig's ran: no mode, no time
        cols.update(t_scorer_s=None, scorer_mode=None)
    return cols
