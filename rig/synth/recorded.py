"""Recorded human speech: a folder of recordings, one ``<answer_id>.wav`` per answer.

The profile's ``voice.voice_id`` names the folder (relative to the profile file, resolved with
the profile set's ``resolve_path``). Real recordings are the only faithful source of accents;
a TTS accent is not the range of real speakers of that accent.

A recording is used as spoken: the profile's pace, extra pauses and fillers cannot be applied
to it (asking for them raises), while response delay, trailing silence and noise are.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from rig.audio import Audio, read_wav

#: Extensions tried in order for ``<answer_id>``.
EXTENSIONS = (".wav", ".flac")


def recording_path(voice_id: str, answer_id: str,
                   resolve_path: Callable[[str], Path] | None = None) -> Path:
    """The file holding ``answer_id`` in the recording folder ``voice_id``.

    Raises:
        ValueError: no ``answer_id`` was given.
        FileNotFoundError: no ``<answer_id>.wav`` (or ``.flac``) in the folder; the message
            names the folder.
    """
    if not answer_id:
        raise ValueError("a recorded voice needs the answer_id to find its recording")
    resolve = resolve_path or Path
    for ext in EXTENSIONS:
        path = Path(resolve(f"{voice_id}/{answer_id}{ext}"))
        if path.is_file():
            return path
    folder = Path(resolve(voice_id))
    raise FileNotFoundError(f"{folder}: no recording {answer_id}.wav for the recorded voice "
                            f"{voice_id!r}")


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes (the recording is part of the render's cache key)."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load_recording(path: Path, sample_rate_hz: int) -> Audio:
    """The recording mixed to mono and resampled (soxr) to ``sample_rate_hz``.

    Raises:
        FileNotFoundError, ValueError: from :func:`rig.audio.read_wav`.
    """
    return read_wav(path, sample_rate_hz)
