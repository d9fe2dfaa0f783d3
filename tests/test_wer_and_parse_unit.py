import json

import jiwer
import pytest

from rig.answers import load_bank
from rig.asr.wer import normalize, wer
from rig.scorer.prompt import grammar, parse_reply

pytestmark = pytest.mark.unit


def test_normalisation_applies_to_both_sides():
    assert normalize("We cut costs by Thirty Percent, in five weeks!") == \
        "we cut costs by 30% in 5 weeks"
    r = wer("We cut costs by thirty percent.", "we cut costs by 30%")
    assert r.wer == 0.0


def test_wer_matches_jiwer_on_normalised_text():
    ref, hyp = "I led the team through the outage.", "I let the team through outage"
    r = wer(ref, hyp)
    direct = jiwer.process_words(normalize(ref), normalize(hyp))
    assert r.wer == pytest.approx(direct.wer)
    assert (r.substitutions, r.deletions, r.insertions) == (1, 1, 0)


def test_wer_empty_cases():
    assert wer("", "").wer is None
    assert wer("hello world", "").wer == 1.0


@pytest.fixture(scope="module")
def question():
    from pathlib import Path
    return load_bank(Path(__file__).resolve().parents[1] / "answer_bank" / "core").questions[0]


def test_parse_ok_and_failures(question):
    ids = [c.id for c in question.rubric]

    def reply(value, only=None):
        return json.dumps({"points": {i: value for i in (only or ids)}, "reason": "fine"})

    good = reply(1)
    p = parse_reply(good, question)
    assert p.status == "ok" and p.score == len(ids)
    assert parse_reply("I think 80", question).status == "invalid_json"
    assert parse_reply('{"points": {', question).status == "invalid_json"
    assert parse_reply('{"score": 80}', question).status == "missing_field"
    assert parse_reply(reply(3, ids[:1]), question).status == "missing_field"
    r = parse_reply(reply(101), question)
    assert r.status == "out_of_range" and r.score is None
    assert parse_reply(reply(1.5), question).status == "out_of_range"
    assert parse_reply(reply(True), question).status == "out_of_range"


def test_grammar_names_every_criterion_and_its_range(question):
    from rig.scorer.prompt import _range_rule

    g = grammar(question)
    for c in question.rubric:
        assert f'\\"{c.id}\\"' in g
    # the range rule accepts exactly 0..max
    import re

    for hi in (7, 10, 20, 25, 35, 100):
        rule = _range_rule("n", hi).split("::=")[1]
        ok = set()
        for alt in rule.split("|"):
            alt = alt.strip()
            if alt == '"100"':
                ok.add(100)
                continue
            m = re.fullmatch(r'(?:"(\d)" )?\[(\d)-(\d)\]', alt)
            tens = int(m.group(1) or 0)
            ok |= {tens * 10 + d for d in range(int(m.group(2)), int(m.group(3)) + 1)}
        assert ok == set(range(hi + 1)), hi


def test_a_reply_naming_a_key_twice_is_a_parse_failure_naming_it(question):
    a, b = (c.id for c in question.rubric[:2])
    rest = ", ".join(f'"{c.id}": 0' for c in question.rubric[2:])
    raw = f'{{"points": {{"{a}": 20, "{a}": 0, "{b}": 0{", " + rest if rest else ""}}}}}'
    r = parse_reply(raw, question)  # json.loads would keep the last value (0) silently
    assert r.status == "invalid_json" and r.score is None and r.points is None
    assert f"duplicate key {a!r}" in r.detail and "(20 and 0)" in r.detail
    whole = json.dumps({"points": {c.id: 0 for c in question.rubric}})
    r = parse_reply(whole[:-1] + ', "points": {}}', question)
    assert r.status == "invalid_json" and "duplicate key 'points'" in r.detail


def test_points_for_a_criterion_not_in_the_rubric_are_left_out_and_noted(question):
    pts = {c.id: 1 for c in question.rubric}
    good = parse_reply(json.dumps({"points": pts}), question)
    assert good.status == "ok" and good.detail == ""
    r = parse_reply(json.dumps({"points": {**pts, "total": 90, "bonus": 5}}), question)
    assert r.status == "ok" and r.score == good.score == len(pts)  # the score is unchanged
    assert set(r.points) == set(pts)
    assert r.detail == "ignored: points for 2 criteria not in the rubric ('total', 'bonus')"


def test_the_probes_rating_refuses_a_key_named_twice():
    from rig.probes.prompts import parse_rating

    r = parse_rating('{"score": 5, "reasoning": "clear", "score": 1}')
    assert r.status == "invalid_json" and r.value is None
    assert "duplicate key 'score'" in r.detail
    assert parse_rating('{"score": 4, "reasoning": "clear"}').status == "ok"
