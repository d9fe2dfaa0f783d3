"""rig.runtime without models: splitting cores between workers, device resolution (the GPU
probes replaced), thread counts and device outside pipeline_version, the stages it builds."""

from __future__ import annotations

import pickle

import pytest

from rig import runtime as rt
from rig.asr.whisper import RuntimeTranscribe
from rig.errors import ConfigError, EngineUnavailable
from rig.pipeline import PipelineConfig, ScorerSettings, pipeline_version
from rig.runtime import Runtime, build_stages, default_runtime, resolve_device
from rig.scorer.llamacpp import LlamaCppScorer

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("workers", "cores", "want"), [
    (1, 2, (2, 2)), (2, 2, (1, 1)), (1, 16, (16, 16)), (4, 16, (4, 4)), (3, 16, (5, 5)),
    (3, 2, (1, 1))])
def test_default_runtime_gives_each_engine_the_workers_share(workers, cores, want):
    r = default_runtime(workers, cores)
    assert (r.asr_threads, r.scorer_threads) == want and r.device is None


@pytest.mark.parametrize("overlap", [False, True])
def test_workers_times_threads_never_exceed_the_cores(overlap):
    for cores in range(1, 33):
        for workers in range(1, cores + 1):
            r = default_runtime(workers, cores, overlap=overlap)
            per_worker = r.asr_threads + r.scorer_threads if overlap else max(
                r.asr_threads, r.scorer_threads)
            # overlapping engines run at once: their sum is the worker's load (>= 2 threads)
            assert workers * per_worker <= max(cores, 2 * workers if overlap else cores)


def test_overlap_splits_the_share_judge_first():
    assert default_runtime(1, 8, overlap=True) == Runtime(4, 4)
    assert default_runtime(1, 5, overlap=True) == Runtime(2, 3)
    assert default_runtime(2, 2, overlap=True) == Runtime(1, 1)


def test_default_runtime_uses_the_cpus_this_process_may_use(monkeypatch):
    import rig.cpus

    monkeypatch.setattr(rig.cpus.os, "sched_getaffinity", lambda pid: set(range(6)))
    monkeypatch.setattr(rig.cpus.os, "cpu_count", lambda: 64)
    assert default_runtime(2) == Runtime(3, 3)


def test_usable_cpus_follows_the_affinity_not_the_machine():
    """A process pinned to one core (taskset, a cpuset, a pinned test worker) counts one CPU,
    so llama.cpp and the runtime do not start threads for cores it cannot run on."""
    import os
    import subprocess
    import sys

    cpu = sorted(os.sched_getaffinity(0))[0]
    code = ("import os; from rig.cpus import usable_cpus; "
            f"os.sched_setaffinity(0, {{{cpu}}}); print(usable_cpus())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "1"


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"asr_threads": 0}, "asr_threads"), ({"scorer_threads": -1}, "scorer_threads"),
    ({"asr_threads": 1.5}, "asr_threads"), ({"device": "tpu"}, "device")])
def test_bad_runtime_values_name_the_field(kwargs, field):
    with pytest.raises(ConfigError, match=field):
        Runtime(**kwargs)


def test_bad_worker_or_core_counts_are_config_errors():
    with pytest.raises(ConfigError, match="workers"):
        default_runtime(0, 2)
    with pytest.raises(ConfigError, match="cores"):
        default_runtime(1, 0)


def test_runtime_to_dict_is_what_campaign_json_stamps():
    assert Runtime(1, 3, "auto").to_dict() == {"asr_threads": 1, "scorer_threads": 3,
                                               "device": "auto"}


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(rt, "_cuda_devices_ctranslate2", lambda: 0)
    monkeypatch.setattr(rt, "_llama_gpu_offload", lambda: False)


@pytest.fixture
def gpu(monkeypatch):
    monkeypatch.setattr(rt, "_cuda_devices_ctranslate2", lambda: 1)
    monkeypatch.setattr(rt, "_llama_gpu_offload", lambda: True)


@pytest.mark.parametrize("engine", ["asr", "scorer"])
def test_auto_falls_back_to_cpu_and_cuda_without_a_gpu_says_why(no_gpu, engine):
    assert resolve_device("cpu", engine) == "cpu"
    assert resolve_device("auto", engine) == "cpu"
    hint = "ctranslate2" if engine == "asr" else "GGML_CUDA"
    with pytest.raises(EngineUnavailable, match=f"device: cuda was requested.*{hint}"):
        resolve_device("cuda", engine)


