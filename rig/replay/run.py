"""The driver of ``rig replay``: find the recordings, run them on an executor, log every row,
write the outputs.

**Resume.** The driver alone writes. Each row is appended to ``rows.jsonl`` (flushed and
fsync'ed, :class:`rig.campaign.store.CallLog`) as its recording finishes, then the
recording's marker in ``recordings.jsonl`` (its key, the row ids it gave, what was left out
and why). A rerun of the same command skips a recording whose marker says ``done`` and, in
one that is not (killed mid-recording, or a stage failed), the rows already logged ``ok``:
nothing is lost or done twice. A torn last line (a kill mid-write) is set aside, as for
campaigns.

**Executors** (``--executor``, ``--workers``): ``serial`` in this process; ``local``
spawned worker processes on this machine; ``ray`` Ray actors (extra ``ray``) on a local head
or the cluster ``RAY_ADDRESS`` names: the shared job layer :mod:`rig.jobs` (the campaign's
executors: a worker SIGKILLed mid-recording has its recording run again on another, the
driver logging each once). Each worker builds its stages once; the threads of each engine
are split over the workers as for campaigns (:func:`rig.runtime.default_runtime`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rig.answers import load_bank
from rig.audio import recording_too_long
from rig.campaign.store import CallLog
from rig.errors import ConfigError
from rig.monitor.config import MonitorConfig
from rig.monitor.meta import iter_calls
from rig.paths import make_out_dir, remove_partials
from rig.pipeline import load_pipeline, pipeline_version
from rig.profiles import Profile
from rig.replay.inputs import ReplayCall, ReplayInputError, replay_call
from rig.replay.rows import short_hash
from rig.replay.version import Version
from rig.replay.work import CallOutcome, ReplaySpec, ReplayWorker, call_key
from rig.runtime import default_runtime

ExecutorName = Literal["serial", "local", "ray"]


@dataclass
class ReplayResult:
    """What a run did: rows of this replay (every version, every turn), the messages of
    what was left out, counts."""
    out: Path
    rows: list[dict]
    problems: list[str]
    n_recordings: int = 0
    n_skipped_done: int = 0
    notes: list[str] = field(default_factory=list)


def versions(pipeline_a: Path, pipeline_b: Path, logged_a: bool) -> tuple[Version, Version]:
    """Versions A and B from their pipeline files.

    Raises:
        ConfigError: a file is missing or invalid (names the file, field and value)."""
    pa, pb = load_pipeline(pipeline_a), load_pipeline(pipeline_b)
    return (Version("A", pa, pipeline_version(pa), logged=logged_a),
            Version("B", pb, pipeline_version(pb)))


def find_calls(recordings: Path | None, *, bank_questions: set[str],
               stereo_layout: str | None, manifest: Path | None = None,
               from_monitor: Path | None = None) -> Iterator[ReplayCall | str]:
    """The recordings to replay (a :class:`ReplayCall`), or a message naming one that cannot
    be (a ``str``), one at a time.

    Raises:
        ConfigError: the folder, manifest or monitoring database does not exist."""
    if from_monitor is not None:
        from rig.replay.monitor_input import calls_from_monitor

        yield from calls_from_monitor(from_monitor, stereo_layout)
        return
    if recordings is None:
        raise ConfigError("rig replay", "RECORDINGS", "a recordings folder or --from-monitor")
    for item in iter_calls(recordings, manifest):
        try:
            yield replay_call(item, bank_questions, stereo_layout)
        except ReplayInputError as exc:
            yield str(exc)


def replay_worker(spec: ReplaySpec) -> Callable[[tuple], CallOutcome]:
    """A replay worker (:mod:`rig.jobs`): builds its stages once (:class:`ReplayWorker`),
    then runs ``(call, done row ids, call key)`` items into :class:`CallOutcome` s."""
    from rig.console import quiet_pipecat_logs

    quiet_pipecat_logs()
    w = ReplayWorker(spec)
    return lambda item: w.run_call(*item)


def _run_calls(calls: list[tuple[ReplayCall, frozenset[str], str]], spec: ReplaySpec,
               executor: ExecutorName, workers: int,
               on_outcome: Callable[[CallOutcome], None]) -> None:
    """Each call on the executor (:func:`rig.jobs.run_items`: serial, local processes or
    Ray actors), ``on_outcome`` in this thread as each recording finishes."""
    from rig.campaign.executors.base import ExecutorSpec
    from rig.jobs import Item, JobSetup, run_items

    if executor == "ray":
        try:
            import ray  # noqa: F401
        except ImportError as exc:
            raise ConfigError("rig replay", "--executor", "the ray executor needs the extra "
                              "ray: pip install -e '.[ray]'", "ray", True) from exc
    items = [Item(f"{i}:{key}", (call, done, key)) for i, (call, done, key) in enumerate(calls)]
    address = "auto" if executor == "ray" and os.environ.get("RAY_ADDRESS") else None
    spec_ex = ExecutorSpec(executor, workers, address)
    run_items(items, JobSetup(replay_worker, (spec,), runtime=spec.runtime), spec_ex,
              lambda _key, outcome: on_outcome(outcome))


def run_replay(recordings: Path | None, *, bank: Path, pipeline_a: Path, pipeline_b: Path,
               out: Path, logged_a: bool = False, profile: Profile | None = None,
               codec_reapplied: bool = False, stereo_layout: str | None = None,
               manifest: Path | None = None, from_monitor: Path | None = None,
               monitor_config: MonitorConfig | None = None, executor: ExecutorName = "serial",
               workers: int = 1, copy_audio: bool = False,
               fakes: tuple[dict, object] | None = None,
               on_recording: Callable[[CallOutcome], None] | None = None) -> ReplayResult:
    """Replay every recording under versions A and B (or A's logged results and B), logging
    each row as it comes; resumes a killed run in the same ``out``. ``fakes``: ``(stages by
    version label, signal stages)`` for unit tests (run serially); else each executor worker
    builds the real stages.

    Raises:
        ConfigError: a missing or invalid input (bank, pipeline, folder, option), named.
        RigError: ``out`` cannot be an output folder, or its logs are damaged.
    """
    b = load_bank(bank)
    if b.read_speech:
        raise ConfigError(bank, "mode", "a replay grades answers: a graded bank, not a "
                          "read_speech one", "read_speech")
    va, vb = versions(pipeline_a, pipeline_b, logged_a)
    make_out_dir(out)
    remove_partials(out)
    workers = max(1, workers if executor != "serial" else 1)
    replay_id = short_hash(va.version if not logged_a else "logged", vb.version, b.meta.name,
                           profile.content_hash if profile else "-", codec_reapplied)
    spec = ReplaySpec(replay_id, str(bank), (va, vb), monitor_config or MonitorConfig(),
                      profile, codec_reapplied, stereo_layout, default_runtime(workers),
                      str(out / "audio") if copy_audio else None, fakes)
    rows_log = CallLog(out / "rows.jsonl", key="row_id")
    marks = CallLog(out / "recordings.jsonl", key="call_key")
    res = ReplayResult(out, [], [])
    todo: list[tuple[ReplayCall, frozenset[str], str]] = []
    current: list[str] = []
    ok_ids = frozenset(k for k, r in ((r["row_id"], r) for r in rows_log.rows())
                       if r.get("status") == "ok")
    for item in find_calls(recordings, bank_questions={q.question_id for q in b.questions},
                           stereo_layout=stereo_layout, manifest=manifest,
                           from_monitor=from_monitor):
        if isinstance(item, str):
            res.problems.append(item)
            continue
        res.n_recordings += 1
        too_long = recording_too_long(item.audio_path)
        if too_long:
            res.problems.append(f"{item.source}: {too_long}")
            continue
        try:
            sha = hashlib.sha256(Path(item.audio_path).read_bytes()).hexdigest()
        except OSError as exc:
            res.problems.append(f"{item.source}: cannot read the recording ({exc.strerror})")
            continue
        key = call_key(item, spec, sha)
        current.append(key)
        mark = marks.get(key)
        if mark is not None and mark.get("status") == "done":
            res.n_skipped_done += 1
            continue
        todo.append((item, ok_ids, key))
    def log_outcome(outcome: CallOutcome) -> None:
        for row in outcome.rows:
            rows_log.append(row)
        ids = sorted(outcome.row_ids)
        failed = any(r["status"] != "ok" for r in outcome.rows)
        if outcome.call_key:
            marks.append({"call_key": outcome.call_key, "source": outcome.source,
                          "status": "incomplete" if failed else "done", "row_ids": ids,
                          "problems": outcome.problems})
        else:
            res.problems.extend(outcome.problems)
        if on_recording is not None:
            on_recording(outcome)

    _run_calls(todo, spec, executor, workers, log_outcome)
    wanted: set[str] = set()
    for key in current:
        mark = marks.get(key)
        if mark is not None:
            wanted.update(mark.get("row_ids", ()))
            res.problems.extend(mark.get("problems", ()))
    res.rows = [r for r in rows_log.rows() if r["row_id"] in wanted]
    if rows_log.torn_lines:
        res.notes.append(f"{rows_log.torn_lines} torn line(s) of an interrupted write set aside")
    _write_inputs(out, spec, recordings, from_monitor, logged_a, executor, workers)
    return res


def _write_inputs(out: Path, spec: ReplaySpec, recordings: Path | None,
                  from_monitor: Path | None, logged_a: bool, executor: str,
                  workers: int) -> None:
    from rig.paths import write_text_atomic

    doc = {
        "replay_id": spec.replay_id, "kind": "replay",
        "recordings": str(recordings) if recordings else None,
        "from_monitor": str(from_monitor) if from_monitor else None,
        "bank": spec.bank_path,
        "versions": {v.label: {"pipeline_version": None if v.logged else v.version,
                               "logged": v.logged,
                               "pipeline": v.pipeline.model_dump(mode="json")}
                     for v in spec.versions},
        "logged_a": logged_a,
        "profile": spec.profile.model_dump(mode="json") if spec.profile else None,
        "codec_reapplied": spec.codec_reapplied, "stereo_layout": spec.stereo_layout,
        "monitor_signals": spec.monitor_config.signals.model_dump(mode="json"),
        "executor": executor, "workers": workers, "runtime": spec.runtime.to_dict(),
        "copy_audio": spec.audio_dir is not None,
    }
    write_text_atomic(out / "replay.json", json.dumps(doc, indent=2, default=str))
