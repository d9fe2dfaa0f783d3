"""A replay folder's outputs: ``calls.parquet`` (one row per turn and version),
``pairs.parquet`` (one row per turn, A beside B), ``summary.json`` and ``report.html``.

``summary.json`` (``kind: replay``):

* ``versions``: A and B, each with ``pipeline_version`` and ``result_source`` (``replayed``,
  or ``logged`` under ``--logged-a``: A's stored transcript, score and decision);
* ``overall``: :func:`rig.replay.stats.group_stats` over every paired turn (``mean_delta``
  B - A in points with ``ci95`` clustered by interview, ``p``, ``flip_rate`` with
  ``flip_ci95``, ``truncation_rate_a``/``_b``, ...);
* ``segments``: the same per measured segment, with ``p_holm`` (Holm across all segments);
* ``impact``: per segment, A's and B's scoring and selection rates and impact ratios;
* ``flip_floor``: the no-change flip rate (measured, or why not);
* ``negative_control``: A and B are the same pipeline version (every delta must be 0);
* ``left_out``: each recording or turn not replayed, and why; ``method``: how each figure
  is computed;
* ``human_ratings`` (only with a ``ratings.jsonl`` in the folder that rates its turns): each
  version's agreement with people, overall and per segment (:mod:`rig.replay.people`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from rig.campaign.store import write_parquet
from rig.paths import write_text_atomic
from rig.replay.rows import row_types
from rig.replay.stats import N_BOOT, group_stats, impact_by_version, pair_rows, segment_stats
from rig.stats.common import jsonable

METHOD = {
    "delta": "score_B - score_A per turn (points, 0-100), turns with both versions scored",
    "ci95": f"cluster bootstrap by interview (call_id), {N_BOOT} resamples, seed 0, "
            "percentile",
    "p": "cluster sign-flip randomization test (exact up to 12 interviews)",
    "multiple_testing": "Holm across every segment of every dimension",
    "truncated": "the version's VAD finds speech after its own turn close within the answer",
    "flip": "advance/reject differ between A and B (cutoff of the bank question)",
}


def flip_floor(replay: dict) -> dict:
    """The no-change flip rate: A against A again (see :mod:`rig.replay.stats`)."""
    a = replay["versions"]["A"]
    if a["logged"]:
        return {"measured": False, "rate": None, "reason": "version A is the logged results: "
                "their repeat noise is not known here"}
    s = a["pipeline"]["scorer"]
    if s["backend"] == "llamacpp" and s["temperature"] == 0:
        return {"measured": False, "rate": None, "reason": "not measured: version A is "
                "deterministic (greedy ASR, llama.cpp at temperature 0, the VAD): a re-run of "
                "A gives the same decisions, so every flip is B's"}
    return {"measured": False, "rate": None, "reason": "version A's scorer samples "
            f"({s['backend']}, temperature {s['temperature']:g}): some flips may be A's own "
            "noise; replay A against itself (--pipeline-b = A) to measure it"}


def summarize(rows: list[dict], replay: dict, left_out: list[str], *, alpha: float = 0.05,
              n_boot: int = N_BOOT, ratings: list | None = None
              ) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    """The summary, the rows frame and the pairs frame of a replay; ``ratings``
    (:class:`rig.ratings.model.Rating`) add ``human_ratings`` when they rate a turn."""
    df = pd.DataFrame(rows, columns=list(row_types()))
    pairs = pair_rows(df)
    va, vb = replay["versions"]["A"], replay["versions"]["B"]
    summary = {
        "kind": "replay", "replay_id": replay["replay_id"],
        "versions": {k: {"pipeline_version": v["pipeline_version"],
                         "name": v["pipeline"]["name"],
                         "result_source": "logged" if v["logged"] else "replayed",
                         "silence_timeout_ms": v["pipeline"]["endpointing"][
                             "silence_timeout_ms"]}
                     for k, v in replay["versions"].items()},
        "negative_control": (not va["logged"]
                             and va["pipeline_version"] == vb["pipeline_version"]),
        "n_rows": len(df), "n_rows_failed": int((df["status"] != "ok").sum()) if len(df) else 0,
        "n_recordings": int(df["call_id"].nunique()) if len(df) else 0,
        "overall": group_stats(pairs, n_boot) if len(pairs) else None,
        "segments": segment_stats(pairs, alpha, n_boot) if len(pairs) else {},
        "impact": impact_by_version(df) if len(df) else {},
        "flip_floor": flip_floor(replay),
        "alpha": alpha, "left_out": left_out, "method": METHOD,
        "profile_id": (replay.get("profile") or {}).get("profile_id"),
        "codec_reapplied": replay.get("codec_reapplied", False),
    }
    if ratings and len(pairs):
        from rig.replay.people import replay_human_ratings

        people = replay_human_ratings(pairs, ratings, n_boot=n_boot)
        if people is not None:
            summary["human_ratings"] = people
    return jsonable(summary), df, pairs


def write_outputs(out: Path, rows: list[dict], left_out: list[str], *, audio: bool = True,
                  alpha: float = 0.05) -> dict:
    """Write ``calls.parquet``, ``pairs.parquet``, ``summary.json`` and ``report.html`` from
    the rows (and ``out/ratings.jsonl``, when there); returns the summary.

    Raises:
        ConfigError: ``out/replay.json`` is missing or damaged (rerun the replay), or
            ``out/ratings.jsonl`` holds a line that is not a rating."""
    from rig.errors import ConfigError
    from rig.jsonfile import read_json
    from rig.ratings.model import read_ratings
    from rig.replay.report import write_report

    if not (out / "replay.json").is_file():
        raise ConfigError(out / "replay.json", "", "missing: rerun the same rig replay "
                          "command (the rows logged are kept)")
    replay = read_json(out / "replay.json")
    summary, df, pairs = summarize(rows, replay, left_out, alpha=alpha,
                                   ratings=read_ratings(out))
    write_parquet(df.to_dict("records"), out / "calls.parquet", row_types())
    write_parquet(jsonable(pairs.to_dict("records")), out / "pairs.parquet")
    write_text_atomic(out / "summary.json", json.dumps(summary, indent=2, default=str))
    write_report(out, summary, pairs, audio=audio)
    return summary
