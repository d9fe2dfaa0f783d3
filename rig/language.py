"""Spoken languages: the codes a bank, a profile and a pipeline name, and how each is measured.

A language is named by Whisper's own code (ISO 639-1 where one exists: ``en``, ``es``, ``fr``,
``de``; ``haw``, ``yue`` where not): :data:`WHISPER_LANGUAGES`, the 100 codes of
faster-whisper 1.2.1's tokenizer (``faster_whisper.tokenizer._LANGUAGE_CODES``;
``tests/test_language_unit.py`` compares the two lists when faster-whisper is installed).
A pipeline's ``asr.language`` may also be ``auto``: Whisper detects the language of each turn
(multilingual models only).

Where words are not separated by spaces (Chinese, Japanese, Thai, Lao, Burmese, Khmer,
Tibetan, Cantonese: :data:`SPACELESS_LANGUAGES`) a word error rate counts whole clauses as
"words"; the character error rate is the measure there (Radford et al. 2022, "Robust Speech
Recognition via Large-Scale Weak Supervision", section 3.4 and appendix D.2.4, report CER
for these languages).

Pure: no model is loaded here.
"""

from __future__ import annotations

from typing import Literal

#: Whisper's language codes (faster-whisper 1.2.1, ``faster_whisper.tokenizer``), in its order.
WHISPER_LANGUAGES: tuple[str, ...] = (
    "af", "am", "ar", "as", "az", "ba", "be", "bg", "bn", "bo", "br", "bs", "ca", "cs", "cy",
    "da", "de", "el", "en", "es", "et", "eu", "fa", "fi", "fo", "fr", "gl", "gu", "ha", "haw",
    "he", "hi", "hr", "ht", "hu", "hy", "id", "is", "it", "ja", "jw", "ka", "kk", "km", "kn",
    "ko", "la", "lb", "ln", "lo", "lt", "lv", "mg", "mi", "mk", "ml", "mn", "mr", "ms", "mt",
    "my", "ne", "nl", "nn", "no", "oc", "pa", "pl", "ps", "pt", "ro", "ru", "sa", "sd", "si",
    "sk", "sl", "sn", "so", "sq", "sr", "su", "sv", "sw", "ta", "te", "tg", "th", "tk", "tl",
    "tr", "tt", "uk", "ur", "uz", "vi", "yi", "yo", "zh", "yue")

#: Languages written without spaces between words: :func:`error_unit` is ``char`` (CER).
SPACELESS_LANGUAGES: frozenset[str] = frozenset({"zh", "yue", "ja", "th", "lo", "my", "km",
                                                 "bo"})

#: The pipeline setting that lets Whisper detect the language of each turn.
AUTO = "auto"

ErrorUnit = Literal["word", "char"]


def check_language(code: str, *, allow_auto: bool = False) -> str:
    """``code`` lower-cased when it is one of :data:`WHISPER_LANGUAGES` (or ``auto`` when
    ``allow_auto``).

    Raises:
        ValueError: any other value; the message lists the accepted codes."""
    if not isinstance(code, str):
        raise ValueError(f"a language code is a string such as 'en' or 'es' (got {code!r})")
    c = code.strip().lower()
    if c in WHISPER_LANGUAGES or (allow_auto and c == AUTO):
        return c
    extra = "'auto' or " if allow_auto else ""
    raise ValueError(f"{code!r} is not a language Whisper knows: use {extra}one of "
                     f"{', '.join(WHISPER_LANGUAGES)}")


def whisper_language(setting: str) -> str | None:
    """The ``language=`` argument faster-whisper takes for a pipeline's ``asr.language``:
    the code itself, or None for ``auto`` (Whisper detects it on the first 30 s)."""
    return None if setting == AUTO else setting


def error_unit(language: str) -> ErrorUnit:
    """``char`` for a language written without spaces (:data:`SPACELESS_LANGUAGES`), else
    ``word``."""
    return "char" if language in SPACELESS_LANGUAGES else "word"


def language_mismatch(spoken: str | None, decoded: str | None, setting: str,
                      probability: float | None = None) -> str | None:
    """The ``language_mismatch`` suspect rule (:mod:`rig.asr.checks`): a reason when the
    language the ASR decoded in differs from the language the answer was spoken in, else None.

    Args:
        spoken: the answer's language (its bank's ``language``); None when unknown.
        decoded: the language of the transcript (:attr:`rig.asr.whisper.Transcript.language`).
        setting: the pipeline's ``asr.language`` (``auto`` or a code).
        probability: Whisper's probability of ``decoded`` when it detected it (0-1).
    """
    if spoken is None or decoded is None or spoken == decoded:
        return None
    if setting == AUTO:
        p = "" if probability is None else f", p={probability:.2f}"
        return f"language_mismatch: spoken {spoken}, detected {decoded}{p}"
    return (f"language_mismatch: spoken {spoken}, decoded as {decoded} (fixed by the "
            f"pipeline's asr.language)")


def check_profile_languages(bank_language: str, bank_path: object, profiles) -> None:
    """Refuse a campaign whose caller profiles speak another language than its bank: a
    profile's ``language`` is the language its voice speaks the bank's scripts in.

    Args:
        bank_language: the bank's ``language``; bank_path: its folder (for the message).
        profiles: a :class:`rig.profiles.loader.ProfileSet` (``profiles``, ``sources``).

    Raises:
        ConfigError: naming the first profile file, its ``language`` and the bank's."""
    from rig.errors import ConfigError

    for p in profiles.profiles:
        if p.language != bank_language:
            raise ConfigError(profiles.sources.get(p.profile_id, profiles.path), "language",
                              f"profile {p.profile_id!r} speaks {p.language!r} but the bank "
                              f"{bank_path} is in {bank_language!r}: use a profile set in the "
                              "bank's language (profiles/<language>/)", p.language)
