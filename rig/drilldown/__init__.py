"""Per-call drill-down of a campaign report: the audio, waveform, script, aligned transcript
and scorer points behind every number. (Interface fixed for issue 17; the body is being
written: until then the section is empty.)"""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def drilldown_html(campaign_dir: str | Path, summary: dict, rows: pd.DataFrame) -> str:
    """The report's "calls" section (``<section id="calls">`` with its own inline script and
    style), for the campaign in ``campaign_dir``; audio linked relative to it."""
    return ""
