"""Turn-taking on a real call (rig.calls.run.turn_taking): segments from frame energy, response
latency, talk-over, barge-in stop time, backchannels and dead air, on synthetic two-sided
audio with known times (fakes: tones for speech, zeros for silence)."""

from __future__ import annotations

import numpy as np
import pytest

from rig.audio import Audio
from rig.calls.run.turn_taking import measure, segments, turn_taking

pytestmark = pytest.mark.unit

SR = 8000


def track(spans, total_s=20.0, level=0.1):
    """A side of the call: a 300 Hz tone at ``level`` in each (start, end) span, else 0."""
    x = np.zeros(int(total_s * SR), np.float32)
    for s, e in spans:
        t = np.arange(int(s * SR), int(e * SR))
        x[t] = level * np.sin(2 * np.pi * 300 * t / SR)
    return Audio(x, SR)


def test_segments_merge_short_gaps_and_drop_clicks():
    a = np.zeros(100, bool)
    a[10:20] = a[25:30] = True  # gap 0.1 s: merged
    a[60:61] = True  # 20 ms click: dropped
    a[80:90] = True
    assert segments(a) == [pytest.approx((0.2, 0.6)), pytest.approx((1.6, 1.8))]


def test_a_polite_call():
    # interviewer asks 0-3 s; caller answers 3.5-8 s; interviewer replies at 8.7 s
    sent = track([(3.5, 8.0)])
    received = track([(0.0, 3.0), (8.7, 10.0)])
    tt = turn_taking(sent, received, [3.5], 3.5)
    assert tt.response_latency_ms == pytest.approx(700, abs=21)
    assert tt.candidate_turns == 1 and tt.talked_over_turns == 0
    assert tt.barge_in_stop_ms is None and tt.barge_in_stopped is None
    assert tt.backchannels == 0 and tt.backchannel_stopped is None
    assert tt.dead_air_max_s == pytest.approx(0.7, abs=0.021)


def test_an_interviewer_that_talks_over_the_answer():
    # the caller pauses 1 s inside its answer (5-6 s)... the interviewer starts at 7 s while
    # the caller still speaks (until 9 s): talk-over, and a negative latency
    sent = track([(3.5, 5.0), (6.0, 9.0)])
    received = track([(0.0, 3.0), (7.0, 10.0)])
    tt = turn_taking(sent, received, [3.5], 3.5)
    assert tt.talked_over_turns == 1
    assert tt.response_latency_ms == pytest.approx(-2000, abs=21)


def test_barge_in_stop_time_and_an_interviewer_that_does_not_stop():
    # the caller barges in at 2 s into a question running to 5 s; the interviewer stops 0.4 s
    # after the caller's onset
    stopped = measure([(2.0, 6.0)], [(2.0, 6.0)], [(0.0, 2.4)])
    assert stopped.barge_in_stopped is True and stopped.barge_in_stop_ms == pytest.approx(400)
    assert stopped.talked_over_turns == 0  # it was speaking first: the caller barged in
    kept_on = measure([(2.0, 4.0)], [(2.0, 4.0)], [(0.0, 6.0)])
    assert kept_on.barge_in_stopped is False and kept_on.barge_in_stop_ms is None


def test_a_backchannel_that_the_interviewer_shrugs_off_or_yields_to():
    robust = measure([(2.0, 2.4)], [(2.0, 2.4)], [(0.0, 8.0)])
    assert robust.backchannels == 1 and robust.backchannel_stopped is False
    yields = measure([(2.0, 2.4)], [(2.0, 2.4)], [(0.0, 2.5)])
    assert yields.backchannels == 1 and yields.backchannel_stopped is True


def test_dead_air_is_the_longest_silence_between_any_speech():
    tt = measure([], [(5.0, 6.0)], [(0.0, 1.0), (0.5, 2.0), (9.0, 10.0)])
    assert tt.dead_air_max_s == pytest.approx(3.0)  # 6 -> 9; 2 -> 5 is 3 too
    rng = np.random.default_rng(3)
    spans = sorted((s, s + d) for s, d in zip(rng.uniform(0, 100, 30), rng.uniform(0, 3, 30),
                                               strict=True))
    # independent: a 1 ms grid of who speaks
    grid = np.zeros(110_000, bool)
    for s, e in spans:
        grid[round(s * 1000):round(e * 1000)] = True
    first, last = np.flatnonzero(grid)[[0, -1]]
    runs, n = [], 0
    for v in grid[first:last + 1]:
        n = 0 if v else n + 1
        runs.append(n)
    got = measure([], spans[::2], spans[1::2]).dead_air_max_s
    assert got == pytest.approx(max(runs) / 1000, abs=0.002)


def test_no_plays_no_latency():
    tt = turn_taking(track([]), track([(0, 3)]), [], None)
    assert tt.response_latency_ms is None and tt.candidate_turns == 0
    assert tt.dead_air_max_s == 0.0


def test_a_real_call_row_gets_the_columns():
    """taking_columns on a fake AgentResult: turn-taking from its two sides and plays,
    conduct from the interviewer's words, the accommodation from what the agent heard; the
    row takes them with their types; without an agent they are all null."""
    from rig.calls.agent.loop import AgentResult, AnswerPlay
    from rig.calls.run.turn_taking import taking_columns
    from rig.campaign.row import TAKING_COLUMNS, CallRow

    q = "Tell me about a time you disagreed with a coworker."
    sent = track([(4.0, 5.5), (12.0, 16.0)])  # the slower request, then the answer
    received = track([(0.0, 3.5), (6.2, 11.0), (16.5, 18.0)])
    events = ((4.0, "reply_started", "slower"), (12.0, "answer_started", "q01"))
    agent = AgentResult(100.0, 20.0, (AnswerPlay("q01", 112.0, 111.5, False),), 0,
                        ((3.5, q), (11.0, "Of course. " + q), (18.0, "Thank you.")),
                        events, "interviewer", sent, received, 0)
    said = "Hi, I'm an AI interviewer. " + q + " | Of course. " + q + " | Thank you."
    cols = taking_columns(agent, said)
    assert set(cols) == set(TAKING_COLUMNS)
    assert cols["candidate_turns"] == 2 and cols["talked_over_turns"] == 0
    assert cols["response_latency_ms"] == pytest.approx(500, abs=21)
    assert cols["conduct_ai_disclosed"] is True and cols["conduct_prohibited_count"] == 0
    assert cols["conduct_accommodation_handled"] is True
    row = CallRow.from_dict({"call_id": "x", **cols}).to_dict()
    assert row["response_latency_ms"] == cols["response_latency_ms"]
    assert set(taking_columns(None, None).values()) == {None}
