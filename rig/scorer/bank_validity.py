"""The judge's bank-wide verdict, kept from the last ``rig scorer validate`` (issue 33, item 4).

A campaign's own ``judge_validity`` is computed on its answers only: the demo's 5 answers
give figures (Spearman 0.90, decision agreement 0.80) but no verdict, while the whole bank
can be ``low``. Every output states the bank-wide verdict beside the campaign's figure, from:

1. this machine's cache, ``$RIG_CACHE_DIR/validity/<bank>-v<version>-<pipeline>-<mode>.json``
   (default ``~/.cache/rig/validity``), written by every ``rig scorer validate`` of the whole
   bank (:func:`record`);
2. else ``rig/data/judge_validity.json``, the shipped bank's verdict measured here for the
   shipped pipeline's version (:data:`SHIPPED`), with its pipeline version and date;
3. else "never run", with the command that measures it.

A verdict is looked up by the bank's name and version, the pipeline version (the hash of the
resolved pipeline, scorer settings included) and the scoring mode: a different judge or
prompt never borrows another's verdict. Thresholds and verdict: :mod:`rig.stats.validity`.
"""

from __future__ import annotations

import datetime
import json
import os
from importlib import resources
from pathlib import Path

from rig.campaign.schema_validity import BankJudgeValidity

#: The shipped verdicts (a list of :func:`record` entries).
SHIPPED = "judge_validity.json"


def cache_dir() -> Path:
    """``$RIG_CACHE_DIR/validity`` or ``~/.cache/rig/validity``."""
    root = os.environ.get("RIG_CACHE_DIR") or str(Path.home() / ".cache" / "rig")
    return Path(root) / "validity"


def _key(bank: str, bank_version: int, pipeline_version: str, mode: str | None) -> str:
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in bank)
    return f"{safe}-v{bank_version}-{pipeline_version}-{mode or 'none'}"


def verdict_reason(v: dict) -> str:
    """The reason of a verdict in words, from a validity dict (``judge_validity``'s fields
    with ``thresholds``): which threshold was missed (``low``), met (``adequate``) or why
    there is none."""
    t = v.get("thresholds") or {}
    rs, da = t.get("min_spearman"), t.get("min_decision_agreement")
    s, d = v.get("spearman"), v.get("decision_agreement")
    if v.get("verdict") == "not_measured":
        return (v.get("not_computable") or {}).get("verdict") or "figures not computable"
    missed = [f"{name} {x:.3f} below {lim:g}" for name, x, lim in
              (("Spearman", s, rs), ("decision agreement", d, da))
              if x is not None and lim is not None and x < lim]
    if missed:
        return "; ".join(missed)
    return f"Spearman {s:.3f} >= {rs:g} and decision agreement {d:.3f} >= {da:g}"


def entry(result: dict, bank_version: int, mode: str, pipeline_version: str) -> dict:
    """The cached record of one mode of a ``rig scorer validate`` result
    (:func:`rig.scorer.validate.summarise` plus ``pipeline_versions``)."""
    v = result["modes"][mode]["validity"]
    return {"bank": result["bank"], "bank_version": bank_version,
            "pipeline_version": pipeline_version, "scoring_mode": mode,
            "verdict": v["verdict"], "reason": verdict_reason(v),
            "n_answers": v["n_answers"], "spearman": v.get("spearman"),
            "decision_agreement": v.get("decision_agreement"),
            "measured_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")}


def record(result: dict, bank_version: int) -> list[Path]:
    """Write each mode of ``result`` (a whole-bank ``rig scorer validate``) to the cache;
    returns the files written. A partial run (not every answer graded) is not recorded."""
    out = []
    for mode, pv in (result.get("pipeline_versions") or {}).items():
        e = entry(result, bank_version, mode, pv)
        path = cache_dir() / (_key(e["bank"], bank_version, pv, mode) + ".json")
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(e, indent=2))
        os.replace(tmp, path)
        out.append(path)
    return out


def _shipped() -> list[dict]:
    try:
        text = resources.files("rig").joinpath(f"data/{SHIPPED}").read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    from rig.jsonfile import loads_json

    return loads_json(f"rig/data/{SHIPPED}", text)  # strict: a key named twice is an error


def lookup(bank: str, bank_version: int, pipeline_version: str, mode: str | None
           ) -> BankJudgeValidity:
    """The bank-wide verdict for a campaign (module docstring: cache, shipped, never run)."""
    key = _key(bank, bank_version, pipeline_version, mode)
    path = cache_dir() / (key + ".json")
    found, source = None, "none"
    if path.is_file():
        from rig.errors import ConfigError
        from rig.jsonfile import read_json

        try:
            found, source = read_json(path), "cache"
        except ConfigError:  # a torn or hand-edited cache entry: as if never cached
            found = None
    if found is None:
        for e in _shipped():
            if _key(e["bank"], e["bank_version"], e["pipeline_version"],
                    e.get("scoring_mode")) == key:
                found, source = e, "shipped"
                break
    if found is None:
        return BankJudgeValidity(
            found=False, bank=bank, bank_version=bank_version,
            pipeline_version=pipeline_version, scoring_mode=mode, source="none", verdict=None,
            reason=(f"never validated on the whole bank under pipeline version "
                    f"{pipeline_version}: run `rig scorer validate --answers BANK --pipeline "
                    "PIPELINE` (every script graded once)"))
    return BankJudgeValidity(
        found=True, bank=bank, bank_version=bank_version, pipeline_version=pipeline_version,
        scoring_mode=mode, source=source, verdict=found["verdict"], reason=found["reason"],
        n_answers=found.get("n_answers"), spearman=found.get("spearman"),
        decision_agreement=found.get("decision_agreement"),
        measured_at=found.get("measured_at"))


def bank_sentence(b: BankJudgeValidity) -> str:
    """The bank-wide verdict in one sentence, for the console and the report."""
    if not b.found:
        return f"On the whole bank {b.bank!r}: {b.reason}."
    where = ("this machine's last `rig scorer validate`" if b.source == "cache"
             else "the verdict shipped with rig")
    when = f", {b.measured_at[:10]}" if b.measured_at else ""
    return (f"On the whole bank {b.bank!r} ({b.n_answers} answers; {where}, pipeline "
            f"version {b.pipeline_version}{when}): {b.verdict}, {b.reason}.")
