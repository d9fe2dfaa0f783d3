"""The turns a VAD finds on one recording do not depend on how fast the machine runs.

Older pipecat releases reset the Silero model's recurrent state every few seconds of *wall*
time, so a slow machine (fewer frames per wall second) reset it at other frames than a fast
one and the turns moved. pipecat 1.14.0 (pinned) counts the interval in audio windows
(``SileroVADAnalyzer._maybe_reset_model``); the smart-turn model runs on the audio clock
(:func:`rig.vad.smart_turn.audio_clock`). This test keeps it so: every clock the process can
read (``time.time``, ``time.monotonic``, ``time.perf_counter`` and their ``_ns`` forms) is
replaced by one that advances 1 us per read (a fast machine) or 5 s per read (a very slow
one), and the turns of the same 8 kHz recording, with long noise-only stretches between
answers (where resets happen), must be identical.

Checked against the old behaviour: with ``_maybe_reset_model`` replaced by a reset every 2 s
of ``time.time()``, the fast clock finds both answers and the slow clock (a reset before
every window) finds no turn at all, so this test fails on a wall-clock reset.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import numpy as np
import pytest

from rig.audio import Audio, read_wav
from rig.channel import telephony_path
from rig.vad import TurnParams, detect_turns, release_analyzers

pytestmark = pytest.mark.integration
DATA = Path(__file__).resolve().parent / "data"
SR = 16000


def recording() -> Audio:
    """Two answers separated and surrounded by kitchen noise, through the 8 kHz line."""
    a = read_wav(DATA / "cmu_arctic_us_aew_a0003.wav", SR)
    b = read_wav(DATA / "cmu_arctic_us_axb_a0006.wav", SR)
    noise = read_wav(DATA / "noise_dishes_10s.wav", SR)
    n = lambda s0, s1: Audio(noise.samples[int(s0 * SR):int(s1 * SR)] * 0.3, SR)  # noqa: E731
    x = Audio.concat([n(0, 3), a, n(3, 8), b, n(8, 10)])
    return telephony_path(x, sample_rate_hz=8000, codec="mulaw")


def turns_with_clock(monkeypatch, step_s: float, params: TurnParams, audio: Audio):
    counter = itertools.count()
    t0 = 1_000_000.0

    def now() -> float:
        return t0 + next(counter) * step_s

    with monkeypatch.context() as m:
        for name in ("time", "monotonic", "perf_counter"):
            m.setattr(time, name, now)
            m.setattr(time, f"{name}_ns", lambda: int(now() * 1e9))
        out = detect_turns(audio, params)
    release_analyzers()  # a fresh analyzer for the other speed
    return out


@pytest.mark.parametrize("params", [
    TurnParams(), TurnParams(engine="webrtcvad"), TurnParams(turn_model="smart-turn")],
    ids=["silero", "webrtcvad", "silero+smart-turn"])
def test_turns_do_not_depend_on_machine_speed(monkeypatch, params: TurnParams) -> None:
    audio = recording()
    fast = turns_with_clock(monkeypatch, 1e-6, params, audio)
    slow = turns_with_clock(monkeypatch, 5.0, params, audio)
    assert fast  # webrtcvad takes the kitchen noise for speech: one long turn
    assert fast == slow


def test_a_real_pause_between_frames_changes_nothing(monkeypatch) -> None:
    """The same with real wall time: every Silero window is delayed (a loaded machine)."""
    from pipecat.audio.vad.silero import SileroVADAnalyzer

    audio = recording().head(9.0)
    quick = detect_turns(audio, TurnParams())
    release_analyzers()
    real = SileroVADAnalyzer.voice_confidence
    slept = []

    def slow(self, buffer):
        time.sleep(0.0005)
        slept.append(1)
        return real(self, buffer)

    monkeypatch.setattr(SileroVADAnalyzer, "voice_confidence", slow)
    slowed = detect_turns(audio, TurnParams())
    release_analyzers()
    assert slept and quick == slowed
    assert np.isfinite([t.start_s for t in quick]).all()
