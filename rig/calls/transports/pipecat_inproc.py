"""In-process: any pipecat bot on an in-memory transport, called by the caller agent.

:class:`PipecatInprocLink` is a :class:`rig.calls.agent.loop.CallerLink`. It builds the user's bot
(:mod:`rig.calls.bots.app`) around :class:`InMemoryTransport`, a pipecat ``BaseTransport``
with no network and no ports:

- its input pushes the caller's audio as 20 ms ``InputAudioRawFrame`` s at the bot's input
  sample rate (the pipeline's ``audio_in_sample_rate``; the caller's 8 kHz int16 frames are
  resampled with a streaming soxr resampler);
- its output takes the bot's output audio (``OutputAudioRawFrame``, ``TTSAudioRawFrame``) at
  the bot's output rate, resamples it to 8 kHz into the link's
  :class:`rig.calls.media.PlayoutBuffer`, and paces itself at real time on the event loop's
  clock (as pipecat's websocket output does), so the bot's ``BotStartedSpeaking``/
  ``BotStoppedSpeaking`` and interruptions see the time a caller would hear;
- it fires the events pipecat bots rely on: ``on_client_connected(transport, client)`` once
  the pipeline has started, then an RTVI ``client-ready`` message (as an RTVI client sends on
  its data channel: a bot that starts talking in its RTVI ``on_client_ready``, as pipecat's
  scaffolded bots do, starts then), ``on_client_disconnected(transport, client)`` when the
  caller hangs up.

The call ends when the bot's pipeline ends (its factory's coroutine returns: ``closed`` is
set) or when the agent hangs up (:meth:`PipecatInprocLink.hangup`: the disconnect event, then
the bot's worker is cancelled if it has not ended within ``end_timeout_s``).

What the bot did is collected by an observer added to the bot's own pipeline worker (found
from the transport's processors' setup, so a ``run_bot`` that builds its own task is observed
too) into a :class:`rig.calls.bots.record.BotRecord` (:meth:`PipecatInprocLink.bot_record`;
the recording half is :mod:`rig.calls.transports.inproc_record`).

When the bot's pipeline starts (the input's StartFrame), its processors are walked from rig's
input along pipecat's links for a VAD or turn detector (:attr:`PipecatInprocLink.pipeline_check`,
:mod:`rig.calls.bots.pipeline_check`): a bot with none will not hear the answer.

Every call is its own bot instance on the calling thread's event loop; the bot's services load
their own models per call (memory grows with ``--concurrency``).
"""

from __future__ import annotations

import asyncio
import inspect
from dataclasses import dataclass

import numpy as np

from rig.calls.bots.app import BotApp
from rig.calls.media import CALL_RATE_HZ, PlayoutBuffer, now_s
from rig.calls.transports.inproc_record import BotRecording
from rig.errors import RigError


@dataclass(frozen=True)
class InprocClient:
    """The client object passed to ``on_client_connected``: the call's id."""
    id: str


def _resampler(in_rate: int, out_rate: int):
    import soxr

    return None if in_rate == out_rate else soxr.ResampleStream(in_rate, out_rate, 1,
                                                                 dtype="int16")


