"""Model assembly from its packages is safe when several processes ask at once (test workers
under ``pytest -n``, a campaign's local workers): one assembles under a lock, the others wait
and use its verified result."""

from __future__ import annotations

import json
import multiprocessing
import os

import pytest

pytestmark = pytest.mark.unit

MODEL = "whisper-tiny.en"


def _ensure(cache: str) -> str:
    os.environ["RIG_CACHE_DIR"] = cache
    from rig.models import ensure_model

    return str(ensure_model(MODEL))


def test_three_processes_assembling_at_once_all_get_the_verified_model(tmp_path):
    from rig.models import MODELS, missing_packages

    if missing_packages(MODEL):
        pytest.skip(f"{MODEL}'s package is not installed (extra models)")
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(3) as pool:
        paths = pool.map(_ensure, [str(tmp_path)] * 3)
    assert len(set(paths)) == 1
    folder = tmp_path / "models" / MODEL
    marker = json.loads((folder / ".verified.json").read_text())
    assert marker["sha256"] == MODELS[MODEL].sha256
    assert not list(folder.glob("*.partial"))
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        assert (folder / name).stat().st_size > 0
