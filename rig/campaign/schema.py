"""The typed contract of a campaign's ``summary.json`` (schema :data:`SCHEMA_VERSION`).

:class:`CampaignSummary` is the whole file; its parts are the bootstrap settings, the record of
repeats not run, the baseline's noise floor (:class:`NoiseFloorSummary`), the judge's validity
(:class:`JudgeValidity`, or :class:`JudgeValidityNotMeasured`) and one
:class:`ProfileSummary` per profile. :func:`rig.campaign.summary.campaign_summary` builds it
from the call rows; :mod:`rig.campaign.summary_file` reads, writes and publishes it
(``docs/summary.schema.json``, ``docs/summary.md``, which also keeps the changelog).

Units: scores, deltas and their spreads are points of the 0-100 scale; rates, shares and
similarities are fractions in [0, 1]; intervals are ``[low, high]``. A figure that cannot be
computed is ``null`` with the reason in the enclosing ``not_computable`` mapping (field ->
reason), never NaN. A field "absent when ..." is left out of the file in that case (``null``
means something else).

Versions are ``MAJOR.MINOR``: a new field raises the minor version; removing a field or
changing its meaning or unit raises the major one. rig reads files of its own major version
and older, ignoring fields it does not know; a file written before the schema was versioned
has no ``schema_version`` and reads as :data:`UNVERSIONED`.
"""

from __future__ import annotations

from typing import Any, Literal

from rig.campaign.schema_base import _f, _Part
from rig.campaign.schema_faults import CaptureBin
from rig.campaign.schema_flips import ProfileFlipDirection
from rig.campaign.schema_impact import ImpactTable
from rig.campaign.schema_ratings import HumanRatings, ProfileParity
from rig.campaign.schema_read_speech import (  # noqa: F401 - re-exported
    ReadSpeechFigures,
    ReadSpeechGroup,
    ReadSpeechSpeaker,
    ReadSpeechSummary,
)
from rig.campaign.schema_taking import ProfileTurnTaking
from rig.campaign.schema_validity import BankJudgeValidity

#: The version this rig writes.
SCHEMA_VERSION = "1.11"
#: The version a summary without ``schema_version`` (written before rig versioned it) reads as.
UNVERSIONED = "0.0"

Interval = tuple[float, float]
NotComputable = dict[str, str]


class Bootstrap(_Part):
    """Settings of every percentile bootstrap interval in the file."""

    resamples: int = _f("resamples per interval (`--n-boot`)", ge=0)
    seed: int = _f("seed of the generator, the same for each profile")
    method: Literal["percentile"] = _f("interval method (Efron & Tibshirani 1993)")


class ProfileRepeatsSkipped(_Part):
    """Repeats of one profile that were not run."""

    n: int = _f("planned repeats not run", ge=0)
    reason: str = _f("why they could not differ from repeat 0")


class RepeatsSkipped(_Part):
    """Repeats the planner did not run because they could not differ (rig.campaign.repeats),
    as campaign.json records them."""

    n: int = _f("planned repeats not run, all profiles", ge=0)
    reason: str | None = _f("one sentence for all of them; null when none was skipped")
    by_profile: dict[str, ProfileRepeatsSkipped] = _f("profile id -> its skipped repeats")


class NoiseFloorSummary(_Part):
    """The baseline's repeat-to-repeat noise (rig.stats.noise.NoiseFloor): single calls."""

    profile_id: str = _f("the profile measured (the baseline)")
    measured: bool = _f("false when the repeats measured nothing (identical, or not run)")
    reason: str | None = _f("why it is not measured; null when measured")
    n_answers: int = _f("answers with at least two scored repeats", ge=0)
    n_repeat_pairs: int = _f("pairs of repeats of the same answer, sum of k(k-1)/2", ge=0)
    n_identical_repeat_pairs: int = _f("repeat pairs with the same score and transcript",
                                       ge=0)
    repeat_sd: float | None = _f("points: pooled within-answer SD of one call's score")
    sd_repeat_diff: float | None = _f("points: SD of the difference of two repeats, "
                                      "sqrt(2) x repeat_sd")
    df_within: int | None = _f("degrees of freedom of repeat_sd, sum of (k - 1)")
    flip_rate: float | None = _f("share of repeat pairs whose single-call decisions differ")
    n_flips: int = _f("repeat pairs whose decisions differ", ge=0)
    not_computable: NotComputable = _f("field -> reason, for every null figure")


