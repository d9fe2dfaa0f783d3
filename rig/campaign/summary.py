"""``summary.json`` of a campaign, computed from its call rows only, as the typed contract
:class:`rig.campaign.schema.CampaignSummary` (:func:`campaign_summary`; :func:`build_summary`
gives its JSON). ``docs/summary.md`` says what each field means, with units.

Per profile: the paired statistics of :func:`rig.stats.paired.paired_by_profile` (repeats
averaged per (answer, profile), then paired by answer with the baseline; seeded bootstrap CI)
plus the audio-path measures over the profile's calls: mean WER against the full script and
against the words spoken before turn close, truncation rate, mean share of words lost, and the
mean of score - oracle_score (the loss caused by the audio path), and the mean
``content_similarity`` of transcript to script (:mod:`rig.asr.similarity`;
``content_similarity_note`` says once why it is null on completed calls, e.g. the
``similarity`` extra not installed).
Failed calls and parse failures are left out of every mean and counted. ``attribution``
splits each non-baseline profile's mean paired delta into turn detection, ASR and the rest,
with intervals (:func:`rig.campaign.attribution.profile_attribution`), when the rows carry
the attribution columns.

``repeats_skipped`` is the campaign plan's record of the repeats not run because they could
not differ (:mod:`rig.campaign.repeats`); ``noise_floor`` is the baseline's
(:class:`rig.stats.noise.NoiseFloor`), with ``measured`` false and the reason when its
repeats were identical or skipped as such. ``judge_validity`` is the judge's agreement with
the reference grades on this campaign's answers (:func:`judge_validity_block`).
"""

from __future__ import annotations

import math
from dataclasses import asdict

import pandas as pd

from rig.campaign.attribution import profile_attribution
from rig.campaign.faults import excluded_mask, profile_fault_fields, wer_fields
from rig.campaign.people_summary import people_fields
from rig.campaign.schema import (
    SCHEMA_VERSION,
    BankJudgeValidity,
    Bootstrap,
    CampaignSummary,
    JudgeValidity,
    JudgeValidityNotMeasured,
    NoiseFloorSummary,
    ProfileAttribution,
    ProfileSummary,
    RepeatsSkipped,
)
from rig.campaign.schema_flips import FlipRecord, ProfileFlipDirection
from rig.campaign.taking_summary import profile_turn_taking
from rig.stats.flip_direction import FlipDirection, flip_directions
from rig.stats.noise import noise_floor
from rig.stats.paired import ProfilePaired, paired_by_profile
from rig.stats.validity import judge_validity
from rig.voices.shipped import voice_fields


def _mean(s: pd.Series) -> float | None:
    s = pd.to_numeric(s, errors="coerce").dropna()
    return float(s.mean()) if len(s) else None


def _num(v: object) -> object:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _similarity_note(ok_rows: pd.DataFrame) -> str | None:
    """Why ``content_similarity`` is null on completed calls, once for the campaign."""
    if ok_rows.empty:
        return None
    values = ok_rows.get("content_similarity", pd.Series(None, index=ok_rows.index))
    null = pd.to_numeric(values, errors="coerce").isna()
    if not null.any():
        return None
    reasons = ok_rows.get("content_similarity_error", pd.Series(None, index=ok_rows.index))
    reasons = reasons[null].fillna("not recorded (a row logged before the column existed)")
    counts = reasons.value_counts(sort=True)
    return "; ".join(f"content_similarity: {r} (null on {n} of {len(ok_rows)} completed calls)"
                     for r, n in counts.items())


