"""The graded banks in Spanish, French and German and the Spanish translated twin of
core/q01_conflict (issue 32): the same design as the English bank, checked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rig.answers import load_bank
from rig.script import parse_script

pytestmark = pytest.mark.unit
BANKS = Path(__file__).resolve().parents[1] / "answer_bank"
_TIERS = ("strong", "border_hi", "border_lo", "weak")
_BREAKDOWN = re.compile(r"\ba: (.+?)\.?\s*$")


@pytest.mark.parametrize("name,language", [("es", "es"), ("fr", "fr"), ("de", "de"),
                                           ("es_twin", "es")])
def test_bank_design(name: str, language: str) -> None:
    bank = load_bank(BANKS / name)
    assert bank.meta.language == language and bank.meta.graded_by
    assert {q.language for q in bank.questions} == {language}
    for q in bank.questions:
        ids = [next(t for t in _TIERS if a.answer_id.endswith("_" + t)) for a in q.answers]
        assert sorted(ids) == ["border_hi", "border_lo", "strong", "weak"], q.question_id
        by = {i: a for i, a in zip(ids, q.answers, strict=True)}
        assert by["border_hi"].reference_score >= q.cutoff > by["border_lo"].reference_score
        for a in q.answers:
            assert not re.search(r"\d", a.clean_text), (a.answer_id, "numbers in words")
            m = _BREAKDOWN.search(" ".join(a.note.split()))
            assert m, f"{a.answer_id}: note has no 'a:' breakdown"
            parts = [p.strip().rsplit(" ", 1) for p in m.group(1).split(",")]
            total = 0
            for label, pts in parts:
                hits = [c for c in q.rubric if label in c.id]
                assert len(hits) == 1, (a.answer_id, label)
                assert 0 <= int(pts) <= hits[0].points, (a.answer_id, label)
                total += int(pts)
            assert len(parts) == len(q.rubric), a.answer_id
            grade_a = next(g.score for g in a.reference_grades if g.grader_id == "rig-author-a")
            assert total == grade_a, (a.answer_id, total, grade_a)


def test_translated_twin_matches_its_original() -> None:
    """Each twin names its English answer, has its tier, reference grades and script marks,
    and a length within the usual Spanish/English ratio (0.9-1.3 words)."""
    core = {a.answer_id: (q, a) for q, a in load_bank(BANKS / "core").answers()}
    for q, a in load_bank(BANKS / "es_twin").answers():
        assert a.twin_of in core, a.answer_id
        eq, ea = core[a.twin_of]
        assert (a.tier, q.cutoff) == (ea.tier, eq.cutoff)
        assert a.reference_grades == ea.reference_grades
        assert [c.points for c in q.rubric] == [c.points for c in eq.rubric]
        assert [c.id for c in q.rubric] == [c.id for c in eq.rubric]
        marks = [type(s).__name__ for s in parse_script(a.script) if type(s).__name__ != "Words"]
        assert marks == [type(s).__name__ for s in parse_script(ea.script)
                         if type(s).__name__ != "Words"]
        ratio = len(a.clean_text.split()) / len(ea.clean_text.split())
        assert 0.9 <= ratio <= 1.3, (a.answer_id, ratio)
