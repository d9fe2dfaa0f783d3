"""Where the embedded defaults live: the repository's ``answer_bank/``, ``profiles/`` and
``pipelines/`` folders (rig runs from a clone, installed in editable mode)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

_ROOT = Path(os.environ.get("RIG_HOME") or Path(__file__).resolve().parents[1])


@dataclass(frozen=True)
class Defaults:
    root: Path
    answer_bank: Path
    profiles: Path
    pipelines: Path
    audio_cache: Path
    demo_answer_ids: tuple[str, ...]


DEFAULTS = Defaults(
    root=_ROOT,
    answer_bank=_ROOT / "answer_bank",
    profiles=_ROOT / "profiles",
    pipelines=_ROOT / "pipelines",
    audio_cache=Path(os.environ.get("RIG_AUDIO_CACHE") or _ROOT / "audio" / "cache"),
    # two questions with a strong and a weak answer each (so tier inversions are defined)
    # and one borderline answer, under every demo profile: 35 planned calls (30 run with a
    # deterministic pipeline: the second baseline repeat is skipped), 5-10 min on 2 idle cores
    # once the models are assembled
    demo_answer_ids=("q01_strong", "q01_border_lo", "q01_weak", "q02_strong", "q02_weak"),
)


def make_out_dir(path: str | Path, option: str = "--out") -> Path:
    """Create the output folder ``path`` and its parents (an existing folder is kept).

    Raises:
        RigError: ``path`` is an existing file, or cannot be created (names ``option`` and
            the path).
    """
    from rig.errors import RigError

    path = Path(path)
    if path.exists() and not path.is_dir():
        raise RigError(f"{option} {str(path)!r}: is an existing file, not a folder; give an "
                       "output folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RigError(f"{option} {str(path)!r}: cannot create the output folder "
                       f"({exc.strerror or exc})") from exc
    return path


def remove_partials(folder: str | Path, names: Iterable[str] | None = None) -> list[Path]:
    """Remove the temporary files that a killed writer left in ``folder`` (not below it):
    :func:`atomic_write`'s ``.NAME.<random>.partial`` and ``NAME.partial`` (a parquet file's,
    rig.campaign.store). The outputs themselves are whole or absent after a kill, but each
    kill mid-write would otherwise leave one more half-written file for good.

    ``names``: only the temporary files of these output file names; None: every file whose
    name ends in ``.partial`` (a folder only rig writes in). Call it when a run starts or
    resumes, before it starts writers of its own: a writer running at the same moment would
    lose its temporary file. A missing folder is no error. Returns the files removed."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    gone = []
    for p in sorted(folder.iterdir()):
        if not p.name.endswith(".partial") or not p.is_file():
            continue
        if names is not None and not any(
                p.name.startswith(f".{n}.") or p.name == f"{n}.partial" for n in names):
            continue
        p.unlink(missing_ok=True)
        gone.append(p)
    return gone


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _umask()


def atomic_write(path: str | Path, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, fsync it and rename it onto
    ``path`` (:func:`os.replace`, atomic in one folder): a crash or a kill leaves the old file
    or the new one, never half of one. The file gets the usual permissions (``0666 & ~umask``,
    not mkstemp's 0600). The temporary file is removed when ``write`` raises. Returns ``path``.

    Raises:
        OSError: as writing does (``write``'s own exceptions pass through)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    os.close(fd)
    try:
        write(Path(tmp))
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` with :func:`atomic_write` (a JSON a rerun reads back,
    a report page): a kill leaves the old file or the new one. Returns ``path``."""
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def import_file(path: str | Path, prefix: str):
    """A user's ``.py`` file (a bot, a score extractor) imported as a module, once per
    resolved path: kept in ``sys.modules`` as ``<prefix><sha256 of the path, 12 hex>``.

    Raises:
        whatever importing the file raises (nothing is kept then); callers name the option.
    """
    import hashlib
    import importlib.util
    import sys

    path = Path(path)
    key = prefix + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[key] = module
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except BaseException:
        del sys.modules[key]
        raise
    return module