def _pipecat_classes():
    """The transport classes (pipecat imported on use: the extra is optional)."""
    from pipecat.frames.frames import (
        InputAudioRawFrame,
        InputTransportMessageFrame,
        OutputAudioRawFrame,
        StartFrame,
    )
    from pipecat.observers.base_observer import BaseObserver
    from pipecat.transports.base_input import BaseInputTransport
    from pipecat.transports.base_output import BaseOutputTransport
    from pipecat.transports.base_transport import BaseTransport, TransportParams

    class _Input(BaseInputTransport):
        def __init__(self, link: PipecatInprocLink, params: TransportParams) -> None:
            super().__init__(params, name="RigInprocInput")
            self._link = link
            self._rs = None

        async def setup(self, setup) -> None:
            await super().setup(setup)
            self._link._attach(setup)

        async def start(self, frame: StartFrame) -> None:
            await super().start(frame)
            await self.set_transport_ready(frame)
            self._rs = _resampler(CALL_RATE_HZ, self.sample_rate)
            self._link._check_pipeline(self)
            self._link._input_ready.set()

        async def client_ready(self) -> None:
            # as an RTVI client does over its data channel (both ways: pipecat's worker
            # puts its RTVI processor before the input)
            from rig.calls.bots.rtvi import client_ready_message

            await self.broadcast_frame(InputTransportMessageFrame,
                                       message=client_ready_message())

        async def feed(self, pcm: bytes) -> None:
            x = np.frombuffer(pcm, np.int16)
            if self._rs is not None:
                x = self._rs.resample_chunk(x)
            if len(x):
                self._link._received.append(x.copy())
                await self.push_audio_frame(InputAudioRawFrame(
                    audio=x.tobytes(), sample_rate=self.sample_rate, num_channels=1))

    class _Output(BaseOutputTransport):
        def __init__(self, link: PipecatInprocLink, params: TransportParams) -> None:
            super().__init__(params, name="RigInprocOutput")
            self._link = link
            self._rs = None
            self._next_s = 0.0

        async def start(self, frame: StartFrame) -> None:
            await super().start(frame)
            await self.set_transport_ready(frame)
            self._rs = _resampler(self.sample_rate, CALL_RATE_HZ)

        async def write_audio_frame(self, frame: OutputAudioRawFrame) -> bool:
            x = np.frombuffer(frame.audio, np.int16)
            if frame.num_channels > 1:
                x = x.reshape(-1, frame.num_channels).mean(axis=1).astype(np.int16)
            rate = frame.sample_rate or self.sample_rate
            dur_s = len(x) / rate
            if self._rs is not None:
                x = self._rs.resample_chunk(x)
            self._link.playout.push(x.tobytes())
            self._link.packets_received += 1
            loop = asyncio.get_running_loop()
            self._next_s = max(self._next_s, loop.time()) + dur_s
            await asyncio.sleep(max(0.0, self._next_s - loop.time()))  # real-time playout
            return True

    class InMemoryTransport(BaseTransport):
        """A pipecat transport in memory (module docstring)."""

        def __init__(self, link: PipecatInprocLink) -> None:
            super().__init__(name="RigInprocTransport")
            self._link = link
            self._params = TransportParams(audio_in_enabled=True, audio_out_enabled=True)
            self._input: _Input | None = None
            self._output: _Output | None = None
            self._register_event_handler("on_client_connected")
            self._register_event_handler("on_client_disconnected")

        def input(self) -> _Input:
            if self._input is None:
                self._input = _Input(self._link, self._params)
            return self._input

        def output(self) -> _Output:
            if self._output is None:
                self._output = _Output(self._link, self._params)
            return self._output

        def get_client_id(self, client) -> str:
            return client.id

    class RecordObserver(BaseObserver):
        """Collects the bot's turns, transcripts and frames (first push only)."""

        def __init__(self, link: PipecatInprocLink) -> None:
            super().__init__(observe_every_push=False)
            self._link = link

        async def on_push_frame(self, data) -> None:
            self._link._observe(data.frame)

    return InMemoryTransport, RecordObserver


