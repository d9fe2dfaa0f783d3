"""Can repeat r > 0 of a call differ from repeat 0? What a repeat varies, and when it cannot.

MEASUREMENT.md, "Repeat and seed": repeat r of a call uses seed r for everything random in it.
In a simulated call that is:

* the noise realisation (``rig.synth.noise``: white, pink, street, babble offsets, a noise
  file's offset; stream 2 of the seed);
* the placement of fillers and word repetitions (``rig.synth.plan``; streams 1 and 4);
* the packet-loss and jitter patterns (``rig.channel.network``; stream 10, one per step);
* the scorer's sampling, when its temperature is above 0 (the seed goes with every request).

The speech render itself (voice, script, pace, pauses) is the same in every repeat, and so
are the codecs, band limits, gain and clipping, the VAD and the ASR (temperature 0). So a
call whose profile draws nothing from the seed, graded by a scorer that is deterministic at
its temperature, gives the same result in every repeat: the planner runs its first repeat
only and reports the others as skipped with the reason (:func:`repeat_variation`).

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
                     temperature: float | None = None) -> RepeatVariation:
    """Can repeats of calls under ``profile`` through ``pipeline`` differ (module docstring)?
    """
    sources = profile_seeded(profile) + scorer_seeded(pipeline, temperature)
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
