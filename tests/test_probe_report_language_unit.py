"""A style probe's report and table state the run's language, and a hedging run outside
English shows its own set's hedge markers, not the English ones (fake scorer)."""

from __future__ import annotations

import pytest

from rig.probes.data import DEFAULT_SHIBBOLETH, load_shibboleth
from rig.probes.shibboleth import ProbeSpec, run_probe
from rig.scorer.fake import FakeScorer

pytestmark = pytest.mark.unit


def _run(tmp_path, lang):
    return run_probe(ProbeSpec("hedging", tmp_path / lang, n_sessions=1,
                               questions_per_session=None, conditions=("plain",),
                               language=lang), FakeScorer())


def test_a_spanish_hedging_report_names_spanish_and_its_own_markers(tmp_path):
    res = _run(tmp_path, "es")
    html = (res.out_dir / "report.html").read_text(encoding="utf-8")
    lex = load_shibboleth(DEFAULT_SHIBBOLETH / "es", "es").hedges
    assert "in Spanish (<code>es</code>)" in html
    assert "I think" not in html and "sort of" not in html
    assert "hedges in Spanish, such as" in html
    for marks in lex.markers.values():  # every marker counted is listed
        assert all(m in html for m in marks)
    assert "Source: Briz" in html


def test_an_english_hedging_report_keeps_its_description_and_says_english(tmp_path):
    res = _run(tmp_path, "en")
    html = (res.out_dir / "report.html").read_text(encoding="utf-8")
    assert "in English (<code>en</code>)" in html and "I think" in html
    assert "Hedge markers counted in this" not in html


def test_the_terminal_table_names_the_language(tmp_path, capsys):
    from rig.cli.probe_tables import print_shibboleth

    res = _run(tmp_path, "fr")
    print_shibboleth(res.summary, res.out_dir)
    assert "probe hedging (fr)" in capsys.readouterr().out


# -- lang on quoted text (issue 33): the pages are English, what they quote is not ----------

def _quoted_langs(html: str) -> set[str]:
    """The lang codes of the elements inside the page (the <html> element's left out)."""
    import re

    return set(re.findall(r'<(?!html)\w+ lang="(\w+)"', html))


@pytest.mark.parametrize("lang", ["es", "fr", "de"])
def test_a_hedging_report_marks_its_sets_markers_with_the_sets_language(tmp_path, lang):
    import html as h

    res = _run(tmp_path, lang)
    page = (res.out_dir / "report.html").read_text(encoding="utf-8")
    assert page.startswith('<!doctype html><html lang="en">')
    assert _quoted_langs(page) == {lang}
    lex = load_shibboleth(DEFAULT_SHIBBOLETH / lang, lang).hedges
    for kind, marks in lex.markers.items():  # the note lists each kind's markers in one span
        assert f'{kind}: <span lang="{lang}">{h.escape(", ".join(marks))}</span>' in page
    first = next(m for marks in lex.markers.values() for m in marks)
    assert f"'<span lang=\"{lang}\">{h.escape(first)}</span>'" in page  # the description's


def test_an_english_hedging_report_marks_nothing(tmp_path):
    page = (_run(tmp_path, "en").out_dir / "report.html").read_text(encoding="utf-8")
    assert _quoted_langs(page) == set()


def test_the_largest_gaps_mark_question_answers_and_reasoning():
    from rig.probes.report import _largest_gaps

    side = {"variant": "confident", "score": 4.0, "answer": "Creo que sí.",
            "reasoning": "Respuesta clara."}
    detail = {"plain": {"largest_gaps": [{
        "question_id": "q1", "category": "behavioral", "diff": -1.0,
        "question": "¿Cómo resolvió un conflicto?", "reference": side,
        "treatment": {**side, "variant": "hedged", "score": 3.0}}]}}
    es = "".join(_largest_gaps(detail, "es"))
    assert es.count('<blockquote lang="es">Creo que sí.</blockquote>') == 2
    assert es.count('<i lang="es">Respuesta clara.</i>') == 2
    assert '<span lang="es">¿Cómo resolvió un conflicto?</span>' in es
    assert _quoted_langs("".join(_largest_gaps(detail, "en"))) == set()


def test_a_german_dual_framing_report_marks_topics_statements_and_options(tmp_path):
    import html as h

    from test_probe_languages_unit import _answer_in

    from rig.probes.framing import DEFAULT_FRAMING, FramingSpec, load_topics, run_dual_framing
    from rig.probes.framing.languages import FRAMING_LANGUAGES

    out = tmp_path / "de"
    run_dual_framing(FramingSpec(out, topics=("gender_leadership",), iterations=2,
                                 language="de"), FakeScorer(_answer_in("de")))
    page = (out / "report.html").read_text(encoding="utf-8")
    assert _quoted_langs(page) == {"de"}
    topics, _ = load_topics(DEFAULT_FRAMING / "de")
    topic = next(t for t in topics if t.id == "gender_leadership")
    for s in topic.statements:
        assert f'<li lang="de">{h.escape(s)}</li>' in page
    assert f'<span lang="de">{h.escape(FRAMING_LANGUAGES["de"].options_text)}</span>' in page


def test_a_spanish_name_swap_records_its_language_and_marks_the_instruction(tmp_path):
    import json

    from test_probe_languages_unit import spanish_name_swap_inputs

    from rig.probes.name_swap import NameSwapSpec, run_name_swap

    names, mats = spanish_name_swap_inputs(tmp_path)
    spec = NameSwapSpec(tmp_path / "out", name_sets=(str(names),), materials_path=mats,
                        kinds=("resume",), names_per_group=1, conditions=("plain", "anti_bias"),
                        features=("hire",), language="es")
    res = run_name_swap(spec, FakeScorer(lambda u, s: json.dumps({"hire": "sí"})))
    assert res.summary.language == "es"
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert _quoted_langs(page) == {"es"}
    assert '<i lang="es">' in page  # the anti_bias condition's instruction, in Spanish
