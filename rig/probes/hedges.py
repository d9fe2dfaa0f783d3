"""Hedge markers and the hedged-answer check per language.

English uses :data:`rig.probes.data.HEDGES` (after the shibboleth benchmark's taxonomy). The
probe sets in other languages (``probes/shibboleth/<lang>/``) carry a ``hedges.yaml``::

    language: es
    source: >-                  # the hedging literature of that language the markers follow
      Briz, A. & Albelda, M. (2013) ...
    markers:                    # kind -> phrases, lower case, matched as whole words;
      lexical: [creo que, ...]  # omit ``markers`` (and say why in ``note``) when no source
    stopwords: [el, la, ...]    # function words the content-word check ignores
    note: "..."                 # optional: what was left out and why

:func:`check_hedged` is the machine check of a hedged pair in any language: the confident
answer has no marker, the hedged one has at least two (when the language has markers) and
keeps every content word of the confident one (words outside ``stopwords``, numbers
included). Words are Unicode letter and digit runs (``[^\\W_]``), with inner apostrophes,
dots and hyphens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from rig.config import load_model
from rig.errors import ConfigError

HEDGES_FILE = "hedges.yaml"
_WORD_RE = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*")


class _HedgesFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    language: str = Field(pattern=r"^[a-z]{2,3}$")
    source: str = Field(min_length=40)
    markers: dict[str, tuple[str, ...]] | None = None
    stopwords: tuple[str, ...] = Field(min_length=10)
    note: str = ""


@dataclass(frozen=True)
class HedgeLexicon:
    """The hedge markers of one language (kind -> phrases; empty when no source was found,
    ``note`` says why), the literature they follow, and the function words the
    content-word check ignores."""
    language: str
    markers: dict[str, tuple[str, ...]]
    stopwords: frozenset[str]
    source: str
    note: str = ""

    def __post_init__(self) -> None:
        phrases = sorted((re.escape(p) for ps in self.markers.values() for p in ps),
                         key=len, reverse=True)
        rx = re.compile(r"(?<![\w'])(" + "|".join(phrases) + r")(?![\w'])") if phrases \
            else None
        object.__setattr__(self, "_rx", rx)

    def find(self, text: str) -> list[str]:
        """The markers in ``text``, in order (lower-cased matches)."""
        rx = self._rx  # type: ignore[attr-defined]
        return [] if rx is None else [m.group(1) for m in
                                      rx.finditer(text.lower().replace("’", "'"))]


def words(text: str) -> list[str]:
    """Lower-cased word tokens of any alphabet (see the module docstring)."""
    return [w.lower().replace("’", "'") for w in _WORD_RE.findall(text)]


def load_hedges(folder: str | Path) -> HedgeLexicon:
    """The ``hedges.yaml`` of a probe set in another language.

    Raises:
        ConfigError: the file is missing or malformed, a marker kind is empty, or a marker is
            not lower case (names the file, the field and the value).
    """
    path = Path(folder) / HEDGES_FILE
    if not path.is_file():
        raise ConfigError(path, "", "missing: a probe set in a language other than English "
                          "needs its hedge markers and their source (probes/README.md)")
    f = load_model(path, _HedgesFile)
    for kind, phrases in (f.markers or {}).items():
        if not phrases:
            raise ConfigError(path, f"markers.{kind}", "no phrase")
        for p in phrases:
            if p != p.lower().strip():
                raise ConfigError(path, f"markers.{kind}", "markers are lower case", p)
    if f.markers is None and not f.note:
        raise ConfigError(path, "note", "without markers, say why (no cited source)")
    return HedgeLexicon(f.language, dict(f.markers or {}),
                        frozenset(w.lower() for w in f.stopwords), " ".join(f.source.split()),
                        " ".join(f.note.split()))


def check_hedged(confident: str, hedged: str, lex: HedgeLexicon) -> list[str]:
    """What a machine can check of a confident/hedged pair in ``lex``'s language; an empty
    list when it passes (rules in the module docstring)."""
    problems = []
    if lex.markers:
        if lex.find(confident):
            problems.append(f"confident answer has hedges {lex.find(confident)}")
        if len(lex.find(hedged)) < 2:
            problems.append(f"hedged answer has {len(lex.find(hedged))} hedge markers "
                            "(need 2+)")
    missing = sorted({w for w in words(confident) if w not in lex.stopwords}
                     - set(words(hedged)))
    if missing:
        problems.append(f"hedged answer lacks content words of the confident one: {missing}")
    return problems
