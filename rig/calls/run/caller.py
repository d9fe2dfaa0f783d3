"""A campaign call over a real transport, with the simulated call's row schema plus transport
facts.

:class:`TransportCaller` is a drop-in for :func:`rig.campaign.call.run_call` (the runner's
``call_fn``). It runs the same :func:`run_call` with three stages replaced: the telephony
stage places a real call (the caller agent plays the rendered answer, after the profile's
caller channel, over the transport to the interviewer), and the turn detection, ASR and
scorer stages (:mod:`rig.calls.run.stages`) return what the interviewer reported for that call id
(its VAD's turn close, its transcript, its score). Every column of the simulated row is therefore
computed the same way (WER against the script, truncation from the render's word timings, decision,
score minus oracle, content similarity of the interviewer's transcript to the script), and the
transport columns (:data:`rig.campaign.row.TRANSPORT_COLUMNS`, on a simulated row too: ``transport``
``sim``, the rest null) hold what this call measured (:mod:`rig.calls.run.call_row`, which also
writes the call's two-sided recording).

Times: the interviewer stamps its turn close in wall-clock epoch seconds; the agent knows when
its answer's first frame went out. ``turn_close_s`` is the close minus the answer's *origin*
(its first frame minus the response delay, where the render's word timings start), so it
compares with the simulated ``turn_close_s``; it includes the one-way transport latency
(milliseconds on loopback). ``response_delay_measured_s`` is measured on the agent's clock
alone (:attr:`rig.calls.agent.loop.AgentResult.response_delay_s`), ``interviewer_gap_s`` on the
interviewer's alone: neither mixes the two sides' events.

Stage times: ``t_synth_s`` is the render's, as on a simulated call; ``t_channel_s`` is the
caller channel plus the whole real call (placing it, the call in real time, and waiting for
the interviewer's result), so about ``transport_call_duration_s`` and more; ``t_asr_s`` and
``t_scorer_s`` are what the interviewer reported for the graded turn (null when it reported
none, as an external interviewer may not); ``t_vad_s`` is null (the interviewer's VAD runs
live during the call: it has no stage time).

Without ``interviewer_url`` the reference interviewer runs in-process on a loopback port
(:class:`rig.calls.interviewer.service.ServiceThread`), sharing the campaign's scorer.

Concurrency: one ``TransportCaller`` may be called from K threads at once (the runner's
``--concurrency K``). Each call opens its own sockets on ephemeral ports (listed in
:attr:`TransportCaller.placed`), runs its own event loop in its thread and keeps its state in
the call; the loopback interviewer is started once (under a lock) and serves all K calls from
its event loop; the models the calls share are serialised (:mod:`rig.calls.locks`). Each
call's recording is ``recordings/<call_id>.wav`` and its result is the interviewer's record
for its call id and attempt id.
"""

from __future__ import annotations

import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rig.answers import Answer, Question, load_bank
from rig.audio import Audio
from rig.calls.agent.answers import AgentAnswer, agent_answer
from rig.calls.agent.loop import AgentResult, AgentSettings, render_replies
from rig.calls.bots.heard import words_unheard
from rig.calls.bots.interview_map import map_interview
from rig.calls.bots.score_sources import DEFAULT_SCORE_SOURCES, SourceSpec, load_extractor
from rig.calls.interviewer.results import NoResultsRoute, ResultStore, poll_result
from rig.calls.interviewer.session import InterviewerSettings
from rig.calls.run.call_row import transport_columns, write_recording
from rig.calls.run.compat_log import CompatLog, network_note
from rig.calls.run.options import is_media_stream_url
from rig.calls.run.place import CallPlacing
from rig.calls.run.score import ScoreChoice
from rig.calls.run.stages import call_stages, score_source, stage_columns
from rig.calls.run.turn_taking import taking_columns
from rig.calls.transports.twilio import scrub_credentials
from rig.campaign.call import call_id, run_call
from rig.campaign.row import CallRow
from rig.profiles import Profile
from rig.scorer.base import Scorer, ScoreResult
from rig.stages import Stages