@pytest.mark.parametrize("engine", ["asr", "scorer"])
def test_auto_and_cuda_take_the_gpu_when_there_is_one(gpu, engine):
    assert resolve_device("auto", engine) == "cuda" == resolve_device("cuda", engine)
    assert resolve_device("cpu", engine) == "cpu"


def test_an_unknown_device_is_a_config_error():
    with pytest.raises(ConfigError, match="device"):
        resolve_device("gpu", "asr")


def test_device_is_not_in_pipeline_version():
    base = PipelineConfig(name="p")
    assert base.device == "cpu"
    for d in ("cuda", "auto"):
        assert pipeline_version(base.model_copy(update={"device": d})) == pipeline_version(base)
    with pytest.raises(Exception, match="device"):
        PipelineConfig(name="p", device="tpu")


def test_build_stages_sets_threads_and_devices(gpu):
    p = PipelineConfig(name="p", device="auto")
    st = build_stages(p, Runtime(asr_threads=3, scorer_threads=5))
    assert isinstance(st.scorer, LlamaCppScorer)
    assert st.scorer.n_threads == 5 and st.scorer.device == "cuda"
    # the embedded judge has no wall-clock budget (issue 29: load must not change a row)
    assert st.scorer.mode == p.scorer.mode and st.scorer.budget_s is None
    assert st.transcribe == RuntimeTranscribe(3, "cuda")
    assert (st.asr_device, st.scorer_device) == ("cuda", "cuda")
    assert pickle.loads(pickle.dumps(st.transcribe)) == st.transcribe
    # the runtime's device overrides the pipeline's
    st = build_stages(p, Runtime(1, 1, "cpu"))
    assert (st.asr_device, st.scorer_device, st.scorer.device) == ("cpu", "cpu", "cpu")


def test_build_stages_for_a_remote_judge_knows_no_scorer_device(no_gpu):
    p = PipelineConfig(name="p", scorer=ScorerSettings(
        backend="openai", base_url="http://127.0.0.1:9/v1", model="m"))
    st = build_stages(p, Runtime(1, 1))
    assert st.scorer.name != "llamacpp"
    assert (st.asr_device, st.scorer_device) == ("cpu", None)
    assert st.scorer.prefix_cache_stats() == {"hits": 0, "misses": 0}


def test_runtime_transcribe_overrides_threads_and_device_only(monkeypatch):
    from rig.asr import whisper as asr
    from rig.asr.whisper import AsrOptions

    seen = []
    monkeypatch.setattr(asr, "transcribe", lambda audio, options: seen.append(options))
    RuntimeTranscribe(4, "cpu")("audio", AsrOptions(beam_size=3))
    assert seen == [AsrOptions(beam_size=3, cpu_threads=4, device="cpu")]


def test_llamacpp_prefix_cache_counts_hits_and_misses(monkeypatch):
    from rig.scorer import llamacpp

    monkeypatch.setattr(llamacpp, "SNAPSHOT_BYTES", 0)  # snapshots: test_scorer_snapshots_unit

    class FakeLlama:
        def __init__(self):
            import numpy as np

            self.np, self.n_tokens, self.input_ids = np, 0, np.zeros(0, int)

        def reset(self):
            self.n_tokens = 0

        def eval(self, tokens):
            self.input_ids = self.np.array(list(self.input_ids[:self.n_tokens]) + tokens)
            self.n_tokens = len(self.input_ids)

    s, llm = LlamaCppScorer(n_threads=1), FakeLlama()
    assert s.prefix_cache_stats() == {"hits": 0, "misses": 0, "restored": 0}
    s._prime(llm, [1, 2, 3])
    llm.eval([9, 9])  # a transcript after the prefix
    s._prime(llm, [1, 2, 3])
    assert llm.n_tokens == 3
    s._prime(llm, [1, 2, 4])
    s._prime(llm, [])  # a prompt that could not be cut: evaluated whole, a miss
    assert s.prefix_cache_stats() == {"hits": 1, "misses": 3, "restored": 0}


def test_models_are_freed_with_ctrl_c_ignored_and_the_handler_restored():
    # a second Ctrl-C while llama.cpp frees a model printed a traceback at exit
    import signal

    from rig.scorer import llamacpp

    seen = []

    class Model:
        def close(self):
            seen.append(signal.getsignal(signal.SIGINT))

    before = signal.getsignal(signal.SIGINT)
    llamacpp._OPEN.append(Model())
    llamacpp.close_models()
    assert seen == [signal.SIG_IGN] and not llamacpp._OPEN
    assert signal.getsignal(signal.SIGINT) is before
