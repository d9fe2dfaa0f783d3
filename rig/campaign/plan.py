"""A campaign's plan: what to run (:class:`CampaignSpec`) and the calls it makes.

:func:`plan_campaign` selects the answers and profiles (exact ids; the baseline profile is
always kept), and lists every call: grouped by question (so the scorer's prompt prefix is
reused), ordered answer, profile, repeat, repeat r with seed r, each with its call id
(:func:`rig.campaign.call.call_id`). Repeats that cannot differ from repeat 0
(:mod:`rig.campaign.repeats`) are left out and counted in the plan's ``repeats_skipped``.
:func:`rig.campaign.runner.run_campaign` runs the plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rig.answers import Answer, AnswerBank, Question
from rig.campaign.call import call_id
from rig.errors import ConfigError
from rig.pipeline import PipelineConfig
from rig.profiles import Profile, ProfileSet


@dataclass(frozen=True)
class CampaignSpec:
    """What to run. Selectors are exact ids; empty means all."""
    answers_path: Path
    profiles_path: Path
    pipeline_path: Path
    out_dir: Path
    repeats: int = 1
    campaign_id: str | None = None
    profile_ids: tuple[str, ...] = ()
    answer_ids: tuple[str, ...] = ()
    question_ids: tuple[str, ...] = ()
    repeat_ids: tuple[int, ...] = ()
    n_boot: int = 2000
    baseline_repeats: int | None = None  # extra baseline repeats for the noise floor
    transport: str = "sim"  # sim, or the real transport of rig.calls (recorded only)
    # run only the first repeat of an (answer, profile) whose repeats cannot differ
    skip_deterministic_repeats: bool = True
    audio: bool = True  # write each call's audio under out_dir/audio (rig.drilldown.audio)
    # SD of the speech rate between deliveries, % (rig.campaign.delivery; 0: none)
    delivery_sd_pct: float = 0.0


@dataclass(frozen=True)
class PlannedCall:
    question: Question
    answer: Answer
    profile: Profile
    repeat: int
    seed: int
    call_id: str


def _select(spec: CampaignSpec, bank: AnswerBank, profiles: ProfileSet
            ) -> tuple[list[tuple[Question, Answer]], list[Profile]]:
    pairs = bank.answers()
    if spec.question_ids:
        unknown = set(spec.question_ids) - {q.question_id for q in bank.questions}
        if unknown:
            raise ConfigError(bank.path, "--question", "unknown question id(s)",
                              sorted(unknown))
        pairs = [(q, a) for q, a in pairs if q.question_id in spec.question_ids]
    if spec.answer_ids:
        known = [a.answer_id for _, a in bank.answers()]
        unknown = set(spec.answer_ids) - set(known)
        if unknown:
            raise ConfigError(bank.path, "--answer-id", "unknown answer id(s) "
                              f"{', '.join(sorted(unknown))}; the bank has {_listed(known)}")
        pairs = [(q, a) for q, a in pairs if a.answer_id in spec.answer_ids]
    profs = list(profiles.profiles)
    if spec.profile_ids:
        known = [p.profile_id for p in profs]
        unknown = set(spec.profile_ids) - set(known)
        if unknown:
            raise ConfigError(profiles.path, "--profile", "unknown profile id(s) "
                              f"{', '.join(sorted(unknown))}; the set has {_listed(known)}")
        keep = set(spec.profile_ids) | {profiles.baseline.profile_id}
        profs = [p for p in profs if p.profile_id in keep]
    if not pairs:
        raise ConfigError(bank.path, "", "the selection has no answers")
    return pairs, profs


@dataclass(frozen=True)
class CampaignPlan:
    """The calls to run, and the repeats left out because they could not differ.

    ``repeats_skipped`` is what ``campaign.json`` and ``summary.json`` record:
    ``{"n": total, "reason": one sentence or None, "by_profile": {profile_id: {"n", "reason"}}}``.
    """
    calls: list[PlannedCall]
    repeats_skipped: dict
    #: the step that measures the baseline's noise floor here, in one sentence
    #: (:func:`rig.campaign.repeats.floor_advice`); None without a pipeline
    floor_advice: str | None = None


def no_repeats_skipped() -> dict:
    """``repeats_skipped`` of a campaign that skipped nothing."""
    return {"n": 0, "reason": None, "by_profile": {}}


def check_selectors(spec: CampaignSpec) -> None:
    """Raise :class:`ConfigError` (naming the option, the value and what exists) when
    ``spec``'s --question, --answer-id or --profile names nothing: called before anything is
    written, so a typo leaves no output folder behind."""
    from rig.answers import load_bank
    from rig.profiles import load_profiles

    _select(spec, load_bank(spec.answers_path), load_profiles(spec.profiles_path))


def _listed(ids: list[str], most: int = 20) -> str:
    """``ids`` for an error message, the first ``most`` of them and how many more."""
    shown = ", ".join(ids[:most])
    return shown + (f" ... ({len(ids) - most} more)" if len(ids) > most else "")


def plan_campaign(spec: CampaignSpec, bank: AnswerBank, profiles: ProfileSet, version: str,
                  pipeline: PipelineConfig | None = None, temperature: float | None = None
                  ) -> CampaignPlan:
    """Every call of the campaign, grouped by question (so the scorer's prompt prefix is
    reused) and ordered answer, profile, repeat. Repeat r uses seed r.

    With ``pipeline`` given and ``spec.skip_deterministic_repeats`` on, an (answer, profile)
    whose repeats cannot differ (:func:`rig.campaign.repeats.repeat_variation` of the profile,
    the pipeline, ``spec.transport`` and ``temperature``, the temperature of the scorer that
    will run, default the pipeline's) keeps only its first planned repeat; the others are
    counted in ``repeats_skipped`` with the reason. With ``pipeline`` given, each call's
    question is the rubric its scorer grades (:meth:`rig.answers.Question.scored_rubric` under
    ``scorer.style_criteria``); call ids are the same with or without ``pipeline``.
    With ``spec.delivery_sd_pct`` above 0 each call's profile speaks at its answer's and
    repeat's varied rate (:func:`rig.campaign.delivery.varied_profile`), and its repeats can
    differ. The plan's ``floor_advice`` says what would measure the baseline's noise floor.
    """
    from rig.campaign.delivery import varied_profile
    from rig.campaign.repeats import deterministic_summary, floor_advice, repeat_variation

    pairs, profs = _select(spec, bank, profiles)
    repeats = list(spec.repeat_ids) if spec.repeat_ids else list(range(spec.repeats))
    out: list[PlannedCall] = []
    skipped: dict[str, dict] = {}
    for p in profs:
        fixed = None
        if pipeline is not None and spec.skip_deterministic_repeats:
            v = repeat_variation(p, pipeline, spec.transport, temperature,
                                 spec.delivery_sd_pct)
            fixed = None if v.can_differ else v.reason
        if fixed is not None:
            skipped[p.profile_id] = {"n": 0, "reason": fixed}
    style = pipeline.scorer.style_criteria if pipeline is not None else "keep"
    for q, a in pairs:
        graded = q.scored_rubric(style)  # the rubric the scorer grades (the call id: q's)
        for p in profs:
            reps = repeats
            if p.profile_id == profiles.baseline.profile_id and spec.baseline_repeats:
                reps = sorted(set(repeats) | set(range(spec.baseline_repeats)))
            if p.profile_id in skipped and len(reps) > 1:
                skipped[p.profile_id]["n"] += len(reps) - 1
                reps = [min(reps)]
            for r in reps:
                pr = varied_profile(p, a.answer_id, r, spec.delivery_sd_pct)
                out.append(PlannedCall(graded, a, pr, r, r, call_id(q, a, pr, r, r, version)))
    advice = None if pipeline is None else floor_advice(repeat_variation(
        profiles.baseline, pipeline, spec.transport, temperature, spec.delivery_sd_pct),
        max(len(repeats), spec.baseline_repeats or 0))
    by_profile = {pid: d for pid, d in skipped.items() if d["n"]}
    if not by_profile:
        return CampaignPlan(out, no_repeats_skipped(), advice)
    assert pipeline is not None
    return CampaignPlan(out, {
        "n": sum(d["n"] for d in by_profile.values()),
        "reason": deterministic_summary(list(by_profile), pipeline, temperature),
        "by_profile": by_profile}, advice)


def plan_calls(spec: CampaignSpec, bank: AnswerBank, profiles: ProfileSet, version: str,
               pipeline: PipelineConfig | None = None, temperature: float | None = None
               ) -> list[PlannedCall]:
    """The calls of :func:`plan_campaign` (without ``pipeline``, every planned repeat)."""
    return plan_campaign(spec, bank, profiles, version, pipeline, temperature).calls
