"""What rig can say of a team's pipecat bot before any call (issue 27, item 6).

:func:`load_notes` runs when a bot is loaded for in-process calls
(:func:`rig.calls.bots.app.load_bot`); each finding is a :class:`CompatNote`:

- ``pipecat_version``: the installed ``pipecat-ai`` against the version rig pins (its
  distribution's requirement, ``pyproject.toml``: ``pipecat-ai[...]==X``). rig's in-memory
  transport and its reading of the bot's frames are built and tested on that version only.
- ``bot_requirement``: a ``pipecat-ai`` requirement in the bot's own folder
  (``requirements.txt`` or ``pyproject.toml`` beside the file) that the installed version does
  not satisfy.
- ``ignored_setting``: a keyword the installed pipecat silently drops, found by reading the
  bot's source (``ast``; the file itself and the file its factory is defined in): a call of a
  pydantic model class (resolved in the bot module's namespace) with a keyword that is not
  one of its fields while the model ignores extra fields. pipecat 1.14's ``TransportParams``
  has no ``vad_analyzer``: ``TransportParams(vad_analyzer=SileroVADAnalyzer())`` builds
  without error and the bot has no VAD.
- ``replaced``: what an in-process call replaces: the bot's own transport (its ``bot()``
  entry, ``create_transport``, the ``TransportParams`` in its file: a VAD set there is not
  used), and the audio: the caller's 8 kHz telephone audio is resampled to the pipeline's
  input rate, the bot's output to 8 kHz.

Severity ``warning`` is printed before the first call; ``info`` goes to the campaign's
``bot_compat.json`` (:mod:`rig.calls.run.compat_log`). The pipeline itself is checked when it is
built (:mod:`rig.calls.bots.pipeline_check`).
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

NoteKind = Literal["pipecat_version", "bot_requirement", "ignored_setting", "replaced",
                   "pipeline", "not_inspectable"]
Severity = Literal["info", "warning"]
#: settings that give a bot its hearing: dropping one leaves it deaf
HEARING_KEYWORDS = ("vad_analyzer", "turn_analyzer", "vad_enabled")
_REQ = re.compile(r"""pipecat-ai(?:\[[^\]]*\])?\s*((?:[<>=!~]=?\s*[\w.*+!-]+\s*,?\s*)+)""")


@dataclass(frozen=True)
class CompatNote:
    """One finding: ``kind`` (module docstring), ``severity``, ``text`` (names the file and
    line, the setting and the versions where it can)."""
    kind: NoteKind
    severity: Severity
    text: str

    def to_dict(self) -> dict:
        return {"kind": self.kind, "severity": self.severity, "text": self.text}


def pinned_pipecat() -> str | None:
    """The pipecat version rig pins (``==X`` in rig's distribution requirements), None when
    rig's metadata is not installed or pins none."""
    from importlib import metadata

    try:
        reqs = metadata.requires("rig") or []
    except metadata.PackageNotFoundError:
        return None
    for r in reqs:
        m = re.match(r"pipecat-ai(?:\[[^\]]*\])?\s*==\s*([\w.+!-]+)", r)
        if m:
            return m.group(1)
    return None


def installed_pipecat() -> str | None:
    """The installed ``pipecat-ai`` version, None when it is not installed."""
    from importlib import metadata

    try:
        return metadata.version("pipecat-ai")
    except metadata.PackageNotFoundError:
        return None


def version_note(installed: str | None, pinned: str | None) -> CompatNote:
    """``installed`` against ``pinned``: a warning when they differ (or either is unknown)."""
    if installed and pinned and installed == pinned:
        return CompatNote("pipecat_version", "info",
                          f"pipecat-ai {installed}: the version rig pins")
    return CompatNote("pipecat_version", "warning", (
        f"pipecat-ai {installed or 'not installed'}, but rig pins {pinned or 'unknown'} "
        "(pyproject.toml): rig's in-process transport and its reading of the bot's frames "
        "are tested on the pinned version only; a bot's settings that the installed version "
        "does not have may be dropped without an error"))


def requirement_notes(bot_path: Path, installed: str | None) -> list[CompatNote]:
    """A ``pipecat-ai`` requirement in ``requirements.txt``/``pyproject.toml`` beside the bot
    that ``installed`` does not satisfy (one warning per file)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    out = []
    for name in ("requirements.txt", "pyproject.toml"):
        f = bot_path.parent / name
        if not f.is_file() or installed is None:
            continue
        try:
            text = f.read_text(errors="replace")
        except OSError:
            continue
        for m in _REQ.finditer(text):
            spec = m.group(1).strip().rstrip(",")
            try:
                ok = SpecifierSet(spec).contains(installed, prereleases=True)
            except InvalidSpecifier:
                continue
            if not ok:
                out.append(CompatNote("bot_requirement", "warning", (
                    f"{f}: the bot asks for pipecat-ai{spec}; installed is {installed}: "
                    "the bot may use settings or classes this version lacks")))
                break
    return out


def _resolve(node: ast.expr, ns: dict) -> object | None:
    if isinstance(node, ast.Name):
        return ns.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, ns)
        return None if base is None else getattr(base, node.attr, None)
    return None


def _dropped_keywords(cls: type, keywords: list[str]) -> list[str]:
    """Keywords a pydantic model class ignores (not a field or alias; extra ignored)."""
    fields_ = getattr(cls, "model_fields", None)
    config = getattr(cls, "model_config", None)
    if not isinstance(fields_, dict) or not isinstance(config, dict):
        return []
    if config.get("extra") not in (None, "ignore"):
        return []  # "allow" keeps it, "forbid" raises: nothing silent
    names = set(fields_) | {getattr(f, "alias", None) for f in fields_.values()}
    return [k for k in keywords if k not in names]


def source_notes(path: Path, namespace: dict) -> list[CompatNote]:
    """Read ``path`` with ``ast``: keywords the installed pipecat drops silently
    (``ignored_setting``), and ``TransportParams`` (or a subclass) given a VAD
    (``replaced``: in-process, rig's transport params are used). Names are resolved in
    ``namespace`` (the loaded module's globals); a call that does not resolve is skipped.
    A file that cannot be read or parsed gives no note."""
    try:
        tree = ast.parse(path.read_text(), str(path))
    except (OSError, SyntaxError, ValueError):
        return []
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.keywords:
            continue
        cls = _resolve(node.func, namespace)
        if not isinstance(cls, type):
            continue
        kws = [k.arg for k in node.keywords if k.arg]
        shown = ast.unparse(node.func)
        for k in _dropped_keywords(cls, kws):
            hearing = k in HEARING_KEYWORDS
            severity: Severity = "warning" if hearing else "info"
            out.append((node.lineno, CompatNote("ignored_setting", severity, (
                f"{path}:{node.lineno}: {shown}({k}=...): the installed pipecat's "
                f"{cls.__name__} has no field {k}; pydantic drops it without an error"
                + (": the bot gets no VAD or turn detector from it and will not hear the "
                   "answer unless one is set elsewhere (LLMUserAggregatorParams.vad_analyzer)"
                   if hearing else "")))))
        if "TransportParams" in {c.__name__ for c in cls.__mro__}:
            vads = [k for k in kws if k in HEARING_KEYWORDS]
            if vads and not _dropped_keywords(cls, vads):
                out.append((node.lineno, CompatNote("replaced", "warning", (
                    f"{path}:{node.lineno}: {shown}({', '.join(vads)}=...) is the bot's own "
                    "transport's setting: in-process, rig's transport replaces it, so this "
                    "VAD is not used"))))
    return [n for _, n in sorted(out, key=lambda e: e[0])]


def replaced_note(app_name: str) -> CompatNote:
    """What an in-process call replaces (module docstring)."""
    return CompatNote("replaced", "info", (
        f"in-process, rig calls {app_name}(transport, ...) with its own in-memory transport: "
        "the bot's own transport, its bot() entry and the TransportParams there are not used "
        "(rig's: audio in and out, no VAD, no filters); the caller's 8 kHz telephone audio is "
        "resampled to the pipeline's input rate (PipelineParams.audio_in_sample_rate, 16000 "
        "Hz by default) and the bot's output to 8 kHz"))


def load_notes(path: Path, namespace: dict, factory: Callable, name: str
               ) -> tuple[CompatNote, ...]:
    """Every load-time finding for the bot file ``path`` (its module's globals
    ``namespace``) and its ``factory`` (module docstring): the version, the bot's own
    requirement, the dropped settings in its source (the file, and the file the factory is
    defined in when that is another) and what in-process replaces."""
    installed = installed_pipecat()
    notes = [version_note(installed, pinned_pipecat())]
    notes += requirement_notes(path, installed)
    files = {path.resolve(): namespace}
    try:
        src = inspect.getsourcefile(factory)
    except TypeError:
        src = None
    if src and Path(src).resolve() not in files:
        files[Path(src).resolve()] = getattr(factory, "__globals__", {})
    for f, ns in files.items():
        notes += source_notes(f, ns)
    notes.append(replaced_note(name))
    return tuple(notes)
