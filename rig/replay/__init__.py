"""``rig replay``: a team's recorded interviews through pipeline version A and version B,
paired by turn (the recording is the fixed content, the version the only change).

Modules, in the order a replay runs them:

* :mod:`rig.replay.inputs`        the recordings' replay fields (``question_id``, ``turns``),
  validated; bad input named (file, field, value).
* :mod:`rig.replay.monitor_input` ``--from-monitor``: the stereo calls a monitoring database
  holds.
* :mod:`rig.replay.turns`         a stereo interview's answers, found from the interviewer's
  channel.
* :mod:`rig.replay.segments`      the measured segments (the monitor's signals; WADA-SNR where
  the VAD's SNR is not measurable; the answer's longest pause).
* :mod:`rig.replay.version`       one answer through one version: VAD and timer, ASR, scorer;
  truncation without a script.
* :mod:`rig.replay.work`          the worker: one recording, every turn, every version.
* :mod:`rig.replay.run`           the driver: executors, the durable log, resume.
* :mod:`rig.replay.rows`          the typed row (``calls.parquet``).
* :mod:`rig.replay.stats`         paired deltas clustered by interview, flips, Holm, impact.
* :mod:`rig.replay.summary`       ``summary.json``, ``pairs.parquet``.
* :mod:`rig.replay.report`        ``report.html``.

The gate's replay rules are :mod:`rig.gate.replay`. How to lay out the recordings and read
the results: ``docs/replay.md``.
"""
