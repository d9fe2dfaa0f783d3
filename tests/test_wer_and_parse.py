import jiwer
import pytest

from rig.answers import load_bank
from rig.scorer.prompt import grammar, parse_reply
from rig.wer import normalize, wer

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
    good = '{"points": {%s}, "reason": "fine"}' % ", ".join(f'"{i}": 1' for i in ids)
    p = parse_reply(good, question)
    assert p.status == "ok" and p.score == len(ids)
    assert parse_reply("I think 80", question).status == "invalid_json"
    assert parse_reply('{"points": {', question).status == "invalid_json"
    assert parse_reply('{"score": 80}', question).status == "missing_field"
    missing = '{"points": {"%s": 3}}' % ids[0]
    assert parse_reply(missing, question).status == "missing_field"
    over = '{"points": {%s}}' % ", ".join(f'"{i}": 101' for i in ids)
    r = parse_reply(over, question)
    assert r.status == "out_of_range" and r.score is None
    frac = '{"points": {%s}}' % ", ".join(f'"{i}": 1.5' for i in ids)
    assert parse_reply(frac, question).status == "out_of_range"


def test_grammar_names_every_criterion(question):
    g = grammar(question)
    for c in question.rubric:
        assert f'\\"{c.id}\\"' in g
        assert f'"{c.points}"' in g