class ValidityThresholds(_Part):
    """Below either threshold the verdict is low."""

    min_spearman: float = _f("Spearman correlation the judge needs")
    min_decision_agreement: float = _f("share of agreeing decisions the judge needs")
    min_answers: int | None = _f("fewer answers give no verdict (null in summaries written "
                                 "before this threshold)", default=None)


class JudgeValidity(_Part):
    """The judge's oracle scores of this campaign's scripts against the reference grades
    (rig.stats.validity; docs/measurement.md, "Judge validity")."""

    n_answers: int = _f("answers with an oracle score and a reference grade", ge=0)
    n_questions: int = _f("questions they answer", ge=0)
    spearman: float | None = _f("Spearman correlation with the reference grade")
    spearman_ci95: Interval | None = _f("percentile bootstrap 95% CI of spearman")
    pearson: float | None = _f("Pearson correlation with the reference grade")
    pearson_ci95: Interval | None = _f("percentile bootstrap 95% CI of pearson")
    mae_points: float | None = _f("points: mean absolute error against the reference grade")
    decision_agreement: float | None = _f("share of answers whose decision at the cutoff "
                                          "matches the reference grade's")
    n_decisions_agree: int = _f("answers whose decisions agree", ge=0)
    cohen_kappa: float | None = _f("Cohen's kappa of the two decisions")
    cohen_kappa_ci95: Interval | None = _f("asymptotic 95% CI of cohen_kappa")
    tier_order_rate: float | None = _f("share of questions ordered strong > borderline > weak")
    tier_pair_concordance: float | None = _f("share of cross-tier pairs in the tiers' order "
                                             "(a tie counts one half)")
    distinct_scores: int = _f("different scores used, rounded to 0.1 point", ge=0)
    retest_sd: float | None = _f("points: within-answer SD over repeats (null here: one "
                                 "oracle score per answer and seed, averaged)")
    retest_identical: bool | None = _f("every answer's repeats gave the same score")
    n_boot: int = _f("bootstrap resamples of the correlation CIs", ge=0)
    not_computable: NotComputable = _f("field -> reason, for every null figure")
    verdict: Literal["adequate", "low", "not_measured"] = _f(
        "adequate: both thresholds met; low: either missed (the deltas then say more about "
        "the judge than the audio); not_measured: spearman or agreement not computable, or "
        "fewer answers than thresholds.min_answers")
    thresholds: ValidityThresholds = _f("the thresholds of the verdict")
    scoring_mode: Literal["argmax", "expected"] | None = _f("the scorer's mode; null when the "
                                                            "rows do not record it")
    source: str = _f("what the figures are computed from")


class JudgeValidityNotMeasured(_Part):
    """The rows lack what judge validity needs (e.g. rows logged before reference grades)."""

    verdict: Literal["not_measured"] = _f("always not_measured")
    reason: str = _f("what the rows lack")


class ProfileAttribution(_Part):
    """A profile's mean paired delta split by stage (rig.campaign.attribution;
    docs/measurement.md, "Stage attribution"): turn detection + ASR + rest = mean_delta.
    Each term is, per answer, the profile's mean per-call value minus the baseline's (repeats
    averaged), averaged over pairs; intervals as the profile's delta's (same resamples)."""

    n_pairs: int = _f("answers with attributable calls under this profile and the baseline",
                      ge=0)
    n_calls_left_out: int = _f("scored calls of the two profiles left out: their turn-text "
                               "or oracle grade did not parse", ge=0)
    mean_delta: float | None = _f("points: mean paired delta over these pairs (the profile's "
                                  "mean_delta when no pair is left out)")
    mean_delta_ci95: Interval | None = _f("points: percentile bootstrap 95% CI of mean_delta")
    mean_delta_t_ci95: Interval | None = _f("points: Student t 95% CI of mean_delta")
    turn_detection: float | None = _f("points: mean paired difference of loss_turn_detection "
                                      "(score_turn_text - oracle_score)")
    turn_detection_ci95: Interval | None = _f("points: bootstrap 95% CI of turn_detection")
    turn_detection_t_ci95: Interval | None = _f("points: Student t 95% CI of turn_detection")
    asr: float | None = _f("points: mean paired difference of loss_asr (score - "
                           "score_turn_text)")
    asr_ci95: Interval | None = _f("points: bootstrap 95% CI of asr")
    asr_t_ci95: Interval | None = _f("points: Student t 95% CI of asr")
    rest: float | None = _f("points: mean_delta - turn_detection - asr (the oracle grades' "
                            "paired difference: scorer noise between repeats)")
    rest_ci95: Interval | None = _f("points: bootstrap 95% CI of rest")
    rest_t_ci95: Interval | None = _f("points: Student t 95% CI of rest")
    not_computable: NotComputable = _f("field -> reason, for every null figure")
    notes: list[str] = _f("warnings a reader needs (pairs or calls left out)")


