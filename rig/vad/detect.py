"""Turn detection on a recording: :func:`detect_turn` (the first turn: a campaign call holds
one answer) and :func:`detect_turns` (every turn: production monitoring,
:mod:`rig.monitor.signals`), both the kept VAD analyzer (:mod:`rig.vad.analyzers`) fed 20 ms
frames on the audio's clock through the one :class:`rig.vad.tracker.TurnTracker`, and an
end-of-turn model on top when ``TurnParams.turn_model`` names one."""

from __future__ import annotations

import asyncio

import rig.vad.analyzers as analyzers
from rig.audio import Audio
from rig.vad.params import FRAME_MS, SILERO_RATES_HZ, Turn, TurnParams, TurnResult
from rig.vad.tracker import TurnEvent, TurnTracker


def _check_rate(audio: Audio, caller: str) -> None:
    if audio.sample_rate_hz not in SILERO_RATES_HZ:
        raise ValueError(f"{caller}: the VAD takes {SILERO_RATES_HZ} Hz, got "
                         f"{audio.sample_rate_hz} Hz; resample first")


def detect_turn(audio: Audio, params: TurnParams) -> TurnResult:
    """Run the VAD frame by frame and return where the turn closes.

    Args:
        audio: float32 mono at 8000 or 16000 Hz (what the interviewer receives).
        params: endpointing settings.

    Raises:
        ValueError: the sample rate is not 8000 or 16000 Hz, or a setting the engine does
            not take (webrtcvad: frame_ms, aggressiveness).
        EngineUnavailable: the engine or turn model package is not installed.
    """
    _check_rate(audio, "detect_turn")
    return asyncio.run(_detect(audio, params))


async def _events(audio: Audio, params: TurnParams):
    """Frame by frame (``at_s`` the frame's end), yield the tracker's :class:`TurnEvent`\\ s:
    speech_started (the onset, dated back by ``start_ms``), speech_stopped (the last speech,
    ``silence_timeout_ms`` before the timer fired) and turn_closed: at the VAD's stop without
    a turn model; with one, where pipecat's ``TurnAnalyzerUserTurnStopStrategy`` would end
    the user's turn (:mod:`rig.vad.smart_turn`).
    """
    from pipecat.audio.turn.base_turn_analyzer import EndOfTurnState

    from rig.vad.smart_turn import audio_clock

    vad = analyzers.kept_analyzer(audio.sample_rate_hz, params)
    turn = (None if params.turn_model == "none"
            else analyzers.kept_turn_model(audio.sample_rate_hz, params))
    tracker = TurnTracker(params.start_ms, params.silence_timeout_ms,
                          close_on_silence=turn is None)
    pcm = audio.to_pcm16().tobytes()
    frame_bytes = audio.sample_rate_hz * FRAME_MS // 1000 * 2
    for i in range(0, len(pcm) - frame_bytes + 1, frame_bytes):
        t_end = (i + frame_bytes) / 2 / audio.sample_rate_hz
        frame = pcm[i:i + frame_bytes]
        # pipecat pushes the VAD's started/stopped frame before the audio frame behind it
        for ev in await tracker.feed(vad, frame, t_end):
            if ev.kind == "speech_started" and turn is not None:
                turn.update_vad_start_secs(params.start_ms / 1000)
            yield ev
            if ev.kind == "speech_stopped" and turn is not None:
                verdict, _ = await turn.analyze_end_of_turn()
                if verdict == EndOfTurnState.COMPLETE:
                    yield tracker.close(t_end, "turn_model")
        if turn is not None:
            with audio_clock(t_end):  # the user-speaking flag: from the VAD's start to its stop
                timed_out = (turn.append_audio(frame, tracker.speaking)
                             == EndOfTurnState.COMPLETE)
            if timed_out:  # the model's own timer; it cleared itself
                yield tracker.close(t_end, "turn_model_timeout")


async def _detect(audio: Audio, params: TurnParams) -> TurnResult:
    start_s: float | None = None
    seg_start: float | None = None
    segments: list[tuple[float, float]] = []
    events = _events(audio, params)
    try:
        ev: TurnEvent
        async for ev in events:
            if ev.kind == "speech_started":
                seg_start = ev.t_s
                if start_s is None:
                    start_s = ev.t_s
            elif ev.kind == "speech_stopped":
                segments.append((seg_start if seg_start is not None else 0.0, ev.t_s))
                seg_start = None
            else:
                return TurnResult(start_s, ev.t_s, ev.reason, tuple(segments))
    finally:
        await events.aclose()
    if start_s is None:
        return TurnResult(None, audio.duration_s, "no_speech", ())
    if seg_start is not None:
        segments.append((seg_start, audio.duration_s))
    return TurnResult(start_s, audio.duration_s, "end_of_audio", tuple(segments))


def detect_turns(audio: Audio, params: TurnParams) -> tuple[Turn, ...]:
    """Every turn of a whole recording: the VAD and endpointing timer of :func:`detect_turn`,
    run to the end of the audio instead of stopping at the first close.

    A production call holds many candidate turns; :mod:`rig.monitor` uses them for speech
    pace, the SNR estimate's speech/non-speech split and truncation events.

    Args:
        audio: float32 mono at 8000 or 16000 Hz.
        params: endpointing settings.

    Returns:
        Turns in time order (empty when no speech was detected).

    Raises:
        ValueError: the sample rate is not 8000 or 16000 Hz, or a setting the engine does
            not take (webrtcvad: frame_ms, aggressiveness).
        EngineUnavailable: the engine or turn model package is not installed.
    """
    _check_rate(audio, "detect_turns")
    return asyncio.run(_detect_all(audio, params))


async def _detect_all(audio: Audio, params: TurnParams) -> tuple[Turn, ...]:
    turns: list[Turn] = []
    start: float | None = None
    end: float | None = None  # the turn's last speech end so far; None while speaking
    async for ev in _events(audio, params):
        if ev.kind == "speech_started":
            if start is None:
                start = ev.t_s
            end = None
        elif ev.kind == "speech_stopped":
            end = ev.t_s
        elif start is not None:
            t = ev.t_s
            turns.append(Turn(start, max(start, end if end is not None else t), t, ev.reason))
            start = end = None
    if start is not None:
        turns.append(Turn(start, end if end is not None else audio.duration_s,
                          audio.duration_s, "end_of_audio"))
    return tuple(turns)
