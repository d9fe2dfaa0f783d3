"""The report's verdict: one plain sentence per profile, then the judge's validity and the
pipeline version, built from ``summary.json`` alone (schema: rig.campaign.schema).

Every number is written by one of the small formatters below, so a reader (or a test) can
parse a sentence back and find summary.json's figure exactly as formatted:

* a mean paired delta: its magnitude in points, 1 decimal (``"30.1 points lower"``);
* its interval: :func:`verdict_interval`'s pair, signed, 1 decimal (``"-34.9 to -25.3"``);
  below :data:`rig.stats.few_pairs.MIN_PAIRS` pairs, the pairs needed instead;
  the Student t interval below 30 pairs (the percentile bootstrap runs narrow there,
  docs/measurement.md), else the bootstrap one;
* flips: ``n_flips`` of ``n_pairs`` decisions, integers;
* rates (truncation, suspect calls): percent, no decimals (``f"{rate:.0%}"``);
* the noise-floor limit: ``noise_floor_mean_delta_limit``, points, 1 decimal;
* the stage split: :func:`rig.campaign.attribution.split_text` at 1 decimal;
* a validated voice's clean-line WERs (``voice_clean_wer``, its baseline's): 2 decimals,
  for a synthesiser-limited voice and for another voice that passed.
"""

from __future__ import annotations

from rig.campaign.attribution import TERMS, split_text
from rig.campaign.schema import CampaignSummary, JudgeValidityNotMeasured, ProfileSummary
from rig.stats.few_pairs import few_pairs_text, too_few_pairs

#: Below this many pairs the verdict quotes the Student t interval (the bootstrap's runs
#: narrow; rig.campaign.schema.ProfileSummary.ci95).
T_INTERVAL_BELOW_PAIRS = 30

_STAGE_WORDS = {"turn_detection": "most of it lost at turn detection (the turn closed early)",
                "asr": "most of it lost at ASR (the transcript, not the timing)",
                "rest": "most of it in the rest (scorer noise, not the audio path)"}


def points(v: float) -> str:
    """A figure in points, signed, 1 decimal: ``-34.9``, ``+2.0``, ``0.0``."""
    r = round(v, 1)
    return "0.0" if r == 0 else f"{r:+.1f}"


def percent(rate: float) -> str:
    """A rate in [0, 1] as a percent with no decimals: ``0.375 -> "38%"``."""
    return f"{rate:.0%}"


def verdict_interval(profile: ProfileSummary) -> tuple[list[float] | None, str]:
    """The 95% interval the verdict quotes for a profile's mean delta (points) and its kind,
    ``"t"`` or ``"bootstrap"``: t below :data:`T_INTERVAL_BELOW_PAIRS` pairs when present."""
    if profile.n_pairs < T_INTERVAL_BELOW_PAIRS and profile.t_ci95:
        return list(profile.t_ci95), "t"
    if profile.ci95:
        return list(profile.ci95), "bootstrap"
    if profile.t_ci95:
        return list(profile.t_ci95), "t"
    return None, "none"


def _delta_clause(pid: str, baseline: str, d: ProfileSummary) -> str:
    m = d.mean_delta
    if m is None:
        why = d.not_computable.get("mean_delta", "no pairs")
        return f"{pid}: the delta is not measurable ({why})"
    r = round(m, 1)
    if r == 0:
        head = f"{pid}: candidates score the same as under {baseline} (0.0 points)"
    else:
        head = (f"{pid}: candidates score {abs(r):.1f} points "
                f"{'lower' if r < 0 else 'higher'} than under {baseline}")
    ci, kind = verdict_interval(d)
    if too_few_pairs(d):  # an interval on 1-3 degrees of freedom reads as noise
        head += f" ({few_pairs_text(d)})"
    elif ci:
        head += f" (95% CI {points(ci[0])} to {points(ci[1])}, {kind} interval)"
    return head


def _flip_clause(d: ProfileSummary) -> str | None:
    if d.n_flips is None or not d.n_pairs:
        return None
    out = f"{d.n_flips} of {d.n_pairs} decisions flip"
    fd = d.flip_direction
    if fd is not None and fd.n_flips:  # rig.stats.flip_direction: which way they go
        out += f" ({flip_direction_words(fd)})"
    return out


def flip_direction_words(fd) -> str:
    """``"2 away from the reference decision, 1 of them rejecting a qualified candidate, 1
    toward it"`` from a :class:`rig.campaign.schema_flips.ProfileFlipDirection`."""
    q = fd.n_away_qualified_rejected
    parts = [f"{fd.n_away} away from the reference decision"
             + (f", {q} of them rejecting a qualified candidate" if q else ""),
             f"{fd.n_toward} toward it"]
    if fd.n_no_reference:
        parts.append(f"{fd.n_no_reference} without a reference grade")
    return ", ".join(parts)


def _stage_clause(d: ProfileSummary) -> str | None:
    # the stage is named only for a loss the interval shows (its upper end below 0): a split
    # of a delta that may be 0 is given as a split, without a culprit
    ci, _kind = verdict_interval(d)
    shown = ci is not None and ci[1] < 0
    parts = []
    t = d.truncation_rate
    if t is not None:
        parts.append(f"answers cut off on {percent(t)} of calls" if t > 0
                     else "no answer cut off")
    a = d.attribution
    line = split_text(a, digits=1, n_pairs=d.n_pairs)
    if line and a is not None:
        terms = {k: getattr(a, k) for k in TERMS if getattr(a, k) is not None}
        top = max(terms, key=lambda k: abs(terms[k])) if terms else None
        if shown and top and round(terms[top], 1) < 0:  # a loss: name the stage
            parts.append(f"{_STAGE_WORDS[top]}: {line}")
        else:
            parts.append(f"split: {line}")
    return ", ".join(parts) or None


