"""``rig replay --from-monitor monitor.duckdb``: the calls a monitoring database holds.

The monitor stores each call's metadata and the path of its recording (never the audio), and
no question ids. So a stored **stereo** call is replayed as a whole interview whose turns rig
finds from the interviewer's channel (:mod:`rig.replay.turns`), with the ``layout`` the
monitor read it with; a stored **mono** call cannot be (no question id, no interviewer
channel) and is reported, as is a call whose recording has moved.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC
from pathlib import Path

from rig.monitor.meta import CallMeta
from rig.replay.inputs import ReplayCall, ReplayFields


def calls_from_monitor(db: Path, stereo_layout: str | None = None
                       ) -> Iterator[ReplayCall | str]:
    """Each stored call as a :class:`ReplayCall`, or a message naming one that cannot be
    replayed.

    Raises:
        RigError: no database at ``db``, or it is locked; EngineUnavailable: no duckdb."""
    from rig.monitor.store import MonitorStore

    with MonitorStore(db, read_only=True) as store:
        rows = store.con.execute(
            "SELECT call_id, ts, employer, job_family, score, decision, channel, language, "
            "layout, n_channels, audio_path FROM calls ORDER BY ts, call_id").fetchall()
    for (cid, ts, employer, job_family, score, decision, channel, language, layout,
         n_channels, audio_path) in rows:
        source = f"{db}: call {cid}"
        if n_channels != 2:
            yield (f"{source}: a mono recording without question ids (the monitor stores "
                   "none): replay it from its folder with question_id or turns in the "
                   "metadata")
            continue
        if not Path(audio_path).is_file():
            yield f"{source}: audio_path: recording not found (got {audio_path!r})"
            continue
        meta = CallMeta(call_id=cid, timestamp=ts.replace(tzinfo=UTC), employer=employer,
                        job_family=job_family, score=score, decision=decision,
                        channel=channel, language=language if language != "unknown" else None,
                        layout=layout)
        yield ReplayCall(source, meta, audio_path, ReplayFields(), layout or stereo_layout,
                         None)