def campaign_summary(rows: pd.DataFrame, *, campaign_id: str, pipeline_version: str,
                     baseline: str = "baseline", n_boot: int = 2000, seed: int = 0,
                     repeats_skipped: dict | None = None,
                     n_log_rows_not_in_plan: int | None = None,
                     pipeline: dict | None = None,
                     speaker_groups: dict | None = None,
                     ratings: list | None = None,
                     floor_advice: str | None = None,
                     bank_validity: BankJudgeValidity | None = None) -> CampaignSummary:
    """Summarise call rows (the columns of ``calls.parquet``) as the typed
    :class:`~rig.campaign.schema.CampaignSummary`. Pure: same rows (and the same
    ``repeats_skipped``, from campaign.json), same summary.

    ``n_log_rows_not_in_plan`` and ``pipeline`` (the resolved configuration) are what a
    campaign run adds (:func:`rig.campaign.runner.write_outputs`); left out when None.
    ``speaker_groups`` (a read-speech campaign, :mod:`rig.campaign.read_speech`) adds
    ``mode`` and the ``read_speech`` block. ``ratings`` (the folder's ``ratings.jsonl``,
    :func:`rig.ratings.model.read_ratings`) adds ``human_ratings``; a graded campaign gets
    ``error_parity`` (:mod:`rig.campaign.people_summary`).
    ``floor_advice`` (campaign.json's
    ``noise_floor_advice``, :func:`rig.campaign.repeats.floor_advice`): the step that would
    measure the noise floor, said when it is not measured. ``bank_validity``: the judge's
    bank-wide verdict (:func:`rig.scorer.bank_validity.lookup`), stated beside the campaign's
    own ``judge_validity``; left out when None.

    Raises:
        RowsError: a required column is missing or malformed (names the column and value).
        pydantic.ValidationError: a figure does not fit the schema (a bug in rig).
    """
    skipped = repeats_skipped or {"n": 0, "reason": None, "by_profile": {}}
    base_skipped = (skipped.get("by_profile") or {}).get(baseline, {}).get("reason")
    out: dict = {"schema_version": SCHEMA_VERSION, "campaign_id": campaign_id,
                 "pipeline_version": pipeline_version, "baseline": baseline,
                 "n_calls": len(rows),
                 "bootstrap": Bootstrap(resamples=n_boot, seed=seed, method="percentile"),
                 "repeats_skipped": RepeatsSkipped.model_validate(skipped),
                 "profiles": {}, "noise_floor": None}
    if not rows.empty:
        out.update(_figures(rows, baseline=baseline, n_boot=n_boot, seed=seed,
                            base_skipped=base_skipped, advice=floor_advice))
        if speaker_groups is None:
            out.update(people_fields(rows, ratings, baseline=baseline, n_boot=n_boot,
                                     seed=seed))
    if bank_validity is not None and speaker_groups is None:
        out["judge_validity_bank"] = bank_validity
    if n_log_rows_not_in_plan is not None:
        out["n_log_rows_not_in_plan"] = n_log_rows_not_in_plan
    if pipeline is not None:
        out["pipeline"] = pipeline  # the release gate compares configurations
    if speaker_groups is not None:  # read-speech mode: no scorer ran
        from rig.campaign.read_speech import read_speech_summary

        out["mode"] = "read_speech"
        if "judge_validity" in out:
            out["judge_validity"] = JudgeValidityNotMeasured(
                verdict="not_measured", reason="read-speech campaign: no scorer ran")
        out["read_speech"] = read_speech_summary(rows, speaker_groups, n_boot=n_boot,
                                                 seed=seed) if not rows.empty else None
    return CampaignSummary(**out)


def build_summary(rows: pd.DataFrame, *, campaign_id: str, pipeline_version: str,
                  baseline: str = "baseline", n_boot: int = 2000, seed: int = 0,
                  repeats_skipped: dict | None = None, floor_advice: str | None = None
                  ) -> dict:
    """:func:`campaign_summary` as the JSON of ``summary.json`` (a dict)."""
    return campaign_summary(rows, campaign_id=campaign_id, pipeline_version=pipeline_version,
                            baseline=baseline, n_boot=n_boot, seed=seed,
                            repeats_skipped=repeats_skipped,
                            floor_advice=floor_advice).to_dict()


def _figures(rows: pd.DataFrame, *, baseline: str, n_boot: int, seed: int,
             base_skipped: str | None, advice: str | None = None) -> dict:
    """The fields of a summary with calls: counts, noise floor, judge validity, profiles."""
    rows = rows.copy()
    ok = rows["status"] == "ok"
    rows["_excluded"] = ok & excluded_mask(rows)  # faults kept out (rig.campaign.faults)
    scored = ok & ~rows["_excluded"] & (rows["parse_status"] == "ok")
    out: dict = {"n_failed_calls": int((~ok).sum()),
                 "n_parse_failures": int((ok & ~rows["_excluded"] & ~scored).sum()),
                 "n_excluded_calls": int(rows["_excluded"].sum())}
    if "temperature" in rows:
        out["scorer_temperature"] = _num(float(rows["temperature"].iloc[0]))
    # failed calls carry no score; the paired analysis sees them as parse failures
    rows.loc[~scored, "score"] = float("nan")
    table = paired_by_profile(rows, baseline=baseline, n_boot=n_boot, seed=seed,
                              repeats_skipped=base_skipped, advice=advice)
    out["noise_floor"] = NoiseFloorSummary(**noise_floor(
        rows, baseline=baseline, repeats_skipped=base_skipped, advice=advice).to_dict())
    out["judge_validity"] = judge_validity_block(rows, n_boot=n_boot, seed=seed)
    out["content_similarity_note"] = _similarity_note(rows[ok])
    order = [baseline, *sorted(p for p in rows["profile_id"].unique() if p != baseline)]
    attribute = "loss_turn_detection" in rows and rows["loss_turn_detection"].notna().any()
    directions = flip_directions(rows, baseline)  # rig.stats.flip_direction
    out["profiles"] = {}
    for pid in order:
        attr = None
        if attribute and pid != baseline:
            attr = ProfileAttribution(**profile_attribution(
                rows, baseline, pid, n_boot=n_boot, seed=seed,
                n_pairs_delta=table[pid].n_pairs))
        out["profiles"][pid] = _profile(rows[rows["profile_id"] == pid], table[pid], attr,
                                        directions.get(pid))
    return out


