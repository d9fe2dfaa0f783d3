"""Faults a call can carry, the policy that keeps them out of the scores, and their counts
(``docs/measurement.md``, "Faults").

A fault is a call whose answer the interviewer did not hear, or heard in a form whose grade
would not measure the answer. The kinds (:data:`FAULT_KINDS`), each found from the row's own
columns so that rows logged before the fault columns are counted the same way:

* ``vad_missed`` - the script had words, and the VAD never confirmed speech
  (``turn_closed_by`` ``no_speech``: offline the "turn" would be the whole recording, which a
  VAD-gated interviewer never passes to its ASR) or the turn closed before the first script
  word (``words_lost == words_total``). The turn rules ``no_speech_detected`` and
  ``closed_before_speech`` of :mod:`rig.asr.checks`.
* ``media_outage`` - the line carried no frames for longer than the pipeline's
  ``faults.outage_window_ms`` during the turn, and that closed it (``turn_closed_by``
  ``media_outage``; the reference interviewer's watchdog does the same on a real call).
* ``repetition_loop`` - the transcript loops (:mod:`rig.asr.checks`, rule
  ``repetition_loop``).
* ``empty_reference`` - the script normalises to no words (``wer_reference_words == 0``):
  there is nothing to recognise, and WER would be the insertion count (jiwer 4).

The policy (:class:`rig.pipeline_faults.FaultPolicy`) says per kind whether such a call is
excluded: not graded by the scorer, and left out of everything in :data:`EXCLUDED_FROM`;
it is still counted per profile (``faults``, ``n_excluded`` in ``summary.json``).
"""

from __future__ import annotations

import pandas as pd

from rig.errors import ConfigError
from rig.pipeline_faults import FaultPolicy

#: The fault kinds, in the order a row's ``faults`` column lists them.
FAULT_KINDS: tuple[str, ...] = ("vad_missed", "media_outage", "repetition_loop",
                                "empty_reference")

#: What an excluded call is left out of (the summary and the report say it).
EXCLUDED_FROM = ("the scorer, the paired delta and its intervals, flips, tier inversions, "
                 "score_mean, the audio-path and stage losses, the WER and similarity means "
                 "and pooled WER, and the truncation rate")


def vad_missed(words_total: int, words_heard: int, closed_by: str | None) -> bool:
    """True when an answer with words was not heard by the VAD: it never confirmed speech
    (``closed_by == "no_speech"``) or the turn closed before the first word
    (``words_heard == 0``). Counts are script words (fillers left out)."""
    return words_total > 0 and (closed_by == "no_speech" or words_heard == 0)


def _text(v: object) -> str:
    return v if isinstance(v, str) else ""


def _int(v: object) -> int | None:
    try:
        return None if v is None or pd.isna(v) else int(v)
    except (TypeError, ValueError):
        return None


def row_fault_kinds(row: dict) -> list[str]:
    """The fault kinds of one row (a dict of its columns), in :data:`FAULT_KINDS` order,
    found from columns every row logged since the suspect checks has (module docstring)."""
    turn_why, asr_why = _text(row.get("turn_suspect_reason")), _text(row.get("asr_suspect_reason"))
    total, lost = _int(row.get("words_total")), _int(row.get("words_lost"))
    out = []
    if ("no_speech_detected" in turn_why or "closed_before_speech" in turn_why
            or (total and lost == total) or (total and row.get("turn_closed_by") == "no_speech")):
        out.append("vad_missed")
    if row.get("turn_closed_by") == "media_outage":
        out.append("media_outage")
    if "repetition_loop" in asr_why:
        out.append("repetition_loop")
    if _int(row.get("wer_reference_words")) == 0:
        out.append("empty_reference")
    return out


def fault_columns(row: dict, policy: FaultPolicy) -> dict:
    """A call's ``faults`` (kinds ``,``-joined, None when none) and ``fault_excluded``
    (True when ``policy`` excludes any of its kinds) from its row so far."""
    kinds = row_fault_kinds(row)
    return {"faults": ",".join(kinds) or None,
            "fault_excluded": any(policy.excludes(k) for k in kinds)}


def _kinds(rows: pd.DataFrame) -> pd.Series:
    """Per row, its list of kinds: the ``faults`` column where the row has it, else found
    from its other columns (a row logged before the fault columns)."""
    recs = rows.to_dict("records")
    out = []
    for r in recs:
        logged = r.get("faults")
        if isinstance(logged, str):
            out.append(logged.split(","))
        elif r.get("fault_excluded") is not None and not pd.isna(r.get("fault_excluded")):
            out.append([])  # checked and found clean
        else:
            out.append(row_fault_kinds(r))
    return pd.Series(out, index=rows.index, dtype=object)


