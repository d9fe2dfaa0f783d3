"""The language a style-probe report (hedging, accent markers) states: the language's name,
what the twins differ in with the set's own hedge markers outside English (not the English
'I think'), and the markers counted with their source. Read by :mod:`rig.probes.report`.

The probe reports are English pages (``<html lang="en">``); the material they quote from a
probe set in another language (questions, answers, statements, names, hedge markers, and
the scorer's replies to prompts in that language) carries the set's own code,
``lang="es"``, :func:`lang_attr`, so a screen reader reads it in that language and a
browser hyphenates and spell-checks it as such."""

from __future__ import annotations

import html

from rig.probes.schema import ShibbolethSummary


def esc(v: object) -> str:
    return html.escape(str(v))


def lang_attr(code: str | None) -> str:
    """`` lang="es"`` (with its leading space) for quoted text in ``code``, a language other
    than the pages' English; empty for English or no code."""
    return "" if not code or code == "en" else f' lang="{esc(code)}"'


def quoted(text: object, code: str | None) -> str:
    """``text`` escaped, in a ``<span lang=...>`` when ``code`` is not English."""
    attr = lang_attr(code)
    return f"<span{attr}>{esc(text)}</span>" if attr else esc(text)


def feature_text(summary: ShibbolethSummary, k: int = 2) -> str:
    """What the twins differ in, in words (HTML): the run's own ``feature`` for English, else
    the set's hedge markers of each kind (``k`` examples each, each marked with the set's
    language), so a Spanish run does not show English hedges ('I think') as what it
    counted."""
    if summary.language == "en" or summary.probe != "hedging" or not summary.hedge_markers:
        return esc(summary.feature)
    kinds = "; ".join(f"{esc(kind)}: " + ", ".join(f"'{quoted(m, summary.language)}'"
                                                   for m in marks[:k])
                      for kind, marks in summary.hedge_markers.items() if marks)
    return f"hedges in {esc(language_name(summary.language))}, such as {kinds}"


def markers_note(summary: ShibbolethSummary) -> list[str]:
    """A hedging run outside English: every marker counted, by kind, and their source."""
    if summary.language == "en" or summary.probe != "hedging" or not summary.hedge_markers:
        return []
    kinds = "; ".join(f"{esc(kind)}: " + quoted(", ".join(marks), summary.language)
                      for kind, marks in summary.hedge_markers.items())
    src = f" Source: {esc(summary.hedge_source)}" if summary.hedge_source else ""
    return [f"<p class='note'>Hedge markers counted in this "
            f"{esc(language_name(summary.language))} set: {kinds}.{src}</p>"]


def language_name(code: str) -> str:
    """'Spanish' for ``es`` (:data:`rig.probes.languages.LANGUAGE_NAMES`), else the code."""
    from rig.probes.languages import LANGUAGE_NAMES

    return LANGUAGE_NAMES.get(code, code)
