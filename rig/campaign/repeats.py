"""Can repeat r > 0 of a call differ from repeat 0? What a repeat varies, and when it cannot.

MEASUREMENT.md, "Repeat and seed": repeat r of a call uses seed r for everything random in it.
In a simulated call that is:

* the noise realisation (``rig.synth.noise``: white, pink, street, babble offsets, a noise
  file's offset; stream 2 of the seed);
* the placement of fillers and word repetitions (``rig.synth.plan``; streams 1 and 4);
* the packet-loss and jitter patterns (``rig.channel.network``; stream 10, one per step);
* the scorer's sampling, when its temperature is above 0 (the seed goes with every request).

The speech render itself (voice, script, pace, pauses) is the same in every repeat unless
the campaign varies the delivery (``--vary-delivery``, :mod:`rig.campaign.delivery`: each
repeat spoken at its own rate), and so are the codecs, band limits, gain and clipping, the
VAD and the ASR (temperature 0). So a call whose profile draws nothing from the seed,
graded by a scorer that is deterministic at its temperature, gives the same result in every
repeat: the planner runs its first repeat only and reports the others as skipped with the
reason (:func:`repeat_variation`).

Never treated as deterministic: a real transport (the network and the far end vary), a scorer
at a temperature above 0, and an OpenAI-compatible endpoint at any temperature (servers batch
requests and do not promise the same reply to the same prompt).
"""

from __future__ import annotations

from dataclasses import dataclass

from rig.pipeline import PipelineConfig
from rig.profiles import Profile


@dataclass(frozen=True)
class RepeatVariation:
    """Whether repeats of a (profile, pipeline) can differ.

    ``can_differ``: True when something in the call draws from the seed. ``sources``: what
    does, in words (empty when nothing). ``reason``: one sentence for campaign.json,
    summary.json and the CLI.
    """
    can_differ: bool
    sources: tuple[str, ...]
    reason: str


def profile_seeded(profile: Profile) -> list[str]:
    """What in ``profile`` is drawn from the call's seed, in words (empty: nothing)."""
    from rig.channel.network import expected_missing_pct
    from rig.channel.steps import NETWORK_KINDS

    out = []
    if profile.noise.kind != "none":
        out.append(f"{profile.noise.kind} noise")
    if profile.disfluency.fillers_per_100_words > 0:
        out.append("filler placement")
    if profile.disfluency.repetitions_per_100_words > 0:
        out.append("word repetitions")
    for step in profile.channel.steps:
        if step.kind in NETWORK_KINDS and expected_missing_pct(step) > 0:  # type: ignore[arg-type]
            out.append("packet loss" if step.kind == "packet_loss" else "jitter")
    return list(dict.fromkeys(out))


def scorer_seeded(pipeline: PipelineConfig, temperature: float | None = None) -> list[str]:
    """What in the scorer varies between repeats, in words (empty: deterministic).

    ``temperature``: the temperature of the scorer that will run, when it is not the
    pipeline's (a test's fake, taken to sample above 0); default the pipeline's.
    """
    t = pipeline.scorer.temperature if temperature is None else temperature
    out = []
    # the embedded judge in expected mode reads each criterion's level distribution from the
    # same prompt state and scores its expectation: nothing is sampled, at any temperature
    sampled = temperature is not None or not (pipeline.scorer.backend == "llamacpp"
                                              and pipeline.scorer.mode == "expected")
    if t > 0 and sampled:
        out.append(f"scorer sampling at temperature {t:g}")
    if pipeline.scorer.backend == "openai":
        out.append("an OpenAI-compatible scorer endpoint (not reproducible even at "
                   "temperature 0)")
    return out


def repeat_variation(profile: Profile, pipeline: PipelineConfig, transport: str = "sim",
                     temperature: float | None = None, delivery_sd_pct: float = 0.0
                     ) -> RepeatVariation:
    """Can repeats of calls under ``profile`` through ``pipeline`` differ (module docstring)?
    ``delivery_sd_pct``: the campaign's ``--vary-delivery`` (:mod:`rig.campaign.delivery`):
    above 0, every repeat is spoken at its own rate (a recorded voice excepted)."""
    sources = profile_seeded(profile) + scorer_seeded(pipeline, temperature)
    if delivery_sd_pct > 0 and profile.voice.engine != "recorded":
        sources.insert(0, f"the delivery (speech rate varied per repeat, SD "
                          f"{delivery_sd_pct:g}%)")
    if transport != "sim":
        sources.insert(0, f"the real {transport} transport")
    if sources:
        return RepeatVariation(True, tuple(sources), "repeats vary: " + ", ".join(sources))
    return RepeatVariation(False, (), deterministic_summary([profile.profile_id], pipeline,
                                                            temperature))


def deterministic_summary(profile_ids: list[str], pipeline: PipelineConfig,
                          temperature: float | None = None) -> str:
    """The reason repeats of ``profile_ids`` through ``pipeline`` are not run, in one
    sentence."""
    t = pipeline.scorer.temperature if temperature is None else temperature
    which = (f"profile {profile_ids[0]!r}" if len(profile_ids) == 1 else
             "profiles " + ", ".join(repr(p) for p in profile_ids))
    return (f"deterministic: no seeded noise, fillers, packet loss or jitter in {which} and "
            f"scorer temperature {t:g} ({pipeline.scorer.backend} backend): every repeat "
            "would equal repeat 0")


#: The command-line step that makes a deterministic baseline's repeats differ (with
#: ``--baseline-repeats 3`` added where the campaign plans fewer than two baseline repeats).
VARY_DELIVERY_STEP = "--vary-delivery 5"


def floor_advice(baseline: RepeatVariation, baseline_repeats: int) -> str:
    """What would measure the noise floor of a campaign whose baseline varies as ``baseline``
    says and plans ``baseline_repeats`` repeats of each answer, in one sentence, never a step
    that cannot change the answer: more baseline repeats when they can differ; otherwise (a
    deterministic pipeline and an unseeded baseline: more repeats would be skipped, or
    identical) a varied delivery per repeat (:mod:`rig.campaign.delivery`), which is what
    differs between real repeats of a call."""
    if baseline.can_differ and baseline_repeats < 2:
        return ("run the campaign with --baseline-repeats 2 or more (its repeats vary: "
                + ", ".join(baseline.sources) + ")")
    if baseline.can_differ:  # they could differ, and came out identical (or unscored)
        varied = any(x.startswith("the delivery") for x in baseline.sources)
        return ("its repeats could differ (" + ", ".join(baseline.sources) + ") but did "
                "not change a transcript or a score: run more baseline repeats"
                + (" or a larger --vary-delivery" if varied else
                   f", or vary the delivery too ({VARY_DELIVERY_STEP})"))
    if baseline_repeats >= 2:  # rig demo (two baseline repeats), or a campaign planning two
        how = (f"rerun the same command with {VARY_DELIVERY_STEP} (rig demo "
               f"{VARY_DELIVERY_STEP}, or your rig campaign run command with it)")
    else:  # only rig campaign run plans fewer than two baseline repeats
        how = (f"rerun your rig campaign run command with {VARY_DELIVERY_STEP} "
               "--baseline-repeats 3")
    return (f"{how}: each repeat is then spoken at its own rate (SD 5% around the "
            "profile's), as two real deliveries differ, and the repeats show how far a score "
            "moves by chance. More repeats alone would not: this pipeline and baseline have "
            "nothing random in them (nothing drawn from a seed; a judge that grades a text "
            "the same way each time). Seeded noise, loss or jitter on the baseline also works.")
