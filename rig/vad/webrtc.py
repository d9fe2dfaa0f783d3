"""webrtcvad (Google's WebRTC GMM voice activity detector) under pipecat's VAD state machine.

:class:`WebRtcVadAnalyzer` is a pipecat ``VADAnalyzer`` whose per-window decision is
``webrtcvad.Vad.is_speech``: pipecat buffers the 20 ms telephony frames into ``frame_ms``
windows (10, 20 or 30 ms: the only lengths webrtcvad takes) of 16-bit PCM at 8 or 16 kHz and
runs the same state machine as for Silero (``VADParams``): speech confirmed after
``start_secs`` of speech windows, the turn closed after ``stop_secs`` of non-speech windows
(both rounded to whole windows). webrtcvad decides speech alone: the confidence is 1.0 or 0.0
and pipecat's volume gate is off (``min_volume=0``).
"""

from __future__ import annotations

from rig.errors import EngineUnavailable

#: webrtcvad's accepted analysis frames (ms) and sample rates (Hz) used by the rig.
WEBRTCVAD_FRAMES_MS = (10, 20, 30)
WEBRTCVAD_RATES_HZ = (8000, 16000)


class _WebRtcModel:
    """A ``webrtcvad.Vad`` that can be put back in its as-built state (``reset_states``,
    named as Silero's model method, so a kept analyzer is reset the same way)."""

    def __init__(self, aggressiveness: int) -> None:
        try:
            import webrtcvad
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise EngineUnavailable("vad.engine webrtcvad needs webrtcvad: pip install "
                                    "webrtcvad-wheels (or 'rig[pipeline]')") from exc
        self._make = lambda: webrtcvad.Vad(aggressiveness)
        self.vad = self._make()

    def reset_states(self) -> None:
        """A new ``Vad`` (its noise and speech models adapt from frame to frame)."""
        self.vad = self._make()


def webrtcvad_analyzer(sample_rate_hz: int, params):
    """A pipecat ``VADAnalyzer`` running webrtcvad with ``params.aggressiveness`` (0-3) on
    ``params.frame_ms`` windows, ``start_secs``/``stop_secs`` from ``params.start_ms`` and
    ``params.silence_timeout_ms``; ``await analyze_audio(frame) -> VADState`` on int16 PCM.

    Args:
        sample_rate_hz: 8000 or 16000.
        params: :class:`rig.vad.TurnParams`.

    Raises:
        ValueError: a rate, frame length or aggressiveness webrtcvad does not take.
        EngineUnavailable: pipecat or webrtcvad is not installed.
    """
    from loguru import logger
    from pipecat.audio.vad.vad_analyzer import VADAnalyzer, VADParams

    logger.disable("pipecat")  # it logs every VAD (re)configuration at DEBUG to stderr

    if sample_rate_hz not in WEBRTCVAD_RATES_HZ:
        raise ValueError(f"webrtcvad: sample rate {sample_rate_hz} Hz; the rig runs it at "
                         f"{WEBRTCVAD_RATES_HZ} Hz")
    if params.frame_ms not in WEBRTCVAD_FRAMES_MS:
        raise ValueError(f"webrtcvad: frame_ms {params.frame_ms}; it takes "
                         f"{WEBRTCVAD_FRAMES_MS} ms frames")
    if params.aggressiveness not in (0, 1, 2, 3):
        raise ValueError(f"webrtcvad: aggressiveness {params.aggressiveness}; it takes 0-3")

    class WebRtcVadAnalyzer(VADAnalyzer):
        """pipecat's VAD state machine over webrtcvad decisions (module docstring)."""

        def __init__(self) -> None:
            self._model = _WebRtcModel(params.aggressiveness)
            super().__init__(sample_rate=sample_rate_hz, params=VADParams(
                confidence=0.5, start_secs=params.start_ms / 1000,
                stop_secs=params.silence_timeout_ms / 1000, min_volume=0.0))

        def num_frames_required(self) -> int:
            return self.sample_rate * params.frame_ms // 1000

        def voice_confidence(self, buffer: bytes) -> float:
            return 1.0 if self._model.vad.is_speech(buffer, self.sample_rate) else 0.0

    vad = WebRtcVadAnalyzer()
    vad.set_sample_rate(sample_rate_hz)
    return vad
