"""rig.scorer.amx: the default model parameters are wrapped only inside the block, only where
asked, and restored after it (also after an error); the process-wide patch applies once."""

from __future__ import annotations

import types

import pytest

import rig.scorer.amx as amx

pytestmark = pytest.mark.unit


@pytest.fixture
def fake_lib(monkeypatch):
    lib = types.SimpleNamespace(
        llama_model_default_params=lambda: types.SimpleNamespace(use_extra_bufts=True))
    fake_llama = types.SimpleNamespace(llama_cpp=lib)
    import sys

    monkeypatch.setitem(sys.modules, "llama_cpp.llama", fake_llama)
    monkeypatch.setitem(sys.modules, "llama_cpp", types.SimpleNamespace(llama=fake_llama))
    return lib


def test_the_guard_turns_extra_buffers_off_inside_the_block_only(fake_lib):
    before = fake_lib.llama_model_default_params
    with amx.safe_model_params(force=True) as off:
        assert off is True
        assert fake_lib.llama_model_default_params().use_extra_bufts is False
    assert fake_lib.llama_model_default_params is before
    assert fake_lib.llama_model_default_params().use_extra_bufts is True


def test_without_amx_nothing_changes(fake_lib):
    before = fake_lib.llama_model_default_params
    with amx.safe_model_params(force=False) as off:
        assert off is False and fake_lib.llama_model_default_params is before


def test_the_parameters_are_restored_after_an_error(fake_lib):
    before = fake_lib.llama_model_default_params
    with pytest.raises(RuntimeError), amx.safe_model_params(force=True):
        raise RuntimeError("load failed")
    assert fake_lib.llama_model_default_params is before


def test_the_process_patch_applies_once(fake_lib, monkeypatch):
    monkeypatch.setattr(amx, "cpu_has_amx", lambda: True)
    assert amx.patch_for_process() and amx.patch_for_process()
    p = fake_lib.llama_model_default_params
    assert p().use_extra_bufts is False and p.rig_amx_guard
    assert amx.patch_for_process() and fake_lib.llama_model_default_params is p
