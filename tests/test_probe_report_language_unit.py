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
