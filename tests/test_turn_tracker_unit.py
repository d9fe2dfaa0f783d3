"""The one turn tracker (:class:`rig.vad.tracker.TurnTracker`) on scripted VAD states: where
speech starts and ends, when the turn closes, and the two clocks its callers run it on."""

from __future__ import annotations

import asyncio

import pytest
from pipecat.audio.vad.vad_analyzer import VADState

from rig.vad import TurnTracker

pytestmark = pytest.mark.unit
Q, STA, SPK, STO = VADState.QUIET, VADState.STARTING, VADState.SPEAKING, VADState.STOPPING
# frames 0-1 quiet, 2-3 starting, 4 confirmed, a dip (6) that recovers, 8-9 stopping, 10 quiet
STATES = [Q, Q, STA, STA, SPK, SPK, STO, SPK, STO, STO, Q, Q]


def _run(tracker: TurnTracker, states, clock=lambda k: (k + 1) * 0.02):
    """Every event as (frame fed, kind, t_s, onset frame, reason)."""
    out = []
    for k, s in enumerate(states):
        for ev in tracker.update(s, None if clock is None else clock(k)):
            out.append((k, ev.kind, round(ev.t_s, 9), ev.frame, ev.reason))
    return out


def test_speech_starts_when_the_vad_confirms_it_dated_back_by_start_ms():
    events = _run(TurnTracker(start_ms=40, silence_timeout_ms=60), STATES)
    assert events == [
        (4, "speech_started", 0.06, 2, None),        # frame 4 ends at 0.10, less 40 ms
        (10, "speech_stopped", 0.16, 10, None),      # frame 10 ends at 0.22, less 60 ms
        (10, "turn_closed", 0.22, 10, "silence_timeout"),
    ]


def test_speaking_runs_from_the_start_to_the_end_and_a_start_that_fails_is_nothing():
    t = TurnTracker(start_ms=40, silence_timeout_ms=60)
    flags = []
    for s in [Q, STA, Q, *STATES]:
        t.update(s, 1.0)
        flags.append(t.speaking)
    assert flags == [False, False, False] + [False] * 4 + [True] * 6 + [False] * 2
    assert t.frames == 3 + len(STATES)


def test_the_frame_clock_stamps_in_whole_frames_with_the_pre_roll():
    """The caller agent's settings: its tick clock (frame starts) and 100 ms of pre-roll."""
    t = TurnTracker(start_ms=100, silence_timeout_ms=300, pre_roll_ms=100)
    states = [Q] * 20 + [STA] * 5 + [SPK] * 10 + [STO] * 15 + [Q]
    events = _run(t, states, clock=None)
    assert events == [
        (25, "speech_started", 0.3, 15, None),       # frame 25 - 5 - 5, at 15 * 20 ms
        (50, "speech_stopped", 0.7, 50, None),       # frame 50 starts at 1.0 s, less 300 ms
        (50, "turn_closed", 1.0, 50, "silence_timeout"),
    ]
    early = _run(TurnTracker(start_ms=100, silence_timeout_ms=300, pre_roll_ms=100),
                 [STA, SPK], clock=None)
    assert early[0][1:4] == ("speech_started", 0.0, 0)  # never before the first frame


def test_a_start_near_the_beginning_is_not_dated_before_zero():
    events = _run(TurnTracker(start_ms=200, silence_timeout_ms=800), [STA, SPK])
    assert events == [(1, "speech_started", 0.0, 0, None)]


def test_without_close_on_silence_the_caller_closes_and_the_turn_spans_its_starts():
    t = TurnTracker(start_ms=40, silence_timeout_ms=60, close_on_silence=False)
    events = _run(t, [*STATES, STA, SPK])
    assert [e[1] for e in events] == ["speech_started", "speech_stopped", "speech_started"]
    assert t.turn_start_s == pytest.approx(0.06)  # the turn's first start, not the last
    closed = t.close(0.5, "turn_model")
    assert (closed.kind, closed.t_s, closed.frame, closed.reason) == (
        "turn_closed", 0.5, len(STATES) + 1, "turn_model")
    assert t.turn_start_s is None


def test_feed_runs_the_analyzer_on_the_frame():
    class ScriptedVad:
        def __init__(self) -> None:
            self.states, self.frames = iter(STATES), []

        async def analyze_audio(self, frame: bytes):
            self.frames.append(frame)
            return next(self.states)

    vad, t = ScriptedVad(), TurnTracker(start_ms=40, silence_timeout_ms=60)

    async def feed():
        return [ev for k in range(len(STATES))
                for ev in await t.feed(vad, bytes([k]) * 320, (k + 1) * 0.02)]

    events = asyncio.run(feed())
    assert [e.kind for e in events] == ["speech_started", "speech_stopped", "turn_closed"]
    assert vad.frames[4] == bytes([4]) * 320
