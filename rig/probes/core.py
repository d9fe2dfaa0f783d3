"""What every probe shares: the scorer it runs on, seeded sessions, and a durable ask log.

* :func:`build_scorer` turns ``--scorer`` (``embedded``, a pipeline YAML, or a scorer YAML
  with ``backend: openai``) into a :class:`~rig.scorer.base.Scorer`.
* :func:`sample_sessions` draws the questions of each session: session ``s`` holds the same
  questions under every condition, so conditions are paired by construction.
* :class:`AskLog` runs a prompt through :meth:`Scorer.complete` and appends the raw reply to
  ``asks.jsonl`` (fsync'ed, as the campaign log): a rerun of the same command reuses every
  reply already there, with the seconds it took (backend errors are retried), so an
  interrupted probe resumes. :meth:`AskLog.check_replied` ends a run whose scorer never
  replied with :class:`ScorerUnavailable` (the CLI exits 2).
* A run's frame: :func:`start_run` (the output folder, without a killed run's temporary
  files, and ``probe.json``), :func:`rig.console.progress_bar`, :func:`write_probe_outputs`
  and :func:`finish_run` (the asks checked, the :class:`ProbeRun` given back).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rig.campaign.store import CallLog, write_parquet, write_text_atomic
from rig.config import load_model, read_yaml
from rig.errors import ConfigError, RigError
from rig.paths import make_out_dir, remove_partials
from rig.pipeline import ScorerSettings, load_pipeline
from rig.probes.schema import (
    ProbeSummary,
    load_probe_summary,
    probe_summary,
    write_probe_summary,
)
from rig.scorer.base import Completion, Parsed, Scorer, V

#: The embedded scorer's context for probes: a session's decision prompt holds 10 answers.
PROBE_N_CTX = 4096
#: Reply cap for probes: the JSON plus a reasoning of up to 200 characters.
PROBE_MIN_MAX_TOKENS = 256


def scorer_settings(spec: str | Path | None) -> ScorerSettings:
    """``None`` or ``"embedded"``: the embedded defaults; otherwise a YAML file holding either
    a whole pipeline (its ``scorer:`` section is used) or scorer settings alone.

    Raises:
        ConfigError: the file is missing or malformed (names the file and field).
    """
    if spec is None or str(spec) == "embedded":
        return ScorerSettings()
    path = Path(spec)
    data = read_yaml(path)
    if isinstance(data, dict) and "scorer" in data:
        return load_pipeline(path).scorer
    return load_model(path, ScorerSettings, data)


def build_scorer(spec: str | Path | ScorerSettings | None = None) -> Scorer:
    """The scorer a probe runs on (see :func:`scorer_settings`). The reasoning asks need
    longer replies than rubric points, so ``max_tokens`` is at least 256; the embedded model
    gets a 4096-token context.

    Raises:
        ConfigError: bad settings, or the openai backend's key variable is unset.
    """
    from rig.scorer.factory import build_scorer as build

    s = spec if isinstance(spec, ScorerSettings) else scorer_settings(spec)
    return build(s, grading=False, max_tokens=max(s.max_tokens, PROBE_MIN_MAX_TOKENS),
                 n_ctx=PROBE_N_CTX)


def describe_scorer(scorer: Scorer) -> dict:
    """What identifies a scorer in outputs and in the ask log's keys (never an API key)."""
    describe = getattr(scorer, "describe", None)
    if callable(describe):
        return dict(describe())
    return {"backend": scorer.name, "model": getattr(scorer, "model", None),
            "temperature": scorer.temperature,
            "max_tokens": getattr(scorer, "max_tokens", None), "grammar_sent": True}


