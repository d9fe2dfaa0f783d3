"""The worker side of a replay: one recording at a time, every turn under every version.

:class:`ReplaySpec` is what a worker needs (picklable: it crosses to spawned processes and
Ray actors); :class:`ReplayWorker` builds the stages once and :meth:`ReplayWorker.run_call`
turns one :class:`rig.replay.inputs.ReplayCall` into rows. A worker never writes: rows go
back to the driver, the only writer of the log.
"""

from __future__ import annotations

import hashlib
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from rig.answers import AnswerBank, load_bank
from rig.monitor.config import MonitorConfig
from rig.monitor.recording import RecordingError, format_of, read_call_audio
from rig.monitor.signals import SignalStages, vad_rate
from rig.profiles import Profile
from rig.replay.inputs import (
    ReplayCall,
    ReplayInputError,
    ReplayTurn,
    check_logged,
    check_span,
)
from rig.replay.rows import checked, short_hash
from rig.replay.segments import call_segments, longest_pause_s, pause_segment
from rig.replay.version import Version, VersionStages, logged_row, replay_turn
from rig.runtime import Runtime


@dataclass(frozen=True)
class ReplaySpec:
    """What every worker needs. ``versions``: A then B. ``profile``: line/noise conditions
    applied to the real speech (None: as recorded). ``stereo_layout``: the candidate's
    channel of stereo recordings whose metadata gives no ``layout`` (None: such a recording
    is refused). ``audio_dir``: where the turns' audio is written (``--copy-audio``)."""
    replay_id: str
    bank_path: str
    versions: tuple[Version, ...]
    monitor_config: MonitorConfig = field(default_factory=MonitorConfig)
    profile: Profile | None = None
    codec_reapplied: bool = False
    stereo_layout: str | None = None
    runtime: Runtime = field(default_factory=Runtime)
    audio_dir: str | None = None
    #: ``(stages by version label, signal stages)`` that every worker runs instead of the
    #: real ones (unit tests; they must pickle for ``local`` and ``ray``)
    fakes: tuple | None = None


