"""Stage attribution (``docs/measurement.md``, "Stage attribution"): per call, the grade of the
text spoken before the turn closed and the two losses it splits ``score - oracle_score`` into
(:func:`attribution_columns`); per profile, the paired delta split the same way, with intervals
(:func:`profile_attribution`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from rig.stats.common import NotComputable
from rig.stats.intervals import bootstrap_mean_interval, t_interval

if TYPE_CHECKING:
    from rig.campaign.front import FrontResult
    from rig.campaign.schema import ProfileAttribution
    from rig.scorer.base import Scorer


def attribution_columns(front: FrontResult, row: dict, scorer: Scorer) -> dict:
    """The stage-attribution columns of a call (``docs/measurement.md``, "Stage attribution"):
    ``score_turn_text``, ``turn_text_parse_status``, ``loss_turn_detection`` and
    ``loss_asr`` (points), given its front half and its row so far (``score``,
    ``oracle_parse_status``).

    ``score_turn_text`` is ``scorer``'s grade of ``front.turn_text`` (the script's words
    spoken before the turn closed, as text: no ASR) with the call's question and seed. When
    no word was lost that text is the clean script the oracle graded, so the oracle's grade and
    parse status are reused and nothing more is graded. A grading that fails to parse or times
    out leaves ``score_turn_text`` and both losses null, with its status; an exception is
    status ``error``. A call that failed before scoring, or a read-speech call (its question
    not ``graded``), is ``not_scored``. Never raises."""
    out: dict = {"score_turn_text": None, "turn_text_parse_status": "not_scored",
                 "loss_turn_detection": None, "loss_asr": None}
    if front.failed or front.transcript is None or not front.question.graded:
        return out
    if front.turn_text is None:
        stt, status = front.oracle_score, row.get("oracle_parse_status")
    else:
        try:
            res = scorer.score(front.question, front.turn_text, front.seed)
            stt, status = res.score, res.parse_status
        except Exception:  # the attribution failing never fails the call
            stt, status = None, "error"
    if status != "ok":
        stt = None
    out["score_turn_text"], out["turn_text_parse_status"] = stt, status
    if stt is not None and front.oracle_score is not None:
        out["loss_turn_detection"] = stt - front.oracle_score
    if stt is not None and row.get("score") is not None:
        out["loss_asr"] = row["score"] - stt
    return out


#: The terms a profile's mean paired delta splits into, in the report's order.
TERMS: tuple[str, ...] = ("turn_detection", "asr", "rest")
_LOSS = {"turn_detection": "loss_turn_detection", "asr": "loss_asr"}


def attributable(rows: pd.DataFrame) -> pd.DataFrame:
    """The calls a profile's attribution is computed from: completed (``status`` ``ok``),
    scored (``parse_status`` ``ok``) and with both losses recorded (so ``score``,
    ``oracle_score`` and ``score_turn_text`` all parsed). Empty when the rows predate the
    attribution columns."""
    need = {"status", "parse_status", "score", "loss_turn_detection", "loss_asr"}
    if not need <= set(rows.columns):
        return rows.iloc[0:0]
    keep = ((rows["status"] == "ok") & (rows["parse_status"] == "ok")
            & pd.to_numeric(rows["score"], errors="coerce").notna()
            & pd.to_numeric(rows["loss_turn_detection"], errors="coerce").notna()
            & pd.to_numeric(rows["loss_asr"], errors="coerce").notna())
    return rows[keep]


def paired_terms(rows: pd.DataFrame, baseline: str, profile: str) -> pd.DataFrame:
    """Per answer scored under both ``profile`` and ``baseline`` (attributable calls only,
    :func:`attributable`; repeats averaged per answer and profile first, as the paired delta
    averages them): ``delta`` (profile score - baseline score), ``turn_detection`` and
    ``asr`` (the profile's mean loss minus the baseline's) and ``rest`` (``delta -
    turn_detection - asr``: the two oracle grades' difference), in points, indexed by
    ``answer_id`` in sorted order (the order the paired delta's bootstrap resamples)."""
    ok = attributable(rows)
    cols = ["score", "loss_turn_detection", "loss_asr"]
    sub = ok[ok["profile_id"].isin([baseline, profile])] if len(ok) else ok
    if not {profile, baseline} <= set(sub.get("profile_id", ())):
        return pd.DataFrame(columns=["delta", *TERMS], dtype=float)
    per = (sub.assign(**{c: pd.to_numeric(sub[c]) for c in cols})
           .groupby(["profile_id", "answer_id"])[cols].mean())
    p, b = per.loc[profile], per.loc[baseline]
    both = p.join(b, how="inner", lsuffix="_p", rsuffix="_b").sort_index()
    out = pd.DataFrame(index=both.index)
    out["delta"] = both["score_p"] - both["score_b"]
    for term, col in _LOSS.items():
        out[term] = both[f"{col}_p"] - both[f"{col}_b"]
    out["rest"] = out["delta"] - out["turn_detection"] - out["asr"]
    return out


def profile_attribution(rows: pd.DataFrame, baseline: str, profile: str, *, n_boot: int,
                        seed: int, n_pairs_delta: int | None = None) -> dict:
    """``profile``'s mean paired delta split into turn detection, ASR and the rest
    (:func:`paired_terms`), each a mean over the pairs with the intervals the profile's delta
    has: the seeded percentile bootstrap (:func:`rig.stats.intervals.bootstrap_mean_interval`,
    same ``n_boot`` and ``seed``, so the same resamples for every term) and Student t
    (:func:`rig.stats.intervals.t_interval`). The terms sum to ``mean_delta`` (up to float
    rounding). ``n_pairs_delta``: the pairs of the profile's own ``mean_delta``; when more
    than are attributed a note says that this ``mean_delta`` is over fewer pairs.

    Returns the fields of :class:`rig.campaign.schema.ProfileAttribution` (a figure that
    cannot be computed is None with its reason in ``not_computable``). Never raises on
    degenerate data."""
    terms = paired_terms(rows, baseline, profile)
    n = len(terms)
    out: dict = {"n_pairs": n, "n_calls_left_out": _left_out(rows, profile, baseline)}
    why: dict[str, str] = {}
    notes: list[str] = []
    for name in ("mean_delta", *TERMS):
        x = terms["delta" if name == "mean_delta" else name].to_numpy(dtype=float)
        out[name] = float(np.mean(x)) if n else None
        if not n:
            why[name] = "no pairs with every grade of the attribution parsed"
        for key, fn in ((f"{name}_ci95", lambda v: bootstrap_mean_interval(
                v, n_boot=n_boot, seed=seed)), (f"{name}_t_ci95", t_interval)):
            try:
                out[key] = fn(x)
            except NotComputable as exc:
                out[key] = None
                why[key] = exc.reason
    if n_pairs_delta is not None and n < n_pairs_delta:
        notes.append(f"{n_pairs_delta - n} of the profile's {n_pairs_delta} pairs lack a "
                     "parsed turn-text or oracle grade: this mean_delta is over the "
                     f"{n} others")
    if out["n_calls_left_out"]:
        notes.append(f"{out['n_calls_left_out']} scored calls left out: their turn-text or "
                     "oracle grade did not parse")
    out["not_computable"], out["notes"] = why, notes
    return out


def _left_out(rows: pd.DataFrame, profile: str, baseline: str) -> int:
    """Scored calls of the two profiles that :func:`attributable` leaves out."""
    if "parse_status" not in rows or "status" not in rows:
        return 0
    two = rows[rows["profile_id"].isin([profile, baseline])]
    scored = ((two["status"] == "ok") & (two["parse_status"] == "ok")).sum()
    return int(scored - len(attributable(two)))


def rounded_parts(total: float, parts: list[float], digits: int = 0) -> list[float]:
    """``parts`` rounded to ``digits`` decimals so that they add up to ``round(total,
    digits)``, as the rows of a table of percentages are: each part rounded down (in steps
    of ``10**-digits``), then one step added to the parts with the largest remainders, in
    order of size, until they sum to the rounded total (the largest-remainder method;
    Hamilton). ``total`` must equal ``sum(parts)`` up to float error (the attribution's
    parts do by construction); when it does not, the parts are rounded one by one."""
    scale = 10 ** digits
    units = [v * scale for v in parts]
    floors = [math.floor(u) for u in units]
    need = round(round(total, digits) * scale) - sum(floors)
    if abs(total - sum(parts)) > 1e-6 * max(1.0, abs(total)) or not 0 <= need <= len(parts):
        return [round(v, digits) for v in parts]
    order = sorted(range(len(parts)), key=lambda i: floors[i] - units[i])  # largest first
    for i in order[:need]:
        floors[i] += 1
    return [f / scale for f in floors]


def split_text(attribution: ProfileAttribution | dict | None, digits: int = 0,
               n_pairs: int | None = None) -> str | None:
    """One line: ``"-45 = -44 turn detection, -1 ASR, 0 rest"`` (points, rounded to
    ``digits``; the three parts rounded so that they add up to the total shown:
    :func:`rounded_parts`); None when the split is not computed. ``n_pairs``: the pairs of
    the profile's own mean delta; when the split is over fewer (a turn-text or oracle grade
    missing: a timeout), the line says so, since its total then differs from that delta:
    ``"-23 = ... rest (over 4 of 5 pairs: the others lack a grade)"``."""
    if not attribution:
        return None
    # a summary's ProfileAttribution, or the gate's dict of the same fields
    get = (attribution.get if isinstance(attribution, dict)
           else lambda k: getattr(attribution, k))
    if get("mean_delta") is None:
        return None

    def f(r: float) -> str:
        return f"{0:.{digits}f}" if r == 0 else f"{r:+.{digits}f}"

    total = get("mean_delta")
    td, asr, rest = rounded_parts(total, [get(k) for k in TERMS], digits)
    line = (f"{f(round(total, digits))} = {f(td)} turn detection, {f(asr)} ASR, "
            f"{f(rest)} rest")
    n = get("n_pairs")
    if n_pairs is not None and n is not None and n < n_pairs:
        line += f" (over {n} of {n_pairs} pairs: the others lack a grade)"
    return line
