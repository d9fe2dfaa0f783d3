"""Word error rate against the script, jiwer 4 with Whisper's English text normaliser.

WER = (substitutions + deletions + insertions) / reference words, after the same
normalisation of both sides (Whisper's ``EnglishTextNormalizer``: lower case, punctuation,
spelled-out numbers to digits, British spellings, whitespace). See docs/measurement.md.

Reference policies (a call row records each; ``wer_reference_policy`` names the one ``wer``
uses):

* clean, :func:`wer` against the script's words (no fillers, no repetitions): ``wer``;
* spoken, :func:`wer` against the script's words spoken before the turn closed:
  ``wer_spoken``;
* verbatim, :func:`wer_verbatim` against every word as spoken, fillers and the first saying
  of each repeated word included: ``wer_verbatim``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import jiwer


@lru_cache(maxsize=1)
def _normalizer():
    from whisper_normalizer.english import EnglishTextNormalizer

    return EnglishTextNormalizer()


#: Most passes :func:`normalize` makes; property tests reach the fixed point within 4.
MAX_NORMALIZE_PASSES = 8


def normalize(text: str) -> str:
    """Whisper English normalisation, whitespace collapsed, applied until it changes nothing.

    One pass of Whisper's ``EnglishTextNormalizer`` is not idempotent: it removes fillers
    before it strips diacritics ("Üh" -> "uh", removed only by a second pass), keeps the
    upper case of compatibility letters it decomposes after lower-casing ("𝐓𝐡𝐞" -> "The"), and
    its number parser reads its own output again ("½" -> "one 2" -> "12"). A reference
    normalised once and a hypothesis normalised twice could then differ in text that is the
    same, so the normaliser is applied until its output is a fixed point (at most
    :data:`MAX_NORMALIZE_PASSES` passes; ``tests/test_properties_codec_wer_unit.py`` checks
    ``normalize(normalize(t)) == normalize(t)`` for any text). Ordinary English reaches it
    in one pass, so its WER is unchanged.
    """
    out = " ".join(_normalizer()(text).split())
    for _ in range(MAX_NORMALIZE_PASSES - 1):
        again = " ".join(_normalizer()(out).split())
        if again == out:
            break
        out = again
    return out


@dataclass(frozen=True)
class WerResult:
    wer: float | None  # None when the normalised reference is empty and the hypothesis too
    substitutions: int
    deletions: int
    insertions: int
    reference_words: int

    @property
    def errors(self) -> int:
        """Substitutions + deletions + insertions (the numerator of WER and of pooled WER)."""
        return self.substitutions + self.deletions + self.insertions


def pooled_wer(errors: int, reference_words: int) -> float | None:
    """Pooled (corpus) WER: total errors / total reference words over many turns (jiwer's WER
    of a list of pairs), so a turn with an empty or tiny reference cannot swamp it as it does
    a mean of per-turn WERs; None when there are no reference words."""
    return errors / reference_words if reference_words else None


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


#: The filler words kept by :func:`wer_verbatim` ("um", "uh", "erm", "hmm", "mm", "mhm").
_FILLER_WORD = re.compile(r"\b(um+|uh+|erm|hmm+|mm+|mhm)\b", re.IGNORECASE)


def wer_verbatim(reference: str, hypothesis: str) -> WerResult:
    """WER under the verbatim reference policy: fillers kept as words on both sides.

    Whisper's English normaliser drops "um", "uh", "hmm" and "mm"; without this the clean and
    verbatim policies would never differ on fillers. Each filler is replaced by a token the
    normaliser keeps ("filler" plus its first two letters, lower-cased: ``um`` -> ``fillerum``,
    ``Hmm`` -> ``fillerhm``) before :func:`wer`, so a filler spoken and transcribed counts as a
    match, and one spoken but not transcribed as a deletion.

    Args:
        reference: every word as spoken (fillers and repetitions included).
        hypothesis: the transcript.
    """
    def keep(text: str) -> str:
        return _FILLER_WORD.sub(lambda m: "filler" + m.group(1).lower()[:2], text)

    return wer(keep(reference), keep(hypothesis))


def wer_columns(clean: str, spoken: str, verbatim: str, hypothesis: str) -> dict:
    """A call row's WER columns for ``hypothesis`` (the transcript): ``wer`` against the
    ``clean`` script, ``wer_spoken`` against the script words ``spoken`` before the turn
    closed, ``wer_verbatim`` (:func:`wer_verbatim`) against every word as spoken, and the
    errors and reference words behind the first two (``wer_errors``,
    ``wer_reference_words``, ``wer_spoken_errors``, ``wer_spoken_reference_words``) from
    which a summary pools."""
    full, said = wer(clean, hypothesis), wer(spoken, hypothesis)
    return {"wer": full.wer, "wer_spoken": said.wer,
            "wer_verbatim": wer_verbatim(verbatim, hypothesis).wer,
            "wer_errors": full.errors, "wer_reference_words": full.reference_words,
            "wer_spoken_errors": said.errors, "wer_spoken_reference_words": said.reference_words}
