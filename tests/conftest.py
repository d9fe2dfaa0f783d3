"""Shared fixtures. Every test module declares ``pytestmark`` = unit or integration."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
SHARED_SPEECH = ROOT.parent / "shared" / "data" / "speech"


def pytest_collection_modifyitems(config, items):
    for item in items:
        if not ({"unit", "integration"} & {m.name for m in item.iter_markers()}):
            raise pytest.UsageError(f"{item.nodeid}: mark the module unit or integration")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    # synthesized audio goes to a per-session temp folder; models stay in the user cache
    monkeypatch.setenv("RIG_AUDIO_CACHE", str(tmp_path_factory.getbasetemp() / "audio-cache"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
