"""How a process runs the pipeline's models: thread counts and device, never what they compute.

A :class:`Runtime` says how many threads faster-whisper (CTranslate2's ``intra_threads``) and
the embedded llama.cpp judge (``n_threads`` and ``n_threads_batch``) use, and on which device.
None of it is in :func:`rig.pipeline.pipeline_version`: the same weights and the same
algorithm give the same result on any thread count, so a campaign keeps its call ids when it
moves to a bigger machine. A campaign's ``campaign.json`` stamps the runtime it ran with
(``"runtime": Runtime.to_dict()``), and each row records the device each engine ran on
(``asr_device``, ``scorer_device``).

**Splitting the cores** (:func:`default_runtime`): ``workers`` processes each get
``cores // workers`` threads (at least 1), so ``workers x threads <= cores`` whenever
``workers <= cores``. In a call ASR runs first and the judge after it, never both at once, so
each engine may use the worker's whole share. When a worker lets ASR and scoring overlap (one
call's transcript queued to the judge while the next call's ASR runs), the share is cut in
two: ASR gets ``share // 2`` and the judge the rest (at least 1 each), the judge's half being
the larger because it holds most of a call's compute (68% of the demo's wall time).

**Device** (:func:`resolve_device`): ``cpu``, ``cuda`` or ``auto``, from the pipeline's
``device`` unless the runtime overrides it, resolved per engine: faster-whisper runs on CUDA
when ``ctranslate2.get_cuda_device_count() > 0``; llama.cpp offloads every layer
(``n_gpu_layers=-1``) when ``llama_cpp.llama_supports_gpu_offload()`` (a CUDA build of
llama-cpp-python). ``auto`` falls back to ``cpu`` per engine; ``cuda`` where an engine cannot
use a GPU is an error naming the engine and how to get a CUDA build.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from rig.cpus import usable_cpus
from rig.errors import ConfigError, EngineUnavailable

if TYPE_CHECKING:
    from rig.pipeline import PipelineConfig
    from rig.stages import Stages

Device = Literal["cpu", "cuda", "auto"]
DEVICES: tuple[str, ...] = ("cpu", "cuda", "auto")
Engine = Literal["asr", "scorer"]


@dataclass(frozen=True)
class Runtime:
    """Threads and device for one worker process.

    Attributes:
        asr_threads: faster-whisper CPU threads (>= 1; ignored on CUDA).
        scorer_threads: llama.cpp threads for generation and prompt batches (>= 1).
        device: ``cpu``, ``cuda`` or ``auto``; None takes the pipeline's ``device``.

    Raises:
        ConfigError: a thread count below 1 or an unknown device (field ``runtime.<name>``).
    """
    asr_threads: int = 2
    scorer_threads: int = 2
    device: Device | None = None

    def __post_init__(self) -> None:
        for name in ("asr_threads", "scorer_threads"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ConfigError("runtime", name, "a whole number of threads >= 1", v, True)
        if self.device is not None and self.device not in DEVICES:
            raise ConfigError("runtime", "device", f"one of {list(DEVICES)}", self.device, True)

    def to_dict(self) -> dict:
        """JSON-ready, as ``campaign.json`` stamps it: ``{"asr_threads": int,
        "scorer_threads": int, "device": str | None}``."""
        return dataclasses.asdict(self)


def default_runtime(workers: int = 1, cores: int | None = None, *, overlap: bool = False,
                    device: Device | None = None) -> Runtime:
    """Threads for each of ``workers`` worker processes on a machine with ``cores`` CPUs
    (default :func:`rig.cpus.usable_cpus`, the logical CPUs this process may use), so that
    ``workers x threads <= cores`` (see the module's notes on how ASR and the judge share a
    worker's threads).

    With more workers than cores each still gets one thread (the product then exceeds the
    cores: oversubscribed, slower, never wrong).

    Args:
        workers: worker processes on this machine (>= 1).
        cores: CPUs to split (>= 1).
        overlap: the worker overlaps ASR and scoring (split its share between them).
        device: passed to :class:`Runtime` (None: the pipeline's).

    Raises:
        ConfigError: ``workers`` or ``cores`` below 1.
    """
    cores = usable_cpus() if cores is None else cores
    if workers < 1:
        raise ConfigError("runtime", "workers", "at least 1 worker", workers, True)
    if cores < 1:
        raise ConfigError("runtime", "cores", "at least 1 core", cores, True)
    share = max(1, cores // workers)
    if overlap:
        asr = max(1, share // 2)
        return Runtime(asr, max(1, share - asr), device)
    return Runtime(share, share, device)


def _cuda_devices_ctranslate2() -> int:
    try:
        import ctranslate2
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise EngineUnavailable("ASR needs faster-whisper (ctranslate2): pip install "
                                "'faster-whisper==1.2.1' (or 'rig[pipeline]')") from exc
    try:
        return int(ctranslate2.get_cuda_device_count())
    except Exception:  # a CPU-only build or a broken driver: no usable GPU
        return 0


def _llama_gpu_offload() -> bool:
    try:
        import llama_cpp
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise EngineUnavailable("the embedded scorer needs llama-cpp-python: pip install "
                                "'llama-cpp-python==0.3.36' (or 'rig[pipeline]')") from exc
    try:
        return bool(llama_cpp.llama_supports_gpu_offload())
    except Exception:
        return False


_HOW_TO_GET_CUDA = {
    "asr": "faster-whisper sees no CUDA device (ctranslate2.get_cuda_device_count() == 0): "
           "run on a machine with an NVIDIA GPU, its driver, and CUDA 12 with cuDNN 9 "
           "(pip install nvidia-cublas-cu12 nvidia-cudnn-cu12)",
    "scorer": "this llama-cpp-python build cannot offload to a GPU "
              "(llama_supports_gpu_offload() is false): on a machine with an NVIDIA GPU, "
              "reinstall it with CMAKE_ARGS=\"-DGGML_CUDA=on\" pip install --no-binary "
              "llama-cpp-python --force-reinstall 'llama-cpp-python==0.3.36'",
}


def resolve_device(requested: str, engine: Engine) -> Literal["cpu", "cuda"]:
    """Where ``engine`` (``asr``: faster-whisper; ``scorer``: llama.cpp) runs for a
    ``requested`` device: ``cpu`` -> cpu; ``auto`` -> cuda when the engine can use a GPU here,
    else cpu; ``cuda`` -> cuda, or an error.

    Raises:
        ConfigError: ``requested`` is not one of :data:`DEVICES` (field ``device``).
        EngineUnavailable: ``cuda`` requested and the engine cannot use a GPU here (says why
            and how to get a CUDA build), or the engine is not installed.
    """
    if requested not in DEVICES:
        raise ConfigError("pipeline", "device", f"one of {list(DEVICES)}", requested, True)
    if requested == "cpu":
        return "cpu"
    usable = _cuda_devices_ctranslate2() > 0 if engine == "asr" else _llama_gpu_offload()
    if usable:
        return "cuda"
    if requested == "auto":
        return "cpu"
    raise EngineUnavailable(f"device: cuda was requested but {_HOW_TO_GET_CUDA[engine]}; "
                            "use device: auto to fall back to the CPU")


def build_stages(pipeline: PipelineConfig, runtime: Runtime | None = None, *,
                 audio_cache_dir=None) -> Stages:
    """The default real stages of :func:`rig.campaign.call.run_call` for ``pipeline``, run
    with ``runtime``'s threads and device (default :func:`default_runtime` for one worker).
    A worker process builds them once and reuses them for all its calls: the Whisper model,
    the GGUF and the Silero session are loaded on first use and kept.

    ``Stages.asr_device``/``scorer_device`` get the resolved devices (``cpu``/``cuda``;
    ``scorer_device`` is None for a remote OpenAI-compatible judge, whose device is not
    known here).

    Raises:
        ConfigError, EngineUnavailable: as :func:`resolve_device`.
    """
    from rig.asr.whisper import build_asr
    from rig.scorer.factory import build_scorer
    from rig.stages import Stages
    from rig.vad.build import build_turn_detector

    runtime = runtime or default_runtime(1)
    requested = runtime.device or pipeline.device
    asr_device = resolve_device(requested, "asr")
    scorer_device: str | None = None
    if pipeline.scorer.backend != "llamacpp":
        scorer = build_scorer(pipeline.scorer)
    else:
        scorer_device = resolve_device(requested, "scorer")
        scorer = build_scorer(pipeline.scorer, n_threads=runtime.scorer_threads,
                              n_gpu_layers=-1 if scorer_device == "cuda" else 0)

    return Stages(scorer=scorer, transcribe=build_asr(runtime.asr_threads, asr_device),
                  detect_turn=build_turn_detector(pipeline), audio_cache_dir=audio_cache_dir,
                  asr_device=asr_device, scorer_device=scorer_device)