class PipecatInprocLink(BotRecording):
    """The caller agent's side of an in-process call to a pipecat bot.

    Args:
        app: the loaded bot (:func:`rig.calls.bots.app.load_bot`).
        body: the call's parameters, given to a ``run_bot`` factory as ``runner_args.body``
            (rig passes ``call_id``, ``question_ids`` and ``questions``).
        connect_timeout_s: how long the bot may take to build and start its pipeline.
        end_timeout_s: after a hang-up, how long the bot may take to end before its worker
            is cancelled.
    """

    transport = "pipecat_inproc"

    def __init__(self, app: BotApp, body: dict, connect_timeout_s: float = 120.0,
                 end_timeout_s: float = 5.0) -> None:
        self.app, self.body = app, dict(body)
        self.playout = PlayoutBuffer()
        self.closed = asyncio.Event()
        self.packets_sent = 0
        self.packets_received = 0
        #: the bot's exception when its factory or pipeline raised (None otherwise)
        self.bot_error: BaseException | None = None
        self._connect_s, self._end_s = connect_timeout_s, end_timeout_s
        self._input_ready = asyncio.Event()
        self._transport = None
        self._worker = None
        self._bot: asyncio.Task | None = None
        self._client = InprocClient(str(body.get("call_id", "rig")))
        self._t0: float | None = None
        #: the call clock's zero (epoch s): BotRecord times are seconds from it
        self.t0_epoch_s: float | None = None
        self._init_recording()
        self._hung_up = False
        #: whether the bot's pipeline has a VAD (checked at its StartFrame; None before)
        self.pipeline_check = None

    # --- pipecat side ------------------------------------------------------------------------
    def _attach(self, setup) -> None:
        """The input's setup: the bot's worker, its observer and the input rate are known."""
        self._in_rate = setup.audio_in_sample_rate
        worker = getattr(setup, "pipeline_worker", None)
        if worker is not None and self._worker is None:
            self._worker = worker
            worker.add_observer(self._observer_cls(self))

    def _check_pipeline(self, first) -> None:
        """At the input's StartFrame: :attr:`pipeline_check`, the bot's processors walked from
        rig's input (:func:`rig.calls.bots.pipeline_check.check_pipeline`)."""
        from rig.calls.bots.pipeline_check import check_pipeline

        self.pipeline_check = check_pipeline(first)

    def _now(self) -> float:
        t = asyncio.get_running_loop().time()
        return 0.0 if self._t0 is None else t - self._t0

    async def _run(self) -> None:
        try:
            if self.app.kind == "runner":
                from pipecat.runner.types import RunnerArguments

                await self.app.factory(self._transport, RunnerArguments(body=dict(self.body)))
                return
            from pipecat.pipeline.worker import PipelineWorker
            from pipecat.workers.runner import WorkerRunner

            worker = self.app.factory(self._transport)
            if inspect.isawaitable(worker):
                worker = await worker
            if not isinstance(worker, PipelineWorker):
                raise RigError(f"{self.app.path}: {self.app.name}(transport) returned "
                               f"{type(worker).__name__}, not a pipecat PipelineTask")
            runner = WorkerRunner(handle_sigint=False)
            await runner.add_workers(worker)
            await runner.run()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the bot's own failure: the call ends, the row says why
            self.bot_error = exc
        finally:
            self.closed.set()

    # --- the caller's side -------------------------------------------------------------------
    async def connect(self) -> None:
        """Build the bot, start its pipeline and fire ``on_client_connected``.

        Raises:
            ConnectionError: the bot failed or did not start its pipeline in time (its
                exception is chained).
        """
        transport_cls, self._observer_cls = _pipecat_classes()
        self._transport = transport_cls(self)
        self._bot = asyncio.create_task(self._run(), name=f"rig-bot-{self._client.id}")
        ready = asyncio.create_task(self._input_ready.wait())
        done, _ = await asyncio.wait({ready, self._bot}, timeout=self._connect_s,
                                     return_when=asyncio.FIRST_COMPLETED)
        if ready not in done:
            ready.cancel()
            if self.bot_error is not None:
                raise ConnectionError(f"{self.app.spec}: the bot failed before its pipeline "
                                      f"started: {type(self.bot_error).__name__}: "
                                      f"{self.bot_error}") from self.bot_error
            await self._stop_bot()
            raise ConnectionError(f"{self.app.spec}: the bot's pipeline did not start within "
                                  f"{self._connect_s:g} s (is transport.input() in it?)")
        self._t0 = asyncio.get_running_loop().time()
        self.t0_epoch_s = now_s()
        await self._transport._call_event_handler("on_client_connected", self._client)
        await self._transport.input().client_ready()

    async def send_frame(self, pcm: bytes) -> None:
        if self.closed.is_set() or self._hung_up or self._transport is None:
            return
        await self._transport.input().feed(pcm)
        self.packets_sent += 1

    async def _stop_bot(self) -> None:
        if self._bot is None or self._bot.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._bot), self._end_s)
            return
        except TimeoutError:
            pass
        if self._worker is not None:
            await self._worker.cancel()
            try:
                await asyncio.wait_for(asyncio.shield(self._bot), self._end_s)
                return
            except TimeoutError:
                pass
        self._bot.cancel()
        await asyncio.gather(self._bot, return_exceptions=True)

    async def hangup(self) -> None:
        """End the call from the caller's side: ``on_client_disconnected``, then the bot's
        worker is cancelled unless it ends within ``end_timeout_s``."""
        if self._hung_up:
            return
        self._hung_up = True
        if self._bot is not None and not self._bot.done():
            await self._transport._call_event_handler("on_client_disconnected", self._client)
            await self._stop_bot()
        self.closed.set()

    async def stats(self) -> dict:
        """No wire: ``codec`` ``pcm_s16le`` at the bot's input rate, 20 ms frames sent and
        output writes received (``packet_unit`` ``frame``), nothing lost, no jitter."""
        return {"codec": f"pcm_s16le/{self._in_rate or CALL_RATE_HZ}", "packet_unit": "frame",
                "packets_sent": self.packets_sent, "packets_received": self.packets_received,
                "packets_lost": 0, "jitter_ms": None}

    def local_ports(self) -> dict:
        """None: the call opens no socket."""
        return {}