def sample_sessions(item_ids: Sequence[str], n_sessions: int, per_session: int,
                    seed: int) -> list[tuple[str, ...]]:
    """``n_sessions`` draws of ``per_session`` distinct items each, in the order asked.

    Items are sorted first, so the draw does not depend on file order; session ``s`` is
    ``numpy.random.default_rng(seed)``'s ``s``-th ``choice(n, per_session, replace=False)``.

    Raises:
        ConfigError: ``per_session`` is larger than the number of items, or a count below 1.
    """
    ids = sorted(item_ids)
    if n_sessions < 1 or per_session < 1:
        raise ConfigError("probe", "--sessions", "--sessions and --questions-per-session "
                          "must be at least 1", (n_sessions, per_session))
    if per_session > len(ids):
        raise ConfigError("probe", "--questions-per-session", f"only {len(ids)} questions in "
                          "the probe set", per_session)
    rng = np.random.default_rng(seed)
    return [tuple(ids[i] for i in rng.choice(len(ids), per_session, replace=False))
            for _ in range(n_sessions)]


class ScorerUnavailable(RigError):
    """Several asks in a row got no reply from the scorer (refused, unauthorised, timed out):
    the run stops instead of recording every remaining ask as a failure. Also raised at the
    end of a run too short to hit that limit when not one ask got a reply
    (:meth:`AskLog.check_replied`)."""


class PlanDone(Exception):
    """A planning pass (:mod:`rig.probes.parallel`) reached the outputs: nothing is written."""


#: planning passes in progress (:mod:`rig.probes.parallel`): while one is, the ``scorer``
#: AskLogs record each ask not yet logged instead of asking, and answer it "pending"
PLANS: list[list[tuple]] = []
#: (log path, key) of asks a worker made for this run: their first read counts as asked now
FETCHED: set[tuple[str, str]] = set()


