"""Loading a profile set: a folder of YAML files merged onto ``baseline.yaml`` and checked.

``baseline.yaml`` is complete (every field has a default); every other file holds only what
it changes, merged onto the baseline (mappings merge key by key, except ``pace``, whose
``rate`` and ``wpm`` are alternatives: a profile's ``pace`` replaces the baseline's). A profile
may change one dimension of the baseline; changing more is rejected unless the file lists
every changed dimension under ``changes:``. Files a profile names (a noise recording, a folder
of recorded answers) must exist, relative to the profile's file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rig.config import load_model, read_yaml, yaml_files
from rig.errors import ConfigError
from rig.profiles.profile import Profile
from rig.profiles.settings import HIBARI_RATE_RANGE, Disfluency, Pace, Pauses


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


def _check_noise_file(f: Path, path: Path) -> None:
    """The noise recording decodes, is finite, not silent and long enough to loop
    (:func:`rig.synth.noise.file_noise`'s rules, checked when the set is loaded rather than
    in the middle of a campaign)."""
    import numpy as np

    from rig.synth.noise import file_noise

    try:
        file_noise(path, 1, 16000, np.random.default_rng(0))
    except ValueError as exc:  # AudioFileError is one; the message names the file
        raise ConfigError(f, "noise.path", str(exc)) from None


def _check_recordings(f: Path, folder: Path) -> None:
    """Every recording (``*.wav``, ``*.flac``) of a recorded voice's folder decodes to usable
    samples (:func:`rig.audio.read_wav`'s rules: not cut short, not another format renamed,
    no NaN), checked when the set is loaded rather than at that answer's call."""
    from rig.audio import read_wav
    from rig.synth.recorded import EXTENSIONS

    for path in sorted(folder.iterdir()):
        if path.is_file() and path.suffix.lower() in EXTENSIONS:
            try:
                read_wav(path)
            except ValueError as exc:  # AudioFileError is one; the message names the file
                raise ConfigError(f, "voice.voice_id", str(exc)) from None


def _check_sources(f: Path, prof: Profile) -> None:
    """Files a profile names exist, and its accent label says where the voice comes from."""
    folder = f.parent
    if prof.noise.kind == "file" and prof.noise.path:
        p = Path(prof.noise.path)
        if not (p if p.is_absolute() else folder / p).is_file():
            raise ConfigError(f, "noise.path", "noise file not found (paths are relative to the "
                              "profile file)", prof.noise.path)
        _check_noise_file(f, p if p.is_absolute() else folder / p)
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
        _check_recordings(f, p if p.is_absolute() else folder / p)
        if "recorded" not in label:
            raise ConfigError(f, "accent_label", "a recorded voice's label must say 'recorded'",
                              prof.accent_label)
    else:
        if prof.voice.engine == "coqui":
            from rig.synth.coqui import resolve_files

            def rel(v: str | None) -> Path | None:
                return None if v is None else (Path(v) if Path(v).is_absolute() else folder / v)

            resolve_files(rel(prof.voice.model_path), rel(prof.voice.config_path),
                          rel(prof.voice.speaker_wav), where=f)
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
