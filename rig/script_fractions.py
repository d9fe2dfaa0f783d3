"""Typographic fractions in a script, as the voices should speak them (used by
:func:`rig.script.normalise_script`)."""

from __future__ import annotations

import re

#: Typographic fractions as words: NFKC would make "½" the digits "1⁄2" (a fraction slash),
#: which voices read as "one two" or "one slash two" while WER, comparing the same mangled
#: text, hides the misreading.
_FRACTIONS = {"½": "one half", "⅓": "one third", "⅔": "two thirds", "¼": "one quarter",
              "¾": "three quarters", "⅕": "one fifth", "⅖": "two fifths", "⅗": "three fifths",
              "⅘": "four fifths", "⅙": "one sixth", "⅚": "five sixths", "⅐": "one seventh",
              "⅛": "one eighth", "⅜": "three eighths", "⅝": "five eighths",
              "⅞": "seven eighths", "⅑": "one ninth", "⅒": "one tenth", "↉": "zero thirds"}
_FRACTION = re.compile(r"(?:(\d+) ?)?([" + "".join(_FRACTIONS) + r"])")
#: a fraction written with the fraction slash U+2044 ("1⁄2") or its NFKC forms
_SLASHED = re.compile(r"(\d+)\u2044(\d+)")


def _fraction_words(m: re.Match) -> str:
    """"½" -> "one half"; after a whole number, "3½" -> "3 and a half"; set apart by spaces
    from a letter or digit it touches ("a½cup" -> "a one half cup")."""
    words = _FRACTIONS[m.group(2)]
    if m.group(1):
        words = f"{m.group(1)} and {'a ' + words[4:] if words.startswith('one ') else words}"
    before = m.string[m.start() - 1:m.start()]
    after = m.string[m.end():m.end() + 1]
    return (" " if before.isalnum() else "") + words + (" " if after.isalnum() else "")


def spell_fractions(text: str) -> str:
    """Each typographic fraction of ``text`` as words (:func:`_fraction_words`)."""
    return _FRACTION.sub(_fraction_words, text)


def unslash_fractions(text: str) -> str:
    """``1⁄2`` (the fraction slash U+2044, what NFKC makes of "½") as ``1/2``."""
    return _SLASHED.sub(r"\1/\2", text)