class AskLog:
    """Prompts through a scorer, each raw reply kept in ``path`` (JSON lines).

    The key of a prompt is a hash of the scorer's description, the messages, the grammar and,
    above temperature 0, the seed. A logged reply is re-parsed on reuse (``cached=True``,
    ``seconds`` = the seconds the scorer took when it was asked, as logged); a logged backend
    error is tried again.

    ``n_asks`` counts the asks of this run, ``n_replies`` those answered with a reply (from
    the scorer or the log; a reply that does not parse is a reply, a backend error or refusal
    is not).
    """

    #: consecutive asks with no reply at all (refused, unauthorised, timed out) before the
    #: run stops: an unusable endpoint is a failure of the run, not a stream of unscored rows
    MAX_CONSECUTIVE_BACKEND_ERRORS = 3

    def __init__(self, path: str | Path, scorer: Scorer, what: str = "scorer") -> None:
        self.log = CallLog(path)
        self.scorer = scorer
        self.what = what  # how errors name the scorer ("scorer", "LLM judge (--judge)")
        self._who = json.dumps(describe_scorer(scorer), sort_keys=True)
        self.n_backend_calls = 0
        self.n_asks = 0
        self.n_replies = 0
        self._backend_errors_in_a_row = 0
        self._last_error: str | None = None

    def key(self, system: str, user: str, grammar: str, seed: int) -> str:
        seed_part = seed if self.scorer.temperature > 0 else None
        blob = json.dumps([self._who, system, user, grammar, seed_part])
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:24]

    def ask(self, system: str, user: str, grammar: str, parse: Callable[[str], Parsed[V]],
            seed: int, dependent: bool = False) -> Completion[V]:
        """The parsed reply to one prompt, from the log or the scorer (logged then).
        ``dependent``: the prompt holds earlier replies (a planning pass does not plan it
        while any of them is pending)."""
        key = self.key(system, user, grammar, seed)
        row = self.log.get(key)
        self.n_asks += 1
        if row is not None:
            self._check_logged(row)
        if row is not None and row["parse_status"] != "error":
            self.n_replies += 1
            parsed = parse(row["raw"])
            value = parsed.value if parsed.status == "ok" else None
            logged = row.get("seconds")
            seconds = float(logged) if isinstance(logged, int | float) else float("nan")
            fetched = (str(self.log.path), key) in FETCHED  # asked by a worker in this run
            if fetched and not PLANS:
                FETCHED.discard((str(self.log.path), key))
                self.n_backend_calls += 1
                if row["parse_status"] == "error" or parsed.status != "ok":
                    parsed_error = row.get("error") or parsed.detail or None
                else:
                    parsed_error = None
                return Completion(value, parsed.status, row["raw"], seconds,
                                  row["temperature"], seed, parsed_error, False)
            return Completion(value, parsed.status, row["raw"], seconds, row["temperature"],
                              seed, parsed.detail or None, True)
        if PLANS:  # a planning pass: only the scorer's asks go to workers (a judge's wait)
            plan = PLANS[-1]
            if self.what == "scorer" and not (dependent and ("pending",) in plan):
                plan.append((self.log, key, system, user, grammar, parse, seed))
            plan.append(("pending",))
            return Completion(None, "error", "", 0.0, self.scorer.temperature, seed,
                              "planned", False)
        res = self.scorer.complete(system, user, grammar=grammar, parse=parse, seed=seed)
        if not res.cached:
            self.n_backend_calls += 1
            self.log.append({"call_id": key, "raw": res.raw, "parse_status": res.parse_status,
                             "error": res.error, "seconds": res.seconds,
                             "temperature": res.temperature, "seed": seed})
        if res.parse_status == "error" and not res.raw:  # the backend gave no reply
            self._backend_errors_in_a_row += 1
            self._last_error = res.error
            if self._backend_errors_in_a_row >= self.MAX_CONSECUTIVE_BACKEND_ERRORS:
                raise ScorerUnavailable(
                    f"the {self.what} gave no reply to {self._backend_errors_in_a_row} asks "
                    f"in a row (last: {res.error}); stopping. Finished asks are kept in "
                    f"{self.log.path}: fix the {self.what} and rerun the same command to "
                    "resume")
        else:
            self._backend_errors_in_a_row = 0
            self.n_replies += 1
        return res

    def _check_logged(self, row: dict) -> None:
        """A logged ask holds a ``parse_status`` (text), a ``raw`` reply (text, or null on a
        backend error) and a numeric ``temperature``; anything else is a damaged log."""
        bad = [f for f, ok in (
            ("parse_status", isinstance(row.get("parse_status"), str)),
            ("raw", row.get("raw") is None or isinstance(row.get("raw"), str)),
            ("temperature", isinstance(row.get("temperature"), int | float)
             and not isinstance(row.get("temperature"), bool))) if not ok]
        if bad:
            raise RigError(f"{self.log.path}: the ask {row.get('call_id')!r} is damaged "
                           f"({', '.join(f'{f}: {row.get(f)!r}' for f in bad)}): restore the "
                           "log, or remove that line to ask it again")

    def check_replied(self) -> None:
        """End of a run: raise when this run asked and not one ask got a reply (every ask a
        refusal, timeout or connection error). Replies that do not parse are replies, so a
        run of unparseable replies passes. Call it after writing the outputs, which are kept.

        Raises:
            ScorerUnavailable: ``n_asks`` > 0 and ``n_replies`` == 0.
        """
        if self.n_asks and not self.n_replies:
            raise ScorerUnavailable(
                f"the {self.what} gave no reply to any of the {self.n_asks} asks of this run "
                f"(last: {self._last_error}); every result is n/a. What was written is kept "
                f"(asks in {self.log.path}): fix the {self.what} and rerun the same command "
                "to resume")


@dataclass
class ProbeRun:
    """What a bias probe's run gives back (name-swap, dual-framing, invariance): its folder,
    ``summary.json`` read back through its model (:mod:`rig.probes.schema`), the rows of
    ``scores.parquet``, the asks that reached the backend, the wall time in seconds and the
    files written by name."""
    out_dir: Path
    summary: ProbeSummary
    rows: pd.DataFrame
    n_backend_calls: int
    seconds: float
    files: dict[str, Path] = field(default_factory=dict)


#: the files a probe run writes besides its ask logs (every probe writes some of them)
OUTPUT_FILES = ("probe.json", "scores.parquet", "decisions.parquet", "summary.json",
                "report.html")


