"""``expected`` mode over an OpenAI-compatible endpoint: level distributions from the
``top_logprobs`` of the reply's tokens.

The endpoint writes the levels JSON freely (no grammar reaches it). Walking the reply's tokens,
at the token that holds a criterion's level digit (the first digit after ``"<id>":``), the
distribution over the levels is the ``top_logprobs`` entries whose text, stripped of spaces,
is a level digit (an entry ``" 3"`` and one ``"3"`` both count for level 3), exponentiated
and renormalised over the levels; levels absent from the top list get probability 0. Levels
the endpoint did not list at all mean the distribution is cut at ``TOP_LOGPROBS``: the share
of probability it lists is ``listed_mass``, recorded nowhere as a score.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from rig.scorer.base import LevelsReply
from rig.scorer.levels import LEVEL_DIGITS, N_LEVELS

#: How many alternatives per token to ask for (the OpenAI API allows at most 20).
TOP_LOGPROBS = 20


def levels_from_logprobs(content: Sequence[dict], criterion_ids: Sequence[str]
                         ) -> LevelsReply:
    """Per criterion (in ``criterion_ids`` order) the level distribution at its digit.

    ``content``: the chat reply's ``choices[0].logprobs.content``, a list of
    ``{"token": str, "logprob": float, "top_logprobs": [{"token", "logprob"}, ...]}``.
    Entries that are not objects, and log-probabilities that are not finite numbers <= 0,
    are ignored. A criterion whose level the reply does not write (or writes with no level
    digit in its top list) is left out, so :func:`rig.scorer.levels.score_levels` records the
    grading as a ``missing_field`` failure; it never becomes a score.
    """
    text = ""
    found: dict[str, list[float]] = {}
    chosen: dict[str, int] = {}
    pending = {cid: re.compile(r'"' + re.escape(cid) + r'"\s*:\s*$') for cid in criterion_ids}
    for tok in content:
        if not isinstance(tok, dict):  # an endpoint's garbage is no token
            continue
        t = str(tok.get("token", ""))
        digit = t.strip()
        if digit in LEVEL_DIGITS:
            for cid, pat in list(pending.items()):
                if pat.search(text + t[: len(t) - len(t.lstrip())]):
                    probs = [0.0] * N_LEVELS
                    alts = tok.get("top_logprobs")
                    for alt in alts if isinstance(alts, list) else []:
                        if not isinstance(alt, dict):
                            continue
                        a = str(alt.get("token", "")).strip()
                        lp = alt.get("logprob")
                        # a log-probability is finite and <= 0 (exp(1000) would overflow)
                        if (a in LEVEL_DIGITS and isinstance(lp, int | float)
                                and not isinstance(lp, bool) and math.isfinite(lp) and lp <= 0):
                            probs[int(a)] += math.exp(lp)
                    if sum(probs) > 0:
                        found[cid] = probs
                        chosen[cid] = int(digit)
                    del pending[cid]
                    break
        text += t
    dists = [found[c] for c in criterion_ids if c in found]
    return LevelsReply(dists, chosen)
