"""Graded judging (``mode: expected``) over the OpenAI-compatible backend: against a fake
endpoint on loopback (what is asked for, an endpoint without log-probabilities refused in
words) and against a real ``llama_cpp.server`` serving the embedded GGUF."""

from __future__ import annotations

import json
import math

import pytest
from test_probes_openai_unit import Endpoint  # the fake chat-completions endpoint on loopback

from rig.answers import load_bank
from rig.pipeline import PipelineConfig, ScorerSettings
from rig.scorer.base import ModeUnsupported
from rig.scorer.factory import build_scorer
from rig.scorer.openai_compat import OpenAICompatScorer

MINI = load_bank("answer_bank/mini")


def _tokens(levels: dict[str, int]) -> list[dict]:
    out = [{"token": '{"levels": {', "logprob": 0.0, "top_logprobs": []}]
    for i, (cid, lv) in enumerate(levels.items()):
        out.append({"token": (", " if i else "") + f'"{cid}":', "logprob": 0.0,
                    "top_logprobs": []})
        alts = [{"token": f" {lv}", "logprob": math.log(0.7)},
                {"token": f" {max(0, lv - 1)}", "logprob": math.log(0.3)}]
        out.append({"token": f" {lv}", "logprob": math.log(0.7), "top_logprobs": alts})
    out.append({"token": "}}", "logprob": 0.0, "top_logprobs": []})
    return out


@pytest.mark.unit
def test_expected_mode_asks_for_top_logprobs_and_scores_their_expectation():
    q, a = MINI.answers()[0]
    levels = {c.id: 3 for c in q.rubric}

    ep = Endpoint()
    ep.script[1] = (200, json.dumps({"choices": [{
        "message": {"content": json.dumps({"levels": levels})},
        "logprobs": {"content": _tokens(levels)}}]}))
    try:
        s = OpenAICompatScorer(ep.base_url, "m", None, mode="expected")
        res = s.score(q, a.clean_text, 0)
    finally:
        ep.close()
    assert ep.requests[0]["logprobs"] is True and ep.requests[0]["top_logprobs"] == 20
    assert res.parse_status == "ok" and res.mode == "expected"
    # every criterion: 0.7 on level 3 and 0.3 on level 2 -> E[level] = 2.7
    assert res.score == pytest.approx(sum(c.points * 2.7 / 4 for c in q.rubric))


@pytest.mark.unit
def test_an_endpoint_without_logprobs_is_refused_in_words():
    ep = Endpoint()
    ep.content = lambda req: '{"levels": {}}'  # a reply with no logprobs at all
    q, a = MINI.answers()[0]
    try:
        s = OpenAICompatScorer(ep.base_url, "m", None, mode="expected")
        with pytest.raises(ModeUnsupported, match=r"token log-probabilities.*mode: argmax"):
            s.score(q, a.clean_text, 0)
    finally:
        ep.close()


@pytest.mark.unit
def test_the_pipeline_passes_mode_and_budget_to_the_openai_backend():
    pipe = PipelineConfig(name="p", scorer=ScorerSettings(
        backend="openai", base_url="http://127.0.0.1:9/v1", model="m", mode="expected",
        budget_s=7))
    s = build_scorer(pipe.scorer)
    assert (s.mode, s.budget_s, s.reproducible_at_zero) == ("expected", 7, False)


@pytest.mark.integration
def test_expected_mode_through_a_real_llama_cpp_server(llama_server, monkeypatch):
    base, key = llama_server
    monkeypatch.setenv("RIG_TEST_EXPECTED_KEY", key)
    s = OpenAICompatScorer(base, "m", "RIG_TEST_EXPECTED_KEY", mode="expected",
                           max_tokens=120, timeout_s=300)
    q, a = MINI.answers()[0]
    res = s.score(q, a.clean_text, 0)
    assert res.parse_status == "ok", res.error
    assert 0 < res.score < 100 and res.score != round(res.score)
    assert all(abs(sum(c.level_probs) - 1) < 1e-9 for c in res.criteria)
