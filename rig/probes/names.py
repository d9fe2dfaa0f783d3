"""Name sets and the material of name-swap designs (audit studies of a scorer).

A **name set** (``probes/names/<id>.yaml``) holds groups of candidate names that differ in one
signal: first names that read as male or as female (``gendered``), or one gender-neutral
first name followed by "(he/him)", "(she/her)" or "(they/them)" (``neutral_pronouns``). The
groups are labels of the name set, taken from public name-frequency statistics (each file
cites its source); they are never an inference about any person::

    id: gendered
    title: ...
    version: 1
    source: "where the names come from, with the year"
    first_names: [...]        # optional: shared by every group without its own
    surnames: [...]
    groups:
      - {id: male, label: male-read names, first_names: [...]}
      - {id: female, label: female-read names, first_names: [...]}
      # or, with shared first names: {id: he_him, label: "(he/him)", suffix: "(he/him)"}

**Slots** pair the groups: slot ``j`` of an item gives every group the first name at the same
position of its list (the same name when the list is shared) and the same surname, so the
groups of a slot differ only in the probed signal. Positions and surnames are drawn per item,
seeded by ``(seed, item id)``.

**Material** (``probes/name_swap/materials.yaml``): short resumes written for rig, and
phone-screen transcripts built from answers of an answer bank (:mod:`rig.answers`), each with
the role applied for and a ``{name}`` marker where the name goes.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rig.answers import load_bank
from rig.config import load_model, read_yaml
from rig.errors import ConfigError
from rig.paths import DEFAULTS

DEFAULT_NAMES = DEFAULTS.root / "probes" / "names"
DEFAULT_MATERIALS = DEFAULTS.root / "probes" / "name_swap" / "materials.yaml"
NAME_MARK = "{name}"
_ID = r"^[a-z][a-z0-9_]*$"


def _clean_names(names: tuple[str, ...] | None, what: str) -> tuple[str, ...] | None:
    """Names with runs of whitespace made one space; none empty, none with a brace (the
    material's ``{name}`` marker), none twice (case and whitespace ignored)."""
    if names is None:
        return None
    out = tuple(" ".join(n.split()) for n in names)
    for n in out:
        if not n:
            raise ValueError(f"{what}: an empty name")
        if "{" in n or "}" in n:
            raise ValueError(f"{what}: {n!r} holds a brace ({{ or }}); names must not "
                             f"contain {NAME_MARK} or braces")
    return _no_repeats(out, what)


def _key(name: str) -> str:
    return " ".join(name.split()).casefold()


def _no_repeats(names: tuple[str, ...], what: str) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for n in names:
        if _key(n) in seen:
            raise ValueError(f"{what} repeat (case and spaces ignored): {seen[_key(n)]!r} "
                             f"and {n!r}")
        seen[_key(n)] = n
    return names


class NameGroup(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str = Field(pattern=_ID)
    label: str = Field(min_length=1)
    first_names: tuple[str, ...] | None = None
    suffix: str = ""

    @field_validator("first_names")
    @classmethod
    def _names(cls, v: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return _clean_names(v, "first names")

    @field_validator("suffix")
    @classmethod
    def _suffix(cls, v: str) -> str:
        v = " ".join(v.split())
        if "{" in v or "}" in v:
            raise ValueError(f"{v!r} holds a brace ({{ or }}); a suffix must not contain "
                             f"{NAME_MARK} or braces")
        return v


class NameSet(BaseModel):
    """A name set: groups of names, their source, and the surnames every group shares."""
    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str = Field(pattern=_ID)
    title: str = Field(min_length=1)
    version: int = Field(ge=1)
    source: str = Field(min_length=20)
    #: the language whose material the names go into (``rig probe name-swap --language``)
    language: str = Field(default="en", pattern=r"^[a-z]{2,3}$")
    first_names: tuple[str, ...] | None = None
    surnames: tuple[str, ...] = Field(min_length=1)
    groups: tuple[NameGroup, ...] = Field(min_length=2)

    @field_validator("first_names")
    @classmethod
    def _names(cls, v: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return _clean_names(v, "first names")

    @field_validator("surnames")
    @classmethod
    def _surnames(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return _clean_names(v, "surnames") or ()

    @model_validator(mode="after")
    def _check(self) -> NameSet:
        ids = [g.id for g in self.groups]
        if len(set(ids)) != len(ids):
            raise ValueError(f"group ids repeat: {ids}")
        for g in self.groups:
            if not (g.first_names or self.first_names):
                raise ValueError(f"group {g.id!r} has no first_names and the set has none "
                                 "to share")
        own = [(g.id, {_key(n): n for n in g.first_names}) for g in self.groups
               if g.first_names]
        for i, (ga, a) in enumerate(own):
            for gb, b in own[i + 1:]:
                both = sorted(a[k] for k in a.keys() & b.keys())
                if both:
                    raise ValueError(f"a first name is in two groups ({ga!r} and {gb!r}; "
                                     f"case and spaces ignored): {both}")
        sharing = [g for g in self.groups if not g.first_names]
        suffixes = [g.suffix for g in sharing]
        keys = {_key(x) for x in suffixes}
        if len(sharing) > 1 and (len(keys) != len(suffixes) or "" in keys):
            raise ValueError("groups that share the set's first names must each have their "
                             f"own suffix (case and spaces ignored), got {suffixes}")
        return self

    @property
    def group_ids(self) -> tuple[str, ...]:
        return tuple(g.id for g in self.groups)

    def group(self, group_id: str) -> NameGroup:
        for g in self.groups:
            if g.id == group_id:
                return g
        raise KeyError(group_id)

    def names_of(self, group_id: str) -> tuple[str, ...]:
        g = self.group(group_id)
        return tuple(g.first_names or self.first_names or ())

    @property
    def n_positions(self) -> int:
        """First-name positions every group has (the shortest list)."""
        return min(len(self.names_of(g)) for g in self.group_ids)

    def display(self, group_id: str, first: str, surname: str) -> str:
        """The name as written in the material: "First Surname", then the suffix if any."""
        suffix = self.group(group_id).suffix
        return f"{first} {surname}" + (f" {suffix}" if suffix else "")


@dataclass(frozen=True)
class Slot:
    """Slot ``slot`` of an item: first-name position and surname shared by every group."""
    slot: int
    position: int
    surname: str


def draw_slots(name_set: NameSet, item_id: str, n_slots: int, seed: int) -> list[Slot]:
    """``n_slots`` distinct first-name positions and a surname per slot, for one item.

    The draw is ``numpy.random.default_rng([seed, crc32(item_id)])``: positions without
    replacement, surnames with replacement, so adding an item leaves the others' draws alone.

    Raises:
        ConfigError: more slots than first-name positions in the set, or fewer than 1.
    """
    if n_slots < 1:
        raise ConfigError("probe", "--names-per-group", "must be at least 1", n_slots)
    if n_slots > name_set.n_positions:
        raise ConfigError("probe", "--names-per-group", f"name set {name_set.id!r} has only "
                          f"{name_set.n_positions} names per group", n_slots)
    rng = np.random.default_rng([seed, zlib.crc32(item_id.encode("utf-8"))])
    pos = rng.choice(name_set.n_positions, n_slots, replace=False)
    sur = rng.integers(0, len(name_set.surnames), n_slots)
    return [Slot(j, int(p), name_set.surnames[int(s)]) for j, (p, s) in enumerate(
        zip(pos, sur, strict=True))]


def candidate_name(name_set: NameSet, group_id: str, slot: Slot) -> tuple[str, str]:
    """(first name, name as written) of ``group_id`` in ``slot``."""
    first = name_set.names_of(group_id)[slot.position]
    return first, name_set.display(group_id, first, slot.surname)


def names_folder(language: str = "en") -> Path:
    """The shipped name sets of ``language``: ``probes/names/`` for English,
    ``probes/names/<language>/`` otherwise (sources: ``probes/names/README.md``)."""
    return DEFAULT_NAMES if language == "en" else DEFAULT_NAMES / language


def shipped_name_sets(language: str = "en") -> tuple[str, ...]:
    """The ids of the shipped name sets of ``language`` (English: ``gendered`` and
    ``neutral_pronouns``; es, fr, de: ``gendered``); empty for a language without any."""
    return tuple(sorted(p.stem for p in names_folder(language).glob("*.yaml")))


def default_materials(language: str = "en") -> Path:
    """The shipped materials file of ``language``: ``probes/name_swap/materials.yaml`` for
    English, ``probes/name_swap/<language>/materials.yaml`` otherwise."""
    return DEFAULT_MATERIALS if language == "en" else (
        DEFAULT_MATERIALS.parent / language / DEFAULT_MATERIALS.name)


def load_name_set(spec: str | Path, language: str = "en") -> NameSet:
    """A name set by id (a file ``<names_folder(language)>/<id>.yaml``) or by path.

    Raises:
        ConfigError: no such set or file, or a malformed one (names the file and field).
    """
    path = Path(spec)
    if not path.suffix:
        folder = names_folder(language)
        path = folder / f"{spec}.yaml"
        if not path.is_file():
            known = sorted(p.stem for p in folder.glob("*.yaml"))
            raise ConfigError(spec, "", f"unknown name set; known: {known}, or a YAML path")
    if not path.is_file():
        raise ConfigError(path, "", "name set file not found")
    return load_model(path, NameSet, read_yaml(path))


# -- material ----------------------------------------------------------------------------------

MaterialKind = Literal["resume", "transcript"]


class _Resume(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str = Field(pattern=_ID)
    role: str = Field(min_length=3)
    text: str = Field(min_length=40)


class _TranscriptRef(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    answer_id: str = Field(min_length=1)
    role: str = Field(min_length=3)


class _Labels(BaseModel):
    """The transcript's labels in the material's language (English by default)."""
    model_config = ConfigDict(frozen=True, extra="forbid")
    candidate: str = Field(default="Candidate", min_length=1)
    header: str = Field(default="Phone-screen transcript.", min_length=1)
    interviewer: str = Field(default="Interviewer", min_length=1)


class _MaterialsFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    version: int = Field(ge=1)
    language: str = Field(default="en", pattern=r"^[a-z]{2,3}$")
    bank: str | None = None
    transcript_labels: _Labels = _Labels()
    resumes: tuple[_Resume, ...] = ()
    transcripts: tuple[_TranscriptRef, ...] = ()


@dataclass(frozen=True)
class Material:
    """One item: the role applied for and the text with :data:`NAME_MARK` where the name
    goes (a resume's header, or a transcript's "Candidate:" line)."""
    item_id: str
    kind: MaterialKind
    role: str
    template: str

    def text(self, name: str) -> str:
        return self.template.replace(NAME_MARK, name)


def transcript_template(question: str, answer: str, labels: _Labels | None = None) -> str:
    """A phone-screen transcript of one answer; the name in the header only (the answer is
    first person). ``labels``: the materials file's ``transcript_labels`` (English when
    None)."""
    lb = labels or _Labels()
    return (f"{lb.candidate}: {NAME_MARK}\n{lb.header}\n"
            f"{lb.interviewer}: {' '.join(question.split())}\n"
            f"{lb.candidate}: {' '.join(answer.split())}")


def materials_language(path: str | Path = DEFAULT_MATERIALS) -> str:
    """The ``language:`` of a materials file (``en`` when absent).

    Raises:
        ConfigError: a missing or malformed file."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, "", "materials file not found")
    return load_model(path, _MaterialsFile, read_yaml(path)).language


def load_materials(path: str | Path = DEFAULT_MATERIALS,
                   kinds: tuple[MaterialKind, ...] = ("resume", "transcript")) -> list[Material]:
    """The items of a materials file, resumes first, each checked to hold ``{name}``.

    ``bank:`` (the answer bank of the transcripts) is resolved relative to the materials
    file's folder, so a copied materials file needs its ``bank:`` adjusted or made absolute.

    Raises:
        ConfigError: a missing or malformed file, a ``bank`` path that does not exist (the
            message gives the resolved path), an item without ``{name}``, an id that
            repeats, or a transcript's answer id not in the bank (names file and field).
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, "", "materials file not found")
    data = load_model(path, _MaterialsFile, read_yaml(path))
    out: list[Material] = []
    if "resume" in kinds:
        for i, r in enumerate(data.resumes):
            if NAME_MARK not in r.text:
                raise ConfigError(path, f"resumes[{i}].text", f"has no {NAME_MARK} marker",
                                  r.id)
            out.append(Material(r.id, "resume", r.role, r.text.strip()))
    if "transcript" in kinds and data.transcripts:
        if not data.bank:
            raise ConfigError(path, "bank", "transcripts need the answer bank folder")
        bank_path = (path.parent / data.bank).resolve()
        if not bank_path.exists():
            raise ConfigError(path, "bank", f"{data.bank!r} resolves to {bank_path}, which "
                              "does not exist (paths are relative to the materials file; "
                              "an absolute path is taken as it is)")
        bank = load_bank(bank_path)
        answers = {a.answer_id: (q, a) for q, a in bank.answers()}
        for i, t in enumerate(data.transcripts):
            if t.answer_id not in answers:
                raise ConfigError(path, f"transcripts[{i}].answer_id", "not in the bank "
                                  f"{data.bank}", t.answer_id)
            q, a = answers[t.answer_id]
            out.append(Material(t.answer_id, "transcript", t.role,
                                transcript_template(q.question, a.clean_text,
                                                    data.transcript_labels)))
    ids = [m.item_id for m in out]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ConfigError(path, "id", "item ids repeat", dup)
    if not out:
        raise ConfigError(path, "", f"no items of kind {list(kinds)}")
    return out


def select_items(items: list[Material], n_items: int | None, seed: int,
                 path: str | Path = DEFAULT_MATERIALS) -> list[Material]:
    """``items`` (``n_items`` None), or a seeded draw of ``n_items`` of them (as
    :func:`~rig.probes.core.sample_sessions` draws one session), in file order.

    Raises:
        ConfigError: ``n_items`` below 1 or above the number of items (names ``--items``,
            the value and the maximum).
    """
    if n_items is None:
        return items
    if not 1 <= n_items <= len(items):
        kinds = " and ".join(dict.fromkeys(m.kind for m in items))
        raise ConfigError(path, "--items", f"must be from 1 to {len(items)}: the file has "
                          f"{len(items)} {kinds} items", n_items)
    from rig.probes.core import sample_sessions

    keep = set(sample_sessions([m.item_id for m in items], 1, n_items, seed)[0])
    return [m for m in items if m.item_id in keep]
