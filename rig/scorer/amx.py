"""llama.cpp on CPUs with Intel AMX: keep the model off the AMX weight layout.

On a CPU with AMX (Sapphire Rapids and later Xeons) llama.cpp repacks the Q4_K/Q6_K weights
of rig's judge into its AMX buffer type at load, and the first evaluation after that repack
segfaults in ``ggml_backend_amx_mul_mat`` (ggml-org/llama.cpp issue 20824, open; the same
crash removed AMX from stanfordnlp/dspy's CI, pull request 10079). Seen here with
llama-cpp-python 0.3.36 built natively on such a machine: the process died in the first
grading of every campaign.

llama.cpp's model parameter ``use_extra_bufts`` (its ``--no-repack`` switch) keeps every
weight in the plain CPU buffer. It is turned off **only where the CPU reports AMX_INT8**, so
on every other machine the judge loads exactly as before (with its repacked layouts) and no
grading changes; on an AMX machine the judge runs on the AVX-512 kernels instead of crashing.
llama-cpp-python's ``Llama`` takes no such argument, so the default parameters it starts
from are wrapped while a model loads (:func:`safe_model_params`), and ``python -m
rig.scorer.serve`` runs ``llama_cpp.server`` the same way.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

_PATCH_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def cpu_has_amx() -> bool:
    """True when the loaded llama.cpp reports ``AMX_INT8 = 1`` in its system info (the CPU
    has AMX and the build uses it). False when llama-cpp-python is not installed."""
    try:
        import llama_cpp
    except ImportError:
        return False
    info = llama_cpp.llama_print_system_info()
    text = info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info)
    return "AMX_INT8 = 1" in text


def _without_extra_buffers(default_params):
    def params():
        p = default_params()
        p.use_extra_bufts = False
        return p
    params.rig_amx_guard = True  # type: ignore[attr-defined]
    return params


@contextmanager
def safe_model_params(force: bool | None = None) -> Iterator[bool]:
    """While the block runs, ``llama_cpp.Llama`` loads models with ``use_extra_bufts`` off
    when the CPU has AMX (``force`` True/False overrides the check, for tests). Yields whether
    the parameter was turned off. Loads in other threads wait on a lock."""
    off = cpu_has_amx() if force is None else force
    if not off:
        yield False
        return
    import llama_cpp.llama as llama_module

    lib = llama_module.llama_cpp
    with _PATCH_LOCK:
        before = lib.llama_model_default_params
        lib.llama_model_default_params = _without_extra_buffers(before)
        try:
            yield True
        finally:
            lib.llama_model_default_params = before


def patch_for_process() -> bool:
    """Turn ``use_extra_bufts`` off for every model this process loads, where the CPU has AMX
    (for ``python -m rig.scorer.serve``, whose server loads its model itself). Returns
    whether it did."""
    if not cpu_has_amx():
        return False
    import llama_cpp.llama as llama_module

    lib = llama_module.llama_cpp
    if not getattr(lib.llama_model_default_params, "rig_amx_guard", False):
        lib.llama_model_default_params = _without_extra_buffers(lib.llama_model_default_params)
    return True
