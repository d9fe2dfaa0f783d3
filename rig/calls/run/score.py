"""The score of a real-transport call: which of the campaign's score sources gives it, and
what the bot did (:class:`ScoreChoice`, mixed into :class:`rig.calls.run.caller.TransportCaller`).

The sources are tried in order (:mod:`rig.calls.bots.score_sources`); a bot with no results
route is learned once per campaign (:class:`rig.calls.interviewer.results.NoResultsRoute`); the
bot's record is the link's, the loopback reference interviewer's, or the agent's view; the whole
interview's map goes to ``recordings/<call_id>.interview.json``.
"""

from __future__ import annotations

import json
from dataclasses import replace

from rig.audio import Audio
from rig.calls.agent.loop import AgentResult
from rig.calls.bots.interview_map import InterviewMap, agent_turns
from rig.calls.bots.record import BotRecord
from rig.calls.bots.score_sources import run_extractor
from rig.calls.interviewer.results import NoResultsRoute
from rig.paths import write_text_atomic

#: Without the bot's own turn close, the graded audio ends this long after the answer's last
#: frame (s): the line's latency and the answer's last syllable, not the call's trailing silence
#: (in which Whisper invents words)
AFTER_ANSWER_S = 1.5


class ScoreChoice:
    """The score half of a transport caller. The host (a ``TransportCaller``) provides
    ``score_sources``, ``interviewer_url``, ``result_timeout_s``, ``no_results_route``,
    ``out_dir``, ``_lock``, ``_service``, ``_bot_records``, ``_extractors``, ``_say`` and
    ``_wait_result``."""

    # --- the score ---------------------------------------------------------------------------
    def _learn_no_route(self, exc: NoResultsRoute) -> None:
        """Learn once per campaign that the interviewer serves no results; say what follows."""
        with self._lock:
            if self.no_results_route:
                return
            self.no_results_route = exc.url
        rest = [str(s) for s in self.score_sources if s.kind != "interviewer"]
        self._say(f"the interviewer has no results route (GET {exc.url}: 404): "
                  + (f"scores come from {' then '.join(rest)} for every call"
                     if rest else "stopping (see --score-source)"))

    def _bot_record(self, attempt_id: str, res: AgentResult, result: dict | None
                    ) -> BotRecord:
        """What the bot did: the link's record when it gives one; the loopback reference
        interviewer's from its result (its turns as the agent heard them, its transcript of
        each answer as ``heard``, its result as its final JSON message); else the agent's
        view (the bot's turns as the agent's ASR heard them)."""
        rec = self._bot_records.pop(attempt_id, None)
        if rec is None:
            rec = BotRecord(said=agent_turns(res))
        if not rec.said:
            rec = replace(rec, said=agent_turns(res))
        if result and self._service is not None:  # the reference interviewer, loopback
            t0 = res.t0_epoch_s
            heard = tuple((q["turn_speech_start_epoch_s"] - t0 if q.get(
                "turn_speech_start_epoch_s") is not None else q["turn_close_epoch_s"] - t0,
                q.get("transcript") or "") for q in result.get("questions") or ())
            rec = replace(rec, heard=rec.heard or heard,
                          messages=(*rec.messages, dict(result)))
        return rec

    def _choose_score(self, base: str, cid: str, attempt_id: str, got: dict) -> None:
        """Try :attr:`score_sources` in order; fill ``got`` with ``source`` and what it
        needs (``q`` and ``result``; ``extracted``; ``text`` or None for the rig's ASR).

        Raises:
            NoResultsRoute: the interviewer has no results route and no source follows.
            RuntimeError: no result within the wait, or a failed result.
        """
        span, bot = got["span"], got["bot"]
        for k, src in enumerate(self.score_sources):
            last = k == len(self.score_sources) - 1
            if src.kind == "interviewer":
                if self.no_results_route:
                    if last:
                        raise NoResultsRoute(self.no_results_route)
                    continue
                try:
                    result = got.get("result") if not self.interviewer_url else (
                        self._wait_result(base, cid, attempt_id))
                except NoResultsRoute as exc:
                    self._learn_no_route(exc)
                    if last:
                        raise
                    continue
                if result is None:
                    raise RuntimeError(f"no interviewer result for call {cid} within "
                                       f"{self.result_timeout_s:g} s")
                if result.get("status") != "ok" or not result.get("questions"):
                    raise RuntimeError(f"interviewer: {result.get('status')}: "
                                       f"{result.get('error')}")
                q = result["questions"][-1]
                if q.get("parse_status") == "not_scored" and not last:
                    continue  # the bot's own result holds no score (an in-process bot)
                got.update(source="interviewer", result=result, q=q)
                return
            bq = got.get("bot_q")  # the bot's own view of the turn, when it gives one
            text = ((bq.get("transcript") if bq is not None else None)
                    or (span.heard_text if span is not None else None) or None)
            if src.kind == "extractor":
                got.update(source="extractor", text=text, extracted=run_extractor(
                    self._extractors[str(src)], bot, str(src)))
                return
            if src.own_asr:
                text = None
            # the rig's ASR grades the bot's input when the transport exposes it
            # (in-process), else the audio the rig sent (not what the bot took in)
            got.update(source="rig_grade_bot_transcript" if text else "rig_grade_rig_asr"
                       if bot.received_audio is not None else "rig_grade_sent_audio",
                       text=text)
            return

    def _read_heard(self, got: dict) -> None:
        """What the interviewer heard of the answer: ``got['bot_q']`` (its own view of the
        turn) from its user-turn events when no result gave one (an external bot's RTVI
        messages: :mod:`rig.calls.bots.heard`), and ``got['heard_speech']`` (True/False, None:
        unknown).

        Raises:
            InterviewerDidNotHear: a bot (in-process, or an external interviewer) raised no
                user-speech event during the answer: the call gets no score.
        """
        from rig.calls.bots.heard import (
            NOT_HEARD,
            InterviewerDidNotHear,
            record_turn,
            turn_result,
            user_turn_events,
        )

        res, bot, span = got["agent"], got["bot"], got["span"]
        bq = got.get("bot_q")
        if bq is None and self.interviewer_url and user_turn_events(bot) is not None:
            turn = record_turn(bot, span.start_s, res.duration_s)
            before = [s.end_s for s in bot.said
                      if s.end_s is not None and s.end_s <= span.start_s + 0.5]
            prompt_end = (max(before) if before else span.start_s) + res.t0_epoch_s
            bq = got["bot_q"] = turn_result(turn, res.t0_epoch_s, prompt_end,
                                            span.question_id)
        heard = None if bq is None else bq.get(
            "heard_speech", bq.get("turn_speech_start_epoch_s") is not None)
        got["heard_speech"] = heard
        if heard is False and (self.transport == "pipecat" or self.interviewer_url):
            why = self._compat.reason(got.get("attempt_id"))  # the pipeline check's finding
            raise InterviewerDidNotHear(
                f"{NOT_HEARD} (the bot raised no user-speech event from the answer's start "
                f"at {span.start_s:.1f} s until it next spoke; "
                + (f"rig's check of its pipeline: {why})" if why
                   else "its VAD or turn detector heard nothing)"))

    def _bot_columns(self, got: dict) -> dict:
        """The row's bot columns (``interviewer_said``, ``interviewer_heard``,
        ``interviewer_heard_speech``, ``interviewer_heard_context``, ``question_asked``,
        ``question_match_similarity``); what the bot said is kept in a failed call too (from
        its record when the call broke off before the interview was mapped)."""
        span, imap, bq = got.get("span"), got.get("imap"), got.get("bot_q") or {}
        bot = self._bot_records.pop(got.get("attempt_id"), None)  # a call that broke off
        said = imap.said_text() if imap else (" | ".join(
            t.text for t in bot.said if t.text.strip()) if bot is not None else None)
        heard = (bq.get("transcript") if bq.get("heard_speech") is not None
                 else span.heard_text if span else None)
        return {"interviewer_said": said or None, "interviewer_heard": heard,
                "interviewer_heard_speech": got.get("heard_speech"),
                "interviewer_heard_context": bq.get("context_text"),
                "question_asked": span.asked_text if span else None,
                "question_match_similarity": span.match_similarity if span else None}

    @staticmethod
    def _answer_audio(got: dict) -> Audio:
        """The interviewer-side audio of the graded answer, from its origin to where the bot
        took the turn (its own turn close; without one, the answer's span, at most
        :data:`AFTER_ANSWER_S` past the answer's last frame: never the call's trailing
        silence): the bot's input when the transport exposes it, else what the agent sent."""
        span, bot, res = got["span"], got["bot"], got["agent"]
        audio = bot.received_audio if bot.received_audio is not None else res.sent
        sr = audio.sample_rate_hz
        end_s = span.end_s
        if got.get("bot_q") is not None:  # up to the bot's own turn close
            end_s = got["bot_q"]["turn_close_epoch_s"] - res.t0_epoch_s
        elif got.get("answer_s") is not None:
            end_s = min(end_s, span.origin_s + got["answer_s"] + AFTER_ANSWER_S)
        a, b = max(0, round(span.origin_s * sr)), max(0, round(end_s * sr))
        return Audio(audio.samples[a:b].copy(), sr)

    def _write_interview(self, cid: str, got: dict) -> str | None:
        imap: InterviewMap | None = got.get("imap")
        if imap is None:
            return None
        path = self.out_dir / "recordings" / f"{cid}.interview.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps({
            "call_id": cid, "score_source": got.get("source"),
            "no_results_route": self.no_results_route, **imap.to_dict()}, indent=1))
        return str(path)

