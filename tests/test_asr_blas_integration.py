"""A transcript does not depend on numpy's BLAS pool (rig.cpus.blas_one_thread).

faster-whisper's log-mel features are a numpy matrix product; OpenBLAS's one-thread kernel
rounds differently from its threaded one, and on this real recording (CMU ARCTIC, aew a0001)
the avg_logprob moved (-0.4426 with a 1-thread pool, -0.4358 with 2, before the pin): a local
worker given one core and the serial driver on two cores then wrote different rows for one
call. Each process here loads the real tiny.en model with the pool its environment asks for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

CLIP = (Path(__file__).resolve().parents[2] / "shared" / "data" / "speech" / "cmu-arctic"
        / "cmu_arctic_us_aew_a0001.wav")

_CHILD = """
import json, sys
from rig.asr.whisper import transcribe
from rig.audio import read_wav
from threadpoolctl import threadpool_info
tr = transcribe(read_wav(sys.argv[1], 16000))
pools = sorted({p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"})
print(json.dumps({"text": tr.text, "avg_logprob": tr.avg_logprob, "blas": pools}))
"""


def _transcribe_with_pool(threads: int) -> dict:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
    out = subprocess.run([sys.executable, "-c", _CHILD, str(CLIP)], env=env, check=True,
                         capture_output=True, text=True, timeout=300).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_the_transcript_is_the_same_with_a_one_and_a_two_thread_blas_pool():
    assert CLIP.exists(), CLIP
    one, two = _transcribe_with_pool(1), _transcribe_with_pool(2)
    assert one["blas"] == two["blas"] == [1]  # loading the model pinned the pool
    assert one["text"] and one["text"] == two["text"]
    assert one["avg_logprob"] == two["avg_logprob"]