def excluded_mask(rows: pd.DataFrame, policy: FaultPolicy | None = None) -> pd.Series:
    """True for each row kept out of the scores: its logged ``fault_excluded``, or, on a row
    logged before that column, ``policy`` (default: the default policy) applied to its kinds.
    """
    policy = policy or FaultPolicy()
    kinds = _kinds(rows)
    derived = kinds.map(lambda ks: any(policy.excludes(k) for k in ks))
    if "fault_excluded" not in rows:
        return derived.astype(bool)
    logged = _logged_flags(rows)
    return logged.where(logged.notna(), derived).astype(bool)


_YES, _NO = {"true", "1", "1.0", "yes"}, {"false", "0", "0.0", "no"}


def _logged_flags(rows: pd.DataFrame) -> pd.Series:
    """``fault_excluded`` as True/False/None: a bool, 0/1, or a CSV's true/false/yes/no text
    (any case); an empty cell is None. Raises ConfigError naming the rows' source, the column
    and the first other value (the text "no" must not read as True)."""
    def flag(v: object) -> object:
        if v is None or (isinstance(v, float) and v != v):
            return None
        text = str(v).strip().lower()
        if text == "":
            return None
        if text in _YES or text in _NO:
            return text in _YES
        raise ConfigError(rows.attrs.get("source", "rows"), "fault_excluded", "expected "
                          "true or false (or 1/0, yes/no, or empty)", v, has_value=True)
    return rows["fault_excluded"].map(flag).astype(object)


def fault_counts(rows: pd.DataFrame) -> dict[str, int]:
    """Completed calls of each fault kind (every kind, 0 included)."""
    kinds = _kinds(rows)
    return {k: int(kinds.map(lambda ks, k=k: k in ks).sum()) for k in FAULT_KINDS}


def _ints(g: pd.DataFrame, col: str) -> pd.Series:
    return pd.to_numeric(g.get(col, pd.Series(None, index=g.index, dtype=float)),
                         errors="coerce")


def wer_fields(gok: pd.DataFrame) -> dict:
    """WER figures over a profile's completed, not excluded calls: ``wer_mean`` and
    ``wer_spoken_mean`` (means of per-call WERs) and ``wer_pooled``/``wer_spoken_pooled``
    (errors over reference words, :func:`rig.asr.wer.pooled_wer`; None on rows logged before
    the count columns). A call whose reference has no words is left out of both (its WER is
    jiwer's insertion count) and counted in ``n_empty_spoken_reference`` (the spoken
    reference: the turn closed before a script word)."""
    from rig.asr.wer import pooled_wer

    out: dict = {}
    for col, ref in (("wer", "wer_reference_words"), ("wer_spoken", "wer_spoken_reference_words")):
        refs = _ints(gok, ref)
        keep = refs.isna() | (refs > 0)
        vals = pd.to_numeric(gok.get(col, pd.Series(None, index=gok.index, dtype=float)),
                             errors="coerce")[keep].dropna()
        out[f"{col}_mean"] = float(vals.mean()) if len(vals) else None
        errs = _ints(gok, col + "_errors")[keep]
        have = errs.notna() & refs[keep].notna()
        out[f"{col}_pooled"] = (pooled_wer(int(errs[have].sum()), int(refs[keep][have].sum()))
                                if have.any() else None)
        if col == "wer_spoken":
            out["n_empty_spoken_reference"] = int((refs == 0).sum())
    return out


def profile_fault_fields(g_ok: pd.DataFrame, excluded: pd.Series) -> dict:
    """A profile's fault figures over its completed calls ``g_ok`` (``excluded``: the
    :func:`excluded_mask` of those rows): ``faults`` (calls of each kind), ``n_excluded`` and
    ``excluded_from`` (what they were left out of; None when none was) and
    ``capture_by_length`` (:func:`capture_by_length`)."""
    n = int(excluded.sum())
    return {"faults": fault_counts(g_ok), "n_excluded": n,
            "excluded_from": EXCLUDED_FROM if n else None,
            "capture_by_length": capture_by_length(g_ok)}


#: Answer lengths (script words, inclusive; None: no upper end) of the capture-rate bins.
LENGTH_BINS: tuple[tuple[int, int | None], ...] = ((1, 2), (3, 5), (6, 15), (16, None))


def capture_by_length(g_ok: pd.DataFrame) -> list[dict]:
    """Capture rate by answer length over completed calls: per bin of :data:`LENGTH_BINS`
    (``words_total``, the script's words) that has calls, ``n_calls``, ``n_captured`` (the
    VAD heard the answer: not ``vad_missed``) and ``capture_rate`` (their share). A short
    answer ("Yes.") shorter than the VAD's start window is where capture fails first."""
    kinds = _kinds(g_ok)
    words = _ints(g_ok, "words_total")
    out = []
    for lo, hi in LENGTH_BINS:
        inside = (words >= lo) & (words <= hi if hi is not None else True)
        n = int(inside.sum())
        if not n:
            continue
        caught = int((~kinds[inside].map(lambda ks: "vad_missed" in ks)).sum())
        out.append({"words": f"{lo}-{hi}" if hi is not None else f"{lo}+", "n_calls": n,
                    "n_captured": caught, "capture_rate": caught / n})
    return out
