"""Matched-pair campaigns: every selected answer under every selected profile, in repeats.

Modules, in the order a campaign uses them:

* :mod:`rig.campaign.repeats`  which repeats can differ (seeded noise, loss, a sampling
  scorer) and which are skipped as identical.
* :mod:`rig.campaign.plan`     what to run (``CampaignSpec``) and the calls it makes.
* :mod:`rig.campaign.runner`   run or resume the plan, write the outputs (``run_campaign``).
* :mod:`rig.campaign.call`     one call through render, line, turn detection, ASR, scorer.
* :mod:`rig.campaign.store`    the durable call log (append + fsync) and Parquet output.
* :mod:`rig.campaign.summary`  ``summary.json`` from the call rows (paired statistics, noise
  floor, judge validity).

The terms (call, repeat and seed, turn close and truncation, WER, score and oracle score,
paired delta, flip, tier inversion, noise floor, judge validity) are defined in
``docs/measurement.md``; each module's docstrings say which definition they implement.
"""
