"""What a rater hears: each ratable call of a folder with the audio the interviewer heard.

* A **campaign** call: ``audio/<call_id>.line.flac`` (the caller's speech after the telephony
  line, :mod:`rig.drilldown.audio`) cut at the turn close of ``<call_id>.json``
  (``turn_close_s``): speech after the close is not part of the answer the scorer graded
  (docs/measurement.md, "Turn close and truncation"), so it is not part of what the rater
  grades either. Calls whose status is not ``ok`` or that have no line audio (a campaign run
  with ``--no-audio``) are not ratable.
* A **replay** turn (``turn_key``): the candidate's channel of the recording
  (``source``, ``layout``) from ``start_in_file_s`` to ``end_in_file_s`` (the whole answer
  as recorded; versions A and B heard the same recording and differ only in where their
  turn closed, so the clip is the same whichever version is rated, and names neither).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rig.campaign.store import CallLog
from rig.jsonfile import read_json
from rig.ratings.units import Ratable


@dataclass(frozen=True)
class Clip:
    """One ratable call: ``unit_id`` (call_id or turn_key), its ``stratum`` (a campaign's
    profile id; a replay's question id), ``question_id``, and where its audio is: ``path``
    and the span ``start_s`` .. ``end_s`` (seconds in that file; ``end_s`` None: to the end)
    and, for a stereo replay recording, its ``layout``."""
    unit_id: str
    stratum: str
    question_id: str
    path: Path
    start_s: float = 0.0
    end_s: float | None = None
    layout: str | None = None


def _campaign_clips(units: Ratable) -> dict[str, Clip]:
    out: dict[str, Clip] = {}
    audio = units.folder / "audio"
    for row in CallLog(units.folder / "calls.jsonl").rows():
        cid = row.get("call_id")
        if cid not in units.calls or row.get("status") != "ok":
            continue
        line = audio / f"{cid}.line.flac"
        if not line.is_file():
            continue
        meta = audio / f"{cid}.json"
        close = None
        if meta.is_file():
            close = read_json(meta).get("turn_close_s")
        out[cid] = Clip(cid, str(row.get("profile_id")), row["question_id"], line, 0.0,
                        float(close) if close is not None else None)
    return out


def _replay_clips(units: Ratable) -> dict[str, Clip]:
    out: dict[str, Clip] = {}
    for row in CallLog(units.folder / "rows.jsonl", key="row_id").rows():
        key = row.get("turn_key")
        if key not in units.calls or key in out or row.get("status") != "ok":
            continue
        src = Path(row["source"])
        if not src.is_absolute() and not src.is_file():
            src = units.folder.parent / src
        if not src.is_file():
            continue
        out[key] = Clip(key, row["question_id"], row["question_id"], src,
                        float(row.get("start_in_file_s") or 0.0), row.get("end_in_file_s"),
                        row.get("layout"))
    return out


def ratable_clips(units: Ratable) -> dict[str, Clip]:
    """The folder's ratable calls by unit id (see the module)."""
    return _campaign_clips(units) if units.kind == "campaign" else _replay_clips(units)


def clip_wav(clip: Clip) -> bytes:
    """The clip as a 16-bit mono WAV file's bytes, at the recording's own rate.

    Raises:
        rig.monitor.recording.RecordingError: the recording cannot be decoded.
        OSError: the file cannot be read.
    """
    import soundfile as sf

    from rig.monitor.recording import format_of, read_call_audio

    rec = read_call_audio(clip.path.read_bytes(), format_of(clip.path), clip.layout)
    x, sr = rec.candidate.samples, rec.candidate.sample_rate_hz
    a = max(0, round(clip.start_s * sr))
    b = len(x) if clip.end_s is None else min(len(x), round(clip.end_s * sr))
    buf = io.BytesIO()
    sf.write(buf, np.clip(x[a:max(a, b)], -1.0, 1.0), sr, format="WAV", subtype="PCM_16")
    return buf.getvalue()
