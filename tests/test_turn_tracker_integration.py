"""The one turn tracker on real speech: the turns :func:`rig.vad.detect_turns`, the live
interviewer and the caller agent find in two CMU ARCTIC sentences (tests/data; the same files
as ../shared/data/speech/cmu-arctic) over the 8 kHz telephone line are the ones recorded
before the three listening loops became one (:mod:`rig.vad.tracker`), to the frame."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from rig.audio import Audio, read_wav
from rig.channel import telephony_path
from rig.vad import TurnParams, detect_turn, detect_turns

pytestmark = pytest.mark.integration
DATA = Path(__file__).resolve().parent / "data"
EXACT = 1e-9  # recorded to the float; a frame is 0.02 s


def _same(got, before) -> None:
    """``got`` is ``before`` (nested sequences of seconds), to ``EXACT``."""
    assert np.shape(got) == np.shape(before), (got, before)
    np.testing.assert_allclose(np.asarray(got, float), np.asarray(before, float), rtol=0,
                               atol=EXACT)


def _recording() -> Audio:
    """0.5 s silence, aew a0003, 1.0 s silence, axb a0006, 1.5 s silence, at 16 kHz."""
    a = read_wav(DATA / "cmu_arctic_us_aew_a0003.wav", 16000)
    b = read_wav(DATA / "cmu_arctic_us_axb_a0006.wav", 16000)
    sil = Audio.silence
    return Audio.concat([sil(0.5, 16000), a, sil(1.0, 16000), b, sil(1.5, 16000)])


# (start_s, speech_end_s, close_s) of each turn, recorded before the change
BEFORE = {
    "silero-800": ((0.76, 4.04, 4.84), (5.34, 8.48, 9.28)),
    "silero-200": ((0.76, 4.04, 4.24), (5.34, 8.48, 8.68)),
    "webrtcvad-200": ((0.5, 4.06, 4.26), (5.24, 8.70, 8.9)),
}
PARAMS = {"silero-800": TurnParams(), "silero-200": TurnParams(silence_timeout_ms=200),
          "webrtcvad-200": TurnParams(engine="webrtcvad", silence_timeout_ms=200)}


@pytest.mark.parametrize("name", list(BEFORE))
def test_detect_turns_finds_the_turns_it_found_before(name):
    line = telephony_path(_recording())
    turns = detect_turns(line, PARAMS[name])
    got = tuple((t.start_s, t.speech_end_s, t.close_s) for t in turns)
    _same(got, BEFORE[name])
    assert {t.closed_by for t in turns} == {"silence_timeout"}
    first = detect_turn(line, PARAMS[name])
    start, end, close = BEFORE[name][0]
    assert (first.speech_start_s, first.turn_close_s) == pytest.approx((start, close), abs=EXACT)
    _same(first.speech_segments_s, ((start, end),))
    assert first.closed_by == "silence_timeout"


def test_detect_turns_at_16_khz_finds_the_turns_it_found_before():
    turns = detect_turns(_recording(), TurnParams(silence_timeout_ms=200))
    got = tuple((t.start_s, t.speech_end_s, t.close_s) for t in turns)
    _same(got, ((0.76, 4.04, 4.24), (5.34, 6.28, 6.48), (6.46, 8.48, 8.68)))


def test_the_interviewer_hears_the_turns_it_heard_before(monkeypatch):
    """Fed one 20 ms frame at a time on a fake epoch clock (1000 s + the frame's end)."""
    import rig.calls.interviewer.session as iv
    from rig.pipeline import PipelineConfig
    from rig.scorer.fake import FakeScorer

    clock = [0.0]
    monkeypatch.setattr(iv, "now_s", lambda: clock[0])
    s = iv.InterviewSession(call_id="c", questions=[], pipeline=PipelineConfig(
        name="p", endpointing={"silence_timeout_ms": 200}), pipeline_version="v",
        scorer=FakeScorer(), settings=iv.InterviewerSettings())
    pcm = telephony_path(_recording()).to_pcm16().tobytes()

    async def feed():
        for i in range(0, len(pcm) - 319, 320):
            clock[0] = 1000.0 + (i // 320 + 1) * 0.02
            await s.feed(pcm[i:i + 320])
        return [s._events.get_nowait() for _ in range(s._events.qsize())]

    events = [(e.kind, e.t_s) for e in asyncio.run(feed()) if e.kind != "speech_stopped"]
    assert [k for k, _ in events] == ["speech_started", "turn_closed"] * 2
    assert [t for _, t in events] == pytest.approx([1000.76, 1004.24, 1005.34, 1008.68],
                                                   abs=EXACT)


def test_the_agent_hears_the_utterances_it_heard_before():
    """The whole line queued at once, the far end gone when it has been read (so the second
    run, cut at 2 s, ends mid-utterance), on the idle-skipping clock."""
    from rig.calls.agent.loop import AgentSettings, run_agent
    from rig.calls.bots.fastclock import IdleSkipLoop
    from rig.calls.media import PlayoutBuffer

    pcm = telephony_path(_recording()).to_pcm16().tobytes()

    class Link:
        transport = "fake"

        def __init__(self) -> None:
            self.playout = PlayoutBuffer(max_delay_s=1000.0)
            self.closed = asyncio.Event()

        async def send_frame(self, pcm: bytes) -> None:
            pass

        async def hangup(self) -> None:
            pass

        async def stats(self) -> dict:
            return {}

    async def agent(cut_s: float):
        link = Link()
        link.playout.push(pcm[:int(cut_s * 8000) * 2])
        link.closed.set()
        res = await run_agent(link, [], AgentSettings(time_limit_s=30.0),
                              transcribe=lambda audio: "")
        return res.utterances

    for cut_s, before in [(len(pcm) / 16000, ((0.56, 4.0), (5.14, 8.46))),
                          (2.0, ((0.56, 1.98),))]:
        loop = IdleSkipLoop()
        try:
            _same(loop.run_until_complete(agent(cut_s)), before)
        finally:
            loop.close()
