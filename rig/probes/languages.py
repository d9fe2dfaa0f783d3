"""The languages of the text probes: which probe ships prompt sets in which language.

A probe's ``--language`` is a code of the answer banks (``en``, ``es``, ``fr``, ``de``:
:data:`PROBE_LANGUAGES`). What each probe has per language:

* ``dual_framing``: topics, wrappers, the prompt's labels and options, and the reply's
  normaliser in every probe language (``probes/dual_framing/<lang>/``,
  :mod:`rig.probes.framing.languages`); English is ``probes/dual_framing/`` itself.
* ``hedging``: a probe set in every probe language (``probes/shibboleth/<lang>/``), with
  hedge markers per language taken from that language's hedging literature
  (``hedges.yaml`` in each folder, with its source; English: :data:`rig.probes.data.HEDGES`).
* ``name_swap``: name sets (``probes/names/<lang>/``, from each country's name statistics,
  cited in ``probes/names/README.md``), materials (``probes/name_swap/<lang>/``) and asks
  (:mod:`rig.probes.name_swap.texts`) in every probe language; English is
  ``probes/names/`` itself. Every file a run reads must declare the run's language
  (``language:`` in its YAML); otherwise :func:`check_name_swap_language` refuses.

Pure: no model is loaded here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from rig.errors import ConfigError

ProbeLanguage = Literal["en", "es", "fr", "de"]
#: The languages of the answer banks, and of the probes' shipped prompt sets.
PROBE_LANGUAGES: tuple[ProbeLanguage, ...] = ("en", "es", "fr", "de")
LANGUAGE_NAMES: dict[str, str] = {"en": "English", "es": "Spanish", "fr": "French",
                                  "de": "German"}
ProbeName = Literal["dual_framing", "hedging", "accent_markers", "name_swap"]
#: The languages each probe ships prompt sets in.
SHIPPED: dict[str, tuple[str, ...]] = {
    "dual_framing": PROBE_LANGUAGES,
    "hedging": PROBE_LANGUAGES,
    # dropping articles imitates speakers of article-less languages in English only
    "accent_markers": ("en",),
    "name_swap": PROBE_LANGUAGES,
}
_WHY_NOT = {
    "accent_markers": "the article-dropped variant imitates, in English, speakers whose first "
                      "language has no articles; the es, fr and de sets have no such variant",
    "name_swap": "use the shipped set of that language (leave out --name-set and "
                 "--materials) or give files that declare `language: {lang}`",
}


def check_probe_language(probe: str, language: str) -> ProbeLanguage:
    """``language`` lower-cased when ``probe`` ships prompt sets in it.

    Raises:
        ConfigError: an unknown language, or one the probe has no prompt set in (names the
            probe, the language and the languages it has).
    """
    code = str(language).strip().lower()
    if code not in PROBE_LANGUAGES:
        raise ConfigError("probe", "--language", f"unknown language for the {probe} probe; "
                          f"use one of {', '.join(PROBE_LANGUAGES)}", language)
    if probe != "name_swap" and code not in SHIPPED[probe]:
        why = f" ({_WHY_NOT[probe]})" if probe in _WHY_NOT else ""
        raise ConfigError("probe", "--language", f"the {probe} probe has no prompt set in "
                          f"{LANGUAGE_NAMES[code]} ({code}); it has "
                          f"{', '.join(SHIPPED[probe])}{why}", language)
    return code  # type: ignore[return-value]


def set_language(source: Path | None, given: str | None) -> str:
    """The language of a probe set: ``given`` (``--language``) when given, else the
    ``language:`` of the set's ``hedges.yaml`` (a folder, or the folder of a file), else
    ``en``. A set of another language read without ``--language`` is then read by its own
    markers, not silently by the English ones.

    Raises:
        ConfigError: the set's ``hedges.yaml`` is malformed (:func:`rig.probes.hedges.
            load_hedges`).
    """
    if given is not None:
        return given
    if source is None:
        return "en"
    from rig.probes.hedges import HEDGES_FILE, load_hedges

    folder = source if source.is_dir() else source.parent
    return load_hedges(folder).language if (folder / HEDGES_FILE).is_file() else "en"


def language_folder(default: Path, language: str) -> Path:
    """The prompt set of ``language`` under a probe's default folder: the folder itself for
    English, its subfolder ``<language>/`` otherwise."""
    return default if language == "en" else default / language


def check_name_swap_language(language: str, declared: dict[str, str]) -> None:
    """Refuse a name-swap run in ``language`` unless every file it reads declares that
    language (``declared``: file -> its ``language:``, ``en`` when absent).

    Raises:
        ConfigError: a file of another language (names the file, its language, and what to
            give instead).
    """
    code = check_probe_language("name_swap", language)
    for path, lang in declared.items():
        if lang != code:
            why = _WHY_NOT["name_swap"].format(lang=code)
            raise ConfigError(path, "language", f"the name_swap probe in "
                              f"{LANGUAGE_NAMES[code]} ({code}) needs names and material in "
                              f"that language, and this file is {lang}: {why}", lang)