def _flag_rate(gok: pd.DataFrame, col: str) -> float | None:
    """Share of True among the non-null values of a bool column (None when none)."""
    if col not in gok:
        return None
    vals = gok[col].dropna()
    return float(vals.astype(bool).mean()) if len(vals) else None


def _profile(g: pd.DataFrame, paired: ProfilePaired,
             attribution: ProfileAttribution | None = None,
             direction: FlipDirection | None = None) -> ProfileSummary:
    """One profile's entry: its paired figures, then the audio-path means over its
    completed calls, then its stage attribution and its flips' directions (each left out
    when None)."""
    ok = g[g["status"] == "ok"]
    gok = ok[~ok["_excluded"]] if "_excluded" in ok else ok
    entry = dict(paired.to_dict())

    def mean_of(col: str) -> float | None:
        return _mean(gok.get(col, pd.Series(dtype=float)))

    entry.update({
        "n_calls": len(g),
        "n_failed_calls": int((g["status"] != "ok").sum()),
        "n_parse_failures": int((gok["parse_status"] != "ok").sum()),
        "score_mean": _mean(gok["score"]),
        **wer_fields(gok),
        "content_similarity_mean": mean_of("content_similarity"),
        "truncation_rate": _mean(gok["truncated"].astype(float))
        if "truncated" in gok and len(gok) else None,
        "words_lost_share_mean": mean_of("words_lost_share"),
        "audio_path_loss_mean": mean_of("score_minus_oracle"),
        "loss_turn_detection_mean": mean_of("loss_turn_detection"),
        "loss_asr_mean": mean_of("loss_asr"),
        "asr_suspect_rate": _flag_rate(ok, "asr_suspect"),
        "turn_suspect_rate": _flag_rate(ok, "turn_suspect"),
        **profile_fault_fields(ok, ok.get("_excluded", pd.Series(False, index=ok.index))),
    })
    entry.update(voice_fields(g))
    entry = {k: _num(v) for k, v in entry.items()}
    if attribution is not None:
        entry["attribution"] = attribution
    if direction is not None:
        entry["flip_direction"] = ProfileFlipDirection(
            **{k: v for k, v in asdict(direction).items() if k != "flips"},
            flips=[FlipRecord(**asdict(f)) for f in direction.flips])
    taking = profile_turn_taking(g)
    if taking is not None:
        entry["turn_taking"] = taking
    return ProfileSummary(**entry)


def judge_validity_block(rows: pd.DataFrame, n_boot: int = 2000, seed: int = 0
                         ) -> JudgeValidity | JudgeValidityNotMeasured:
    """The judge's validity on this campaign's own answers (MEASUREMENT.md, "Judge
    validity"): every call carries the oracle score of its answer's script, so the figures
    come from the oracle scores (averaged over seeds) against the reference grades, over the
    answers the campaign ran. ``verdict`` is ``low`` when the judge ranks or decides the
    bank's clean scripts poorly: its deltas then say more about the judge than the audio.
    ``rig scorer validate`` gives the same figures on the whole bank."""
    need = {"answer_id", "question_id", "tier", "cutoff", "reference_score", "oracle_score"}
    if not need <= set(rows.columns):
        return JudgeValidityNotMeasured(
            verdict="not_measured", reason=f"the rows lack {sorted(need - set(rows.columns))}")
    seeds = rows.drop_duplicates(["answer_id", "seed"]) if "seed" in rows else rows
    per = (seeds.groupby("answer_id")
           .agg(question_id=("question_id", "first"), tier=("tier", "first"),
                cutoff=("cutoff", "first"), reference_score=("reference_score", "first"),
                score=("oracle_score", "mean")).reset_index())
    v = judge_validity(per, n_boot=n_boot, seed=seed).to_dict()
    mode = rows["scorer_mode"].dropna() if "scorer_mode" in rows else pd.Series(dtype=str)
    v["scoring_mode"] = str(mode.iloc[0]) if len(mode) else None
    v["source"] = (f"oracle scores of the {v['n_answers']} answers in this campaign; "
                   "rig scorer validate measures the whole bank")
    return JudgeValidity(**{k: _num(x) for k, x in v.items()})
