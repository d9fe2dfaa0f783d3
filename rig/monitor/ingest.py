"""Ingest: production calls (recording + metadata) into the monitoring database.

:func:`ingest_folder` streams an input folder one call at a time: read the metadata, skip a
call whose ``call_id`` is stored already (same content: a duplicate; other content: reported,
the stored row is kept), decode the recording, measure the signals
(:func:`rig.monitor.signals.measure_call`), insert the row in one statement. A file that
cannot be used is reported with its name and the reason and skipped; the rest goes on, and
nothing of a failed call is written. :func:`ingest_one` is the same step for one call (the
HTTP endpoint uses it).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from rig.audio import recording_too_long
from rig.errors import EngineUnavailable, ModelIntegrityError, ModelMissingError, RigError
from rig.monitor.config import MonitorConfig
from rig.monitor.meta import CallMeta, iter_calls
from rig.monitor.recording import AudioFormat, RecordingError, format_of, read_call_audio
from rig.monitor.signals import SignalStages, measure_call
from rig.monitor.store import CallRecord, MonitorStore

Outcome = Literal["ingested", "duplicate"]


class IngestError(RigError):
    """One call that cannot be ingested; ``str(err)`` names the source and the reason."""


class ConflictError(IngestError):
    """The call id is stored already with another recording or other metadata."""


@dataclass(frozen=True)
class BadFile:
    """A file (or manifest line) that was skipped, and why."""
    source: str
    reason: str


@dataclass
class IngestResult:
    """What one ingest run did. ``timings_s`` sums the per-call stage times (decode, vad,
    signals, asr) of the calls ingested in this run."""
    n_seen: int = 0
    n_ingested: int = 0
    n_duplicates: int = 0
    bad: list[BadFile] = field(default_factory=list)
    seconds: float = 0.0
    timings_s: dict[str, float] = field(default_factory=lambda: dict.fromkeys(
        ("decode", "vad", "signals", "asr"), 0.0))


def ingest_one(store: MonitorStore, meta: CallMeta, data: bytes, fmt: AudioFormat,
               audio_path: str, config: MonitorConfig, stages: SignalStages | None = None,
               *, source: str = "", before_insert: Callable[[], None] | None = None,
               ) -> tuple[Outcome, CallRecord | None]:
    """Measure and store one call; ``("duplicate", None)`` when it is stored already.

    ``before_insert`` runs after the signals are measured and before the row is written (the
    server saves the recording there), so a failure in it writes nothing.

    Raises:
        IngestError: the recording cannot be decoded or measured.
        ConflictError: the call_id is stored with other content (metadata or recording).
        ModelMissingError, EngineUnavailable: a model or engine is missing (nothing can be
            ingested: the caller stops).
    """
    name = source or audio_path
    t0 = time.perf_counter()
    audio_sha = hashlib.sha256(data).hexdigest()
    meta_sha = meta.content_sha256()
    known = store.fingerprint(meta.call_id)
    if known is not None:
        if known != (meta_sha, audio_sha):
            what = "metadata" if known[0] != meta_sha else "recording"
            raise ConflictError(f"{name}: call_id {meta.call_id!r} is already stored with another "
                              f"{what}; the stored call is kept (use a new call_id to add it)")
        return "duplicate", None
    try:
        audio = read_call_audio(data, fmt, meta.layout, config.signals.stereo_layout)
    except RecordingError as exc:
        raise IngestError(f"{name}: {exc}") from exc
    t_decode = time.perf_counter() - t0
    try:
        sig = measure_call(audio, meta, config.signals, stages)
    except (ModelMissingError, ModelIntegrityError, EngineUnavailable):
        raise  # no call can be measured: the caller stops
    except Exception as exc:  # one call that breaks a stage is skipped, the rest goes on
        raise IngestError(f"{name}: cannot measure the call ({type(exc).__name__}: {exc})"
                          ) from exc
    rec = CallRecord(
        call_id=meta.call_id, ts=meta.timestamp.astimezone(UTC).replace(tzinfo=None),
        employer=meta.employer, job_family=meta.job_family, score=meta.score,
        decision=meta.decision, channel=meta.channel, language=sig.language,
        language_source=sig.language_source, asr_language=sig.asr_language, codec=sig.codec,
        codec_source=sig.codec_source, channel_class=sig.channel_class,
        hf_ratio_db=sig.hf_ratio_db, snr_db=sig.snr_db, asr_avg_logprob=sig.asr_avg_logprob,
        asr_no_speech_prob=sig.asr_no_speech_prob, n_words=sig.n_words, pace_wpm=sig.pace_wpm,
        n_turns=sig.n_turns, truncation_events=sig.truncation_events,
        repeat_requests=sig.repeat_requests, repeat_source=sig.repeat_source,
        duration_s=sig.duration_s, speech_s=sig.speech_s, n_channels=audio.n_channels,
        layout=audio.layout, file_format=audio.file_format, audio_path=audio_path,
        audio_sha256=audio_sha, meta_sha256=meta_sha,
        signals_version=config.signals_version(), asr_model=config.signals.asr_model,
        transcript=sig.transcript, interviewer_transcript=sig.interviewer_transcript,
        notes="; ".join(sig.notes), t_decode_s=t_decode, t_vad_s=sig.t_vad_s,
        t_signals_s=sig.t_signals_s, t_asr_s=sig.t_asr_s,
        ingested_at=datetime.now(UTC).replace(tzinfo=None, microsecond=0))
    if before_insert is not None:
        before_insert()
    if not store.insert(rec):  # another writer stored it meanwhile
        return "duplicate", None
    return "ingested", rec


def ingest_folder(folder: str | Path, store: MonitorStore, config: MonitorConfig, *,
                  manifest: str | Path | None = None, stages: SignalStages | None = None,
                  on_call: Callable[[str, str], None] | None = None) -> IngestResult:
    """Ingest every call of ``folder`` (see :func:`rig.monitor.meta.iter_calls` for the
    layouts), one at a time.

    ``on_call(source, outcome)`` is called after each call (``ingested``, ``duplicate`` or
    ``bad``), for progress display.

    Raises:
        ConfigError: the folder or the manifest does not exist.
        ModelMissingError, EngineUnavailable: a model or engine is missing.
    """
    res = IngestResult()
    t0 = time.perf_counter()
    for item in iter_calls(folder, manifest, config.score_range):
        res.n_seen += 1
        outcome = "bad"
        if item.error is not None or item.meta is None or item.audio_path is None:
            res.bad.append(BadFile(item.source, item.error or "unusable"))
        else:
            too_long = recording_too_long(item.audio_path)
            if too_long:
                res.bad.append(BadFile(item.source, f"{item.source}: {too_long}"))
                if on_call is not None:
                    on_call(item.source, "bad")
                continue
            try:
                data = item.audio_path.read_bytes()
                outcome, rec = ingest_one(store, item.meta, data, format_of(item.audio_path),
                                          str(item.audio_path.resolve()), config, stages,
                                          source=item.source)
            except OSError as exc:
                res.bad.append(BadFile(item.source, f"{item.source}: cannot read the file "
                                                    f"({exc.strerror})"))
                outcome = "bad"
            except IngestError as exc:
                res.bad.append(BadFile(item.source, str(exc)))
                outcome = "bad"
            else:
                if outcome == "duplicate":
                    res.n_duplicates += 1
                else:
                    res.n_ingested += 1
                    assert rec is not None
                    for k in ("decode", "vad", "signals", "asr"):
                        res.timings_s[k] += getattr(rec, f"t_{k}_s")
        if on_call is not None:
            on_call(item.source, outcome)
    res.seconds = time.perf_counter() - t0
    return res
