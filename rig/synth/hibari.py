"""hibari-tts (Apache-2.0): Kokoro-82M distilled to ONNX, 24 kHz, voice "heart" (US English,
female) shipped inside the package.

The model is loaded once per process and voice. hibari's other voices download on first use;
rig never lets it reach the network and reports them as unavailable instead.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from rig.audio import Audio
from rig.errors import EngineUnavailable
from rig.profiles.settings import HIBARI_RATE_RANGE
from rig.synth.base import join_trimmed

#: hibari's own sentence splits inside one chunk are rejoined with this gap (s).
_PART_GAP_S = 0.1
#: hibari's synthesis draws a noise component; a fixed seed makes the speech a pure function
#: of (text, rate), so repeats of a call share one render.
_HIBARI_SEED = 0


@lru_cache(maxsize=4)
def _load(voice_id: str):  # -> hibari.Hibari
    try:
        import hibari
        from hibari.voices import VOICES, voice_path
    except ImportError as exc:
        raise EngineUnavailable("the hibari engine needs hibari-tts: pip install "
                                "hibari-tts==0.2.1   (or: pip install -e '.[pipeline]')") from exc
    if voice_id not in VOICES:
        raise EngineUnavailable(f"hibari has no voice {voice_id!r}; the package ships 'heart' "
                                "(rig does not download hibari's other voices)")
    try:
        voice_path(voice_id, download_missing=False)
    except FileNotFoundError as exc:
        raise EngineUnavailable(f"hibari voice {voice_id!r} is not shipped in the package "
                                f"(only 'heart' is) and rig does not download models") from exc
    return hibari.Hibari(voice=voice_id), hibari.__version__, hibari.SAMPLE_RATE


class HibariEngine:
    """hibari TTS. ``rate`` is hibari's ``speed`` (0.5 slow ... 2.0 fast).

    Raises:
        EngineUnavailable: hibari-tts is not installed, or the voice is not in the package.
    """

    name = "hibari"
    #: Above about 1.33 hibari's durations collapse (a sentence suddenly takes a quarter less
    #: time) and words slur ("tested" transcribed as "tacit"); a wpm target stays below 1.3.
    rate_range = HIBARI_RATE_RANGE

    def __init__(self, voice_id: str = "heart") -> None:
        self.voice_id = voice_id
        self._tts, pkg_version, self.sample_rate_hz = _load(voice_id)
        self.version = f"hibari-tts {pkg_version}; seed {_HIBARI_SEED}"

    def synthesize(self, text: str, rate: float) -> Audio:
        """Speak ``text``; float32 mono at 24 kHz, hibari's per-sentence padding trimmed."""
        parts = [np.asarray(p, np.float32)
                 for p in self._tts.stream(text, speed=float(rate), seed=_HIBARI_SEED)]
        return join_trimmed(parts, self.sample_rate_hz, _PART_GAP_S)
