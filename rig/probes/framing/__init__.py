"""The dual-framing probe: does the scorer model take sides on contested hiring topics?

Method of BiasLab (2026). A topic has two targets, a and b (for example "men" and "women").
Each statement asserts that a is better than b (the **affirmative** frame); the **reverse**
frame is made by swapping the exact target strings, so both frames have the same structure.
Every ask is a prefix wrapper drawn at random from a pool, the statement, the fixed options
(Strongly agree, Agree, Disagree, Strongly disagree) and a suffix wrapper demanding one
option; ``iterations`` draws per statement, each used in both frames, at the scorer's
temperature (0 by default).

A reply is normalised to Strongly agree / Agree / Neutral / Disagree / Strongly disagree by
rules (:func:`normalise`): "strongly" only with an explicit intensifier (or "I couldn't
agree more"); refusals and balanced answers are Neutral; a reply with no option, refusal or
balance recognised, one that only echoes the options list, and one whose only option is a
negated intensifier ("I do not strongly disagree") is a counted failure, never scored,
unless an LLM judge is given (:func:`judge_prompt`), which then classifies it (the judge
also decides replies that mention options of both polarities). Scores are +2 ... -2
(Strongly agree ... Strongly disagree); reverse-frame scores are negated (polarity
alignment), so a positive aligned score always favours target a.

Statistics per topic and over all topics, for each frame and both pooled: mean aligned score
mu, standard deviation, one-sample t-test against 0, Cohen's d = mu / sd
(:func:`~rig.stats.comparisons.one_sample`), the neutrality rate (Neutral / scored replies), and
the framing asymmetry mu(affirmative) - mu(reverse), from -4 to +4: 0 when the scorer's
stance does not depend on the frame; positive when it agrees with whatever statement it is
shown (acquiescence: +2 for "Agree" to both, +4 for "Strongly agree" to both); negative when it
disagrees with both frames (-2 for "Disagree" to both, -4 for "Strongly disagree" to both).
With such a symmetric stance the pooled mu is 0 even though no reply was Neutral.

Outputs (``out_dir``): ``scores.parquet`` (one row per ask), ``summary.json``,
``report.html``, ``probe.json`` and ``asks.jsonl`` (and ``judge_asks.jsonl`` with a judge).

Modules:

* :mod:`~rig.probes.framing.topics`    topics, wrappers and their draw; frames and stances.
* :mod:`~rig.probes.framing.normalise` the rule-based normaliser of a reply.
* :mod:`~rig.probes.framing.judge`     the LLM judge's prompt and parser.
* :mod:`~rig.probes.framing.run`       the ask and the run (:func:`run_dual_framing`).
* :mod:`~rig.probes.framing.summary`   the summary from the rows (:func:`summarize`).
"""

from rig.probes.framing.judge import JUDGE_SYSTEM, judge_prompt, parse_judge
from rig.probes.framing.normalise import BALANCED, ECHOED, Normalised, normalise
from rig.probes.framing.run import (
    PROMPT_VERSION,
    REPLY_GRAMMAR,
    SYSTEM,
    FramingResult,
    FramingSpec,
    framing_prompt,
    run_dual_framing,
    write_outputs,
)
from rig.probes.framing.summary import frame_stats, summarize
from rig.probes.framing.topics import (
    DEFAULT_FRAMING,
    FRAMES,
    OPTIONS,
    STANCE_SCORE,
    STANCE_TEXT,
    STANCES,
    Frame,
    Stance,
    Topic,
    Wrappers,
    draw_wrappers,
    load_topics,
    reverse_statement,
)

__all__ = [
    "BALANCED",
    "DEFAULT_FRAMING",
    "ECHOED",
    "FRAMES",
    "JUDGE_SYSTEM",
    "OPTIONS",
    "PROMPT_VERSION",
    "REPLY_GRAMMAR",
    "STANCES",
    "STANCE_SCORE",
    "STANCE_TEXT",
    "SYSTEM",
    "Frame",
    "FramingResult",
    "FramingSpec",
    "Normalised",
    "Stance",
    "Topic",
    "Wrappers",
    "draw_wrappers",
    "frame_stats",
    "framing_prompt",
    "judge_prompt",
    "load_topics",
    "normalise",
    "parse_judge",
    "reverse_statement",
    "run_dual_framing",
    "summarize",
    "write_outputs",
]
