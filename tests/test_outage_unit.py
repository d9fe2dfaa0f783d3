"""Media outage logic (rig.channel.outage, the interviewer's watchdog deadline) on a fake turn
detector: a gap at least the window long closes an open turn window after the last frame, with
the audio up to the gap; a shorter gap is bridged with its samples absent and times shifted
back onto the render's clock; a turn closed before the gap is left as it was."""

from __future__ import annotations

import numpy as np
import pytest

from rig.audio import Audio
from rig.calls.interviewer.session import outage_deadline
from rig.channel.outage import Outage, splice, turn_with_outage
from rig.vad import TurnResult

pytestmark = pytest.mark.unit
SR = 8000
TIMER_S = 0.8


def fake_detect(audio: Audio, _params) -> TurnResult:
    """Speech is any sample above 0.1; the turn closes TIMER_S after its last speech, or at the
    end of the audio."""
    loud = np.nonzero(np.abs(audio.samples) > 0.1)[0]
    if not len(loud):
        return TurnResult(None, audio.duration_s, "no_speech", ())
    a, b = loud[0] / SR, (loud[-1] + 1) / SR
    close = b + TIMER_S
    if close > audio.duration_s:
        return TurnResult(a, audio.duration_s, "end_of_audio", ((a, b),))
    return TurnResult(a, close, "silence_timeout", ((a, b),))


def line(speech: tuple[float, float], total_s: float = 12.0) -> Audio:
    x = np.zeros(int(total_s * SR), np.float32)
    x[int(speech[0] * SR):int(speech[1] * SR)] = 0.5
    return Audio(x, SR)


def test_splice_removes_the_samples() -> None:
    a = line((1.0, 9.0))
    assert splice(a, 2.0, 3.0).duration_s == pytest.approx(a.duration_s - 3.0)


def test_a_gap_longer_than_the_window_closes_the_open_turn() -> None:
    got = turn_with_outage(fake_detect, line((1.0, 9.0)), None, 4.0, 3.0, 1000)
    assert got.turn.closed_by == "media_outage"
    assert got.turn.turn_close_s == pytest.approx(5.0)  # last frame + 1 s window
    assert got.heard_until_s == pytest.approx(4.0)
    assert got.heard.duration_s == pytest.approx(4.0)  # nothing after the gap reached it


def test_a_gap_shorter_than_the_window_is_bridged_on_the_render_clock() -> None:
    got = turn_with_outage(fake_detect, line((1.0, 9.0)), None, 4.0, 0.5, 1000)
    assert got.turn.closed_by == "silence_timeout"
    # speech 1-9 s, 0.5 s of it absent: the last speech is still at 9 s on the render clock
    assert got.turn.turn_close_s == pytest.approx(9.0 + TIMER_S)
    assert got.heard.duration_s == pytest.approx(9.0 + TIMER_S - 0.5)


def test_a_turn_closed_before_the_gap_stays_closed() -> None:
    got = turn_with_outage(fake_detect, line((1.0, 2.0)), None, 6.0, 3.0, 1000)
    assert got.turn.closed_by == "silence_timeout"
    assert got.turn.turn_close_s == pytest.approx(2.0 + TIMER_S)


def test_outage_settings_and_the_watchdog_deadline() -> None:
    assert Outage().describe() == "none"
    assert Outage(duration_s=4.0, at_share=0.5).start_s(1.0, 9.0) == pytest.approx(5.0)
    assert outage_deadline(None, 100.0, 1.0) is None  # before speech: the answer timeout
    assert outage_deadline(99.0, None, 1.0) is None
    assert outage_deadline(99.0, 100.0, 1.0) == pytest.approx(101.0)
