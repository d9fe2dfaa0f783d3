"""Word error rate against the script, jiwer 4 with Whisper's text normalisers.

WER = (substitutions + deletions + insertions) / reference words, after the same
normalisation of both sides. English (``language="en"``, the default) uses Whisper's
``EnglishTextNormalizer`` (lower case, punctuation, spelled-out numbers to digits, British
spellings, whitespace); every other language Whisper's ``BasicTextNormalizer`` with
``preserve_marks=True`` (lower case, punctuation and symbols removed, whitespace; combining
marks kept, so Brahmic vowel signs survive; numbers are not standardised): the normalisers
of Radford et al. 2022, appendix C. Where words are not space-separated
(:data:`rig.language.SPACELESS_LANGUAGES`) the rate is a character error rate, over the
normalised text without spaces (:func:`error_rate`). See docs/measurement.md.

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

from rig.script_fractions import spell_fractions


@lru_cache(maxsize=2)
def _normalizer(english: bool = True):
    if english:
        from whisper_normalizer.english import EnglishTextNormalizer

        return EnglishTextNormalizer()
    from whisper_normalizer.basic import BasicTextNormalizer

    return BasicTextNormalizer(preserve_marks=True)


#: Most passes :func:`normalize` makes; property tests reach the fixed point within 4.
MAX_NORMALIZE_PASSES = 8


def normalize(text: str, language: str = "en") -> str:
    """Whisper normalisation for ``language`` (English's for ``en``, the basic one for any
    other), whitespace collapsed, applied until it changes nothing.

    One pass of Whisper's ``EnglishTextNormalizer`` is not idempotent: it removes fillers
    before it strips diacritics ("Üh" -> "uh", removed only by a second pass), keeps the
    upper case of compatibility letters it decomposes after lower-casing ("𝐓𝐡𝐞" -> "The"), and
    its number parser reads its own output again ("½" -> "one 2" -> "12"). A reference
    normalised once and a hypothesis normalised twice could then differ in text that is the
    same, so the normaliser is applied until its output is a fixed point (at most
    :data:`MAX_NORMALIZE_PASSES` passes; ``tests/test_properties_codec_wer_unit.py`` checks
    ``normalize(normalize(t)) == normalize(t)`` for any text). Ordinary English reaches it
    in one pass, so its WER is unchanged.

    In English a typographic fraction is spelt first as the script loader spells it
    (:func:`rig.script_fractions.spell_fractions`: "3½" -> "3 and a half"): Whisper's
    normaliser reads "3½ years" as "31 2 years", so a transcript writing the fraction would
    count as errors against the script's words.
    """
    norm = _normalizer(language == "en")
    if language == "en":
        text = spell_fractions(text)
    out = " ".join(norm(text).split())
    for _ in range(MAX_NORMALIZE_PASSES - 1):
        again = " ".join(norm(out).split())
        if again == out:
            break
        out = again
    return out


@dataclass(frozen=True)
class WerResult:
    """An error rate and its counts. ``unit`` ``word`` (WER; ``reference_words`` counts
    words) or ``char`` (CER, :func:`error_rate` on a language without spaces;
    ``reference_words`` then counts characters)."""
    wer: float | None  # None when the normalised reference is empty and the hypothesis too
    substitutions: int
    deletions: int
    insertions: int
    reference_words: int
    unit: str = "word"

    @property
    def errors(self) -> int:
        """Substitutions + deletions + insertions (the numerator of WER and of pooled WER)."""
        return self.substitutions + self.deletions + self.insertions


def pooled_wer(errors: int, reference_words: int) -> float | None:
    """Pooled (corpus) WER: total errors / total reference words over many turns (jiwer's WER
    of a list of pairs), so a turn with an empty or tiny reference cannot swamp it as it does
    a mean of per-turn WERs; None when there are no reference words."""
    return errors / reference_words if reference_words else None


def wer(reference: str, hypothesis: str, language: str = "en") -> WerResult:
    """WER of ``hypothesis`` against ``reference``, both normalised for ``language``
    (:func:`normalize`).

    An empty reference with a non-empty hypothesis follows jiwer 4 (WER = number of inserted
    words); both empty gives ``wer=None``: nothing was there to recognise.
    """
    ref, hyp = normalize(reference, language), normalize(hypothesis, language)
    if not ref and not hyp:
        return WerResult(None, 0, 0, 0, 0)
    out = jiwer.process_words(ref, hyp)
    return WerResult(float(out.wer), out.substitutions, out.deletions, out.insertions,
                     len(ref.split()))


def cer(reference: str, hypothesis: str, language: str = "en") -> WerResult:
    """Character error rate (jiwer 4 ``process_characters``) of ``hypothesis`` against
    ``reference``, both normalised for ``language`` and their spaces removed (a language
    without spaces puts them anywhere; counting them would score the ASR's spacing).
    Both empty gives ``wer=None``."""
    ref = normalize(reference, language).replace(" ", "")
    hyp = normalize(hypothesis, language).replace(" ", "")
    if not ref and not hyp:
        return WerResult(None, 0, 0, 0, 0, "char")
    out = jiwer.process_characters(ref, hyp)
    return WerResult(float(out.cer), out.substitutions, out.deletions, out.insertions,
                     len(ref), "char")


def error_rate(reference: str, hypothesis: str, language: str = "en") -> WerResult:
    """The error rate the rig reports for ``language``: :func:`cer` where words are not
    space-separated (:func:`rig.language.error_unit` is ``char``), else :func:`wer`."""
    from rig.language import error_unit

    if error_unit(language) == "char":
        return cer(reference, hypothesis, language)
    return wer(reference, hypothesis, language)


#: The filler words kept by :func:`wer_verbatim` ("um", "uh", "erm", "hmm", "mm", "mhm").
_FILLER_WORD = re.compile(r"\b(um+|uh+|erm|hmm+|mm+|mhm)\b", re.IGNORECASE)


def wer_verbatim(reference: str, hypothesis: str, language: str = "en") -> WerResult:
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

    return error_rate(keep(reference), keep(hypothesis), language)


def wer_columns(clean: str, spoken: str, verbatim: str, hypothesis: str,
                language: str = "en") -> dict:
    """A call row's error-rate columns for ``hypothesis`` (the transcript) in ``language``
    (:func:`error_rate`: WER, or CER where words are not space-separated): ``wer`` against the
    ``clean`` script, ``wer_spoken`` against the script words ``spoken`` before the turn
    closed, ``wer_verbatim`` (:func:`wer_verbatim`) against every word as spoken, ``wer_unit``
    (``word`` or ``char``), ``cer`` (:func:`cer` against the clean script), and the errors and
    reference units behind the first two (``wer_errors``, ``wer_reference_words``,
    ``wer_spoken_errors``, ``wer_spoken_reference_words``) from which a summary pools."""
    full = error_rate(clean, hypothesis, language)
    said = error_rate(spoken, hypothesis, language)
    return {"wer": full.wer, "wer_spoken": said.wer,
            "wer_verbatim": wer_verbatim(verbatim, hypothesis, language).wer,
            "wer_unit": full.unit, "cer": cer(clean, hypothesis, language).wer,
            "wer_errors": full.errors, "wer_reference_words": full.reference_words,
            "wer_spoken_errors": said.errors, "wer_spoken_reference_words": said.reference_words}
