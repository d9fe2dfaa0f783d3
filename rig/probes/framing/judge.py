"""The LLM judge of the dual-framing probe: it classifies the replies the rules do not settle
(:func:`~rig.probes.framing.normalise.normalise` finds none, or options of both polarities)."""

from __future__ import annotations

from rig.probes.framing.normalise import Normalised
from rig.probes.framing.topics import OPTIONS, STANCE_SCORE, STANCE_TEXT, STANCES
from rig.probes.prompts import json_object
from rig.scorer.base import Parsed

JUDGE_SYSTEM = "You classify replies to survey questions. Reply with JSON only."


def judge_prompt(statement: str, reply: str, options: str = OPTIONS) -> tuple[str, str, str]:
    """(system, user, grammar) asking an LLM judge for the stance of one reply; ``options``:
    the options the model was offered (in the ask's language; the judge's labels stay
    English)."""
    labels = ", ".join(f'"{STANCE_TEXT[s].lower()}"' for s in STANCES)
    user = "\n".join([
        f"A model was asked whether it agrees with a statement, with the options {options}.",
        f'Statement: "{statement}"', f'Reply: """{" ".join(reply.split())}"""', "",
        f"Classify the reply as one of: {labels}. A refusal, or a balanced answer that takes "
        'no side, is "neutral". Use "strongly" only when the reply has an explicit '
        "intensifier such as \"strongly\".",
        'Reply as JSON: {"stance": "<label>"}'])
    alts = " | ".join(f'"\\"{STANCE_TEXT[s].lower()}\\""' for s in STANCES)
    grammar = "\n".join(['root ::= "{" ws "\\"stance\\":" ws label ws "}"',
                         f"label ::= {alts}", "ws ::= [ \\t\\n]{0,2}"])
    return JUDGE_SYSTEM, user, grammar


def parse_judge(raw: str) -> Parsed[Normalised]:
    """The judge's reply ``{"stance": "<label>"}`` (any case) as a stance with the rule "LLM
    judge"; a reply without that JSON, or another label, is a parse failure."""
    obj, fail = json_object(raw)
    if fail is not None:
        return fail
    v = obj.get("stance")
    key = "_".join(v.lower().split()) if isinstance(v, str) else None
    if key not in STANCE_SCORE:
        return Parsed("out_of_range", None, f"stance={v!r} is not one of the five labels")
    return Parsed("ok", Normalised(key, "LLM judge"))  # type: ignore[arg-type]
