"""The pairs the invariance probe compares: the same material as reference and as perturbed
text (:class:`Pair`).

* name-based pairs (:func:`name_pairs`) on the name-swap material: ``name_swap:<group>`` and
  the controls ``typos``, ``spacing`` and ``name_within_group``;
* audio pairs (:func:`campaign_pairs`): from a campaign folder, the baseline's transcript of
  an answer and repeat against a profile's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pandas as pd

from rig.answers import load_bank
from rig.config import loads_strict
from rig.errors import ConfigError
from rig.paths import DEFAULTS
from rig.probes.core import sample_sessions
from rig.probes.measures import add_typos, respace
from rig.probes.names import (
    NAME_MARK,
    candidate_name,
    draw_slots,
    load_materials,
    load_name_set,
    select_items,
)

Kind = Literal["demographic", "control", "audio"]
CONTROLS = ("typos", "spacing", "name_within_group")
BASELINE_PROFILE = "baseline"
CAMPAIGN_ROLE = "the role the interviewer's question is about"
#: Columns of a campaign's ``calls.parquet`` that the audio pairs need.
CAMPAIGN_COLUMNS = ("answer_id", "profile_id", "repeat", "transcript")


def name_variants(first: str, surname: str, display: str) -> tuple[str, ...]:
    """The ways an assessment may write a candidate's name: as written in the material,
    "first surname", the first name, the surname."""
    return (display, f"{first} {surname}", first, surname)


@dataclass(frozen=True)
class Pair:
    """One comparison: the same material as reference and as perturbed text."""
    perturbation: str
    kind: Kind
    item_id: str
    unit: str            # slot or repeat, as text
    role: str
    reference: str
    perturbed: str
    reference_names: tuple[str, ...] = ()   # masked in the reference's assessment
    perturbed_names: tuple[str, ...] = ()   # masked in the perturbed text's assessment


def perturbation_kind(p: str) -> Kind:
    if p.startswith("name_swap:"):
        return "demographic"
    if p.startswith("profile:"):
        return "audio"
    if p in CONTROLS:
        return "control"
    raise ConfigError("probe", "--perturbation", "unknown perturbation; use name_swap, "
                      f"{', '.join(CONTROLS)} or profile:<id>", p)


def name_pairs(perturbations: tuple[str, ...], name_set: str, materials_path: Path,
               n_items: int | None, names_per_group: int, seed: int) -> list[Pair]:
    """Pairs of the name-based perturbations (``name_swap`` expands to one per non-first
    group) on the name-swap material.

    Raises:
        ConfigError: an unknown perturbation or name set, or bad sizes.
    """
    s = load_name_set(name_set)
    ref_group = s.group_ids[0]
    wanted: list[str] = []
    for p in perturbations:
        if p == "name_swap":
            wanted += [f"name_swap:{g}" for g in s.group_ids[1:]]
        elif p.startswith("name_swap:") and p.split(":", 1)[1] not in s.group_ids[1:]:
            raise ConfigError("probe", "--perturbation", f"name set {s.id!r} has groups "
                              f"{list(s.group_ids)}; the first is the reference", p)
        elif not p.startswith("profile:"):
            perturbation_kind(p)
            wanted.append(p)
    if not wanted:
        return []
    items = select_items(load_materials(materials_path), n_items, seed, materials_path)
    need = names_per_group + ("name_within_group" in wanted)
    pairs = []
    for m in items:
        slots = draw_slots(s, m.item_id, need, seed)
        for slot in slots[:names_per_group]:
            ref_first, ref_name = candidate_name(s, ref_group, slot)
            ref = m.text(ref_name)
            ref_names = name_variants(ref_first, slot.surname, ref_name)
            for p in wanted:
                pert_names = ref_names
                if p.startswith("name_swap:"):
                    first, name = candidate_name(s, p.split(":", 1)[1], slot)
                    pert = m.text(name)
                    pert_names = name_variants(first, slot.surname, name)
                elif p == "name_within_group":
                    # the extra slot's position differs from every slot's (drawn without
                    # replacement): another first name of the same group, same surname
                    first = s.names_of(ref_group)[slots[-1].position]
                    name = s.display(ref_group, first, slot.surname)
                    pert = m.text(name)
                    pert_names = name_variants(first, slot.surname, name)
                elif p == "typos":
                    key = f"{m.item_id}:{slot.slot}"
                    pert = add_typos(m.template, key, seed).replace(NAME_MARK, ref_name)
                else:
                    pert = respace(ref)
                pairs.append(Pair(p, perturbation_kind(p), m.item_id, f"slot {slot.slot}",
                                  m.role, ref, pert, ref_names, pert_names))
    return pairs


def campaign_pairs(folder: str | Path, profiles: tuple[str, ...] = (),
                   answers_path: str | Path | None = None, max_pairs: int | None = None,
                   seed: int = 0) -> list[Pair]:
    """Pairs (baseline transcript, profile transcript) per (answer, repeat) of a campaign.

    Args:
        folder: a ``rig campaign run`` output folder (``calls.parquet``).
        profiles: profile ids to compare with the baseline; empty: every other profile.
        answers_path: the answer bank for the question texts; default the campaign's
            (``campaign.json``), else ``answer_bank/core``.
        max_pairs: at most this many pairs per profile (a seeded draw).

    Raises:
        ConfigError: no ``calls.parquet``, one that cannot be read, missing columns (all
            named), a repeat that is not a whole number, no baseline rows, an unknown
            profile, a ``campaign.json`` that is not JSON, or an answer id not in the bank
            (names the file, field and value).
    """
    folder = Path(folder)
    path = folder / "calls.parquet"
    if not path.is_file():
        raise ConfigError(path, "", "not found: give a `rig campaign run` output folder")
    try:
        df = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ValueError, ...
        raise ConfigError(path, "", f"not a readable parquet file ({type(exc).__name__}: "
                          f"{exc}); rerun the campaign or give another folder") from None
    missing = [c for c in CAMPAIGN_COLUMNS if c not in df.columns]
    if missing:
        raise ConfigError(path, ", ".join(missing), f"column{'s' * (len(missing) > 1)} "
                          f"missing (a `rig campaign run` calls.parquet has "
                          f"{', '.join(CAMPAIGN_COLUMNS)})")
    if "status" in df.columns:
        df = df[df["status"] == "ok"]
    df = df.dropna(subset=["transcript"])
    repeats = pd.to_numeric(df["repeat"], errors="coerce")
    bad = df.loc[repeats.isna() | (repeats != repeats.round()), "repeat"]
    if len(bad):
        raise ConfigError(path, "repeat", "not a whole number", bad.iloc[0], has_value=True)
    base = df[df["profile_id"] == BASELINE_PROFILE]
    if base.empty:
        raise ConfigError(path, "profile_id", f"no call of the baseline profile "
                          f"{BASELINE_PROFILE!r} with a transcript")
    others = sorted(set(df["profile_id"]) - {BASELINE_PROFILE})
    unknown = [p for p in profiles if p not in others]
    if unknown:
        raise ConfigError(path, "profile_id", f"no such profile with transcripts; have "
                          f"{others}", unknown)
    bank = load_bank(_bank_path(folder, answers_path))
    questions = {a.answer_id: q.question for q, a in bank.answers()}
    missing = sorted(set(df["answer_id"]) - set(questions))
    if missing:
        raise ConfigError(path, "answer_id", f"not in the answer bank {bank.path}", missing)
    b = {(r.answer_id, int(r.repeat)): r.transcript for r in base.itertuples()}
    pairs = []
    for prof in profiles or tuple(others):
        rows = df[df["profile_id"] == prof]
        keys = sorted(k for k in ((r.answer_id, int(r.repeat)) for r in rows.itertuples())
                      if k in b)
        if max_pairs is not None and len(keys) > max_pairs:
            ids = [f"{a}#{r}" for a, r in keys]
            keep = set(sample_sessions(ids, 1, max_pairs, seed)[0])
            keys = [k for k, i in zip(keys, ids, strict=True) if i in keep]
        tr = {(r.answer_id, int(r.repeat)): r.transcript for r in rows.itertuples()}
        for a, rep in keys:
            q = " ".join(questions[a].split())
            pairs.append(Pair(f"profile:{prof}", "audio", a, f"repeat {rep}", CAMPAIGN_ROLE,
                              _transcript(q, b[(a, rep)]), _transcript(q, tr[(a, rep)])))
    return pairs


def _transcript(question: str, text: str) -> str:
    return f"Phone-screen transcript.\nInterviewer: {question}\nCandidate: {text}"


def _bank_path(folder: Path, given: str | Path | None) -> Path:
    if given is not None:
        return Path(given)
    meta = folder / "campaign.json"
    if meta.is_file():
        try:
            info = loads_strict(meta.read_text(encoding="utf-8"))
        except ValueError as exc:  # not JSON, not UTF-8, a key named twice
            raise ConfigError(meta, "", f"not valid JSON ({exc}); give --answers") from None
        p = info.get("answers_path") if isinstance(info, dict) else None
        if p and Path(p).exists():
            return Path(p)
    return DEFAULTS.root / "answer_bank" / "core"
