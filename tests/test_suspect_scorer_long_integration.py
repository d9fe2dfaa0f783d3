"""A transcript longer than the judge's context is never cut to fit: it is recorded as
``parse_status='too_long'`` with no score. The real llama.cpp scorer at its default context
(n_ctx 2048 in rig.scorer.llamacpp) on a long text, both modes; and the scorer interface's
handling on a fake backend is in tests/test_suspect_unit.py."""

from __future__ import annotations

import pytest

from rig.answers import load_bank
from rig.scorer.llamacpp import LlamaCppScorer

pytestmark = pytest.mark.integration
MINI = load_bank("answer_bank/mini")


def _long_text(n_words: int) -> str:
    words = " ".join(a.clean_text for _, a in MINI.answers()).split()
    return " ".join(words[i % len(words)] for i in range(n_words))


@pytest.mark.parametrize("mode", ["argmax", "expected"])
def test_the_real_judge_records_a_transcript_over_its_context_as_too_long(mode: str) -> None:
    scorer = LlamaCppScorer(mode=mode)  # n_ctx 2048, the pipeline's default
    q, _ = next(iter(MINI.answers()))
    res = scorer.score(q, _long_text(2500), 0)
    assert res.parse_status == "too_long" and res.score is None and res.points is None
    assert "over the judge's context of 2048 tokens (n_ctx); not scored" in res.error
    assert scorer.prefix_cache_stats() == {"hits": 0, "misses": 0, "restored": 0}  # nothing
