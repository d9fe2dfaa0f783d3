"""espeak-ng (formant synthesis, GPL-3.0) run as a separate program, never linked.

Voices: ``en-us``, ``en-gb``, ``en-gb-x-rp``, ``en-gb-scotland``, ``en-gb-x-gbclan``,
``en-gb-x-gbcwmd``, ``en-029``, ``en-us-nyc``. Robotic by design: a stress condition more than
an accent.

MBROLA diphone voices run through espeak-ng (``espeak-ng -v mb-en1``): engine ``mbrola`` with
voice id ``en1``, ``us1``, ``us2``, ``us3``, ``de1``, ``fr1`` ... (or engine ``espeak-ng`` with
``mb-en1``). They need the ``mbrola`` program and the voice database (Debian contrib/non-free:
``apt-get install mbrola mbrola-en1``; the databases are licensed for non-commercial use only),
and are refused with :class:`~rig.errors.EngineUnavailable` when either is missing.
"""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import numpy as np

from rig.audio import Audio
from rig.errors import EngineUnavailable

#: espeak-ng's default rate in words per minute; ``rate`` multiplies it.
BASE_WPM = 175
_INSTALL_HINT = "apt-get install espeak-ng"
_TIMEOUT_S = 60
#: Where espeak-ng looks for an MBROLA voice database ``<id>``.
MBROLA_DIRS: tuple[Path, ...] = (Path("/usr/share/mbrola"), Path("/usr/local/share/mbrola"))


def mbrola_database(voice: str) -> Path | None:
    """The installed database of MBROLA voice ``voice`` ('en1'), or None."""
    for d in MBROLA_DIRS:
        for p in (d / voice / voice, d / voice, d / "voices" / voice):
            if p.is_file():
                return p
    return None


def check_mbrola(voice: str) -> None:
    """Raise :class:`EngineUnavailable` unless the mbrola program and ``voice``'s database are
    installed (the message names the apt packages)."""
    hint = (f"apt-get install mbrola mbrola-{voice} (Debian contrib/non-free; the voice "
            "databases are for non-commercial use)")
    if shutil.which("mbrola") is None:
        raise EngineUnavailable(f"MBROLA voice {voice!r} needs the mbrola program: {hint}")
    if mbrola_database(voice) is None:
        raise EngineUnavailable(f"MBROLA voice database {voice!r} is not installed: {hint}")


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
        self._espeak_voice = voice_id
        if voice_id.startswith("mb-"):
            check_mbrola(voice_id.removeprefix("mb-"))

    def synthesize(self, text: str, rate: float) -> Audio:
        """Speak ``text``; float32 mono at espeak's rate (22.05 kHz; 16 kHz for mbrola)."""
        wpm = round(BASE_WPM * float(rate))
        proc = subprocess.run([self._exe, "-v", self._espeak_voice, "-s", str(wpm), "--stdout",
                               "--", text], capture_output=True, timeout=_TIMEOUT_S)
        if proc.returncode != 0 or len(proc.stdout) <= 44:
            err = proc.stderr.decode(errors="replace").strip().splitlines()
            v = self._espeak_voice
            hint = (f"apt-get install mbrola mbrola-{v.removeprefix('mb-')}"
                    if v.startswith("mb-") else "espeak-ng --voices=en lists them")
            raise EngineUnavailable(f"espeak-ng could not speak with voice {self.voice_id!r}: "
                                    f"{err[-1] if err else 'no audio'} ({hint})")
        samples, rate_hz = parse_wav_stream(proc.stdout)
        return Audio(samples, rate_hz)


class MbrolaEngine(EspeakEngine):
    """An MBROLA diphone voice through espeak-ng: voice id ``en1`` runs ``-v mb-en1``.

    Raises:
        EngineUnavailable: espeak-ng, the mbrola program or the voice database is missing.
    """

    name = "mbrola"

    def __init__(self, voice_id: str = "en1") -> None:
        voice = voice_id.removeprefix("mb-")
        check_mbrola(voice)
        super().__init__(f"mb-{voice}")
        self.voice_id = voice
        db = mbrola_database(voice)
        self.version = f"{self.version}; mbrola {voice} {db.stat().st_size if db else 0} bytes"
