"""The variants of a sweep: which pipeline settings change, and which stages must re-run.

A ``--vary`` option is ``DOTTED.PATH=V1,V2,...`` (``endpointing.silence_timeout_ms=500,800``);
the path names a field of :class:`rig.pipeline.PipelineConfig` (any section, any field, as
``pipelines/*.yaml`` spells it), the values are parsed as YAML scalars (``800`` an int,
``0.5`` a float, ``true`` a bool, anything else a string) and the changed configuration is
validated by the pipeline's own pydantic model, so a value the pipeline would refuse is
refused here, naming ``--vary``, the path and the value.

One setting at a time (the default): each variant is the campaign's pipeline with one field
changed. ``grid``: the product of every ``--vary``. A variant equal to the campaign's own
pipeline (same ``pipeline_version``) is the campaign itself: its rows are reused.

What re-runs (:func:`rerun_from`): the first stage a changed field feeds.
``telephony.*`` -> ``channel`` (the line; renders come from the render cache), ``vad.*``,
``endpointing.*`` and ``turn.*`` -> ``turn`` (turn detection, ASR, scoring), ``asr.*`` ->
``asr`` (ASR and scoring; the campaign's ``turn_close_s`` is reused), ``scorer.*`` and
``transcript.*`` -> ``score`` (scoring only; the campaign's transcripts are reused). ``name``,
``description`` and ``device`` are not settings a sweep varies.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field

import yaml
from pydantic import ValidationError

from rig.errors import ConfigError
from rig.pipeline import PipelineConfig, pipeline_version

#: The stages a call re-runs from, upstream first; each re-runs everything after it.
STAGES = ("channel", "turn", "asr", "score")

#: Pipeline section -> the first stage it feeds.
SECTION_STAGE = {"telephony": "channel", "vad": "turn", "endpointing": "turn", "turn": "turn",
                 "asr": "asr", "scorer": "score", "transcript": "score"}


@dataclass(frozen=True)
class Vary:
    """One ``--vary``: a dotted field path and the values to try (parsed scalars)."""
    path: str
    values: tuple


@dataclass(frozen=True)
class Variant:
    """One pipeline of the sweep.

    Attributes:
        variant_id: ``campaign`` for the campaign's own pipeline, else ``path=value`` joined
            by ``+`` (a grid cell), made safe for a folder name (:func:`variant_id`).
        changes: dotted path -> value, the fields that differ from the campaign's pipeline.
        pipeline: the validated pipeline; version: its ``pipeline_version``.
        rerun_from: the first stage to re-run (one of :data:`STAGES`), None for the campaign.
        regrade_oracle: the scorer changed, so the clean scripts are graded again.
    """
    variant_id: str
    changes: dict = field(hash=False)
    pipeline: PipelineConfig = field(hash=False)
    version: str = ""
    rerun_from: str | None = None
    regrade_oracle: bool = False

    @property
    def is_campaign(self) -> bool:
        return self.rerun_from is None


def _scalar(text: str) -> object:
    try:
        v = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return v if isinstance(v, str | int | float | bool) else text


def parse_vary(option: str) -> Vary:
    """``"a.b=1,2"`` -> ``Vary("a.b", (1, 2))``.

    Raises:
        ConfigError: no ``=``, an empty path or an empty value (field ``--vary``)."""
    path, sep, values = option.partition("=")
    path = path.strip()
    vals = [v.strip() for v in values.split(",")] if sep else []
    if not sep or not path or not vals or any(not v for v in vals):
        raise ConfigError("--vary", "", "expected DOTTED.PATH=V1,V2,... (e.g. "
                          "endpointing.silence_timeout_ms=500,800,1200)", option, True)
    return Vary(path, tuple(dict.fromkeys(_scalar(v) for v in vals)))


def rerun_from(path: str) -> str:
    """The first stage ``path`` (a dotted pipeline field) feeds (see the module docstring).

    Raises:
        ConfigError: the path's section is not one a sweep can vary."""
    section = path.split(".", 1)[0]
    if section not in SECTION_STAGE or "." not in path:
        raise ConfigError("--vary", "", "not a setting a sweep varies: a field of one "
                          f"of the pipeline sections {sorted(SECTION_STAGE)}", path, True)
    return SECTION_STAGE[section]


def apply_changes(base: PipelineConfig, changes: dict) -> PipelineConfig:
    """``base`` with each dotted path set to its value, validated by :class:`PipelineConfig`.

    Raises:
        ConfigError: a path that names no field, or a value the pipeline refuses (names
            ``--vary``, the path and the value; the problem is pydantic's)."""
    data = base.model_dump(mode="json")
    for path, value in changes.items():
        rerun_from(path)
        node = data
        *parents, leaf = path.split(".")
        for i, key in enumerate(parents):
            node = node.get(key) if isinstance(node, dict) else None
            if not isinstance(node, dict):
                raise ConfigError("--vary", "", "no such pipeline section",
                                  ".".join(parents[:i + 1]), True)
        if leaf not in node:
            raise ConfigError("--vary", "", f"no such field (fields of {'.'.join(parents)}"
                              f": {sorted(node)})", path, True)
        node[leaf] = value
    try:
        return PipelineConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"])
        path = next((p for p in changes if loc.startswith(p) or p.startswith(loc)), loc)
        raise ConfigError("--vary", path, err["msg"], changes.get(path, changes),
                          True) from None


def variant_id(changes: dict) -> str:
    """``path=value`` joined by ``+``; characters outside ``[A-Za-z0-9._=+-]`` become ``_``
    (a long id is cut and suffixed with a hash so it stays unique)."""
    raw = "+".join(f"{p}={v}" for p, v in changes.items())
    safe = "".join(c if c.isalnum() or c in "._=+-" else "_" for c in raw)
    if len(safe) > 120:
        safe = safe[:100] + "-" + hashlib.sha256(raw.encode()).hexdigest()[:12]
    return safe


def plan_variants(base: PipelineConfig, varies: list[Vary], grid: bool = False
                  ) -> list[Variant]:
    """The campaign's own pipeline (``variant_id`` ``campaign``) first, then every variant:
    one field at a time, or with ``grid`` the product of all ``varies``. A variant whose
    version equals the campaign's is not listed again (its rows are the campaign's); two
    variants with the same version are listed once.

    Raises:
        ConfigError: as :func:`parse_vary` and :func:`apply_changes`, or the same path given
            twice."""
    paths = [v.path for v in varies]
    if len(set(paths)) != len(paths):
        raise ConfigError("--vary", "", "each path once", paths, True)
    base_version = pipeline_version(base)
    out = [Variant("campaign", {}, base, base_version)]
    seen = {base_version}
    if grid:
        combos = [dict(zip(paths, vals, strict=True))
                  for vals in itertools.product(*(v.values for v in varies))]
    else:
        combos = [{v.path: x} for v in varies for x in v.values]
    for changes in combos:
        p = apply_changes(base, changes)
        version = pipeline_version(p)
        if version in seen:
            continue
        seen.add(version)
        base_dump = base.model_dump(mode="json")
        real = {k: v for k, v in changes.items() if _get(base_dump, k) != _get(
            p.model_dump(mode="json"), k)}
        stage = min((rerun_from(k) for k in real or changes), key=STAGES.index)
        out.append(Variant(variant_id(changes), changes, p, version, stage,
                           regrade_oracle=any(k.startswith("scorer.") for k in real)))
    return out


def _get(data: dict, path: str) -> object:
    for key in path.split("."):
        data = data.get(key) if isinstance(data, dict) else None
    return data
