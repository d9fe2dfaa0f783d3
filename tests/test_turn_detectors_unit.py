"""The turn detectors' logic on fakes: webrtcvad's framing and the endpointing timer on top
(pipecat's real VAD state machine, a fake ``webrtcvad.Vad`` that calls a frame speech when
its samples are not zero), the smart-turn drive (a fake end-of-turn model with scripted
verdicts), and the pipeline settings (engine-specific fields, ConfigErrors, versions)."""

from __future__ import annotations

import sys
import types
from typing import ClassVar

import numpy as np
import pytest

from rig import vad
from rig.audio import Audio
from rig.errors import ConfigError
from rig.pipeline import PipelineConfig, load_pipeline, pipeline_version
from rig.vad import TurnParams, analyzers, detect_turn, detect_turns

pytestmark = pytest.mark.unit
RATE = 8000


class FakeVad:
    """``webrtcvad.Vad``: speech when any sample of the frame is not zero; records frames."""
    calls: ClassVar[list[tuple[int, int, int]]] = []  # (mode, frame bytes, rate)

    def __init__(self, mode: int) -> None:
        self.mode = mode

    def is_speech(self, buf: bytes, rate: int) -> bool:
        FakeVad.calls.append((self.mode, len(buf), rate))
        return bool(np.frombuffer(buf, np.int16).any())


@pytest.fixture
def fake_webrtcvad(monkeypatch):
    FakeVad.calls = []
    monkeypatch.setitem(sys.modules, "webrtcvad", types.SimpleNamespace(Vad=FakeVad))
    yield FakeVad
    vad.release_analyzers()


def _track(*parts: tuple[str, float]) -> Audio:
    """Speech (a 0.3-amplitude 200 Hz tone) and silence (zeros), ``(kind, seconds)``."""
    out = []
    for kind, s in parts:
        n = round(s * RATE)
        tone = 0.3 * np.sin(2 * np.pi * 200 * np.arange(n) / RATE)
        out.append((tone if kind == "speech" else np.zeros(n)).astype(np.float32))
    return Audio(np.concatenate(out), RATE)


