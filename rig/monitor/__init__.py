"""Per-segment production monitoring: live interview scores by segments measured from the
calls themselves, never by inferred demographics.

Steps, one module each, with frozen values between them:

* :mod:`rig.monitor.meta`       call metadata (:class:`CallMeta`): sidecars, manifests, bodies.
* :mod:`rig.monitor.recording`  WAV / raw mu-law -> the candidate's (and interviewer's) channel
  (:class:`~rig.monitor.signals.CallAudio`).
* :mod:`rig.monitor.signals`    measured signals (:class:`~rig.monitor.signals.CallSignals`):
  estimated SNR, channel class and codec, ASR confidence, pace, truncation events, repeat
  requests, language.
* :mod:`rig.monitor.store`      the local DuckDB database, one row per call
  (:class:`~rig.monitor.store.CallRecord`), idempotent on ``call_id``.
* :mod:`rig.monitor.ingest`     folder (streamed) or single-call ingest; bad files reported.
* :mod:`rig.monitor.segments`   bins of each signal, as portable SQL; the weekly aggregation.
* :mod:`rig.monitor.alerts`     per-segment ratios, z-tests, mean shifts, noise floor, alerts.
* :mod:`rig.monitor.report`     ``summary.json``, ``alerts.json``, ``report.html``.
* :mod:`rig.monitor.privacy`    keyed call-id hashes and the per-call export.
* :mod:`rig.monitor.serve`      the HTTP endpoint with bearer-token auth.
* :mod:`rig.monitor.config`     every setting and its default (YAML-overridable).

The CLI is ``rig monitor`` (:mod:`rig.cli_monitor`); ``docs/monitoring.md`` is the guide.
"""

from rig.monitor.config import MonitorConfig, load_config

__all__ = ["MonitorConfig", "load_config"]
