"""The embedded judge loads and evaluates on this machine's CPU. On a CPU with AMX the
unguarded load segfaults in its first evaluation (ggml-org/llama.cpp issue 20824): the guard
is what lets this test, and every grading, run there; elsewhere it changes nothing."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

SCRIPT = """
import faulthandler; faulthandler.enable()
from rig.scorer.llamacpp import _llama
llm = _llama("qwen2.5-coder-1.5b-instruct-q4_k_m", 2048, 2)
llm.eval(llm.tokenize(b"Grade the answer against the rubric. " * 40))
print("evaluated", llm.n_tokens)
"""


def test_the_judge_loads_and_evaluates_a_prompt_in_a_fresh_process():
    pytest.importorskip("llama_cpp")
    from rig.scorer.amx import cpu_has_amx

    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, (cpu_has_amx(), out.stderr[-2000:])
    assert out.stdout.startswith("evaluated ")