def _noise_clause(summary: CampaignSummary, d: ProfileSummary) -> str:
    within, limit = d.within_noise_floor, d.noise_floor_mean_delta_limit
    if within is None or limit is None:
        why = d.not_computable.get("within_noise_floor")
        if not why or why == _campaign_noise_reason(summary):
            return "noise floor not measured (see below)"
        return f"noise floor not measured ({why})"
    lim = f"{round(limit, 1):.1f}"
    if within:
        return f"within the noise floor (repeat noise alone reaches ±{lim} points)"
    return f"beyond the noise floor (repeat noise alone reaches ±{lim} points)"


def _campaign_noise_reason(summary: CampaignSummary) -> str | None:
    nf = summary.noise_floor
    if nf is not None and nf.measured is False:
        return nf.reason or "no repeats"
    return None


def _suspect_clause(d: ProfileSummary) -> str | None:
    # a zero rate is in the table; the sentence names only suspect calls there are
    parts = [f"{name} suspect on {percent(rate)} of calls"
             for rate, name in ((d.asr_suspect_rate, "ASR"), (d.turn_suspect_rate, "turn"))
             if rate]
    return "; ".join(parts) or None


def _voice_clause(d: ProfileSummary) -> str | None:
    w, b = d.voice_clean_wer, d.baseline_voice_clean_wer
    if d.synthesiser_limited is False and w is not None and b is not None and w != b:
        # another voice that passed the validation: say where it starts, so the gap is read
        # against it (a voice's own intelligibility is part of any voice profile's gap)
        return (f"its voice is not synthesiser-limited but starts at a clean-line WER of "
                f"{w:.2f} against the baseline voice's {b:.2f}")
    if not d.synthesiser_limited:
        return None
    figs = f" (clean-line WER {w:.2f} vs {b:.2f})" if w is not None and b is not None else ""
    return (f"the voice itself is synthesiser-limited{figs}: much of this gap is the "
            "synthesiser")


def profile_sentence(summary: CampaignSummary, pid: str) -> str:
    """One profile's sentence: delta with CI, flips, the stage that lost it, the noise floor,
    suspect rates above 0 when summary.json has them, and a synthesiser-limited voice."""
    d = summary.profiles[pid]
    baseline = summary.baseline
    clauses = [_delta_clause(pid, baseline, d), _flip_clause(d), _stage_clause(d),
               _noise_clause(summary, d), _suspect_clause(d), _voice_clause(d)]
    return "; ".join(c for c in clauses if c) + "."


def validity_sentence(summary: CampaignSummary) -> str:
    """The judge's validity: this campaign's figure in one sentence (summary
    ``judge_validity``), then the bank-wide verdict and its reason when the summary has it
    (``judge_validity_bank``, :func:`rig.scorer.bank_validity.bank_sentence`)."""
    own = _own_validity_sentence(summary)
    b = summary.judge_validity_bank
    if b is None:
        return own
    from rig.scorer.bank_validity import bank_sentence

    return f"{own} {bank_sentence(b)}"


def _own_validity_sentence(summary: CampaignSummary) -> str:
    v = summary.judge_validity
    if v is None:
        return "Judge validity: not measured (no calls)."
    if isinstance(v, JudgeValidityNotMeasured):
        return f"Judge validity: not measured ({v.reason})."
    figs = []
    if v.spearman is not None:
        figs.append(f"Spearman {v.spearman:.2f}")
    if v.decision_agreement is not None:
        figs.append(f"decision agreement {v.decision_agreement:.2f}")
    what = (" and ".join(figs) or "no figures") + (
        f" against the bank's reference grades over this campaign's {v.n_answers} answers")
    verdict = v.verdict
    if verdict == "adequate":
        return f"Judge validity: adequate ({what})."
    if verdict == "low":
        return (f"Judge validity: low ({what}): the deltas may say more about the judge "
                "than about the audio path.")
    why = v.not_computable.get("verdict", "too few answers")
    return f"Judge validity: no verdict ({what}): {why.rstrip('.')}."


def pipeline_sentence(summary: CampaignSummary) -> str:
    """The pipeline version, the baseline and the number of calls."""
    return (f"Pipeline version {summary.pipeline_version}; "
            f"{summary.n_calls} calls; the baseline profile is "
            f"{summary.baseline}.")


def sweep_sentence(summary: CampaignSummary) -> str | None:
    """The demo's sweep (summary.json's ``sweep``, :class:`rig.campaign.schema.SweepNote`):
    its one-line answer and where its report is; None when the summary has none."""
    sweep = summary.sweep
    if sweep is None:
        return None
    where = f" (sweep of {sweep.vary}: {sweep.report})" if sweep.report else ""
    return f"Sweep: {sweep.verdict.rstrip('.')}{where}."


def verdict_sentences(summary: CampaignSummary) -> list[str]:
    """The verdict, in order: one sentence per profile other than the baseline (summary
    order), why the noise floor is not measured (once, when it is not), the sweep's when
    present, the judge's validity, the pipeline version. Pure:
    reads only ``summary``; plain text, not HTML-escaped."""
    baseline = summary.baseline
    out = [profile_sentence(summary, pid) for pid in summary.profiles
           if pid != baseline]
    nf_why = _campaign_noise_reason(summary)
    if nf_why and len(out):
        nf_why = nf_why.removeprefix("not measured: ")  # rig.stats.noise.NOT_MEASURED's start
        out.append(f"Noise floor not measured: {nf_why.rstrip('.')}.")
    sweep = sweep_sentence(summary)
    if sweep:
        out.append(sweep)
    return [*out, validity_sentence(summary), pipeline_sentence(summary)]
