"""The one turn tracker: where speech starts, where it ends and when the turn closes.

Every stage that listens for a turn runs it: :func:`rig.vad.detect_turn` and
:func:`rig.vad.detect_turns` (offline, on the audio's clock), the live interviewer
(:class:`rig.calls.interviewer.session.InterviewSession`, on the epoch second each chunk
arrived) and the caller agent (:func:`rig.calls.agent.loop.run_agent`, on its 20 ms tick clock).

**The one definition.** The tracker is fed the VAD state of each 20 ms frame
(pipecat's ``VADAnalyzer.analyze_audio``: QUIET, STARTING, SPEAKING, STOPPING) with that
frame's time ``at_s``:

* **speech starts** when the state turns SPEAKING from QUIET or STARTING: pipecat's state
  machine has then seen ``start_ms`` of speech (``VADParams.start_secs``). The event is
  stamped back by that much, ``at_s - (start_ms + pre_roll_ms) / 1000`` (never below 0).
* **speech ends** when the state turns QUIET from STOPPING or SPEAKING: the VAD has then seen
  ``silence_timeout_ms`` of silence (``VADParams.stop_secs``, the endpointing timer). The
  event is stamped at the last speech, ``at_s - silence_timeout_ms / 1000`` (never below 0).
* **the turn closes** at that same frame (``at_s``, reason ``silence_timeout``) when the
  tracker closes turns itself (``close_on_silence``); a caller's own timer or an end-of-turn
  model closes it instead with :meth:`TurnTracker.close` (``max_turn``, ``no_speech``,
  ``turn_model``, ``turn_model_timeout``, ``end_of_audio``; ``media_outage``: the
  interviewer's watchdog saw no frames for ``faults.outage_window_ms``).

Between the start and the end the speaker is speaking (:attr:`TurnTracker.speaking`: the
state is SPEAKING or STOPPING), which is the flag pipecat hands an end-of-turn model.

**What each caller sets** (the only ways they differ; none runs a loop of its own):

* :mod:`rig.vad.detect`: ``at_s`` is the end of the frame on the audio's clock;
  ``pre_roll_ms=0``; ``close_on_silence`` unless a turn model decides the close.
* the interviewer: ``at_s`` is the epoch second the frame's chunk arrived (every frame of a
  chunk gets the same); ``pre_roll_ms=0``; ``close_on_silence=True``; its answer and
  max-turn timers run on the wall clock outside the tracker.
* the caller agent: no ``at_s``: the tracker's **frame clock**, the start of frame ``k`` being
  ``k * frame_ms / 1000``, and the start stamped in whole frames,
  ``max(0, k - start_ms // frame_ms - pre_roll_ms // frame_ms) * frame_ms / 1000``
  (:attr:`TurnEvent.frame` is that frame, where its utterance's audio begins);
  ``pre_roll_ms=100`` (five frames of audio before the onset go to its ASR with the
  utterance); ``silence_timeout_ms`` is its own ``stop_ms``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: Why a turn closed: the tracker's endpointing timer, or a caller's (:meth:`TurnTracker.close`).
CloseReason = Literal["silence_timeout", "turn_model", "turn_model_timeout", "end_of_audio",
                      "max_turn", "no_speech", "media_outage"]
TurnEventKind = Literal["speech_started", "speech_stopped", "turn_closed"]


@dataclass(frozen=True)
class TurnEvent:
    """One thing the tracker decided at a frame.

    Attributes:
        kind: ``speech_started``, ``speech_stopped`` or ``turn_closed``.
        t_s: speech_started: the speech onset; speech_stopped: the last speech (the timer
            subtracted); turn_closed: the moment it closed. Seconds on the caller's clock.
        frame: index of the frame ``t_s`` falls in, counted from 0 over the frames fed
            (speech_started: the onset frame, pre-roll included; otherwise the frame at which
            the event was decided).
        reason: turn_closed only: why.
    """
    kind: TurnEventKind
    t_s: float
    frame: int
    reason: CloseReason | None = None


class TurnTracker:
    """Incremental turn tracking over per-frame VAD states (module docstring: the one
    definition of speech start and end, and what each caller sets).

    Args:
        start_ms: speech the VAD needs to confirm a start (its ``start_secs``, ms).
        silence_timeout_ms: silence that ends speech (its ``stop_secs``, the endpointing
            timer, ms).
        frame_ms: the frames' length (ms); the frame clock's step.
        pre_roll_ms: audio kept before the onset, added to the start's back-dating (ms).
        close_on_silence: close the turn when speech ends (``turn_closed``,
            ``silence_timeout``); False when something else decides the close.

    Needs pipecat (its ``VADState``), as the analyzers that feed it do.
    """

    def __init__(self, start_ms: int, silence_timeout_ms: int, *, frame_ms: int = 20,
                 pre_roll_ms: int = 0, close_on_silence: bool = True) -> None:
        from pipecat.audio.vad.vad_analyzer import VADState

        self._S = VADState
        self.start_ms, self.silence_timeout_ms = start_ms, silence_timeout_ms
        self.frame_ms, self.pre_roll_ms = frame_ms, pre_roll_ms
        self.close_on_silence = close_on_silence
        self._prev = VADState.QUIET
        self._n = 0  # frames fed so far
        self.turn_start_s: float | None = None  # first speech start of the open turn

    @property
    def speaking(self) -> bool:
        """Between a speech start and its end (the last state was SPEAKING or STOPPING)."""
        return self._prev in (self._S.SPEAKING, self._S.STOPPING)

    @property
    def frames(self) -> int:
        """Frames fed so far."""
        return self._n

    async def feed(self, vad, frame: bytes, at_s: float | None = None) -> list[TurnEvent]:
        """``await vad.analyze_audio(frame)`` (a pipecat ``VADAnalyzer``, int16 PCM) and
        :meth:`update` with its state."""
        return self.update(await vad.analyze_audio(frame), at_s)

    def update(self, state, at_s: float | None = None) -> list[TurnEvent]:
        """The next frame's VAD state (pipecat ``VADState``) at ``at_s`` (seconds; None: the
        frame clock, the frame's start). Returns the events it decides, in order."""
        k = self._n
        self._n += 1
        S, prev = self._S, self._prev
        self._prev = state
        frame_s = self.frame_ms / 1000
        t = k * frame_s if at_s is None else at_s
        out: list[TurnEvent] = []
        if state == S.SPEAKING and prev in (S.QUIET, S.STARTING):
            onset_k = max(0, k - self.start_ms // self.frame_ms
                          - self.pre_roll_ms // self.frame_ms)
            onset = (onset_k * frame_s if at_s is None
                     else max(0.0, at_s - (self.start_ms + self.pre_roll_ms) / 1000))
            if self.turn_start_s is None:
                self.turn_start_s = onset
            out.append(TurnEvent("speech_started", onset, onset_k))
        if state == S.QUIET and prev in (S.STOPPING, S.SPEAKING):
            out.append(TurnEvent("speech_stopped",
                                 max(0.0, t - self.silence_timeout_ms / 1000), k))
            if self.close_on_silence:
                out.append(self.close(t, "silence_timeout"))
        return out

    def close(self, at_s: float, reason: CloseReason) -> TurnEvent:
        """Close the open turn at ``at_s`` (the next speech start opens a new one); the
        event is stamped at the last frame fed."""
        self.turn_start_s = None
        return TurnEvent("turn_closed", at_s, max(0, self._n - 1), reason)
