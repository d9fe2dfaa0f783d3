"""Reading a production recording into the candidate's (and the interviewer's) channel.

Accepted:

* **WAV** (anything libsndfile reads: 16/24/32-bit PCM, float, G.711 mu-law or A-law WAV), mono
  or stereo, any rate. Mono: the candidate only. Stereo: one channel per side; which one is
  the candidate is the call's ``layout`` (metadata) or the config's
  ``signals.stereo_layout`` (default ``candidate_left``: channel 0 the candidate, channel 1
  the interviewer). More than two channels is refused.
* **FLAC** (``.flac``): the same, lossless.
* **Raw G.711 mu-law** (``.ulaw``/``.mulaw``, or ``audio_format: mulaw`` on the HTTP
  endpoint): headerless, one byte per sample, 8000 Hz, mono (the format Twilio media streams
  and many SBC recorders write), decoded with :func:`rig.channel.g711.mulaw_decode`.

One call is decoded at a time; its float32 samples are the only copy held in memory.
"""

from __future__ import annotations

import hashlib
import io
import re
from pathlib import Path
from typing import Literal

import numpy as np
import soundfile as sf

from rig.audio import (
    Audio,
    container_problem,
    fill_streaming_sizes,
    pcm16_to_float,
    samples_problem,
)
from rig.audio import wav_truncation as wav_truncation  # its home before
from rig.channel.codecs import decode
from rig.channel.g711 import LINE_RATE_HZ
from rig.monitor.signals import CallAudio, detect_g711

AudioFormat = Literal["wav", "flac", "mulaw"]
_FILE_CODECS = {"ULAW": "mulaw", "ALAW": "alaw"}


class RecordingError(ValueError):
    """A recording that cannot be used; the message says why (the caller adds the name)."""


def format_of(path: Path) -> AudioFormat:
    """``mulaw`` for ``.ulaw``/``.mulaw`` files, ``flac`` for ``.flac``, else ``wav``."""
    suffix = path.suffix.lower()
    if suffix in (".ulaw", ".mulaw"):
        return "mulaw"
    return "flac" if suffix == ".flac" else "wav"


def read_call_audio(data: bytes, fmt: AudioFormat, layout: str | None,
                    default_layout: str = "candidate_left") -> CallAudio:
    """Decode one recording.

    Args:
        data: the file's bytes.
        fmt: ``wav`` (a WAV file: another container under that name is refused), ``flac``
            (a FLAC file) or ``mulaw`` (raw 8 kHz G.711).
        layout: ``mono``, ``candidate_left``, ``candidate_right`` or None (mono files: mono;
            stereo: ``default_layout``).

    Raises:
        RecordingError: empty, undecodable, silent-length or over two channels, or a layout
            that does not fit the channel count.
    """
    sha = hashlib.sha256(data).hexdigest()
    if not data:
        raise RecordingError("empty file")
    if fmt == "mulaw":
        if layout not in (None, "mono"):
            raise RecordingError(f"raw mu-law is mono; layout {layout!r} needs a stereo WAV")
        audio = decode(np.frombuffer(data, dtype=np.uint8), "mulaw", LINE_RATE_HZ)
        return CallAudio(audio, None, 1, "mono", "mulaw", "file", "raw-mulaw-8k", sha)
    cut = container_problem(data, f"call.{fmt}")
    if not cut and fmt == "flac" and not data.startswith(b"fLaC"):
        cut = "not a FLAC file (no fLaC signature): name the file by what it holds"
    if cut:
        raise RecordingError(cut)
    data = fill_streaming_sizes(data)  # a size of 0 followed by samples: read them
    try:
        info = sf.info(io.BytesIO(data))
        if info.subtype == "PCM_16":
            pcm, sr = sf.read(io.BytesIO(data), dtype="int16", always_2d=True)
            x = pcm16_to_float(pcm)
        else:
            x, sr = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
            pcm = None
    except Exception as exc:  # libsndfile raises its own error types
        # its message names the in-memory buffer (<_io.BytesIO object at 0x...>): drop that
        why = re.sub(r"\s*<_io\.BytesIO object at 0x[0-9a-f]+>", "", str(exc)).strip()
        why = re.sub(r"^Error opening\s*:?\s*", "", why)
        raise RecordingError(f"cannot decode audio ({why or type(exc).__name__})") from exc
    n_ch = x.shape[1]
    why = samples_problem(x, info.subtype in ("FLOAT", "DOUBLE"), int(sr))
    if why:
        raise RecordingError(why)
    if n_ch > 2:
        raise RecordingError(f"{n_ch} channels; a recording is mono (candidate) or stereo "
                             "(candidate and interviewer)")
    layout = layout or ("mono" if n_ch == 1 else default_layout)
    if (layout == "mono") != (n_ch == 1):
        raise RecordingError(f"layout {layout!r} does not fit a {n_ch}-channel file")
    cand_ch = 1 if layout == "candidate_right" else 0
    codec, source = _FILE_CODECS.get(info.subtype), "file"
    if codec is None and pcm is not None:
        codec, source = detect_g711(pcm[:, cand_ch]), "detected"
    if codec is None:
        source = None
    candidate = Audio(np.ascontiguousarray(x[:, cand_ch], dtype=np.float32), int(sr))
    interviewer = (Audio(np.ascontiguousarray(x[:, 1 - cand_ch], dtype=np.float32), int(sr))
                   if n_ch == 2 else None)
    return CallAudio(candidate, interviewer, n_ch, layout, codec, source,
                     f"wav:{info.subtype}", sha)

