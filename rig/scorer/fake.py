"""A fake scorer for unit tests of campaign logic: replies by a user-supplied function."""

from __future__ import annotations

from collections.abc import Callable

from rig.scorer.base import Scorer


class FakeScorer(Scorer):
    """``reply(user_prompt, seed) -> raw text``; by default, points proportional to the
    transcript's length (so truncation lowers the score), as the rubric's JSON."""

    name = "fake"

    def __init__(self, reply: Callable[[str, int], str] | None = None) -> None:
        self._reply = reply

    def _complete(self, system: str, user: str, grammar: str, seed: int) -> str:
        if self._reply is not None:
            return self._reply(user, seed)
        import json
        import re

        crit = re.findall(r"^- (\w+) \(0 to (\d+) points\)", user, re.MULTILINE)
        transcript = user.rsplit('"""', 2)[-2] if user.count('"""') >= 2 else ""
        frac = min(1.0, len(transcript.split()) / 80)
        return json.dumps({"points": {c: round(int(m) * frac) for c, m in crit},
                           "reason": "fake"})
