"""The sample of calls ``rig ratings collect`` shows raters, and who rates what next.

**Drawing** (:func:`draw_sample`). Calls are grouped into strata (a campaign's profiles; a
replay's questions, a replay having no profiles). From each stratum ``per_stratum`` calls are
drawn at random without replacement (all of them when it has fewer), spread over the
stratum's questions: the stratum's calls are put in a random order, then ordered by their
rank within their question, so a question gives its second call only after every question
of the stratum gave one. This is equal allocation, which is what per-profile agreement
needs (each profile's figures rest on the same number of ratings), not proportional
allocation. The drawn items are then shown in one random order across strata, so that the
order does not tell a rater the profile. ``round(double_share * n_items)`` of the items,
chosen at random, are to be rated by two raters (inter-rater agreement, the ceiling of
judge-human agreement); the others by one. Everything random comes from
``numpy.random.default_rng(seed)``, so the same folder, arguments and seed draw the same
sample.

**Queueing** (:func:`next_item`). A rater's next item is the first item, in the sample's
order, that this rater has not rated and that has fewer ratings from other raters than it
needs (2 for a double item, 1 otherwise). The state is ``ratings.jsonl`` itself, so a rater
who comes back resumes where they stopped, and several raters share the work.

The sample is stored in the folder as ``ratings_sample.json`` (:class:`RatingSample`) when it
is first drawn and read back afterwards, so that a restart shows the same calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rig.errors import ConfigError
from rig.jsonfile import read_json
from rig.paths import write_text_atomic

SAMPLE_FILE = "ratings_sample.json"
SAMPLE_VERSION = 1


class SampleItem(BaseModel):
    """One call to rate: its id (a campaign's call_id or a replay's turn_key), its stratum
    (kept for the figures, never shown to a rater) and whether two raters rate it."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    unit_id: str
    stratum: str
    double: bool = False


class RatingSample(BaseModel):
    """``ratings_sample.json``: the arguments of the draw and the items in showing order."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    version: int = SAMPLE_VERSION
    seed: int
    per_stratum: int = Field(ge=1)
    double_share: float = Field(ge=0, le=1)
    stratified_by: str
    items: list[SampleItem]

    def needed(self, item: SampleItem) -> int:
        """Ratings the item needs: 2 when double, else 1."""
        return 2 if item.double else 1


def draw_sample(calls: Iterable[tuple[str, str, str]], *, per_stratum: int,
                double_share: float, seed: int, stratified_by: str) -> RatingSample:
    """Draw the sample (see the module) from ``calls``: ``(unit_id, stratum, question_id)``
    triples, each unit once.

    Raises:
        ValueError: ``per_stratum`` < 1, ``double_share`` outside [0, 1], no calls, or a
            unit id given twice.
    """
    calls = sorted(calls)
    if per_stratum < 1:
        raise ValueError(f"per_stratum must be at least 1 (got {per_stratum})")
    if not 0 <= double_share <= 1:
        raise ValueError(f"double_share must be within 0-1 (got {double_share})")
    if not calls:
        raise ValueError("no calls to sample from")
    ids = [c[0] for c in calls]
    if len(set(ids)) != len(ids):
        raise ValueError("a unit id is given twice")
    rng = np.random.default_rng(seed)
    chosen: list[tuple[str, str]] = []
    for stratum in sorted({c[1] for c in calls}):
        members = [c for c in calls if c[1] == stratum]
        order = rng.permutation(len(members))
        rank: dict[str, int] = {}
        ranked = []
        for pos, i in enumerate(order):
            uid, _, qid = members[i]
            rank[qid] = rank.get(qid, -1) + 1
            ranked.append((rank[qid], pos, uid))
        chosen += [(uid, stratum) for _, _, uid in sorted(ranked)[:per_stratum]]
    shown = [chosen[i] for i in rng.permutation(len(chosen))]
    n_double = round(double_share * len(shown))
    double = set(rng.choice(len(shown), size=n_double, replace=False).tolist())
    return RatingSample(seed=seed, per_stratum=per_stratum, double_share=double_share,
                        stratified_by=stratified_by,
                        items=[SampleItem(unit_id=u, stratum=s, double=i in double)
                               for i, (u, s) in enumerate(shown)])


def next_item(sample: RatingSample, rated: dict[str, set[str]], rater: str) -> int | None:
    """Index in ``sample.items`` of ``rater``'s next item, or None when nothing is left for
    them. ``rated`` maps a unit id to the raters who rated it (any rating, ``could not hear``
    included)."""
    for i, item in enumerate(sample.items):
        who = rated.get(item.unit_id, set())
        if rater not in who and len(who) < sample.needed(item):
            return i
    return None


def progress(sample: RatingSample, rated: dict[str, set[str]], rater: str) -> dict:
    """``{n_items, n_ratings_needed, n_ratings_done, n_rated_by_rater, n_left_for_rater}``:
    ratings counted up to what each item needs."""
    need = sum(sample.needed(it) for it in sample.items)
    done = sum(min(len(rated.get(it.unit_id, ())), sample.needed(it)) for it in sample.items)
    mine = sum(rater in rated.get(it.unit_id, ()) for it in sample.items)
    left = sum(rater not in (w := rated.get(it.unit_id, set())) and len(w) < sample.needed(it)
               for it in sample.items)
    return {"n_items": len(sample.items), "n_ratings_needed": need, "n_ratings_done": done,
            "n_rated_by_rater": mine, "n_left_for_rater": left}


def load_or_draw(folder: Path, calls: list[tuple[str, str, str]], *, per_stratum: int,
                 double_share: float, seed: int, stratified_by: str) -> RatingSample:
    """``folder/ratings_sample.json`` when it exists (drawn with the same arguments), else a
    new draw written there atomically.

    Raises:
        ConfigError: the stored sample is not a :class:`RatingSample`, was drawn with other
            arguments (names the field and both values), or names a call the folder lacks.
        ValueError: from :func:`draw_sample`.
    """
    path = folder / SAMPLE_FILE
    if not path.is_file():
        s = draw_sample(calls, per_stratum=per_stratum, double_share=double_share, seed=seed,
                        stratified_by=stratified_by)
        write_text_atomic(path, s.model_dump_json(indent=1) + "\n")
        return s
    try:
        s = RatingSample.model_validate(read_json(path))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise ConfigError(path, "sample", f"not a ratings sample ({exc})") from None
    for field, want in (("per_stratum", per_stratum), ("double_share", double_share),
                        ("seed", seed)):
        if getattr(s, field) != want:
            raise ConfigError(path, field, f"the stored sample was drawn with {field} "
                              f"{getattr(s, field)}, not {want}: keep the stored value, or "
                              "move the file away to draw a new sample", want, True)
    known = {c[0] for c in calls}
    missing = [it.unit_id for it in s.items if it.unit_id not in known]
    if missing:
        raise ConfigError(path, "items", "names calls the folder does not hold (or holds "
                          "without their audio)", missing[0], True)
    return s
