"""A fake scorer for unit tests of campaign logic: replies by a user-supplied function."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import numpy as np

from rig.scorer.base import LevelsReply, Scorer, ScoringMode
from rig.scorer.levels import N_LEVELS


def _transcript(user: str) -> str:
    return user.rsplit('"""', 2)[-2] if user.count('"""') >= 2 else ""


class FakeScorer(Scorer):
    """``reply(user_prompt, seed) -> raw text``; by default, points proportional to the
    transcript's length (so truncation lowers the score), as the rubric's JSON. In
    ``expected`` mode, each criterion's level distribution is a discretised normal centred
    on the same length fraction (so scores fall off the integer grid)."""

    name = "fake"

    def __init__(self, reply: Callable[[str, int], str] | None = None,
                 mode: ScoringMode = "argmax") -> None:
        self._reply = reply
        self.mode = mode

    def _complete(self, system: str, user: str, grammar: str, seed: int, *, head: str = "",
                  deadline: float | None = None) -> str:
        if self._reply is not None:
            return self._reply(user, seed)
        crit = re.findall(r"^- (\w+) \(0 to (\d+) points\)", user, re.MULTILINE)
        frac = min(1.0, len(_transcript(user).split()) / 80)
        return json.dumps({"points": {c: round(int(m) * frac) for c, m in crit},
                           "reason": "fake"})

    def _complete_levels(self, system: str, head: str, tail: str,
                         criterion_ids: list[str], seed: int, *,
                         deadline: float | None = None) -> LevelsReply:
        frac = min(1.0, len(_transcript(head + tail).split()) / 80)
        levels = np.arange(N_LEVELS)
        p = np.exp(-0.5 * ((levels - frac * (N_LEVELS - 1)) / 0.8) ** 2)
        p = (p / p.sum()).tolist()
        return LevelsReply([p] * len(criterion_ids),
                           dict.fromkeys(criterion_ids, int(np.argmax(p))))