@pytest.mark.parametrize("frame_ms", [10, 20, 30])
def test_webrtcvad_gets_whole_frames_of_16_bit_pcm(fake_webrtcvad, frame_ms):
    audio = _track(("silence", 0.5), ("speech", 1.0), ("silence", 1.5))
    detect_turns(audio, TurnParams(engine="webrtcvad", aggressiveness=3, frame_ms=frame_ms))
    assert {c[1:] for c in FakeVad.calls} == {(RATE * frame_ms // 1000 * 2, RATE)}
    assert {c[0] for c in FakeVad.calls} == {3}
    # pipecat buffers the 20 ms frames into frame_ms windows: every whole window is judged
    assert len(FakeVad.calls) == int(audio.duration_s * 1000) // frame_ms


@pytest.mark.parametrize("frame_ms", [10, 20, 30])
def test_webrtcvad_timer_starts_after_start_ms_and_closes_after_the_silence(
        fake_webrtcvad, frame_ms):
    audio = _track(("silence", 0.5), ("speech", 1.2), ("silence", 0.6), ("speech", 0.9),
                   ("silence", 1.5), ("speech", 0.6), ("silence", 2.0))
    p = TurnParams(engine="webrtcvad", frame_ms=frame_ms, silence_timeout_ms=900, start_ms=200)
    r = detect_turn(audio, p)
    tol = frame_ms / 1000 + 0.021  # one window and one 20 ms frame of quantization
    assert r.closed_by == "silence_timeout"
    assert r.speech_start_s == pytest.approx(0.5, abs=tol)
    # the 0.6 s pause is shorter than the 0.9 s timer; the 1.5 s one closes the turn
    assert r.turn_close_s == pytest.approx(3.2 + 0.9, abs=tol)
    assert r.speech_segments_s[0][1] == pytest.approx(3.2, abs=tol)
    turns = detect_turns(audio, p)
    assert [t.closed_by for t in turns] == ["silence_timeout", "silence_timeout"]
    assert turns[1].start_s == pytest.approx(4.7, abs=tol)
    assert turns[1].close_s == pytest.approx(5.3 + 0.9, abs=tol)


def test_webrtcvad_needs_start_ms_of_speech_to_start(fake_webrtcvad):
    blip = _track(("silence", 0.5), ("speech", 0.1), ("silence", 2.0))
    r = detect_turn(blip, TurnParams(engine="webrtcvad", start_ms=200))
    assert r.closed_by == "no_speech" and r.speech_start_s is None
    assert detect_turn(blip, TurnParams(engine="webrtcvad", start_ms=60)).speech_start_s


def test_webrtcvad_rejects_what_it_does_not_take(fake_webrtcvad):
    with pytest.raises(ValueError, match="frame_ms 25"):
        detect_turn(_track(("silence", 1.0)), TurnParams(engine="webrtcvad", frame_ms=25))
    with pytest.raises(ValueError, match="aggressiveness 4"):
        detect_turn(_track(("silence", 1.0)), TurnParams(engine="webrtcvad", aggressiveness=4))
    with pytest.raises(ValueError, match="22050"):
        detect_turn(Audio(np.zeros(22050, np.float32), 22050), TurnParams(engine="webrtcvad"))


def test_the_kept_webrtcvad_analyzer_is_reset_per_recording(fake_webrtcvad):
    p = TurnParams(engine="webrtcvad")
    cut = _track(("silence", 0.3), ("speech", 1.0), ("silence", 1.0), ("speech", 1.0))
    whole = _track(("speech", 0.6), ("silence", 2.0))
    detect_turn(cut, p)  # stops mid-recording, speaking again
    kept = vad.kept_analyzer(RATE, p)
    assert vad.kept_analyzer(RATE, p) is kept
    again = detect_turn(whole, p)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(analyzers, "kept_analyzer", vad.vad_analyzer)
        assert detect_turn(whole, p) == again


class FakeTurnModel:
    """A smart-turn stand-in: scripted verdicts at each VAD stop, its own silence timer."""

    def __init__(self, verdicts: list[bool], stop_ms: int) -> None:
        from pipecat.audio.turn.base_turn_analyzer import EndOfTurnState

        self.S = EndOfTurnState
        self.verdicts, self.stop_ms = list(verdicts), stop_ms
        self.silence_ms, self.triggered, self.asked, self.vad_start_secs = 0.0, False, 0, None

    def update_vad_start_secs(self, s: float) -> None:
        self.vad_start_secs = s

    def append_audio(self, buf: bytes, is_speech: bool):
        if is_speech:
            self.triggered, self.silence_ms = True, 0.0
        elif self.triggered:
            self.silence_ms += len(buf) / 2 / RATE * 1000
            if self.silence_ms >= self.stop_ms:
                self.triggered = False
                return self.S.COMPLETE
        return self.S.INCOMPLETE

    async def analyze_end_of_turn(self):
        self.asked += 1
        done = self.verdicts.pop(0) if self.verdicts else False
        if done:
            self.triggered = False
        return (self.S.COMPLETE if done else self.S.INCOMPLETE), None


def _with_model(monkeypatch, verdicts, stop_ms=1500) -> FakeTurnModel:
    model = FakeTurnModel(verdicts, stop_ms)
    monkeypatch.setattr(analyzers, "kept_turn_model", lambda rate, params: model)
    return model


AUDIO = (("silence", 0.5), ("speech", 1.0), ("silence", 1.0), ("speech", 1.0),
         ("silence", 3.0))


def test_a_complete_verdict_closes_the_turn_at_the_vad_stop(fake_webrtcvad, monkeypatch):
    model = _with_model(monkeypatch, [True])
    r = detect_turn(_track(*AUDIO), TurnParams(engine="webrtcvad", silence_timeout_ms=400,
                                               turn_model="smart-turn"))
    assert r.closed_by == "turn_model" and model.asked == 1
    assert r.turn_close_s == pytest.approx(1.5 + 0.4, abs=0.045)  # truncated in the pause
    assert model.vad_start_secs == pytest.approx(0.2)


def test_an_incomplete_verdict_keeps_listening_to_the_next_stop(fake_webrtcvad, monkeypatch):
    model = _with_model(monkeypatch, [False, True])
    p = TurnParams(engine="webrtcvad", silence_timeout_ms=400, turn_model="smart-turn")
    r = detect_turn(_track(*AUDIO), p)
    assert r.closed_by == "turn_model" and model.asked == 2
    assert r.turn_close_s == pytest.approx(3.5 + 0.4, abs=0.045)
    assert [round(s) for s, _ in r.speech_segments_s] == [0, 2]  # two stretches of speech
    assert r.speech_segments_s[1][1] == pytest.approx(3.5, abs=0.045)


def test_the_models_own_timer_closes_a_turn_it_never_calls_complete(fake_webrtcvad,
                                                                     monkeypatch):
    model = _with_model(monkeypatch, [False, False], stop_ms=1500)
    p = TurnParams(engine="webrtcvad", silence_timeout_ms=400, turn_model="smart-turn")
    r = detect_turn(_track(*AUDIO), p)
    # pipecat counts the model's silence from the VAD's stop: 3.5 + 0.4 + 1.5
    assert r.closed_by == "turn_model_timeout" and model.asked == 2
    assert r.turn_close_s == pytest.approx(5.4, abs=0.045)
    turns = detect_turns(_track(*AUDIO), p)
    assert len(turns) == 1 and turns[0].closed_by == "turn_model_timeout"
    assert turns[0].speech_end_s == pytest.approx(3.5, abs=0.045)


def test_a_held_turn_runs_to_the_end_of_the_audio(fake_webrtcvad, monkeypatch):
    _with_model(monkeypatch, [False], stop_ms=5000)
    audio = _track(("silence", 0.5), ("speech", 1.0), ("silence", 2.0))
    r = detect_turn(audio, TurnParams(engine="webrtcvad", silence_timeout_ms=400,
                                      turn_model="smart-turn"))
    assert r.closed_by == "end_of_audio" and r.turn_close_s == audio.duration_s
    assert len(r.speech_segments_s) == 1


def _yaml(tmp_path, vad_yaml: str, turn_yaml: str = "") -> PipelineConfig:
    path = tmp_path / "p.yaml"
    path.write_text(f"name: p\nvad: {vad_yaml}\n" + (f"turn: {turn_yaml}\n" if turn_yaml else ""))
    return load_pipeline(path)


def test_pipeline_engine_settings_and_their_errors(tmp_path):
    silero = _yaml(tmp_path, "{engine: silero}")
    assert (silero.vad.confidence, silero.vad.min_volume, silero.vad.aggressiveness) == (
        0.7, 0.6, None)
    w = _yaml(tmp_path, "{engine: webrtcvad, aggressiveness: 3, frame_ms: 30}")
    assert (w.vad.aggressiveness, w.vad.frame_ms, w.vad.confidence) == (3, 30, None)
    p = TurnParams.from_pipeline(w)
    assert (p.engine, p.aggressiveness, p.frame_ms, p.turn_model) == ("webrtcvad", 3, 30, "none")
    for bad, words in [("{engine: webrtcvad, confidence: 0.5}", "confidence: 0.5 is not a "
                        "setting of engine 'webrtcvad'"),
                       ("{engine: silero, frame_ms: 30}", "frame_ms: 30 is not a setting of "
                        "engine 'silero'"),
                       ("{engine: webrtcvad, frame_ms: 25}", "frame_ms"),
                       ("{engine: webrtcvad, aggressiveness: 4}", "aggressiveness"),
                       ("{engine: vosk}", "engine")]:
        with pytest.raises(ConfigError, match=r"p\.yaml") as info:
            _yaml(tmp_path, bad)
        assert words in str(info.value), str(info.value)
    with pytest.raises(ConfigError, match="stop_ms: 900 is a setting of a turn model"):
        _yaml(tmp_path, "{engine: silero}", "{model: none, stop_ms: 900}")
    st = _yaml(tmp_path, "{engine: silero}", "{model: smart-turn}")
    assert TurnParams.from_pipeline(st).turn_model_stop_ms == 3000


def test_engine_switch_alone_is_valid_and_every_setting_is_versioned():
    ref = PipelineConfig(name="p")
    dumped = ref.model_dump(mode="json")
    dumped["vad"]["engine"] = "webrtcvad"  # a sweep's dotted-path change on a full dump
    w = PipelineConfig(**dumped)
    dumped = w.model_dump(mode="json")
    dumped["vad"]["engine"] = "silero"
    assert PipelineConfig(**dumped) == ref
    versions = {pipeline_version(c) for c in [
        ref, w, PipelineConfig(name="p", vad={"engine": "webrtcvad", "aggressiveness": 3}),
        PipelineConfig(name="p", vad={"engine": "webrtcvad", "frame_ms": 30}),
        PipelineConfig(name="p", turn={"model": "smart-turn"}),
        PipelineConfig(name="p", turn={"model": "smart-turn", "stop_ms": 2000})]}
    assert len(versions) == 6
    # a default written out or left out: one version
    assert pipeline_version(w) == pipeline_version(PipelineConfig(
        name="p", vad={"engine": "webrtcvad", "aggressiveness": 2, "frame_ms": 20}))


def test_a_call_passes_the_pipelines_turn_settings_and_records_them(tmp_path):
    from pathlib import Path

    from test_call_row_unit import stages

    from rig.answers import load_bank
    from rig.campaign.call import run_call
    from rig.profiles import load_profiles
    from rig.scorer.fake import FakeScorer
    from rig.vad import TurnResult

    root = Path(__file__).resolve().parents[1]
    question, answer = load_bank(root / "answer_bank" / "core").answers()[0]
    seen = []

    def detect(audio, params):
        seen.append(params)
        return TurnResult(0.1, audio.duration_s * 0.6, "turn_model", ())

    pipeline = PipelineConfig(name="p", vad={"engine": "webrtcvad", "frame_ms": 30},
                              turn={"model": "smart-turn", "stop_ms": 2000})
    row = run_call(stages=stages(detect_turn=detect), question=question, answer=answer,
                   profile=load_profiles(root / "profiles" / "demo").baseline, repeat=0,
                   seed=0, pipeline=pipeline, pipeline_version="v1", campaign_id="c",
                   oracle=FakeScorer().score(question, answer.clean_text, 0))
    assert seen == [TurnParams(engine="webrtcvad", frame_ms=30, turn_model="smart-turn",
                               turn_model_stop_ms=2000)]
    assert (row["vad_engine"], row["turn_model"], row["turn_closed_by"]) == (
        "webrtcvad", "smart-turn", "turn_model")
