"""Caller profiles: audio conditions under which a scripted answer is delivered.

A profile is an audio condition (voice, pace, pauses, response delay, fillers, noise, channel,
language), never a demographic category: nothing in rig infers or labels race, sex or national
origin. ``accent_label`` describes the audio condition ("synthetic British English, espeak-ng
en-gb"), and a TTS accent is not the range of real speakers of that accent.

A profile set is a folder of YAML files. ``baseline.yaml`` is complete (every field has a
default); every other file holds only what it changes, merged onto the baseline. A profile may
change one dimension of the baseline; changing more is rejected unless the file lists every
changed dimension under ``changes:``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rig.config import content_hash, load_model, read_yaml
from rig.errors import ConfigError

Dimension = Literal["voice", "pace", "pauses", "response_delay", "disfluency", "noise",
                    "channel", "language"]
DIMENSIONS: tuple[str, ...] = ("voice", "pace", "pauses", "response_delay", "disfluency",
                               "noise", "channel", "language")
# Which top-level fields belong to which dimension (``accent_label`` describes the voice).
_FIELDS_OF: dict[str, tuple[str, ...]] = {
    "voice": ("voice", "accent_label"),
    "pace": ("pace",),
    "pauses": ("pauses",),
    "response_delay": ("response_delay_s",),
    "disfluency": ("disfluency",),
    "noise": ("noise",),
    "channel": ("channel",),
    "language": ("language",),
}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Voice(_Frozen):
    """TTS engine and voice id. ``hibari``: 'heart'; ``piper``: 'joe' (GPL extra);
    ``espeak-ng``: an espeak voice such as 'en-us', 'en-gb-scotland'; ``recorded``: a folder of
    human recordings named ``<answer_id>.wav`` (``voice_id`` is the folder)."""
    engine: Literal["hibari", "piper", "espeak-ng", "recorded"] = "hibari"
    voice_id: str = "heart"


class Pace(_Frozen):
    """Speaking rate as a multiplier of the engine's natural rate (1.0 = natural)."""
    rate: float = Field(1.0, ge=0.5, le=2.0)


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


class Disfluency(_Frozen):
    """Fillers inserted between words, ``fillers_per_100_words`` on average (seeded)."""
    fillers_per_100_words: float = Field(0.0, ge=0.0, le=30.0)
    filler_words: tuple[str, ...] = ("um", "uh")


class Noise(_Frozen):
    """Background noise mixed at ``snr_db`` measured on active speech.

    ``white`` and ``pink`` are generated from the call's seed; ``file`` loops a recording
    (``path``, relative to the profile file) from a seeded offset.
    """
    kind: Literal["none", "white", "pink", "file"] = "none"
    snr_db: float | None = Field(None, ge=-10.0, le=60.0)
    path: str | None = None

    @model_validator(mode="after")
    def _fields(self) -> Noise:
        if self.kind != "none" and self.snr_db is None:
            raise ValueError(f"noise.snr_db is required when noise.kind is {self.kind!r}")
        if self.kind == "file" and not self.path:
            raise ValueError("noise.path is required when noise.kind is 'file'")
        return self


class Channel(_Frozen):
    """Caller-side line condition before the interviewer's telephony path.

    ``clean``: nothing added; the pipeline's telephony path (8 kHz G.711 mu-law by default)
    still applies to every call.
    """
    kind: Literal["clean"] = "clean"


class Profile(_Frozen):
    profile_id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    description: str = ""
    changes: tuple[Dimension, ...] = ()
    voice: Voice = Voice()
    accent_label: str = "US English (synthetic, hibari 'heart')"
    pace: Pace = Pace()
    pauses: Pauses = Pauses()
    response_delay_s: float = Field(0.5, ge=0.0, le=10.0)
    disfluency: Disfluency = Disfluency()
    noise: Noise = Noise()
    channel: Channel = Channel()
    language: Literal["en"] = "en"

    def dimensions_changed(self, baseline: Profile) -> list[str]:
        """The dimensions in which this profile differs from ``baseline``."""
        mine, base = self.model_dump(), baseline.model_dump()
        return [d for d in DIMENSIONS if any(mine[f] != base[f] for f in _FIELDS_OF[d])]

    @property
    def content_hash(self) -> str:
        """Hash of everything that shapes the audio (not the id or description)."""
        return content_hash(self.model_dump(exclude={"profile_id", "description", "changes"}))


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


def load_profiles(path: str | Path, baseline_id: str = "baseline") -> ProfileSet:
    """Load a profile set folder and enforce the one-dimension rule.

    Raises:
        ConfigError: naming the file, field and value, when a file is malformed, the baseline
            is missing, an id repeats, or a profile changes several dimensions without listing
            them under ``changes:``.
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
    base_dump = baseline.model_dump(mode="json")
    profiles, sources = [baseline], {baseline_id: base_file}
    for f in sorted(path.glob("*.yaml")):
        if f == base_file:
            continue
        raw = read_yaml(f)
        if not isinstance(raw, dict):
            raise ConfigError(f, "", "expected a mapping at the top level", raw)
        merged = _merge({k: v for k, v in base_dump.items()
                         if k not in ("profile_id", "description", "changes")}, raw)
        prof = load_model(f, Profile, merged)
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
        profiles.append(prof)
        sources[prof.profile_id] = f
    return ProfileSet(baseline=baseline, profiles=tuple(profiles), path=path, sources=sources)
