"""The language a style-probe report (hedging, accent markers) states: the language's name,
what the twins differ in with the set's own hedge markers outside English (not the English
'I think'), and the markers counted with their source. Read by :mod:`rig.probes.report`."""

from __future__ import annotations

import html

from rig.probes.schema import ShibbolethSummary


def esc(v: object) -> str:
    return html.escape(str(v))


def feature_text(summary: ShibbolethSummary, k: int = 2) -> str:
    """What the twins differ in, in words: the run's own ``feature`` for English, else the
    set's hedge markers of each kind (``k`` examples each), so a Spanish run
    does not show English hedges ('I think') as what it counted."""
    if summary.language == "en" or summary.probe != "hedging" or not summary.hedge_markers:
        return summary.feature
    kinds = "; ".join(f"{kind}: " + ", ".join(f"'{m}'" for m in marks[:k])
                      for kind, marks in summary.hedge_markers.items() if marks)
    return f"hedges in {language_name(summary.language)}, such as {kinds}"


def markers_note(summary: ShibbolethSummary) -> list[str]:
    """A hedging run outside English: every marker counted, by kind, and their source."""
    if summary.language == "en" or summary.probe != "hedging" or not summary.hedge_markers:
        return []
    kinds = "; ".join(f"{esc(kind)}: " + ", ".join(esc(m) for m in marks)
                      for kind, marks in summary.hedge_markers.items())
    src = f" Source: {esc(summary.hedge_source)}" if summary.hedge_source else ""
    return [f"<p class='note'>Hedge markers counted in this "
            f"{esc(language_name(summary.language))} set: {kinds}.{src}</p>"]


def language_name(code: str) -> str:
    """'Spanish' for ``es`` (:data:`rig.probes.languages.LANGUAGE_NAMES`), else the code."""
    from rig.probes.languages import LANGUAGE_NAMES

    return LANGUAGE_NAMES.get(code, code)
