"""Typed campaign summaries for the report's tests: a real one (the attribution tests' fake
rows through rig.campaign.summary) and copies of it with some fields replaced, so a test
states only the figures it is about and still hands the report a whole CampaignSummary."""

from __future__ import annotations

from functools import cache
from typing import Any

from test_attribution_unit import attributed_rows

from rig.campaign.schema import CampaignSummary, ProfileSummary
from rig.campaign.summary import campaign_summary


@cache
def real_summary(n_boot: int = 100) -> CampaignSummary:
    """The summary of ``attributed_rows()``: profiles ``baseline`` and ``long_pauses``."""
    return campaign_summary(attributed_rows(), campaign_id="c", pipeline_version="v1",
                            n_boot=n_boot)


def profile_like(base: ProfileSummary | None = None, **fields: Any) -> ProfileSummary:
    """A profile entry: ``base`` (default the real ``long_pauses``) with ``fields`` replaced;
    ``attribution`` may be given as a dict of the fields to replace in base's."""
    base = base or real_summary().profiles["long_pauses"]
    if isinstance(fields.get("attribution"), dict):
        fields["attribution"] = base.attribution.model_copy(update=fields["attribution"])
    return base.model_copy(update=fields)


def summary_like(base: CampaignSummary | None = None, **fields: Any) -> CampaignSummary:
    """A summary: ``base`` (default :func:`real_summary`) with ``fields`` replaced."""
    return (base or real_summary()).model_copy(update=fields)