class ProfileSummary(_Part):
    """One profile against the baseline (rig.stats.paired.ProfilePaired), and its audio path.
    The baseline's own entry has delta 0 and no intervals by construction."""

    profile_id: str = _f("the profile")
    is_baseline: bool = _f("this entry is the baseline itself")
    n_calls: int = _f("calls of this profile", ge=0)
    n_parse_failures: int = _f("calls left out of the paired figures: failed, or the "
                               "scorer's reply did not parse", ge=0)
    n_answers: int = _f("answers with at least one scored repeat", ge=0)
    n_pairs: int = _f("answers scored under this profile and the baseline", ge=0)
    mean_delta: float | None = _f("points: mean over pairs of profile - baseline score "
                                  "(repeats averaged first)")
    sd_delta: float | None = _f("points: SD of the paired deltas (n - 1)")
    ci95: Interval | None = _f("points: percentile bootstrap 95% CI of mean_delta over "
                               "answers (runs narrow below 30 pairs: read t_ci95 then)")
    t_ci95: Interval | None = _f("points: Student t 95% CI of mean_delta")
    flip_rate: float | None = _f("share of pairs whose decision (repeat-averaged score >= "
                                 "cutoff) differs from the baseline's")
    flip_ci95: Interval | None = _f("Wilson 95% CI of flip_rate")
    n_flips: int | None = _f("pairs that flip")
    tier_inversion_rate: float | None = _f("share of (weak, strong) answer pairs of a question "
                                           "where weak under the baseline scores above "
                                           "strong under this profile")
    n_tier_inversions: int = _f("inverted (weak, strong) pairs", ge=0)
    n_tier_pairs: int = _f("(weak, strong) pairs", ge=0)
    noise_floor_sd: float | None = _f("points: the baseline's sd_repeat_diff, for reading")
    noise_floor_flip_rate: float | None = _f("the baseline's single-call repeat flip rate")
    noise_floor_se_mean_delta: float | None = _f(
        "points: standard error of mean_delta under no change, repeat_sd x "
        "sqrt(sum (1/kp + 1/kb)) / n")
    noise_floor_mean_delta_limit: float | None = _f(
        "points: largest |mean_delta| repeat noise alone gives at 95%, t(0.975, df_within) x "
        "noise_floor_se_mean_delta")
    noise_floor_flip_rate_averaged: float | None = _f(
        "flip rate under no change of decisions on repeat-averaged scores, at these pairs' "
        "repeat counts")
    noise_floor_flip_repeats: tuple[int, int] | None = _f(
        "the most common (profile, baseline) repeat counts of the pairs")
    within_noise_floor: bool | None = _f("|mean_delta| <= noise_floor_mean_delta_limit")
    flip_within_noise_floor: bool | None = _f("flip_rate <= noise_floor_flip_rate_averaged")
    n_boot: int = _f("bootstrap resamples of ci95", ge=0)
    seed: int = _f("bootstrap seed of ci95")
    not_computable: NotComputable = _f("field -> reason, for every null figure")
    notes: list[str] = _f("warnings a reader needs (small samples, unpaired answers)")
    n_failed_calls: int = _f("calls that failed (no transcript or no score)", ge=0)
    score_mean: float | None = _f("points: mean score of the completed calls")
    wer_mean: float | None = _f("mean of per-call WERs against the full script (calls kept "
                                "out as faults, and empty references, left out)")
    wer_spoken_mean: float | None = _f("mean WER against the words spoken before turn close")
    wer_pooled: float | None = _f(
        "pooled WER against the full script: all errors over all reference words of the "
        "calls in wer_mean; null on rows logged before 1.8", default=None)
    wer_spoken_pooled: float | None = _f("pooled WER against the words spoken before turn "
                                         "close (absent before 1.8)", default=None)
    n_empty_spoken_reference: int | None = _f(
        "calls whose turn closed before any script word (empty spoken reference), left out "
        "of the wer_spoken figures (absent before 1.8)", default=None, ge=0)
    faults: dict[str, int] | None = _f(
        "completed calls of each fault kind: vad_missed, media_outage, repetition_loop, "
        "empty_reference (rig.campaign.faults; absent before 1.8)", default=None)
    n_excluded: int | None = _f(
        "completed calls kept out of the scorer and the means as faults under the "
        "pipeline's faults: policy (absent before 1.8)", default=None, ge=0)
    excluded_from: str | None = _f("what the excluded calls were left out of; null when "
                                   "none was (absent before 1.8)", default=None)
    capture_by_length: list[CaptureBin] | None = _f(
        "capture rate by answer length, over the completed calls (absent before 1.8)",
        default=None)
    content_similarity_mean: float | None = _f(
        "mean cosine similarity of transcript and script embeddings (all-MiniLM-L6-v2); "
        "null when not computed (content_similarity_note)")
    truncation_rate: float | None = _f("share of completed calls with script words spoken "
                                       "after the turn closed")
    words_lost_share_mean: float | None = _f("mean share of the script's words spoken after "
                                             "the turn closed")
    audio_path_loss_mean: float | None = _f("points: mean of score - oracle_score (the loss "
                                            "caused by truncation and ASR)")
    loss_turn_detection_mean: float | None = _f(
        "points: mean of loss_turn_detection over the completed calls that have it; null "
        "when none has (absent in files before 1.2)", default=None)
    loss_asr_mean: float | None = _f(
        "points: mean of loss_asr over the completed calls that have it; null when none has "
        "(absent in files before 1.2)", default=None)
    asr_suspect_rate: float | None = _f(
        "share of the completed calls whose transcript was flagged asr_suspect (over those "
        "checked; rig.asr.checks); null when none was checked (absent before 1.3)",
        default=None)
    turn_suspect_rate: float | None = _f(
        "share of the completed calls whose turn was flagged turn_suspect (over those "
        "checked); null when none was checked (absent before 1.3)", default=None)
    attribution: ProfileAttribution | None = _f(
        "the paired delta split by stage; absent for the baseline and when the rows predate "
        "the attribution columns", default=None)
    synthesiser_limited: bool | None = _f(
        "the profile's voice is synthesiser-limited: its clean-line WER is far above the "
        "baseline voice's in the shipped voice validation (rig/data/voices.json; "
        "docs/profiles.md, 'Voice validation'), so much of this gap is the synthesiser; "
        "null when the voice was not validated (absent before 1.5)", default=None)
    voice_clean_wer: float | None = _f(
        "mean per-answer WER of the profile's voice on the clean line in that validation; "
        "null when not validated (absent before 1.5)", default=None)
    baseline_voice_clean_wer: float | None = _f(
        "the same for the validation's baseline voice (absent before 1.5)", default=None)
    turn_taking: ProfileTurnTaking | None = _f(
        "how the interviewer treated this profile's callers on real calls (turn-taking and "
        "conduct); absent on a simulated campaign and before 1.6", default=None)
    flip_direction: ProfileFlipDirection | None = _f(
        "its flips toward and away from the reference decision, counted apart, each flip "
        "with its reference decision; absent for the baseline, without decisions, and "
        "before 1.9", default=None)


