"""What an in-process pipecat bot did on a call, from its own frames: the recording half of
:class:`rig.calls.transports.pipecat_inproc.PipecatInprocLink` (its observer calls
:meth:`BotRecording._observe` on every frame's first push).

``said`` the bot's TTS text per speaking turn with its start and end on the call clock
(seconds from the link's zero), ``heard`` its final ``TranscriptionFrame`` s, ``context_heard``
the user messages new in its LLM context at each ``LLMContextFrame``, ``frames`` every non-audio
frame, ``received_audio`` the caller's audio as the bot's input got it (int16 chunks at the
bot's input rate, joined into a float32 :class:`rig.audio.Audio`).
"""

from __future__ import annotations

import numpy as np

from rig.audio import Audio, pcm16_to_float
from rig.calls.bots.record import BotRecord, BotTurn


class BotRecording:
    """Mixed into the link, which provides ``_now()`` (the call clock, s) and ``bot_error``."""

    def _init_recording(self) -> None:
        self._received: list[np.ndarray] = []
        self._in_rate: int | None = None
        self._said: list[list] = []  # [start_s, end_s, [spoken texts], [texts given]]
        self._to_say: list[str] = []
        self._heard: list[tuple[float, str]] = []
        self._context_heard: list[tuple[float, str]] = []
        self._context_users: list[str] = []  # the context's user messages at the last snapshot
        self._frames: list[tuple[float, object]] = []

    def _observe(self, frame) -> None:
        from pipecat.frames.frames import (
            AggregatedTextFrame,
            AudioRawFrame,
            BotStartedSpeakingFrame,
            BotStoppedSpeakingFrame,
            ErrorFrame,
            InterimTranscriptionFrame,
            LLMContextFrame,
            TranscriptionFrame,
            TTSTextFrame,
        )

        t = self._now()
        if isinstance(frame, AudioRawFrame):
            return
        self._frames.append((t, frame))
        if isinstance(frame, BotStartedSpeakingFrame):  # pushed both ways: once per turn
            if not self._said or self._said[-1][1] is not None:
                self._said.append([t, None, [], []])
            self._said[-1][3] = self._to_say
            self._to_say = []
        elif isinstance(frame, BotStoppedSpeakingFrame):
            if self._said and self._said[-1][1] is None:
                self._said[-1][1] = t
        elif isinstance(frame, TTSTextFrame):  # spoken (pushed as its audio plays)
            if not self._said or self._said[-1][1] is not None:
                self._said.append([t, None, [], []])  # text before its audio started
            self._said[-1][2].append(frame.text)
        elif isinstance(frame, AggregatedTextFrame):  # given to the TTS, not yet spoken
            self._to_say.append(frame.text)
        elif isinstance(frame, ErrorFrame) and frame.fatal and self.bot_error is None:
            self.bot_error = RuntimeError(f"the bot's pipeline: {frame.error}")
        elif isinstance(frame, TranscriptionFrame) and not isinstance(
                frame, InterimTranscriptionFrame):
            self._heard.append((t, frame.text.strip()))
        elif isinstance(frame, LLMContextFrame) and not getattr(frame, "speculation", False):
            self._snapshot_context(t, frame.context)

    def _snapshot_context(self, t: float, context) -> None:
        """The user messages new in the bot's LLM context since the last snapshot, copied now
        (:func:`rig.calls.bots.heard.new_user_messages`)."""
        from rig.calls.bots.heard import new_user_messages, user_texts

        try:
            users = user_texts(context.get_messages())
        except Exception:  # a context of another shape: nothing to read
            return
        self._context_heard.extend((t, x) for x in new_user_messages(self._context_users, users))
        self._context_users = users

    def bot_record(self) -> BotRecord:
        """What the bot said, heard and pushed on this call (module docstring)."""
        said = []
        for s, e, spoken, given in self._said:
            # a turn cut off before any of its text was spoken (an interruption) still says
            # what the bot had set out to say
            text = " ".join(" ".join(spoken or given).split())
            if text:
                said.append(BotTurn(s, e, text))
        audio = None
        if self._received and self._in_rate:
            audio = Audio(pcm16_to_float(np.concatenate(self._received)), self._in_rate)
        return BotRecord(said=tuple(said), heard=tuple(self._heard),
                         context_heard=tuple(self._context_heard), frames=tuple(self._frames),
                         received_audio=audio)
