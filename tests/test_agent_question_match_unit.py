"""rig.calls.agent.question_match: which bank question an interviewer asked, by TF-IDF cosine of
normalised content words; the threshold (MATCH_THRESHOLD) on answer_bank/core's questions:
the bank's own wording and ASR-like variants, human paraphrases, and off-bank questions."""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.answers import load_bank
from rig.calls.agent.question_match import (
    MATCH_THRESHOLD,
    content_words,
    coverage,
    match_question,
    similarities,
)

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
BANK = {q.question_id: q.question for q in load_bank(ROOT / "answer_bank" / "core").questions}

PARAPHRASES = [
    ("q01_conflict", "Can you describe a situation where you and a colleague disagreed on how "
                     "to do something? How did you deal with it?"),
    ("q01_conflict", "tell me about a time you disagree with a co-worker about how to get "
                     "something done what happened and how did you handle it"),  # ASR-like
    ("q02_upset_customer", "Have you ever had to help an angry customer? What did you do?"),
    ("q02_upset_customer", "Describe a time you helped a frustrated client."),
    ("q03_hard_bug", "What's the hardest bug you've tracked down, and how did you approach it?"),
    ("q03_hard_bug", "Walk me through a difficult technical problem you debugged."),
    ("q04_front_desk", "Picture yourself at a busy clinic's front desk: phone ringing, patient "
                       "waiting, nurse wants a chart. What do you do?"),
    ("q05_caught_error", "Have you ever caught a mistake before it went out, yours or a "
                         "colleague's?"),
    ("q06_explain_patient", "How would you explain something complicated to a patient's "
                            "family so they understand?"),
    ("q07_improvement", "Tell me about something at work you improved on your own initiative."),
    ("q08_sales_fit", "Why does this inside sales role appeal to you, and what prepares you "
                      "for it?"),
    ("q09_behind_target", "What did you do when you were behind on your sales quota?"),
    ("q10_safety_check", "If you saw a coworker skip the forklift safety check, what would "
                         "you do?"),
]
OFF_BANK = ["What are your salary expectations?", "Where do you see yourself in five years?",
            "Hello! How can I assist you today?", "How are you?",
            "Good day. Thank you for your time.", "Why do you want to work here?",
            "Could you tell me your name before we proceed?", "What is your greatest weakness?"]


def test_the_banks_own_questions_match_themselves():
    for qid, text in BANK.items():
        got, sim = match_question(text, BANK)
        assert got == qid and sim == pytest.approx(1.0)


@pytest.mark.parametrize("qid,text", PARAPHRASES)
def test_paraphrases_match_their_question(qid, text):
    got, sim = match_question(text, BANK)
    assert got == qid, (text, sim)
    ranked = sorted(similarities(text, BANK).values(), reverse=True)
    assert ranked[1] <= sim - 0.15  # the runner-up bank question well behind


@pytest.mark.parametrize("text", OFF_BANK)
def test_off_bank_questions_match_nothing(text):
    assert match_question(text, BANK)[1] < MATCH_THRESHOLD - 0.1
    for qid, q in BANK.items():  # nor any one question alone (the agent's usual candidates)
        assert match_question(text, {qid: q})[1] < MATCH_THRESHOLD - 0.1, qid


def test_normalisation_folds_forms_and_drops_boilerplate():
    assert content_words("Tell me about a time you handled upset clients.") == \
        content_words("Describe a situation where you dealt with angry customers!")
    assert content_words("Can you walk me through it, please?") == []


def test_no_candidates_or_no_content_words():
    assert match_question("anything", {}) == (None, 0.0)
    assert match_question("How are you?", BANK) == (None, 0.0)


def test_coverage_is_the_share_of_the_questions_words_said():
    q = BANK["q01_conflict"]
    assert coverage(q, q) == 1.0
    part = "Tell me about a time you disagreed with a coworker."
    assert 0.2 < coverage(part, q) < 0.7
