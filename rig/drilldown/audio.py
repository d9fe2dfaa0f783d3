"""A campaign's per-call audio, written beside its report for the drill-down.

For each simulated call, in ``<out>/audio/``:

* ``<call_id>.caller.flac``: what the candidate's phone sent (the rendered speech after the
  profile's caller-side channel), 16-bit FLAC at the channel's output rate;
* ``<call_id>.line.flac``: the same after the telephony line (8 kHz G.711 by default): what
  the interviewer heard, before its turn detector cut it;
* ``<call_id>.json``: :data:`AUDIO_JSON_VERSION`, the sample rates and durations, the turn
  (``turn_speech_start_s``, ``turn_close_s``, ``turn_closed_by``), every rendered word
  (``word``, ``start_s``, ``end_s``, ``is_filler``, ``kind``, ``after_turn_close``) and
  ``line_peaks``: the line audio's peak absolute amplitude in :data:`N_PEAKS` equal time
  bins (the waveform the report draws, so the report never decodes audio).

Times are seconds from the start of the rendered clip; the caller channel and the line keep
that time base (the pipeline compares word starts with the turn close the same way). Each
file is written to a temporary name in the same folder and renamed, so a reader never sees
half a file. The paths are derived from the call id (:func:`audio_paths`), not row columns,
so runs with and without audio give equal rows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rig.config import loads_strict
from rig.paths import atomic_write

if TYPE_CHECKING:
    from rig.audio import Audio
    from rig.synth.base import RenderedAnswer
    from rig.vad import TurnResult

#: Bumped when the JSON's fields change meaning.
AUDIO_JSON_VERSION = 1
#: Bins of ``line_peaks`` (the waveform's width in points).
N_PEAKS = 400
#: The folder, under a campaign's output folder, that holds the audio.
AUDIO_DIRNAME = "audio"


def audio_paths(audio_dir: str | Path, call_id: str) -> dict[str, Path]:
    """``{"caller": .caller.flac, "line": .line.flac, "json": .json}`` of ``call_id`` in
    ``audio_dir`` (whether or not they exist)."""
    d = Path(audio_dir)
    return {"caller": d / f"{call_id}.caller.flac", "line": d / f"{call_id}.line.flac",
            "json": d / f"{call_id}.json"}


def peaks(samples: np.ndarray, n_bins: int = N_PEAKS) -> list[float]:
    """Peak absolute amplitude of ``samples`` (float, shape ``(n,)``, range [-1, 1]) in
    ``n_bins`` equal bins (fewer when there are fewer samples), rounded to 3 decimals;
    ``[]`` for no samples."""
    x = np.abs(np.asarray(samples, dtype=np.float32))
    if x.size == 0:
        return []
    edges = np.linspace(0, x.size, min(n_bins, x.size) + 1).astype(int)
    return [round(float(v), 3) for v in np.maximum.reduceat(x, edges[:-1])]






def _flac(path: Path, audio: Audio) -> None:
    import soundfile as sf

    data = np.clip(audio.samples, -1.0, 1.0)
    atomic_write(path, lambda tmp: sf.write(str(tmp), data, audio.sample_rate_hz, format="FLAC",
                                             subtype="PCM_16"))


def call_audio_record(call_id: str, caller: Audio, line: Audio, rendered: RenderedAnswer,
                      turn: TurnResult) -> dict:
    """The ``<call_id>.json`` record (see the module) of one call."""
    return {
        "version": AUDIO_JSON_VERSION, "call_id": call_id,
        "caller_sample_rate_hz": caller.sample_rate_hz, "caller_duration_s": caller.duration_s,
        "line_sample_rate_hz": line.sample_rate_hz, "line_duration_s": line.duration_s,
        "rendered_sample_rate_hz": rendered.audio.sample_rate_hz,
        "turn_speech_start_s": turn.speech_start_s, "turn_close_s": turn.turn_close_s,
        "turn_closed_by": turn.closed_by,
        "words": [{"word": w.word, "start_s": w.start_s, "end_s": w.end_s,
                   "is_filler": w.is_filler, "kind": w.kind,
                   "after_turn_close": w.start_s >= turn.turn_close_s}
                  for w in rendered.words],
        "line_peaks": peaks(line.samples),
    }


def write_call_audio(audio_dir: str | Path, call_id: str, caller: Audio, line: Audio,
                     rendered: RenderedAnswer, turn: TurnResult) -> dict[str, Path]:
    """Write the three files of one call (see the module) into ``audio_dir`` (created);
    returns :func:`audio_paths`. ``caller`` and ``line``: float32 mono
    (:class:`rig.audio.Audio`), any rate FLAC takes.

    Raises:
        OSError: the folder or a file cannot be written (no partial file is left).
    """
    d = Path(audio_dir)
    d.mkdir(parents=True, exist_ok=True)
    paths = audio_paths(d, call_id)
    _flac(paths["caller"], caller)
    _flac(paths["line"], line)
    text = json.dumps(call_audio_record(call_id, caller, line, rendered, turn))
    atomic_write(paths["json"], lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    return paths


def read_call_audio(audio_dir: str | Path, call_id: str) -> dict | None:
    """The ``<call_id>.json`` record in ``audio_dir``, or None when there is none (a call run
    with ``--no-audio``, or over a real transport) or it cannot be read."""
    p = audio_paths(audio_dir, call_id)["json"]
    try:
        return loads_strict(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
