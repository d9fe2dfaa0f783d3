"""The read-speech mode of a campaign: a bank of prompts read aloud (``bank.yaml`` ``mode:
read_speech``, :class:`rig.answers.ReadSpeechQuestion`), each speaker a profile with a
recorded voice (``rig voices import`` writes all three).

The mode is inferred from the bank: no oracle grading runs, no call is scored
(``parse_status`` ``not_scored``, ``score`` and the score-based fields null; the scorer's model
is never loaded), and ``summary.json`` gains ``mode: read_speech`` and ``read_speech``: per
speaker and per speaker group (``accent_description`` of the speaker folder's
``speaker.json``), the mean WER, truncation rate and mean content similarity, with a seeded
percentile bootstrap 95% CI of each mean (:func:`rig.stats.intervals.bootstrap_mean_interval`)
and a Wilson 95% CI of the truncation rate (:func:`rig.stats.intervals.wilson_interval`).
``campaign.json`` records ``mode`` and ``speaker_groups`` (profile id -> speaker), so
``rig campaign summarize`` rebuilds the same summary from the call log.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from rig.campaign.schema import (
    ReadSpeechFigures,
    ReadSpeechGroup,
    ReadSpeechSpeaker,
    ReadSpeechSummary,
)
from rig.scorer.base import ScoreResult

#: The group of a speaker whose speaker.json gives no accent description.
UNLABELLED = "unlabelled"
NOTE = ("No scorer ran (read-speech bank). A group is the accent_description of the speakers' "
        "speaker.json, as the corpus or the speaker gave it, never inferred from the voice. "
        "Intervals treat calls as independent; a group's pools its speakers' calls and is too "
        "narrow when the group has few speakers.")


def not_scored(seed: int) -> ScoreResult:
    """The oracle result a read-speech call carries: no grade (``not_scored``)."""
    return ScoreResult(None, "not_scored", "", None, None, 0.0, 0.0, seed)  # type: ignore[arg-type]


def speaker_groups(profiles: object) -> dict[str, dict]:
    """Profile id -> ``{"speaker_id", "group", "corpus", "corpus_speaker_id"}`` for each
    profile of ``profiles`` (a :class:`rig.profiles.ProfileSet`) with a recorded voice whose
    folder holds a speaker.json; other profiles are their own speaker, group ``unlabelled``.

    Raises:
        RigError: a speaker.json is malformed (file, field and value named)."""
    from rig.voices.speaker import SPEAKER_FILE, read_speaker

    out: dict[str, dict] = {}
    for p in profiles.profiles:  # type: ignore[attr-defined]
        entry = {"speaker_id": p.profile_id, "group": UNLABELLED, "corpus": None,
                 "corpus_speaker_id": None}
        if p.voice.engine == "recorded":
            folder = Path(profiles.resolve_path(p, p.voice.voice_id))  # type: ignore[attr-defined]
            if (folder / SPEAKER_FILE).is_file():
                info = read_speaker(folder)
                entry = {"speaker_id": info.speaker_id,
                         "group": info.accent_description.strip() or UNLABELLED,
                         "corpus": info.corpus, "corpus_speaker_id": info.corpus_speaker_id}
        out[p.profile_id] = entry
    return out


def _pooled(ok: pd.DataFrame) -> float | None:
    """All WER errors over all prompt words of the completed calls that have both counts
    (:func:`rig.asr.wer.pooled_wer`); None when none has them (rows before 1.8)."""
    from rig.asr.wer import pooled_wer

    if "wer_errors" not in ok or "wer_reference_words" not in ok:
        return None
    errs = pd.to_numeric(ok["wer_errors"], errors="coerce")
    refs = pd.to_numeric(ok["wer_reference_words"], errors="coerce")
    have = errs.notna() & refs.notna() & (refs > 0)
    return pooled_wer(int(errs[have].sum()), int(refs[have].sum())) if have.any() else None


def _figures(g: pd.DataFrame, n_boot: int, seed: int) -> dict:
    from rig.stats.common import NotComputable
    from rig.stats.intervals import bootstrap_mean_interval, wilson_interval

    ok = g[g["status"] == "ok"]
    why: dict[str, str] = {}
    out: dict = {"n_calls": len(g), "n_failed_calls": int((g["status"] != "ok").sum())}
    for col, name in (("wer", "wer"), ("content_similarity", "content_similarity")):
        vals = pd.to_numeric(ok.get(col, pd.Series(dtype=float)), errors="coerce").dropna()
        out[f"{name}_mean"] = float(vals.mean()) if len(vals) else None
        try:
            out[f"{name}_ci95"] = bootstrap_mean_interval(vals.to_numpy(), n_boot, seed)
        except NotComputable as exc:
            out[f"{name}_ci95"] = None
            why[f"{name}_ci95"] = str(exc).replace("pairs", "calls")
        if out[f"{name}_mean"] is None:
            why[f"{name}_mean"] = "no completed call has it"
    out["wer_pooled"] = _pooled(ok)
    trunc = ok["truncated"].dropna().astype(bool) if "truncated" in ok else pd.Series(
        dtype=bool)
    out["n_truncated"] = int(trunc.sum())
    out["truncation_rate"] = float(trunc.mean()) if len(trunc) else None
    try:
        out["truncation_ci95"] = wilson_interval(int(trunc.sum()), len(trunc))
    except NotComputable as exc:
        out["truncation_ci95"] = None
        why["truncation_ci95"] = str(exc)
    if out["truncation_rate"] is None:
        why["truncation_rate"] = "no completed call"
    out["not_computable"] = why
    return out


def read_speech_summary(rows: pd.DataFrame, groups: Mapping[str, Mapping], *,
                        n_boot: int = 2000, seed: int = 0) -> ReadSpeechSummary:
    """``summary.json``'s ``read_speech`` block from the call rows (``profile_id``,
    ``status``, ``wer``, ``truncated``, ``content_similarity``) and ``groups``
    (:func:`speaker_groups`, as campaign.json records it). A profile missing from
    ``groups`` is its own speaker, ``unlabelled``."""
    by_speaker: dict[str, ReadSpeechSpeaker] = {}
    members: dict[str, list[str]] = {}
    pids: list[str] = list(dict.fromkeys([*groups, *rows["profile_id"].unique()]))
    for pid in pids:
        g = rows[rows["profile_id"] == pid]
        if g.empty:
            continue
        info = groups.get(pid) or {"speaker_id": pid, "group": UNLABELLED}
        by_speaker[info["speaker_id"]] = ReadSpeechSpeaker(
            profile_id=pid, group=info["group"], corpus=info.get("corpus"),
            corpus_speaker_id=info.get("corpus_speaker_id"), **_figures(g, n_boot, seed))
        members.setdefault(info["group"], []).append(pid)
    speaker_of = {pid: (groups.get(pid) or {}).get("speaker_id", pid) for pid in pids}
    by_group = {label: ReadSpeechGroup(speakers=[speaker_of[p] for p in ps], **_figures(
        rows[rows["profile_id"].isin(ps)], n_boot, seed))
        for label, ps in sorted(members.items())}
    return ReadSpeechSummary(by_speaker=by_speaker, by_group=by_group, note=NOTE)


__all__ = ["NOTE", "UNLABELLED", "ReadSpeechFigures", "not_scored", "read_speech_summary",
           "speaker_groups"]