class SweepNote(_Part):
    """The sweep ``rig demo`` runs after its campaign (rig.sweep), in one line. ``rig sweep``
    itself writes its own folder and leaves the campaign's summary alone."""

    vary: str = _f("the varied pipeline field and values, e.g. "
                   "endpointing.silence_timeout_ms=2000")
    profile_id: str = _f("the profile swept (with the baseline)")
    verdict: str = _f("the sweep's one-line answer (rig.sweep.headline)")
    report: str = _f("the sweep's report.html, relative to the campaign folder")


class CampaignSummary(_Part):
    """A campaign's summary.json: per profile, the paired statistics against the baseline and
    the audio-path measures; the baseline's noise floor; the judge's validity.

    Built by rig.campaign.summary.campaign_summary; to_dict() is the file's JSON."""

    schema_version: str = _f("MAJOR.MINOR of this schema (docs/summary.md, changelog)",
                             pattern=r"^\d+\.\d+$")
    campaign_id: str = _f("the campaign's id (its folder name by default)")
    pipeline_version: str = _f("hash-named version of the resolved pipeline configuration")
    baseline: str = _f("the baseline profile's id")
    n_calls: int = _f("call rows summarised (planned calls that were run)", ge=0)
    bootstrap: Bootstrap = _f("bootstrap settings of every interval")
    repeats_skipped: RepeatsSkipped = _f("repeats not run because they could not differ")
    profiles: dict[str, ProfileSummary] = _f("profile id -> its entry; the baseline first, "
                                             "then the others sorted")
    n_failed_calls: int | None = _f("calls that failed; absent when there are no calls",
                                    default=None, ge=0)
    n_parse_failures: int | None = _f("completed calls whose score did not parse; absent "
                                      "when there are no calls", default=None, ge=0)
    n_excluded_calls: int | None = _f(
        "completed calls kept out of the scorer and the means as faults (per profile: "
        "faults, n_excluded); absent when there are no calls and before 1.8",
        default=None, ge=0)
    scorer_temperature: float | None = _f("the scorer's sampling temperature; absent when the "
                                          "rows do not record it", default=None)
    noise_floor: NoiseFloorSummary | None = _f("the baseline's noise floor; null when there "
                                               "are no calls")
    judge_validity: JudgeValidity | JudgeValidityNotMeasured | None = _f(
        "the judge's validity on this campaign's answers; absent when there are no calls",
        default=None)
    judge_validity_bank: BankJudgeValidity | None = _f(
        "the judge's verdict on the whole bank under this pipeline version (the last `rig "
        "scorer validate`, or the shipped one), or that it was never run; absent in a "
        "read-speech campaign and in files before 1.9", default=None)
    content_similarity_note: str | None = _f(
        "why content_similarity is null on completed calls, once; null when it never is; "
        "absent when there are no calls", default=None)
    n_log_rows_not_in_plan: int | None = _f(
        "rows of calls.jsonl left out because the plan does not hold them (another selection "
        "or version); absent when the summary was not written by a campaign run",
        default=None, ge=0)
    pipeline: dict[str, Any] | None = _f(
        "the resolved pipeline configuration (rig.pipeline.PipelineConfig), which the release "
        "gate compares; absent when not recorded", default=None)
    sweep: SweepNote | None = _f(
        "the timer sweep `rig demo` ran after the campaign; absent otherwise", default=None)
    mode: Literal["graded", "read_speech"] | None = _f(
        "read_speech: the bank was a read-speech bank and no scorer ran (score fields null); "
        "absent for a graded campaign", default=None)
    read_speech: ReadSpeechSummary | None = _f(
        "per speaker and speaker group figures of a read-speech campaign; absent otherwise",
        default=None)
    error_parity: dict[str, ProfileParity] | None = _f(
        "profile id -> its error rates against the bank's reference grades (qualified "
        "rejected, unqualified advanced) and their ratios to the baseline's; absent with no "
        "scored call (and before 1.7)", default=None)
    impact_ratios: dict[str, ImpactTable] | None = _f(
        "scoring and selection: per profile the rate on repeat-averaged answers, its impact "
        "ratio to the highest profile's with a bootstrap 95% CI; absent with under two "
        "scored profiles (and before 1.10)", default=None)
    human_ratings: HumanRatings | None = _f(
        "judge-human agreement and prediction-powered estimates from the folder's "
        "ratings.jsonl; absent without ratings (and before 1.7)", default=None)

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``summary.json``: fields left unset (the "absent when" ones) out."""
        return self.model_dump(mode="json", exclude_unset=True)


class SummaryHeader(_Part):
    """The part of a summary that identifies the campaign, all of it optional: what the
    release gate reads, so a summary holding only these (written by hand, or by an older rig)
    serves it too. Same fields and meanings as CampaignSummary's."""

    schema_version: str | None = _f("as CampaignSummary.schema_version", default=None)
    campaign_id: str | None = _f("as CampaignSummary.campaign_id", default=None)
    pipeline_version: str | None = _f("as CampaignSummary.pipeline_version", default=None)
    baseline: str | None = _f("as CampaignSummary.baseline", default=None)
    pipeline: dict[str, Any] | None = _f("as CampaignSummary.pipeline", default=None)
