"""An answer's script: the words to speak and its inline marks, and the WER reference.

Script marks (inline, removed from the WER reference):
    ``[pause 1.2s]``  silence of 1.2 seconds inside the answer;
    ``[um]``, ``[uh]``, ``[erm]``, ``[hmm]``  a spoken filler;
    ``[lang en]`` ... ``[/lang]``  a code-switched span: the words between are in another
    language (a Whisper code, :mod:`rig.language`) than the bank's; a profile's
    ``span_voices`` speaks them with a voice of that language (:mod:`rig.synth.render`).
    Spans do not nest; marks inside a span are allowed; the span's words stay in the WER
    reference.
The WER reference policy is ``clean``: the spoken script words without marks or fillers.
``verbatim`` keeps the fillers (see :func:`reference_text`). :func:`normalise_script` turns
typographic characters into the plain ones the voices read (:mod:`rig.answers` applies it
when a bank is loaded).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from rig.script_fractions import spell_fractions, unslash_fractions

ReferencePolicy = Literal["clean", "verbatim"]

FILLERS = ("um", "uh", "erm", "hmm")
_MARK = re.compile(r"\[\s*(pause\s+(?P<pause>\d+(?:\.\d+)?)\s*s|(?P<filler>um|uh|erm|hmm)"
                   r"|lang\s+(?P<lang>[A-Za-z]{2,3})|(?P<close>/lang))\s*\]", re.IGNORECASE)
_ANY_BRACKET = re.compile(r"\[[^\]]*\]")


@dataclass(frozen=True)
class Words:
    """A run of spoken words; ``language`` is set inside a ``[lang xx]`` span (None: the
    bank's language)."""
    text: str
    language: str | None = None


@dataclass(frozen=True)
class Pause:
    pause_s: float


@dataclass(frozen=True)
class Filler:
    word: str


Segment = Words | Pause | Filler


def _unknown(text: str) -> None:
    bad = _ANY_BRACKET.search(text)
    if bad:
        raise ValueError(f"unknown script mark {bad.group(0)!r}; use [pause 1.2s], "
                         f"[{']/['.join(FILLERS)}] or [lang en] ... [/lang]")


def parse_script(script: str) -> list[Segment]:
    """Split a script into spoken word runs, pauses and fillers, in order; word runs inside a
    ``[lang xx]`` span carry that language.

    Raises:
        ValueError: an unknown ``[...]`` mark (the message quotes it), a language Whisper does
            not know, a span opened inside a span, a ``[/lang]`` with no span open, a span
            left open, or a span with no words.
    """
    from rig.language import check_language

    out: list[Segment] = []
    pos, lang, span_words = 0, None, 0
    for m in _MARK.finditer(script):
        before = script[pos:m.start()]
        _unknown(before)
        if before.strip():
            out.append(Words(" ".join(before.split()), lang))
            span_words += len(before.split())
        if m.group("lang"):
            if lang is not None:
                raise ValueError(f"script mark {m.group(0)!r} at character {m.start()}: spans "
                                 f"do not nest (the [lang {lang}] span is still open)")
            lang, span_words = check_language(m.group("lang")), 0
        elif m.group("close"):
            if lang is None:
                raise ValueError(f"script mark '[/lang]' at character {m.start()} closes no "
                                 "span: open one with [lang en]")
            if not span_words:
                raise ValueError(f"the [lang {lang}] span closed at character {m.start()} "
                                 "has no words")
            lang = None
        elif m.group("pause"):
            out.append(Pause(float(m.group("pause"))))
        else:
            out.append(Filler(m.group("filler").lower()))
        pos = m.end()
    rest = script[pos:]
    _unknown(rest)
    if lang is not None:
        raise ValueError(f"the [lang {lang}] span is never closed: end it with [/lang]")
    if rest.strip():
        out.append(Words(" ".join(rest.split())))
    return out


def span_languages(script: str) -> tuple[str, ...]:
    """The languages of the script's ``[lang xx]`` spans, in first-use order (empty when the
    script does not switch).

    Raises:
        ValueError: as :func:`parse_script`."""
    return tuple(dict.fromkeys(s.language for s in parse_script(script)
                               if isinstance(s, Words) and s.language))


#: Typographic characters a word processor or chat tool puts in a script, and their plain forms
#: (the voices read the plain ones; the WER normaliser compares plain text).
_PLAIN = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
                        "\u2032": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"',
                        "\u201f": '"', "\u2033": '"', "\u2013": "-", "\u2014": " - ",
                        "\u2026": "..."})
_RTL_BIDI = {"R", "AL", "RLE", "RLO", "RLI", "LRE", "LRO", "LRI", "FSI", "PDF", "PDI"}


def normalise_script(script: str) -> str:
    """A script as the voices speak it: Unicode NFKC (a non-breaking or other odd space
    becomes a space, full-width letters plain), curly quotes and apostrophes straight, en/em
    dashes and the ellipsis character plain, line breaks (CR LF too) as spaces; a typographic
    fraction as words ("½" -> "one half", "2¾" -> "2 and three quarters") and one written
    with the fraction slash U+2044 ("1⁄2") as "1/2", so the voices and the WER reference read
    the same words.

    Raises:
        ValueError: a character no voice speaks: right-to-left letters (Hebrew, Arabic) or
            bidirectional controls, letters and digits of other scripts than Latin (CJK,
            Cyrillic, Devanagari...), emoji and other symbols, control characters, or
            invisible format characters (zero-width space, joiner); the message names it
            (``U+200B ZERO WIDTH SPACE at character 41``) and the fix."""
    text = unslash_fractions(unicodedata.normalize("NFKC", spell_fractions(script)))
    text = text.translate(_PLAIN)
    for i, ch in enumerate(text):
        if ch in "\n\r\t":
            continue
        cat, bidi = unicodedata.category(ch), unicodedata.bidirectional(ch)
        why = ("right-to-left text: the voices speak English; give the answer in English"
               if bidi in _RTL_BIDI else
               "not Latin script: the voices and the ASR speak English; give the answer in "
               "English" if cat[0] in "LN" and not ch.isascii()
               and not unicodedata.name(ch, "").startswith("LATIN") else
               "an emoji or symbol: voices skip or misread it; write the words"
               if cat == "So" or 0x1F000 <= ord(ch) <= 0x1FAFF else
               "a control or invisible format character: delete it"
               if cat in ("Cc", "Cf", "Co", "Cs", "Cn") else None)
        if why:
            name = unicodedata.name(ch, "unnamed")
            raise ValueError(f"script has U+{ord(ch):04X} {name} at character {i}: {why}")
    return " ".join(text.split()) if "\n" in text or "\r" in text else text


def reference_text(script: str, policy: ReferencePolicy = "clean") -> str:
    """The WER reference: spoken words without marks; ``verbatim`` keeps fillers."""
    parts = []
    for seg in parse_script(script):
        if isinstance(seg, Words):
            parts.append(seg.text)
        elif isinstance(seg, Filler) and policy == "verbatim":
            parts.append(seg.word)
    return " ".join(parts)
