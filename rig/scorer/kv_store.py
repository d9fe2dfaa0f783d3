"""Rubric-prefix KV snapshots on disk, shared by the processes of one machine.

A process that grades a question for the first time evaluates its rubric prefix (~300-450
tokens, about two gradings' worth of compute on one core: :mod:`rig.scorer.llamacpp`). Every
local worker, Ray actor on the node, resumed driver and ``rig`` command paid that again for
the same prefix. After a fresh evaluation the snapshot (``llama_state_seq_get_data``, ~28 KB
a token for the 1.5B judge) is written here too, and a process that misses reads it back
instead of evaluating: the same bytes in the same cells, so the grade is the one a fresh
evaluation gives (``tests/test_scorer_integration.py`` grades in a fresh process both ways).

A file is keyed by everything the bytes depend on: the model's verified sha256,
llama-cpp-python's version, llama.cpp's system info (the CPU features it was built for), the
context size, the thread count, the GPU layers and the prefix's tokens. It holds its key and a
sha256 of both, checked on read; a damaged, truncated or renamed file is ignored (the prefix
is evaluated) and never raises. Files are written to a temporary name and renamed, so a
reader never sees half of one. Past :data:`MAX_BYTES` the least recently written go first; a
temporary file left by a killed writer goes after an hour.

Where: ``$RIG_JUDGE_KV`` (a folder, or ``off``), else ``$RIG_CACHE_DIR/judge-kv``, else
``~/.cache/rig/judge-kv`` (beside the assembled models, :func:`rig.models.cache_dir`).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from rig.models import cache_dir

#: the folder's size past which the oldest snapshots are removed (bytes)
MAX_BYTES = 1024 * 2**20
ENV = "RIG_JUDGE_KV"
_SUFFIX = ".kv"


def kv_dir() -> Path | None:
    """The snapshot folder, or None when ``$RIG_JUDGE_KV`` is ``off`` (nothing read or
    written)."""
    env = os.environ.get(ENV, "").strip()
    if env.lower() == "off":
        return None
    if env:
        return Path(env).expanduser()
    return cache_dir().parent / "judge-kv"  # beside the assembled models


def key(identity: tuple, prefix: list[int]) -> str:
    """Hex sha256 of ``identity`` (a tuple of str/int: what the bytes depend on) and the
    prefix tokens (int32)."""
    h = hashlib.sha256(repr(identity).encode())
    h.update(np.asarray(prefix, dtype=np.int32).tobytes())
    return h.hexdigest()


def load(identity: tuple, prefix: list[int]) -> bytes | None:
    """The snapshot of ``prefix`` stored under ``identity``, or None (no folder, no file, a
    file whose checksum does not match, or one that names another key: a file copied or
    renamed from another rubric's)."""
    folder = kv_dir()
    if folder is None:
        return None
    name = key(identity, prefix)
    try:
        blob = (folder / f"{name}{_SUFFIX}").read_bytes()
    except OSError:
        return None
    digest, data = blob[:32], blob[32:]
    if len(blob) <= 64 or hashlib.sha256(data).digest() != digest:
        return None
    if data[:32] != bytes.fromhex(name):
        return None
    return data[32:]


def store(identity: tuple, prefix: list[int], data: bytes) -> None:
    """Write the snapshot (atomically), then remove the oldest past :data:`MAX_BYTES`. A
    full or read-only disk costs the reuse, never the grading: errors are swallowed."""
    folder = kv_dir()
    if folder is None or not data:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        try:
            name = key(identity, prefix)
            body = bytes.fromhex(name) + data  # the key inside too: a renamed file is refused
            with os.fdopen(fd, "wb") as fh:
                fh.write(hashlib.sha256(body).digest())
                fh.write(body)
            os.replace(tmp, folder / f"{name}{_SUFFIX}")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _prune(folder)
    except OSError:
        return


def _prune(folder: Path) -> None:
    """Remove the least recently written snapshots past :data:`MAX_BYTES`, and temporary
    files over an hour old (a writer killed mid-write)."""
    files, now = [], time.time()
    for p in folder.iterdir():
        try:
            st = p.stat()
        except OSError:  # removed by another process meanwhile
            continue
        if p.suffix == ".tmp" and now - st.st_mtime > 3600:
            _unlink(p)
        elif p.suffix == _SUFFIX and p.is_file():
            files.append((st.st_mtime, st.st_size, p))
    total = sum(size for _, size, _ in files)
    for _, size, p in sorted(files):
        if total <= MAX_BYTES:
            break
        if _unlink(p):  # one file that cannot go (another user's) does not stop the rest
            total -= size


def _unlink(path: Path) -> bool:
    try:
        path.unlink(missing_ok=True)
        return True
    except OSError:
        return False
