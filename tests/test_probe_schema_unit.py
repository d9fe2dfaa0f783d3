"""A probe's summary.json as a typed contract (rig.probes.schema): the published JSON Schema
and field tables are the models', every probe writes a summary its model takes, and a file
that does not fit is refused naming the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rig.errors import ConfigError
from rig.probes.framing import FramingSpec, run_dual_framing
from rig.probes.schema import (
    FIELDS_BEGIN,
    FIELDS_END,
    FramingSummary,
    fields_markdown,
    load_probe_summary,
    probe_json_schema,
    write_probe_summary,
)
from rig.scorer.fake import FakeScorer

pytestmark = pytest.mark.unit

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_committed_json_schema_is_the_models() -> None:
    committed = json.loads((DOCS / "probe_summary.schema.json").read_text(encoding="utf-8"))
    assert committed == probe_json_schema(), \
        "docs/probe_summary.schema.json is stale: python -m rig.probes.schema docs"


def test_committed_field_tables_are_the_models() -> None:
    text = (DOCS / "probe_summary.md").read_text(encoding="utf-8")
    generated = text.split(FIELDS_BEGIN, 1)[1].split(FIELDS_END, 1)[0]
    assert generated.strip() == fields_markdown().strip(), \
        "docs/probe_summary.md is stale: python -m rig.probes.schema docs"


@pytest.fixture(scope="module")
def framing_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("df") / "df"
    return run_dual_framing(FramingSpec(out, iterations=1, seed=1), FakeScorer())


def test_a_probe_writes_and_reads_back_through_its_model(framing_run, tmp_path) -> None:
    s = framing_run.summary
    assert isinstance(s, FramingSummary) and s.probe == "dual_framing"
    path = framing_run.out_dir / "summary.json"
    assert load_probe_summary(path) == s
    # the file is the model's JSON, in the model's field order
    data = json.loads(path.read_text())
    assert list(data) == list(FramingSummary.model_fields)
    again = write_probe_summary(tmp_path / "summary.json", data)
    assert again.read_text() == path.read_text()


def test_a_summary_that_does_not_fit_is_refused_naming_file_and_field(framing_run,
                                                                      tmp_path) -> None:
    data = json.loads((framing_run.out_dir / "summary.json").read_text())
    bad = tmp_path / "summary.json"
    bad.write_text(json.dumps({**data, "n_asks": "many"}))
    with pytest.raises(ConfigError, match=r"summary.json: n_asks"):
        load_probe_summary(bad)
    bad.write_text(json.dumps({**data, "probe": "palmistry"}))
    with pytest.raises(ConfigError, match=r"summary.json: probe"):
        load_probe_summary(bad)
    with pytest.raises(ConfigError, match=r"summary.json: surprise"):
        write_probe_summary(tmp_path / "summary.json", {**data, "surprise": 1})
    bad.write_text("[1]")
    with pytest.raises(ConfigError, match="expected a JSON object"):
        load_probe_summary(bad)
