"""Caller profiles: audio conditions under which a scripted answer is delivered.

A profile is an audio condition (voice, pace, pauses, response delay, disfluency, barge-in,
noise, channel, language), never a demographic category: nothing in rig infers or labels race,
sex or national origin. ``accent_label`` describes the audio condition ("British English,
synthetic, espeak-ng formant 'en-gb'"), and a TTS accent is not the range of real speakers of
that accent; recordings of real speakers (``voice.engine: recorded``) are the only faithful
source of accents.

Every field is typed, carries its unit in its name (``_s``, ``_db``, ``_pct``, ``_hz``,
``_bps``, ``wpm``) and is validated; a call records the profile it ran under (see
:mod:`rig.campaign.call`).

A profile set is a folder of YAML files. ``baseline.yaml`` is complete (every field has a
default); every other file holds only what it changes, merged onto the baseline (mappings merge
key by key, except ``pace``, whose ``rate`` and ``wpm`` are alternatives: a profile's ``pace``
replaces the baseline's). A profile may change one dimension of the baseline; changing more is
rejected unless the file lists every changed dimension under ``changes:``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rig.channel.steps import Channel
from rig.config import content_hash, load_model, read_yaml, yaml_files
from rig.errors import ConfigError

__all__ = ["DIMENSIONS", "Channel", "Dimension", "Disfluency", "Interruption", "Noise", "Pace",
           "Pauses", "Profile", "ProfileSet", "Voice", "load_profiles"]

Dimension = Literal["voice", "pace", "pauses", "response_delay", "disfluency", "interruption",
                    "noise", "channel", "language"]
DIMENSIONS: tuple[str, ...] = ("voice", "pace", "pauses", "response_delay", "disfluency",
                               "interruption", "noise", "channel", "language")
# Which top-level fields belong to which dimension (``accent_label`` describes the voice).
_FIELDS_OF: dict[str, tuple[str, ...]] = {
    "voice": ("voice", "accent_label"),
    "pace": ("pace",),
    "pauses": ("pauses",),
    "response_delay": ("response_delay_s",),
    "disfluency": ("disfluency",),
    "interruption": ("interruption",),
    "noise": ("noise",),
    "channel": ("channel",),
    "language": ("language",),
}
#: Dimensions that change nothing in the offline (file) path; they are recorded with the call
#: and act in real calls (see :class:`Interruption`).
OFFLINE_RECORD_ONLY: tuple[str, ...] = ("interruption",)

# Words that name a demographic category; an accent label describes audio, never a person.
#: The rate multipliers hibari stays intelligible at (``rig.synth.hibari`` uses the same range
#: for a wpm target): above about 1.33 its durations collapse and words slur.
HIBARI_RATE_RANGE = (0.5, 1.3)

_DEMOGRAPHIC_WORDS = frozenset({
    "male", "female", "man", "woman", "men", "women", "boy", "girl", "gender", "sex", "race",
    "racial", "ethnic", "ethnicity", "black", "white", "caucasian", "hispanic", "latino",
    "latina", "latinx", "asian", "elderly", "old", "young", "age", "aged", "religion",
    "religious", "disabled", "disability",
})


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Voice(_Frozen):
    """TTS engine and voice id.

    * ``hibari``: 'heart' (the only voice its package ships);
    * ``piper``: 'joe' (GPL extra: ``pip install 'rig[piper]'``);
    * ``espeak-ng``: an espeak-ng voice ('en-us', 'en-gb', 'en-gb-scotland', 'en-gb-x-rp',
      'en-029', 'en-us-nyc', ...);
    * ``mbrola``: an MBROLA diphone voice through espeak-ng ('en1', 'us1', 'us2', 'us3', 'de1',
      'fr1', ...; voice databases are non-commercial; raises ``EngineUnavailable`` with the apt
      line when not installed);
    * ``recorded``: a folder of human recordings named ``<answer_id>.wav`` (``voice_id`` is the
      folder, relative to the profile file).
    """
    engine: Literal["hibari", "piper", "espeak-ng", "mbrola", "recorded"] = "hibari"
    voice_id: str = Field("heart", min_length=1, max_length=200)

    @model_validator(mode="after")
    def _voice_id(self) -> Voice:
        if self.engine != "recorded" and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
                                                          self.voice_id):
            raise ValueError(f"voice_id {self.voice_id!r} is not a voice name of {self.engine}")
        return self


class Pace(_Frozen):
    """Speaking rate: ``rate``, a multiplier of the engine's natural rate (1.0 natural), or
    ``wpm``, a target in words per minute. Give one.

    A ``wpm`` target is met on the output: the renderer measures the words per minute of what
    it spoke (spoken words, fillers included, over the speech span without the deliberate
    pauses) and adjusts the engine's rate until it is within 3%; a render more than 10% off
    the target raises rather than mislabel the condition. A ``rate`` is applied as given and
    its words per minute are measured and recorded all the same.
    """
    rate: float | None = Field(None, ge=0.5, le=2.0)
    wpm: float | None = Field(None, ge=60.0, le=320.0)

    @model_validator(mode="before")
    @classmethod
    def _default_rate(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("rate") is None and data.get("wpm") is None:
            data = {**data, "rate": 1.0}
        return data

    @model_validator(mode="after")
    def _one(self) -> Pace:
        if self.rate is not None and self.wpm is not None:
            raise ValueError("give pace.rate or pace.wpm, not both")
        return self

    def describe(self) -> str:
        return f"{self.wpm:g} wpm" if self.wpm is not None else f"rate x{self.rate:g}"


class Pauses(_Frozen):
    """Extra silent pauses inserted into the answer (on top of the script's own marks).

    ``count`` pauses of ``pause_s`` seconds each, placed at evenly spaced sentence ends
    (``sentence_end``) or in the middle of evenly spaced sentences (``mid_sentence``).
    """
    count: int = Field(0, ge=0, le=20)
    pause_s: float = Field(0.0, ge=0.0, le=10.0)
    placement: Literal["sentence_end", "mid_sentence"] = "sentence_end"

    @model_validator(mode="after")
    def _both_or_none(self) -> Pauses:
        if (self.count > 0) != (self.pause_s > 0):
            raise ValueError("pauses.count and pauses.pause_s must both be zero or both positive")
        return self

    def describe(self) -> str:
        if not self.count:
            return "none"
        return f"{self.count} x {self.pause_s:g} s at {self.placement.replace('_', ' ')}"


class Disfluency(_Frozen):
    """Fillers and word repetitions, placed with the call's seed.

    ``fillers_per_100_words``: fillers ("um", "uh") before distinct words;
    ``repetitions_per_100_words``: words said twice ("the the"), the first time cut short as a
    phrase of its own. Both are counts per 100 script words, rounded half up.

    WER reference policy: neither fillers nor repetitions are in the clean reference (the
    script's words, what ``wer`` is computed against); the verbatim reference keeps them as
    spoken (``wer_verbatim``). A call records both.
    """
    fillers_per_100_words: float = Field(0.0, ge=0.0, le=30.0)
    filler_words: tuple[str, ...] = ("um", "uh")
    repetitions_per_100_words: float = Field(0.0, ge=0.0, le=20.0)

    def describe(self) -> str:
        parts = []
        if self.fillers_per_100_words:
            parts.append(f"{self.fillers_per_100_words:g} fillers/100 words")
        if self.repetitions_per_100_words:
            parts.append(f"{self.repetitions_per_100_words:g} repetitions/100 words")
        return ", ".join(parts) or "none"


class Interruption(_Frozen):
    """Barge-in: the caller starts ``barge_in_offset_s`` seconds before the interviewer has
    finished its question (0: the caller waits for the end, then ``response_delay_s``).

    Offline (rendered files through the simulated line) nothing plays the interviewer's
    question, so there is nothing to interrupt: the audio is exactly the one without barge-in
    and the offset is only recorded with the call (``barge_in_offset_s``). A real-call
    transport starts the caller's audio that long before the question's audio ends (and then
    ignores ``response_delay_s``).
    """
    barge_in_offset_s: float = Field(0.0, ge=0.0, le=10.0)

    def describe(self) -> str:
        if not self.barge_in_offset_s:
            return "none"
        return f"barge-in {self.barge_in_offset_s:g} s before the question ends (offline: recorded)"


NoiseKind = Literal["none", "white", "pink", "babble", "street", "file"]
#: Voices of the babble talkers, cycled (engine:voice_id).
DEFAULT_BABBLE_VOICES: tuple[str, ...] = ("hibari:heart", "espeak-ng:en-us", "espeak-ng:en-gb",
                                          "espeak-ng:en-029")


class Noise(_Frozen):
    """Background noise mixed at ``snr_db`` measured on active speech.

    ``white`` and ``pink``: generated from the call's seed. ``babble``: ``talkers`` synthetic
    voices (``voices``, cycled, each at its own rate and text) summed from seeded offsets.
    ``street``: synthetic street-like noise (traffic rumble with passing vehicles), seeded; not
    a recording. ``file``: loops a recording (``path``, relative to the profile file) from a
    seeded offset.
    """
    kind: NoiseKind = "none"
    snr_db: float | None = Field(None, ge=-10.0, le=60.0)
    path: str | None = None
    talkers: int = Field(6, ge=2, le=16)
    voices: tuple[str, ...] = DEFAULT_BABBLE_VOICES

    @field_validator("voices")
    @classmethod
    def _voices(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if not v:
            raise ValueError("noise.voices needs at least one engine:voice_id")
        for item in v:
            engine, _, voice_id = item.partition(":")
            if engine not in ("hibari", "piper", "espeak-ng", "mbrola") or not voice_id:
                raise ValueError(f"babble voice {item!r} must be engine:voice_id with engine "
                                 "hibari, piper, espeak-ng or mbrola")
        return v

    @model_validator(mode="after")
    def _fields(self) -> Noise:
        if self.kind == "none" and (self.snr_db is not None or self.path):
            raise ValueError("noise.kind is 'none' but noise.snr_db or noise.path is set: "
                             "name the noise kind (white, pink, babble, street, file)")
        if self.kind != "none" and self.snr_db is None:
            raise ValueError(f"noise.snr_db is required when noise.kind is {self.kind!r}")
        if self.kind == "file" and not self.path:
            raise ValueError("noise.path is required when noise.kind is 'file'")
        return self

    def describe(self) -> str:
        if self.kind == "none":
            return "none"
        what = {"babble": f"babble of {self.talkers} synthetic talkers",
                "street": "street-like (synthetic)", "file": f"file {self.path}"}.get(
                    self.kind, self.kind)
        return f"{what} at {self.snr_db:g} dB SNR"


class Profile(_Frozen):
    """One audio condition. Every field but the id, description and ``changes`` shapes the
    audio and is covered by :attr:`content_hash`."""
    profile_id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    description: str = ""
    changes: tuple[Dimension, ...] = ()
    voice: Voice = Voice()
    accent_label: str = Field("US English (synthetic, hibari 'heart')", min_length=1,
                              max_length=200)
    pace: Pace = Pace()
    pauses: Pauses = Pauses()
    response_delay_s: float = Field(0.5, ge=0.0, le=10.0)
    disfluency: Disfluency = Disfluency()
    interruption: Interruption = Interruption()
    noise: Noise = Noise()
    channel: Channel = Channel()
    language: Literal["en"] = "en"

    @field_validator("accent_label")
    @classmethod
    def _audio_not_demographic(cls, v: str) -> str:
        words = set(re.findall(r"[a-z]+", v.lower()))
        hits = sorted(words & _DEMOGRAPHIC_WORDS)
        if hits:
            raise ValueError(f"accent_label describes an audio condition, never a demographic "
                             f"category; {hits[0]!r} names one")
        return v

    def dimensions_changed(self, baseline: Profile) -> list[str]:
        """The dimensions in which this profile differs from ``baseline``."""
        mine, base = self.model_dump(), baseline.model_dump()
        return [d for d in DIMENSIONS if any(mine[f] != base[f] for f in _FIELDS_OF[d])]

    def setting(self, dimension: str) -> str:
        """The profile's value of one dimension, in words with units."""
        return {
            "voice": f"{self.voice.engine}:{self.voice.voice_id}",
            "pace": self.pace.describe(), "pauses": self.pauses.describe(),
            "response_delay": f"{self.response_delay_s:g} s",
            "disfluency": self.disfluency.describe(), "interruption": self.interruption.describe(),
            "noise": self.noise.describe(), "channel": self.channel.describe(),
            "language": self.language,
        }[dimension]

    def record(self) -> dict[str, Any]:
        """The profile's settings as flat columns for a call's row (``profile_*``), plus the
        whole profile as JSON."""
        return {
            "profile_json": json.dumps(self.model_dump(mode="json"), sort_keys=True,
                                       separators=(",", ":")),
            "accent_label": self.accent_label, "language": self.language,
            "pace_rate": self.pace.rate, "pace_wpm_target": self.pace.wpm,
            "pauses_count": self.pauses.count, "pauses_pause_s": self.pauses.pause_s,
            "pauses_placement": self.pauses.placement,
            "response_delay_s": self.response_delay_s,
            "fillers_per_100_words": self.disfluency.fillers_per_100_words,
            "repetitions_per_100_words": self.disfluency.repetitions_per_100_words,
            "barge_in_offset_s": self.interruption.barge_in_offset_s,
            "noise_kind": self.noise.kind, "snr_db_target": self.noise.snr_db,
        }

    @property
    def content_hash(self) -> str:
        """Hash of everything that shapes the audio (not the id or description).

        Fields added after the first release are left out while they hold their neutral
        value, and a clean channel hashes as it always did, so a profile that uses none of
        them keeps its hash (and its calls keep their ids)."""
        d = self.model_dump(exclude={"profile_id", "description", "changes"})
        for section, key, neutral in _NEWER_FIELDS:
            if section is None:
                if d.get(key) == neutral:
                    d.pop(key, None)
            elif d[section].get(key) == neutral:
                d[section].pop(key, None)
        if not d["channel"]["steps"]:
            d["channel"] = {"kind": "clean"}
        return content_hash(d)


# (section, field, neutral value) of the fields added after the first release.
_NEWER_FIELDS: tuple[tuple[str | None, str, Any], ...] = (
    ("pace", "wpm", None),
    ("disfluency", "repetitions_per_100_words", 0.0),
    ("noise", "talkers", 6),
    ("noise", "voices", DEFAULT_BABBLE_VOICES),
    (None, "interruption", {"barge_in_offset_s": 0.0}),
)


@dataclass(frozen=True)
class ProfileSet:
    baseline: Profile
    profiles: tuple[Profile, ...]  # baseline first
    path: Path
    sources: dict[str, Path]

    def get(self, profile_id: str) -> Profile:
        for p in self.profiles:
            if p.profile_id == profile_id:
                return p
        raise KeyError(f"no profile {profile_id!r} in {self.path}; have "
                       f"{[p.profile_id for p in self.profiles]}")

    def resolve_path(self, profile: Profile, rel: str) -> Path:
        """A path named in a profile, relative to that profile's file."""
        p = Path(rel)
        return p if p.is_absolute() else (self.sources[profile.profile_id].parent / p)


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
    return out


def _check_sources(f: Path, prof: Profile) -> None:
    """Files a profile names exist, and its accent label says where the voice comes from."""
    folder = f.parent
    if prof.noise.kind == "file" and prof.noise.path:
        p = Path(prof.noise.path)
        if not (p if p.is_absolute() else folder / p).is_file():
            raise ConfigError(f, "noise.path", "noise file not found (paths are relative to the "
                              "profile file)", prof.noise.path)
    label = prof.accent_label.lower()
    if prof.voice.engine == "recorded":
        for name, neutral in (("pace", Pace()), ("pauses", Pauses()),
                              ("disfluency", Disfluency())):
            if getattr(prof, name) != neutral:
                raise ConfigError(f, name, "a recorded voice is used as spoken; pace, pauses "
                                  "and disfluency cannot be applied to it",
                                  getattr(prof, name).model_dump(exclude_none=True))
        p = Path(prof.voice.voice_id)
        if not (p if p.is_absolute() else folder / p).is_dir():
            raise ConfigError(f, "voice.voice_id", "recording folder not found (relative to "
                              "the profile file)", prof.voice.voice_id)
        if "recorded" not in label:
            raise ConfigError(f, "accent_label", "a recorded voice's label must say 'recorded'",
                              prof.accent_label)
    else:
        if prof.voice.engine == "hibari" and prof.pace.rate is not None \
                and not HIBARI_RATE_RANGE[0] <= prof.pace.rate <= HIBARI_RATE_RANGE[1]:
            raise ConfigError(f, "pace.rate", f"hibari stays intelligible at rates "
                              f"{HIBARI_RATE_RANGE[0]}-{HIBARI_RATE_RANGE[1]} (its durations "
                              "collapse above about 1.33)", prof.pace.rate)
    if prof.voice.engine != "recorded" and "synthetic" not in label:
        raise ConfigError(f, "accent_label", "a TTS voice's label must say 'synthetic' (a TTS "
                          "accent is not the range of real speakers of that accent)",
                          prof.accent_label)


def load_profiles(path: str | Path, baseline_id: str = "baseline") -> ProfileSet:
    """Load a profile set folder and enforce the one-dimension rule.

    Raises:
        ConfigError: naming the file, field and value, when a file is malformed, the baseline
            is missing, an id repeats, a profile changes several dimensions without listing
            them under ``changes:``, changes the voice but keeps the baseline's accent label,
            or names a noise file or recording folder that does not exist.
    """
    path = Path(path)
    if not path.is_dir():
        raise ConfigError(path, "", "profile set folder not found")
    base_file = path / f"{baseline_id}.yaml"
    if not base_file.is_file():
        raise ConfigError(path, "", f"the profile set has no {baseline_id}.yaml")
    base_raw = read_yaml(base_file)
    baseline = load_model(base_file, Profile, base_raw)
    if baseline.profile_id != baseline_id:
        raise ConfigError(base_file, "profile_id", f"must be {baseline_id!r}",
                          baseline.profile_id)
    _check_sources(base_file, baseline)
    base_dump = baseline.model_dump(mode="json")
    profiles, sources = [baseline], {baseline_id: base_file}
    for f in yaml_files(path):
        if f == base_file:
            continue
        raw = read_yaml(f)
        if not isinstance(raw, dict):
            raise ConfigError(f, "", "expected a mapping at the top level", raw)
        under = {k: v for k, v in base_dump.items()
                 if k not in ("profile_id", "description", "changes")}
        if isinstance(raw.get("pace"), dict):
            under.pop("pace")  # rate and wpm are alternatives: the profile's pace replaces
        prof = load_model(f, Profile, _merge(under, raw))
        if prof.profile_id in sources:
            raise ConfigError(f, "profile_id", f"repeats {sources[prof.profile_id]}",
                              prof.profile_id)
        changed = prof.dimensions_changed(baseline)
        if not changed:
            raise ConfigError(f, "", "changes nothing from the baseline")
        if len(changed) > 1 and sorted(prof.changes) != sorted(changed):
            raise ConfigError(f, "changes", f"the profile changes {len(changed)} dimensions "
                              f"{changed}; list them all under 'changes:' to allow it",
                              list(prof.changes), has_value=True)
        if prof.changes and sorted(prof.changes) != sorted(changed):
            raise ConfigError(f, "changes", f"declares {list(prof.changes)} but changes "
                              f"{changed}", list(prof.changes), has_value=True)
        if prof.voice != baseline.voice and prof.accent_label == baseline.accent_label:
            raise ConfigError(f, "accent_label", "the voice changes but the label is the "
                              "baseline's; describe the new voice's audio condition",
                              prof.accent_label)
        _check_sources(f, prof)
        profiles.append(prof)
        sources[prof.profile_id] = f
    return ProfileSet(baseline=baseline, profiles=tuple(profiles), path=path, sources=sources)