@dataclass
class CallOutcome:
    """What one recording gave: rows (checked :class:`rig.replay.rows.ReplayRow` dicts), and
    a message for each turn or the whole recording left out."""
    call_key: str
    source: str
    rows: list[dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: every row id of the recording: replayed now, or logged before (skipped)
    row_ids: list[str] = field(default_factory=list)


def call_key(call: ReplayCall, spec: ReplaySpec, audio_sha256: str) -> str:
    """The recording under this replay's settings: same key, same rows."""
    return short_hash(call.meta.call_id, audio_sha256, call.meta.content_sha256(),
                      call.fields.model_dump_json(), *(v.version or "logged" for v in
                                                        spec.versions),
                      spec.profile.content_hash if spec.profile else "-", spec.codec_reapplied,
                      spec.stereo_layout, spec.audio_dir is not None)


def row_id(turn_key: str, version: Version, spec: ReplaySpec) -> str:
    """One turn under one version (see :mod:`rig.replay.rows`)."""
    return short_hash(turn_key, version.label, "logged" if version.logged else version.version,
                      spec.profile.content_hash if spec.profile else "-", spec.codec_reapplied)


def build_version_stages(version: Version, runtime: Runtime) -> VersionStages:
    """The real stages of a version: its scorer and ASR with ``runtime``'s threads and device
    (:func:`rig.runtime.build_stages`), the VAD of :func:`rig.vad.detect_turns`."""
    from rig.runtime import build_stages
    from rig.vad import detect_turns

    if version.logged:
        from rig.asr.whisper import transcribe

        return VersionStages(None, transcribe, detect_turns)
    st = build_stages(version.pipeline, runtime)
    return VersionStages(st.scorer, st.transcribe, detect_turns, st.scorer_device)


class ReplayWorker:
    """Stages built once (real unless given), then :meth:`run_call` per recording."""

    def __init__(self, spec: ReplaySpec, stages: dict[str, VersionStages] | None = None,
                 signal_stages: SignalStages | None = None) -> None:
        self.spec = spec
        self.bank: AnswerBank = load_bank(spec.bank_path)
        if spec.fakes is not None:
            stages, signal_stages = stages or spec.fakes[0], signal_stages or spec.fakes[1]
        self.stages = stages or {v.label: build_version_stages(v, spec.runtime)
                                 for v in spec.versions}
        self.signal_stages = signal_stages or SignalStages()

    def run_call(self, call: ReplayCall, done: frozenset[str] = frozenset(),
                 key: str | None = None) -> CallOutcome:
        """Every turn of ``call`` under every version whose row is not in ``done``. Never
        raises for one recording's problem: it is in ``problems``, the rest goes on. ``key``:
        the recording's :func:`call_key` as the driver computed it (the one its marker is
        filed under), else computed here."""
        out = CallOutcome("", call.source, problems=list(call.skipped))
        try:
            data = Path(call.audio_path).read_bytes()
        except OSError as exc:
            out.problems.append(f"{call.source}: cannot read the recording ({exc.strerror})")
            return out
        sha = hashlib.sha256(data).hexdigest()
        out.call_key = key or call_key(call, self.spec, sha)
        try:
            audio = self._decode(call, data)
            segs = call_segments(audio, call.meta, self.spec.monitor_config, self.signal_stages)
            turns = call.turns if call.turns is not None else self._find_turns(call, audio)
        except ReplayInputError as exc:
            out.problems.append(str(exc))
            return out
        except Exception as exc:  # one recording that breaks a stage; the rest goes on
            out.problems.append(f"{call.source}: {type(exc).__name__}: {exc}")
            return out
        logged = any(v.logged for v in self.spec.versions)
        for turn in turns:
            try:
                check_span(turn, audio.candidate.duration_s, call.source)
                if logged:
                    check_logged(turn, call.source)
            except ReplayInputError as exc:
                out.problems.append(str(exc))
                continue
            out.rows.extend(self._turn_rows(call, turn, audio.candidate, sha, segs, done,
                                            out.row_ids))
        return out

    def _decode(self, call: ReplayCall, data: bytes):
        try:
            audio = read_call_audio(data, format_of(Path(call.audio_path)), call.layout)
        except RecordingError as exc:
            raise ReplayInputError(f"{call.source}: {exc}") from exc
        if audio.n_channels == 2 and call.layout is None:
            raise ReplayInputError(
                f"{call.source}: layout: a stereo recording needs layout (candidate_left or "
                "candidate_right) in its metadata, or --stereo-layout (got none): replay does "
                "not guess which channel is the candidate")
        return audio

    def _find_turns(self, call: ReplayCall, audio) -> tuple[ReplayTurn, ...]:
        from rig.monitor.signals import _asr_options
        from rig.replay.turns import turns_from_interviewer

        if audio.interviewer is None:
            typo = (f" (the metadata has {', '.join(call.near_misses)})"
                    if call.near_misses else "")
            raise ReplayInputError(
                f"{call.source}: question_id / turns: missing{typo}; a mono recording needs "
                "question_id (one answer) or turns (a whole interview): rig finds the turns "
                "itself only from the interviewer's channel of a stereo recording")
        iv = audio.interviewer.resample(vad_rate(audio.interviewer.sample_rate_hz))
        questions = [(q.question_id, q.question) for q in self.bank.questions]
        return turns_from_interviewer(
            iv, questions, detect_turns=self.signal_stages.detect_turns,
            transcribe=self.signal_stages.transcribe,
            asr_options=_asr_options(self.spec.monitor_config.signals, call.meta),
            source=call.source)

    def _turn_rows(self, call: ReplayCall, turn: ReplayTurn, candidate, sha: str, segs: dict,
                   done: frozenset[str], ids: list[str]) -> list[dict]:
        """The rows of one turn not in ``done``; every row id of the turn goes to ``ids``."""
        question = self.bank.question(turn.question_id)
        clip = candidate.slice(turn.start_s, turn.end_s)
        tkey = short_hash(call.meta.call_id, sha, turn.start_s, turn.end_s, turn.question_id,
                          question.rubric_hash)
        pause = None
        rows = []
        if self.spec.audio_dir is not None:  # --copy-audio: the answer as recorded
            write_turn_audio(Path(self.spec.audio_dir), tkey, clip)
        for v in self.spec.versions:
            rid = row_id(tkey, v, self.spec)
            ids.append(rid)
            if rid in done:
                continue
            if pause is None:
                pause = longest_pause_s(clip, self.signal_stages.detect_turns)
            row = {
                "replay_id": self.spec.replay_id, "row_id": rid, "turn_key": tkey,
                "call_id": call.meta.call_id, "source": call.source, "turn_index": turn.index,
                "question_id": turn.question_id, "turn_source": turn.source,
                "question_match_similarity": turn.match_similarity,
                "layout": call.layout, "start_in_file_s": turn.start_s, "end_in_file_s": turn.end_s,
                "version": v.label, "pipeline_version": None if v.logged else v.version,
                "result_source": "logged" if v.logged else "replayed",
                "profile_id": self.spec.profile.profile_id if self.spec.profile else None,
                "codec_reapplied": self.spec.codec_reapplied, "cutoff": question.cutoff,
                "reference_transcript": turn.reference_transcript,
                **segs, "longest_pause_s": pause, "seg_longest_pause_s": pause_segment(pause),
            }
            try:
                if v.logged:
                    row.update(logged_row(question, turn.logged_transcript, turn.logged_score,
                                          turn.logged_decision, turn.reference_transcript))
                else:
                    row.update(replay_turn(clip, question, v, self.stages[v.label],
                                           profile=self.spec.profile,
                                           codec_reapplied=self.spec.codec_reapplied,
                                           reference=turn.reference_transcript))
            except Exception as exc:  # this turn's row says what failed; the rest goes on
                row.update(status="error", error=f"{type(exc).__name__}: {exc}\n"
                           + traceback.format_exc(limit=4))
            rows.append(checked(row))
        return rows


def write_turn_audio(audio_dir: Path, turn_key: str, clip) -> Path:
    """``<turn_key>.flac`` in ``audio_dir`` (the answer span as recorded, 16-bit FLAC at its
    rate), written once, atomically."""
    import soundfile as sf

    from rig.paths import atomic_write

    path = audio_dir / f"{turn_key}.flac"
    if not path.exists():
        audio_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(path, lambda tmp: sf.write(tmp, clip.samples, clip.sample_rate_hz,
                                                format="FLAC", subtype="PCM_16"))
    return path
