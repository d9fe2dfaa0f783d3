"""A tiny Spanish name-swap run on the real embedded llama.cpp judge (issue 32): one resume
under one male-read and one female-read name of the shipped INE set, two features: 4 asks
(the machine has 2 cores shared with other work)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from rig.probes.core import build_scorer
from rig.probes.name_swap import NameSwapSpec, run_name_swap
from rig.probes.names import load_name_set

pytestmark = pytest.mark.integration


def test_spanish_name_swap_on_the_embedded_scorer(tmp_path):
    pytest.importorskip("llama_cpp")
    out = tmp_path / "ns_es"
    spec = NameSwapSpec(out, kinds=("resume",), n_items=1, names_per_group=1, seed=0,
                        conditions=("plain",), features=("qualification", "hire"),
                        language="es")
    run_name_swap(spec, build_scorer("embedded"))
    df = pd.read_parquet(out / "scores.parquet")
    assert len(df) == 4 and set(df["group"]) == {"male", "female"}
    names = load_name_set("gendered", "es")
    assert set(df["first_name"]) <= {n for g in names.group_ids for n in names.names_of(g)}
    # the grammar makes every reply parse: a Spanish sí / no, a grade 1-10
    assert (df["parse_status"] == "ok").all(), df["raw"].tolist()
    assert set(df.loc[df["feature"] == "hire", "answer"]) <= {"sí", "no"}
    assert df.loc[df["feature"] == "qualification", "value"].between(1, 10).all()
    meta = json.loads((out / "probe.json").read_text(encoding="utf-8"))
    assert meta["language"] == "es" and "¿Contratarías" in meta["questions"]["hire"]
    assert meta["materials_path"].endswith("name_swap/es/materials.yaml")
