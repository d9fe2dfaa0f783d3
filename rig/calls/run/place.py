"""Placing one real-transport call: the link per transport (WebRTC, SIP, Twilio on
loopback or through an account, a pipecat bot in-process), the caller agent on it, the
call's own event loop, or a replayed capture (:class:`CallPlacing`, mixed into
:class:`rig.calls.run.caller.TransportCaller`).
"""

from __future__ import annotations

import asyncio
import contextlib

from rig.answers import load_bank
from rig.calls.agent.brain import AgentAnswer
from rig.calls.agent.loop import AgentResult, run_agent


class CallPlacing:
    """The placing half of a transport caller. The host (a ``TransportCaller``) provides the
    transport settings (``transport``, ``agent``, ``twilio_to``/``twilio_from``,
    ``stream_url``, ``agent_host``/``agent_port``, ``http_client``, ``answers_path``,
    ``bot_clock``, ``replay``, ``out_dir``) and the per-call state (``_placing``,
    ``_replies``, ``_bot_records``, ``_inproc``, ``_bot_app``, ``_compat``, ``_streams``,
    ``_lock``)."""

    # --- one call ----------------------------------------------------------------------------
    def _link(self, base: str, params: dict[str, str]):
        if self.transport == "pipecat":
            from rig.calls.transports.pipecat_inproc import PipecatInprocLink

            ids = params["question_ids"].split(",")
            texts = {q.question_id: " ".join(q.question.split())
                     for q in load_bank(self.answers_path).questions}
            return PipecatInprocLink(self._bot_app, {**params, "question_ids": ids,
                                                     "questions": [texts[i] for i in ids]})
        if self.transport == "twilio":
            from rig.calls.run.options import is_media_stream_url
            from rig.calls.transports.twilio import TwilioLoopbackLink

            # the bot's own Media Streams websocket (pipecat's runner: /ws) is dialled as given
            url = base if is_media_stream_url(base) else (
                base.replace("http", "ws", 1) + "/twilio/media")
            return TwilioLoopbackLink(url, params)
        if self.transport == "webrtc":
            from rig.calls.transports.webrtc import WebRTCLink

            return WebRTCLink(base + "/api/offer", params)
        from rig.calls.transports.sip import SipLink

        return SipLink(base, params)

    async def _place(self, base: str, params: dict[str, str], answer: AgentAnswer
                     ) -> tuple[AgentResult, dict]:
        link = self._link(base, params)
        await link.connect()
        # in-process: its pipeline's VAD check, at its StartFrame (said at the first deaf one)
        self._compat.pipeline(params["attempt_id"], getattr(link, "pipeline_check", None))
        self._placing[params["attempt_id"]]["local_ports"] = link.local_ports()
        try:
            res = await run_agent(link, [answer], self.agent,
                                  replies=self._replies.get(params["attempt_id"]))
            stats = await link.stats()
            if self.transport == "pipecat":
                self._inproc_done(link, res, params)
        finally:
            await link.hangup()
            # kept when the call broke off too: what the bot said goes in the failed row
            self._keep_bot_record(params["attempt_id"], link)
        return res, stats

    def _keep_bot_record(self, attempt_id: str, link) -> None:
        """The link's :class:`BotRecord` (in-process and WebRTC links give one), if any."""
        get = getattr(link, "bot_record", None)
        if callable(get):
            # a link that never connected may have no record to give
            with contextlib.suppress(Exception):
                self._bot_records[attempt_id] = get()

    def _stream_server(self):
        """The agent's media-stream server on ``agent_host:agent_port``, started once and
        shared by every call in flight (Twilio reaches it at one ``stream_url``)."""
        from rig.calls.transports.twilio import SharedStreamServer

        with self._lock:
            if self._streams is None:
                self._streams = SharedStreamServer(self.agent_host, self.agent_port)
            return self._streams

    async def _place_twilio_account(self, params: dict[str, str], answer: AgentAnswer
                                    ) -> tuple[AgentResult, dict]:
        """Runs on the shared stream server's loop (:meth:`_stream_server`)."""
        from rig.calls.transports.twilio import place_call

        server = self._streams.server
        await asyncio.to_thread(
            place_call, to=self.twilio_to, from_=self.twilio_from or "",
            stream_url=self.stream_url or server.url, parameters=params,
            http_client=self.http_client)
        link = await server.accept(params["call_id"], timeout_s=90)
        self._placing[params["attempt_id"]]["local_ports"] = link.local_ports()
        try:
            res = await run_agent(link, [answer], self.agent,
                                  replies=self._replies.get(params["attempt_id"]))
            stats = await link.stats()
        finally:
            await link.hangup()
        self._keep_bot_record(params["attempt_id"], link)
        return res, stats

    def _run_loop(self, coro):
        """Run ``coro`` on this call's own event loop (an idle-skipping one for an in-process
        bot with ``bot_clock`` ``fast``)."""
        if self.transport == "pipecat" and self.bot_clock == "fast":
            from rig.calls.bots.fastclock import IdleSkipLoop

            with asyncio.Runner(loop_factory=IdleSkipLoop) as runner:
                return runner.run(coro)
        return asyncio.run(coro)

    def _inproc_done(self, link, res: AgentResult, params: dict[str, str]) -> None:
        """An in-process call: the bot's failure fails the call; its own view of the turn is
        the call's result (no score: :func:`rig.calls.bots.turn.inproc_result`)."""
        from rig.calls.bots.turn import inproc_result, write_bot_record

        if link.bot_error is not None:
            raise RuntimeError(f"the bot failed: {type(link.bot_error).__name__}: "
                               f"{link.bot_error}") from link.bot_error
        record = link.bot_record()
        start = res.plays[-1].start_epoch_s if res.plays else res.t0_epoch_s + res.duration_s
        self._inproc[params["attempt_id"]] = (record, inproc_result(
            record, link.t0_epoch_s, start, params["question_ids"], params["call_id"]))
        write_bot_record(self.out_dir / "recordings" / f"{params['call_id']}.bot.json",
                         record)

    def _place_or_replay(self, base: str, cid: str, params: dict, answer: AgentAnswer):
        """``(agent result, link stats, {"result", "bot"} of a replayed call or {})``."""
        if self.replay is not None:
            cap = self.replay[cid]
            return cap["agent"], cap["stats"], {"result": cap.get("result"), "bot": cap["bot"]}
        if self.transport == "twilio" and self.twilio_to:
            res, stats = self._stream_server().run(self._place_twilio_account(params, answer))
        else:  # this call's own event loop, in this thread
            res, stats = self._run_loop(self._place(base, params, answer))
        return res, stats, {}

