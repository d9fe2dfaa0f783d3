"""The shipped voice validation (``rig/data/voices.json``, written by
``benchmarks/voices_table.py`` from ``rig voices validate``): a voice's result by engine and
voice id, and the per-profile fields of ``summary.json`` that come from it."""

from __future__ import annotations

import json
from importlib import resources

from rig.voices.validate import voice_key


def shipped_result(engine: str, voice_id: str, options: dict | None = None) -> dict | None:
    """The shipped validation (``rig/data/voices.json``) of a voice, without its per-answer
    rows, or None when the voice was not validated (or no file ships)."""
    try:
        text = resources.files("rig").joinpath("data/voices.json").read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return None
    doc = json.loads(text)
    key = voice_key(engine, voice_id, options)
    base = next((v for v in doc["voices"] if v["key"] == doc["baseline_voice"]), None)
    for v in doc["voices"]:
        if v["key"] == key and v["available"]:
            out = {k: x for k, x in v.items() if k != "answers"}
            out["baseline_wer_mean"] = base["wer_mean"] if base else None
            return out
    return None


def voice_fields(rows) -> dict:
    """A profile's ``synthesiser_limited``, ``voice_clean_wer`` and
    ``baseline_voice_clean_wer`` for ``summary.json``, from its call rows' ``voice_engine`` and
    ``voice_id`` (the first non-null of each) looked up in the shipped validation; all None
    when the rows do not say, the voice is recorded, or it was not validated."""
    none = dict.fromkeys(("synthesiser_limited", "voice_clean_wer", "baseline_voice_clean_wer"))
    if "voice_engine" not in rows or "voice_id" not in rows:
        return none
    engines, ids = rows["voice_engine"].dropna(), rows["voice_id"].dropna()
    if not len(engines) or not len(ids):
        return none
    v = shipped_result(str(engines.iloc[0]), str(ids.iloc[0]))
    if v is None:
        return none
    return {"synthesiser_limited": bool(v["synthesiser_limited"]),
            "voice_clean_wer": v["wer_mean"], "baseline_voice_clean_wer": v["baseline_wer_mean"]}
