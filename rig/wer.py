"""Word error rate against the script, jiwer 4 with Whisper's English text normaliser.

WER = (substitutions + deletions + insertions) / reference words, after the same
normalisation of both sides (Whisper's ``EnglishTextNormalizer``: lower case, punctuation,
spelled-out numbers to digits, British spellings, whitespace). See MEASUREMENT.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import jiwer


@lru_cache(maxsize=1)
def _normalizer():
    from whisper_normalizer.english import EnglishTextNormalizer

    return EnglishTextNormalizer()


def normalize(text: str) -> str:
    """Whisper English normalisation, whitespace collapsed."""
    return " ".join(_normalizer()(text).split())


@dataclass(frozen=True)
class WerResult:
    wer: float | None  # None when the normalised reference is empty and the hypothesis too
    substitutions: int
    deletions: int
    insertions: int
    reference_words: int


def wer(reference: str, hypothesis: str) -> WerResult:
    """WER of ``hypothesis`` against ``reference``, both normalised.

    An empty reference with a non-empty hypothesis follows jiwer 4 (WER = number of inserted
    words); both empty gives ``wer=None``: nothing was there to recognise.
    """
    ref, hyp = normalize(reference), normalize(hypothesis)
    if not ref and not hyp:
        return WerResult(None, 0, 0, 0, 0)
    out = jiwer.process_words(ref, hyp)
    return WerResult(float(out.wer), out.substitutions, out.deletions, out.insertions,
                     len(ref.split()))
