"""``speaker.json``: the description a recorded-voice folder carries of its speaker.

A folder ``voices/<speaker_id>/`` holds ``<answer_id>.wav`` (or ``.flac``) recordings and
``speaker.json``. Everything in it is what the speaker (or, for an imported corpus, the
corpus's own speaker table) says: accent and language background are free text as described,
never inferred from the voice, and never mapped to a demographic category.

Raises :class:`rig.errors.RigError` naming the file, the field and the value on bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rig.config import loads_strict
from rig.errors import RigError

#: File name of the description inside a speaker folder.
SPEAKER_FILE = "speaker.json"


class Consent(BaseModel):
    """The consent the speaker gave: the exact text shown and when (ISO 8601 date)."""
    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1)
    date: str = Field(min_length=10)


class SpeakerInfo(BaseModel):
    """One speaker folder's ``speaker.json``.

    Attributes:
        speaker_id: the folder's name (``[A-Za-z0-9_.-]+``).
        source: ``recorded`` (``rig voices record``) or ``corpus`` (``rig voices import``).
        accent_description: the accent as the speaker describes it (free text; "" when the
            speaker gave none). For a corpus, the corpus's own label, quoted.
        language_background: first and other languages as described (free text).
        consent: shown text and date (``recorded``); None for a corpus (its licence applies).
        device: the microphone or device as the speaker or browser named it.
        sample_rate_hz: the recordings' rate (at least 16000 for ``rig voices record``).
        corpus: ``vctk``, ``l2-arctic`` or ``cmu-arctic`` for an import; None otherwise.
        corpus_speaker_id: the speaker's id in the corpus (``p225``, ``ABA``, ``aew``).
        licence: the recordings' licence (a corpus's, e.g. "CC BY 4.0"; L2-ARCTIC:
            "non-commercial").
        notes: anything else the speaker wrote.
    """
    model_config = ConfigDict(extra="forbid")
    speaker_id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    source: Literal["recorded", "corpus"]
    accent_description: str = ""
    language_background: str = ""
    consent: Consent | None = None
    device: str = ""
    sample_rate_hz: int | None = Field(default=None, ge=8000)
    corpus: Literal["vctk", "l2-arctic", "cmu-arctic"] | None = None
    corpus_speaker_id: str | None = None
    licence: str = ""
    notes: str = ""


def read_speaker(folder: str | Path) -> SpeakerInfo:
    """``folder/speaker.json``, validated.

    Raises:
        RigError: the file is missing, not JSON, or a field is wrong (file, field and value
            named).
    """
    path = Path(folder) / SPEAKER_FILE
    if not path.is_file():
        raise RigError(f"{path}: no {SPEAKER_FILE} in the speaker folder (rig voices record "
                       "and rig voices import write one)")
    try:
        data = loads_strict(path.read_text(encoding="utf-8"))
    except ValueError as exc:  # not UTF-8, not JSON, a key named twice
        raise RigError(f"{path}: not a JSON file ({exc})") from exc
    try:
        return SpeakerInfo.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise RigError(f"{path}: field {field!r}: {err['msg']} (got {err.get('input')!r})"
                       ) from exc


def write_speaker(folder: str | Path, info: SpeakerInfo) -> Path:
    """Write ``folder/speaker.json`` atomically; returns its path."""
    from rig.paths import write_text_atomic

    path = Path(folder) / SPEAKER_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, info.model_dump_json(indent=2) + "\n")
    return path