Transport = Literal["sim", "webrtc", "twilio", "sip", "pipecat"]
#: How long a call that failed on the caller's side waits for the interviewer's result (s).
FAILED_CALL_RESULT_S = 10.0


@dataclass
class TransportCaller(CallPlacing, ScoreChoice):
    """Places campaign calls over ``transport`` (a context manager: it owns the loopback
    interviewer it starts).

    Args:
        transport: ``twilio`` (Media Streams over a websocket), ``webrtc`` or ``sip``.
        answers_path: the answer bank (the loopback interviewer's question set).
        out_dir: recordings go to ``out_dir/recordings/<call_id>.wav`` (left: caller sent,
            right: interviewer received at the caller).
        interviewer_url: an interviewer already serving (``rig interviewer serve``); None
            starts the reference interviewer on 127.0.0.1.
        agent: the caller agent's listening settings.
        interviewer_settings: for the loopback interviewer.
        result_timeout_s: how long to wait for the interviewer's result after hang-up
            (``--result-wait-s``); a progress line goes to ``progress`` every 10 s.
        score_sources: where each call's score comes from, tried in order
            (:mod:`rig.calls.bots.score_sources`; ``--score-source``).
        progress: where the result wait's progress lines and the "no results route" notice
            go (default: stderr).
        replay: call id -> a call :attr:`captured` earlier: the call is not placed again, its
            captured audio, bot record and result are scored (re-grading a call under another
            score source; tests).
        keep_calls: keep every call's capture in :attr:`captured`.
        twilio_to, twilio_from: with a Twilio account: place each call with the REST API from
            ``twilio_from`` to the interviewer's number ``twilio_to`` (credentials from the
            environment, :class:`rig.calls.transports.twilio.TwilioCredentials`); Twilio then
            connects the call's audio to the agent's media-stream server on
            ``agent_host:agent_port``, reachable by Twilio at ``stream_url`` (``wss://``).
            Without them the agent plays Twilio's part itself against the interviewer's
            ``/twilio/media`` (loopback).
        http_client: a ``twilio.http.HttpClient`` (tests).
    """
    transport: Transport
    answers_path: Path
    out_dir: Path
    interviewer_url: str | None = None
    #: with transport ``pipecat``: the bot, ``pipecat:PATH.py:FACTORY`` (run in-process on an
    #: in-memory transport, :mod:`rig.calls.transports.pipecat_inproc`; ``--interviewer``)
    bot: str | None = None
    #: with transport ``pipecat``: ``real`` (default) or ``fast``, an event loop that skips
    #: idle waits (:class:`rig.calls.bots.fastclock.IdleSkipLoop`; ``--bot-clock``)
    bot_clock: Literal["real", "fast"] = "real"
    agent: AgentSettings = field(default_factory=AgentSettings)
    interviewer_settings: InterviewerSettings | None = None
    result_timeout_s: float = 300.0
    conduct: str | None = None  # the conduct list (--conduct; None: rig/data/conduct.yaml)
    twilio_to: str | None = None
    twilio_from: str | None = None
    stream_url: str | None = None
    #: NAME of the env variable holding the bearer token of ``GET /results`` (read on use)
    results_token_env: str | None = None
    agent_host: str = "127.0.0.1"
    agent_port: int = 0
    http_client: object | None = None
    score_sources: tuple[SourceSpec, ...] = DEFAULT_SCORE_SOURCES
    progress: Callable[[str], None] | None = None
    replay: dict | None = None
    keep_calls: bool = False
    #: call id -> ``{"agent", "stats", "bot", "result", "attempt_id"}`` (with ``keep_calls``)
    captured: dict = field(default_factory=dict, repr=False)
    #: the URL that answered "no results route" (learned on the first call), else None
    no_results_route: str | None = None
    store: ResultStore = field(default_factory=ResultStore)
    _route_known: bool = False  # the results route answered once: a 404 is "not yet"
    #: one record per call placed, in the order they ended: ``call_id``, ``attempt_id``,
    #: ``transport``, ``local_ports`` (the caller's sockets: ``{"sip": .., "rtp": ..}``,
    #: ``{"ice": [...]}`` or ``{"ws": ..}``), ``thread``, ``started_epoch_s``,
    #: ``ended_epoch_s``, ``error``
    placed: list[dict] = field(default_factory=list)
    _service: object | None = None
    _thread: object | None = None
    _streams: object | None = None
    _placing: dict = field(default_factory=dict, repr=False)  # attempt id -> its record
    _replies: dict = field(default_factory=dict, repr=False)  # attempt id -> reply audio
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _bot_records: dict = field(default_factory=dict, repr=False)  # attempt id -> BotRecord
    _extractors: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.transport not in ("webrtc", "twilio", "sip", "pipecat"):
            raise ValueError(f"TransportCaller: transport must be webrtc, twilio, sip or "
                             f"pipecat, got {self.transport!r}")
        self._bot_app = self._inproc = None
        self._compat = CompatLog(self.out_dir, self._say, self.bot or self.interviewer_url,
                                 self.transport)
        if self.transport == "pipecat":  # a bad bot file fails before any call (ConfigError)
            from rig.calls.bots.app import load_bot

            self._bot_app, self._inproc = load_bot(self.bot or ""), {}
            self._compat.loaded(self._bot_app.notes)  # said now, before the first call
        elif self.interviewer_url and self.replay is None:
            self._compat.loaded([network_note(self.transport)])
        if not self.score_sources:
            raise ValueError("TransportCaller: score_sources is empty")
        for src in self.score_sources:  # a bad module or function fails before any call
            if src.kind == "extractor":
                self._extractors[str(src)] = load_extractor(src)

    # --- the interviewer ---------------------------------------------------------------------
    def _ensure_interviewer(self, pipeline, scorer: Scorer) -> str:
        """The interviewer's base URL; the loopback interviewer is started on first use, once
        (the first of K concurrent calls starts it, the others wait on the lock)."""
        if self.interviewer_url:  # a bot's Media Streams websocket is dialled as given
            url = self.interviewer_url
            return url if is_media_stream_url(url) else url.rstrip("/")
        if self.transport == "pipecat":  # the bot runs in-process: no interviewer service
            return ""
        with self._lock:
            if self._thread is None:
                self._start_interviewer(pipeline, scorer)
            return self._thread.url

    def _start_interviewer(self, pipeline, scorer: Scorer) -> None:
        from rig.calls.interviewer.service import InterviewerService, ServiceThread, restrict_ice_to
        from rig.calls.interviewer.session import warm_tts

        if self.transport == "webrtc":
            restrict_ice_to("127.0.0.1")
        settings = self.interviewer_settings or InterviewerSettings()
        bank = load_bank(self.answers_path)
        warm_tts(settings, bank.questions)
        self.store = ResultStore(self.out_dir / "interviewer_results.jsonl")
        self._service = InterviewerService(pipeline, bank, scorer, self.store, settings)
        if self.transport == "sip":
            from rig.calls.transports.sip import SipInterviewerThread

            self._thread = SipInterviewerThread(self._service).start()
        else:
            self._thread = ServiceThread(self._service.app()).start()

    def close(self) -> None:
        with self._lock:
            if self._thread is not None:
                self._thread.stop()
                self._thread = None
            if self._streams is not None:
                self._streams.close()
                self._streams = None

    def __enter__(self) -> TransportCaller:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _wait_result(self, base: str, cid: str, attempt_id: str,
                     timeout_s: float | None = None) -> dict | None:
        """The interviewer's result of this attempt (a retried call's earlier result, stored
        under the same call id, is skipped), or None after ``timeout_s`` (default
        ``result_timeout_s``)."""
        timeout_s = self.result_timeout_s if timeout_s is None else timeout_s
        if self.transport == "pipecat":  # read from the bot's frames: nothing to wait for
            return (self._inproc.get(attempt_id) or (None, None))[1]
        if not self.interviewer_url:
            return self.store.wait(cid, timeout_s, attempt_id, progress=self._say)
        if self.no_results_route:
            return None
        row = poll_result(base, cid, attempt_id, timeout_s, self.results_token_env,
                          route_known=self._route_known, progress=self._say)
        self._route_known = True
        return row

    def _say(self, line: str) -> None:
        (self.progress or (lambda m: print(m, file=sys.stderr, flush=True)))(line)

    def _interviewer_said(self, base: str, cid: str, attempt_id: str,
                          result: dict | None = None) -> str:
        """``"; interviewer: STATUS: ERROR"`` from the interviewer's result of this attempt
        when it failed (waiting at most ``FAILED_CALL_RESULT_S`` for it), else ``""``: when
        the call goes wrong on the caller's side, the interviewer's side often says why."""
        if result is None:
            try:
                result = self._wait_result(base, cid, attempt_id,
                                           min(self.result_timeout_s, FAILED_CALL_RESULT_S))
            except NoResultsRoute as exc:  # learned here: the next call knows
                self._learn_no_route(exc)
                return ""
            except Exception:  # the interviewer cannot be reached either
                return ""
        if not result or (result.get("status") == "ok" and not result.get("error")):
            return ""
        return f"; interviewer: {result.get('status')}: {result.get('error')}"

    def __call__(self, *, question: Question, answer: Answer, profile: Profile, repeat: int,
                 seed: int, pipeline, pipeline_version: str, campaign_id: str, stages: Stages,
                 oracle: ScoreResult, resolve_path=None) -> dict:
        cid = call_id(question, answer, profile, repeat, seed, pipeline_version)
        got: dict = {}  # what the call returned: filled by its telephony stage
        if self.no_results_route and all(s.kind == "interviewer" for s in self.score_sources):
            raise NoResultsRoute(self.no_results_route)  # learned: stop, no call placed

        def telephony(caller_audio: Audio, _rate_hz: int, _codec: str) -> Audio:
            base = ("" if self.replay is not None
                    else self._ensure_interviewer(pipeline, stages.scorer))
            attempt_id = uuid.uuid4().hex[:12]
            params = {"call_id": cid, "question_ids": question.question_id, "seed": str(seed),
                      "attempt_id": attempt_id}
            got.update(attempt_id=attempt_id, answer_s=caller_audio.duration_s)
            res, stats, replayed = self._place_attempt(
                base, params, agent_answer(question, profile, caller_audio),
                _reply_voice(stages, profile, seed, resolve_path))
            got.update(agent=res, stats=stats)
            self._read_call(base, cid, attempt_id, question, replayed, got)
            return res.sent

        real = call_stages(stages, got, seed, telephony, self._answer_audio,
                           external_interviewer=bool(self.interviewer_url))
        row = run_call(question=question, answer=answer, profile=profile, repeat=repeat,
                       seed=seed, pipeline=pipeline, pipeline_version=pipeline_version,
                       campaign_id=campaign_id, stages=real, oracle=oracle,
                       resolve_path=resolve_path)
        if got.get("fatal") is not None:  # no score source left: the campaign stops
            raise got["fatal"]
        return self._finish_row(row, cid, got, stages)

    def _place_attempt(self, base: str, params: dict[str, str], agent_answer: AgentAnswer,
                       reply_voice: Callable[[str], Audio]) -> tuple:
        """Place (or replay) one attempt at the call, recorded in :attr:`placed`; returns
        ``(agent result, transport stats, the replayed capture)``."""
        cid, attempt_id = params["call_id"], params["attempt_id"]
        facts = {"call_id": cid, "attempt_id": attempt_id, "transport": self.transport,
                 "local_ports": None, "thread": threading.current_thread().name,
                 "started_epoch_s": time.time(), "error": None}
        self._placing[attempt_id] = facts
        # the agent's small talk and skip line, in the answer's voice
        self._replies[attempt_id] = render_replies(reply_voice)
        try:
            return self._place_or_replay(base, cid, params, agent_answer)
        except Exception as exc:
            facts["error"] = f"{type(exc).__name__}: {exc}"
            said = self._interviewer_said(base, cid, attempt_id)
            if said:
                raise RuntimeError(f"{type(exc).__name__}: {exc}{said}") from exc
            raise
        finally:
            facts["ended_epoch_s"] = time.time()
            self.placed.append(self._placing.pop(attempt_id))  # atomic append
            self._replies.pop(attempt_id, None)

    def _read_call(self, base: str, cid: str, attempt_id: str, question: Question,
                   replayed: dict, got: dict) -> None:
        """Fill ``got`` from the call just placed (``got['agent']``): the interviewer's
        result, the bot's record, the interview's map and the graded answer's span, and the
        score source chosen (:meth:`_choose_score`).

        Raises:
            RuntimeError: the caller agent never answered.
            NoResultsRoute: no score source is left (also kept as ``got['fatal']``)."""
        res: AgentResult = got["agent"]
        # the loopback interviewer's result (its record of the call) is always read; an
        # external one's only when it is the score's source. An agent that never
        # answered rarely gets a result worth the full wait.
        result = replayed.get("result") if self.replay is not None else (
            None if self.interviewer_url else self._wait_result(
                base, cid, attempt_id, None if res.plays else min(
                    self.result_timeout_s, FAILED_CALL_RESULT_S)))
        got["result"] = result
        bot = replayed.get("bot") or self._bot_record(attempt_id, res, result)
        imap = map_interview(res, bot, [(question.question_id, question.question)])
        got.update(bot=bot, imap=imap)  # what the bot said goes in the row, failed or not
        if not res.plays:
            raise RuntimeError("the caller agent never answered (heard: "
                               f"{[t for _, t in res.heard]}){words_unheard(bot)}"
                               + self._interviewer_said(base, cid, attempt_id, result))
        # the bot's own view of the graded turn (its VAD's close, its transcript): the
        # loopback reference interviewer's result, an in-process bot's frames, else an
        # external bot's RTVI user-turn events (_read_heard)
        qs = (result or {}).get("questions") or []
        got["bot_q"] = (qs[-1] if (result or {}).get("status") == "ok" and qs
                        and not self.interviewer_url else None)
        span = imap.graded(question.question_id) or imap.answers[-1]
        got.update(span=span, origin=res.plays[-1].origin_epoch_s)
        if self.keep_calls:
            self.captured[cid] = {"agent": res, "stats": got["stats"], "bot": bot,
                                  "result": result, "attempt_id": attempt_id}
        self._read_heard(got)  # a bot that heard nothing: no score (InterviewerDidNotHear)
        try:
            self._choose_score(base, cid, attempt_id, got)
        except NoResultsRoute as exc:
            got["fatal"] = exc
            raise

    def _finish_row(self, row: dict, cid: str, got: dict, stages: Stages) -> dict:
        """``run_call``'s row with the call's recording, its interview map, the transport
        columns, the score source, its stage columns and the bot's words (credentials
        scrubbed)."""
        res: AgentResult | None = got.get("agent")
        recording = (write_recording(self.out_dir / "recordings" / f"{cid}.wav", cid, res)
                     if res is not None else None)
        self._write_interview(cid, got)
        row.update(transport_columns("pipecat_inproc" if self.transport == "pipecat"
                                     else self.transport, res, got.get("stats") or {},
                                     got.get("result") or {}, got.get("q"), recording))
        src = score_source(got, row)
        row.update(**stage_columns(src, got, stages), score_source=src, **self._bot_columns(got))
        row.update(taking_columns(res, row.get("interviewer_said"), self.conduct))
        for k in ("error", "traceback"):  # a Twilio REST error names the account in its URL
            if row.get(k):
                row[k] = scrub_credentials(row[k])
        return CallRow.from_dict(row).to_dict()


def _reply_voice(stages: Stages, profile: Profile, seed: int,
                 resolve_path) -> Callable[[str], Audio]:
    """The agent's short replies, rendered like the answer (the profile's voice and caller
    channel, the response delay cut: the agent waits it itself)."""

    def reply_in_profile_voice(text: str) -> Audio:
        r = stages.render(text, profile, seed, answer_id="agent_reply",
                          resolve_path=resolve_path, cache_dir=stages.audio_cache_dir)
        a = stages.caller_channel(r.audio, profile.channel, seed)
        n = round(profile.response_delay_s * a.sample_rate_hz)
        return Audio(a.samples[n:].copy(), a.sample_rate_hz)

    return reply_in_profile_voice
