"""The text the scorer reads of an ASR transcript (``transcript.fillers`` in a pipeline).

:func:`drop_fillers` removes filler words (:data:`FILLER_WORDS`: hesitation sounds, never
content words) with the comma or dash an ASR writes after them. WER is always computed on the
transcript as heard (:mod:`rig.asr.wer`); only the scorer's input changes.
"""

from __future__ import annotations

import re

#: Filler words dropped under ``transcript.fillers: drop``, as regex alternatives matching
#: whole words, case-insensitive: um, uh, er, erm, ah, hmm, mm, mhm (with drawn-out spellings
#: such as "umm", "uhh", "hmmm"). The profiles' default fillers ("um", "uh") and those
#: :func:`rig.asr.wer.wer_verbatim` keeps are among them.
FILLER_WORDS: tuple[str, ...] = ("u+m+", "u+h+", "e+r+", "e+r+m+", "a+h+", "h+m+", "m+",
                                 "m+h+m+")

_FILLER = re.compile(r"(?<![\w'])(?:" + "|".join(FILLER_WORDS) + r")(?![\w'])[,;:\u2014-]*",
                     re.IGNORECASE)
_SPACES = re.compile(r"\s{2,}")
_LEADING_PUNCT = re.compile(r"^[\s.,;:!?]+")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")


def drop_fillers(text: str) -> str:
    """``text`` without its filler words (:data:`FILLER_WORDS`) and the punctuation that
    follows one ("Um, I led" -> "I led"); spaces collapsed, punctuation left at the start
    and the ends stripped. Other words,
    their case and punctuation are kept. Pure; never raises on a str."""
    out = _FILLER.sub(" ", text)
    out = _SPACE_BEFORE_PUNCT.sub(r"\1", out)
    out = _LEADING_PUNCT.sub("", out)  # "Hmm. Yes" -> "Yes", not ". Yes"
    return _SPACES.sub(" ", out).strip()


def scorer_text(transcript: str, fillers: str) -> str:
    """What the scorer grades: ``transcript`` as heard (``fillers`` ``keep``) or without its
    fillers (``drop``).

    Raises:
        ValueError: ``fillers`` is neither ``keep`` nor ``drop``."""
    if fillers == "keep":
        return transcript
    if fillers == "drop":
        return drop_fillers(transcript)
    raise ValueError(f"transcript.fillers must be keep or drop (got {fillers!r})")
