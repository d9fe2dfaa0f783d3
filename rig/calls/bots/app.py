"""Loading a user's pipecat bot for an in-process call: ``pipecat:PATH.py:FACTORY``.

Two factory shapes are accepted (checked by signature when the bot is loaded, before any
call is placed):

- ``runner``: ``async def FACTORY(transport, runner_args)``, the pipecat development runner's
  ``run_bot`` (it builds its pipeline on ``transport`` and runs it to the end itself). rig
  passes a :class:`pipecat.runner.types.RunnerArguments` with ``handle_sigint`` False and the
  call's parameters in ``body``.
- ``create``: ``FACTORY(transport)`` (plain or ``async``) returning the
  :class:`pipecat.pipeline.worker.PipelineWorker` (``PipelineTask``) to run; rig runs it.

Loading also checks what rig can before any call (:mod:`rig.calls.bots.compat`:
``BotApp.notes``); the pipeline is checked when it is built
(:mod:`rig.calls.bots.pipeline_check`).

The file is imported by path (``importlib``) under a module name of its own per path, so two
bots with the same file name do not collide; it is imported once per process.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rig.calls.bots.compat import CompatNote, load_notes
from rig.errors import ConfigError

#: What ``--interviewer`` accepts for an in-process bot.
SPEC_PREFIX = "pipecat:"
FactoryKind = Literal["runner", "create"]


@dataclass(frozen=True)
class BotApp:
    """A loaded bot factory: ``kind`` says how rig calls ``factory`` (module docstring);
    ``notes`` what rig could check of it when loading it
    (:func:`rig.calls.bots.compat.load_notes`: the pipecat version, settings the installed
    pipecat drops, what in-process replaces)."""
    spec: str
    path: Path
    name: str
    kind: FactoryKind
    factory: Callable
    notes: tuple[CompatNote, ...] = field(default=(), compare=False)


def parse_spec(spec: str, option: str = "--interviewer") -> tuple[Path, str]:
    """``pipecat:PATH.py:FACTORY`` -> (PATH, FACTORY). The path may hold ``:`` (the factory
    is what follows the last one).

    Raises:
        ConfigError: not of that form; names ``option`` and the value.
    """
    if not spec.startswith(SPEC_PREFIX):
        raise ConfigError(option, "", "an in-process bot is pipecat:PATH.py:FACTORY", spec)
    path, sep, name = spec[len(SPEC_PREFIX):].rpartition(":")
    if not sep or not path or not name.isidentifier():
        raise ConfigError(option, "", "an in-process bot is pipecat:PATH.py:FACTORY (FACTORY a "
                          "function name, e.g. pipecat:bot.py:run_bot)", spec)
    return Path(path), name


def _import(path: Path):
    from rig.paths import import_file

    try:
        return import_file(path, "rig_bot_")
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        raise ConfigError(path, "", f"importing the bot failed: {type(exc).__name__}: "
                          f"{exc}") from exc


def factory_kind(fn: Callable) -> FactoryKind | None:
    """``runner`` for ``async def f(transport, runner_args)``, ``create`` for ``f(transport)``,
    None for any other signature (positional parameters without defaults counted)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    required = [p for p in params if p.default is p.empty
                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(required) == 2 and inspect.iscoroutinefunction(fn):
        return "runner"
    if len(required) == 1:
        return "create"
    return None


def _shown(fn: Callable, name: str) -> str:
    try:
        return f"{name}{inspect.signature(fn)}"
    except (TypeError, ValueError):
        return name


def load_bot(spec: str, option: str = "--interviewer") -> BotApp:
    """Import the bot file and check its factory.

    Raises:
        ConfigError: a malformed spec; no such file or not a ``.py`` file; the import failed
            (the exception is named); no function FACTORY in it; FACTORY not a function of
            ``(transport, runner_args)`` (async) or ``(transport)``. The message names the
            file, the factory and the problem.
    """
    path, name = parse_spec(spec, option)
    if path.suffix != ".py":
        raise ConfigError(option, "", "the bot must be a Python file (PATH.py)", str(path))
    if not path.is_file():
        raise ConfigError(path, "", "no such bot file")
    module = _import(path)
    fn = getattr(module, name, None)
    if fn is None:
        have = sorted(k for k, v in vars(module).items()
                      if inspect.isfunction(v) and v.__module__ == module.__name__)
        raise ConfigError(path, name, f"no function {name} in the bot file (its functions: "
                          f"{', '.join(have) or 'none'})")
    if not callable(fn):
        raise ConfigError(path, name, "not a function", type(fn).__name__)
    kind = factory_kind(fn)
    if kind is None:
        raise ConfigError(path, name, "wrong signature: a factory is `async def "
                          f"{name}(transport, runner_args)` (pipecat's run_bot) or `def "
                          f"{name}(transport) -> PipelineTask`",
                          _shown(fn, name))
    return BotApp(spec, path, name, kind, fn, load_notes(path, vars(module), fn, name))