#: ``probe.json`` fields a resumed run must share with the run in its folder
SAME_RUN_KEYS = ("probe", "language", "data_path")


def _check_same_run(path: Path, meta: dict) -> None:
    if not path.is_file():
        return
    from rig.jsonfile import read_json

    old = read_json(path)  # a damaged one is named (ConfigError), not overwritten
    if not isinstance(old, dict):
        raise ConfigError(path, "", "not a probe's record (a JSON object expected)",
                          type(old).__name__)
    for key in SAME_RUN_KEYS:
        was, now = old.get(key, "en" if key == "language" else None), meta.get(key)
        if key == "language" and now is None:
            now = "en"
        if was != now:
            raise ConfigError(path, key, f"this folder holds a run with {key} {was!r}; resuming "
                              "it with another would mix the two runs: use another --out",
                              now)


def check_run_folder(out: Path, meta: dict) -> None:
    """Refuse ``out`` before anything slow is loaded (the judge, the similarity model): the
    checks of :func:`start_run` that need only the folder and the run's
    :data:`SAME_RUN_KEYS`, writing nothing. ``meta`` needs only those keys.

    Raises:
        ConfigError: ``out`` is a file, or holds a run that differs in one of
            :data:`SAME_RUN_KEYS` (the message names the file, the field and both values).
    """
    if out.exists() and not out.is_dir():
        raise ConfigError(out, "--out", "an existing file, not a folder; give an output folder")
    _check_same_run(out / "probe.json", meta)


def start_run(out: Path, meta: dict) -> None:
    """Create the output folder ``out`` (a resumed run's: without the temporary files of a
    killed run's writes of :data:`OUTPUT_FILES`, :func:`rig.paths.remove_partials`) and write
    what is run to ``out/probe.json``.

    A folder that holds another run's ``probe.json`` is resumed only when the run is the same
    probe, language and prompt set (:data:`SAME_RUN_KEYS`): a rerun with another
    ``--language`` would otherwise mix two languages' asks in one ask log and one summary.

    Raises:
        ConfigError: ``out`` cannot be used as an output folder (:func:`~rig.paths.make_out_dir`),
            or it holds a run that differs in one of :data:`SAME_RUN_KEYS` (the message names
            the file, the field and both values).
    """
    _check_same_run(out / "probe.json", meta)
    make_out_dir(out)
    remove_partials(out, OUTPUT_FILES)
    write_text_atomic(out / "probe.json", json.dumps(meta, indent=2))


def write_probe_outputs(out: Path, rows: list[dict], summary: dict,
                        write_report: Callable[[Path, Any], Path]) -> dict[str, Path]:
    """Write a probe's ``scores.parquet`` (one row per ask or pair), ``summary.json`` (through
    its model, :func:`rig.probes.schema.write_probe_summary`) and ``report.html`` (by
    ``write_report(path, model)``); returns their paths by name."""
    if PLANS:
        raise PlanDone
    scores = write_parquet(rows, out / "scores.parquet")
    model = probe_summary(summary, out / "summary.json")
    spath = write_probe_summary(out / "summary.json", model)
    return {"scores": scores, "summary": spath,
            "report": write_report(out / "report.html", model)}


def finish_run(out: Path, rows: list[dict], files: dict[str, Path], asks: Sequence[AskLog],
               t0: float) -> ProbeRun:
    """End a bias probe's run once its outputs are written: each ask log checked in turn
    (:meth:`AskLog.check_replied`), ``summary.json`` read back; ``t0`` is the run's
    :func:`time.perf_counter` at its start.

    Raises:
        ScorerUnavailable: an ask log of this run got no reply at all.
    """
    for log in asks:
        log.check_replied()
    summary = load_probe_summary(files["summary"])
    return ProbeRun(out, summary, pd.DataFrame(rows), sum(a.n_backend_calls for a in asks),
                    time.perf_counter() - t0, files)
