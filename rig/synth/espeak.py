"""espeak-ng (formant synthesis, GPL-3.0) run as a separate program, never linked.

Voices: ``en-us``, ``en-gb``, ``en-gb-x-rp``, ``en-gb-scotland``, ``en-gb-x-gbclan``,
``en-gb-x-gbcwmd``, ``en-029``, ``en-us-nyc``; ``mb-en1``, ``mb-us1`` ... when the mbrola
packages are installed. Robotic by design: a stress condition more than an accent.
"""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache

import numpy as np

from rig.audio import Audio
from rig.errors import EngineUnavailable

#: espeak-ng's default rate in words per minute; ``rate`` multiplies it.
BASE_WPM = 175
_INSTALL_HINT = "apt-get install espeak-ng"
_TIMEOUT_S = 60


@lru_cache(maxsize=1)
def _binary() -> tuple[str, str]:
    exe = shutil.which("espeak-ng")
    if exe is None:
        raise EngineUnavailable(f"the espeak-ng engine needs the espeak-ng program: "
                                f"{_INSTALL_HINT}")
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=_TIMEOUT_S)
    return exe, " ".join(out.stdout.split()[:4])


def parse_wav_stream(data: bytes) -> tuple[np.ndarray, int]:
    """Decode espeak-ng's ``--stdout`` WAV (16-bit mono PCM whose RIFF sizes are placeholders,
    since it streams): float32 samples in [-1, 1) and the sample rate in Hz.

    Raises:
        ValueError: not a 16-bit mono PCM WAV stream.
    """
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError("espeak-ng output is not a WAV stream")
    pos, rate = 12, None
    while pos + 8 <= len(data):
        cid, size = data[pos:pos + 4], int.from_bytes(data[pos + 4:pos + 8], "little")
        if cid == b"fmt ":
            fmt = data[pos + 8:pos + 8 + 16]
            channels = int.from_bytes(fmt[2:4], "little")
            rate = int.from_bytes(fmt[4:8], "little")
            bits = int.from_bytes(fmt[14:16], "little")
            if channels != 1 or bits != 16:
                raise ValueError(f"espeak-ng WAV is {channels} ch / {bits} bit, expected mono 16")
        elif cid == b"data":
            if rate is None:
                raise ValueError("espeak-ng WAV has no fmt chunk before its data")
            pcm = data[pos + 8:]  # the size field is a placeholder: read to the end
            pcm = pcm[: len(pcm) // 2 * 2]
            return (np.frombuffer(pcm, "<i2").astype(np.float32) / 32768.0), rate
        pos += 8 + size + (size & 1)
    raise ValueError("espeak-ng WAV has no data chunk")


class EspeakEngine:
    """espeak-ng through a subprocess: ``espeak-ng -v VOICE -s WPM --stdout`` with
    ``WPM = 175 * rate``.

    Raises:
        EngineUnavailable: espeak-ng is not installed (``apt-get install espeak-ng``), or the
            voice does not exist (mbrola voices need ``apt-get install mbrola mbrola-<voice>``).
    """

    name = "espeak-ng"

    def __init__(self, voice_id: str = "en-us") -> None:
        self.voice_id = voice_id
        self._exe, exe_version = _binary()
        self.version = exe_version

    def synthesize(self, text: str, rate: float) -> Audio:
        """Speak ``text``; float32 mono at espeak's rate (22.05 kHz; 16 kHz for mbrola)."""
        wpm = round(BASE_WPM * float(rate))
        proc = subprocess.run([self._exe, "-v", self.voice_id, "-s", str(wpm), "--stdout",
                               "--", text], capture_output=True, timeout=_TIMEOUT_S)
        if proc.returncode != 0 or len(proc.stdout) <= 44:
            err = proc.stderr.decode(errors="replace").strip().splitlines()
            hint = (f"apt-get install mbrola mbrola-{self.voice_id.removeprefix('mb-')}"
                    if self.voice_id.startswith("mb-") else "espeak-ng --voices=en lists them")
            raise EngineUnavailable(f"espeak-ng could not speak with voice {self.voice_id!r}: "
                                    f"{err[-1] if err else 'no audio'} ({hint})")
        samples, rate_hz = parse_wav_stream(proc.stdout)
        return Audio(samples, rate_hz)
