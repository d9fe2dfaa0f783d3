"""Where a real call's score comes from: the bot's own result, a user's extractor, or the rig.

``rig campaign run --score-source SPEC`` names one source, or a chain tried in order
(``interviewer,rig``). :func:`parse_score_sources` reads it:

``interviewer``
    The bot's own result: ``POST /results`` to a rig results route, read back with
    ``GET /results/{call_id}`` (:func:`rig.calls.interviewer.results.poll_result`), or the reference
    interviewer's. A server with no results route answers the first call's poll with a 404
    that is not the route's "no result yet" (:func:`rig.calls.interviewer.results.pending_404`): the
    campaign learns it once and takes the chain's next source, or stops with a clear error
    (:class:`rig.calls.interviewer.results.NoResultsRoute`) when there is none.
``extractor:MODULE:FUNCTION``
    ``FUNCTION(record: BotRecord) -> float | dict | None`` from ``MODULE`` (a dotted module
    name on ``sys.path``, or a ``.py`` file) reads the score from what the bot emitted: its
    frames (in-process), messages (an LLM function call such as ``record_score``, a final
    JSON message) or log lines. A number is a 0-100 score; a dict holds ``score`` and
    optionally ``decision`` (``advance``/``reject``) and ``reason``; None means "no score
    found": the row gets no score and ``parse_status`` ``missing_field``, never a made-up one.
    Any other return, or a score outside 0-100, is an :class:`ExtractorError` naming the
    function and the value.
``rig``
    The rig's own scorer (the campaign pipeline's, the one that grades the oracle) grades the
    candidate's turn as the bot's ASR heard it when the bot exposes its transcript
    (``rig_grade_bot_transcript``), else as the rig's ASR (the pipeline's) hears the
    bot-side audio of the answer: the bot's own input where the transport exposes it
    (in-process: ``rig_grade_rig_asr``), else the audio the rig sent (WebRTC, SIP, Twilio:
    ``rig_grade_sent_audio``, not what the bot took in). The audio is cut where the bot took
    the turn (:meth:`rig.calls.run.score.ScoreChoice._answer_audio`). Each is the rig's grade,
    not the bot's decision, and reports say so (:data:`RIG_GRADE_LABEL`). ``rig:asr``
    always takes the rig's own ASR (to set the bot's ASR apart from the rest of its chain).

Each row's ``score_source`` (:data:`rig.calls.bots.record.ScoreSource`) says which gave its score.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rig.calls.bots.record import BotRecord
from rig.errors import ConfigError, RigError
from rig.paths import import_file

SourceKind = Literal["interviewer", "extractor", "rig"]
#: What reports print beside a score the rig graded (``rig_grade_*``)
RIG_GRADE_LABEL = "the rig's grade of what the bot received, not the bot's decision"
#: The ``score_source`` values that are the rig's grade
RIG_GRADES = frozenset({"rig_grade_bot_transcript", "rig_grade_rig_asr",
                        "rig_grade_sent_audio"})
OPTION = "--score-source"


class ExtractorError(RigError):
    """A user's extractor returned what is no score, or raised; names the function and the
    value."""


@dataclass(frozen=True)
class SourceSpec:
    """One source of a ``--score-source`` chain; ``module``/``function`` for an extractor."""
    kind: SourceKind
    module: str | None = None
    function: str | None = None
    #: ``rig:asr``: always the rig's own ASR, even when the bot exposes its transcript
    own_asr: bool = False

    def __str__(self) -> str:
        return (f"extractor:{self.module}:{self.function}" if self.kind == "extractor"
                else "rig:asr" if self.own_asr else self.kind)


#: The chain without ``--score-source``: the interviewer's own result.
DEFAULT_SCORE_SOURCES: tuple[SourceSpec, ...] = (SourceSpec("interviewer"),)


def parse_score_sources(text: str) -> tuple[SourceSpec, ...]:
    """``interviewer``, ``rig``, ``rig:asr``, ``extractor:MODULE:FUNCTION`` or a
    comma-separated chain of them (each kind at most once), in the order they are tried.

    Raises:
        ConfigError: an empty spec, an unknown source, an extractor without both a module
            and a function, a kind named twice (names ``--score-source`` and the value).
    """
    parts = [p.strip() for p in (text or "").split(",")]
    if not text or not all(parts):
        raise ConfigError(OPTION, "", "interviewer, rig, rig:asr, extractor:MODULE:FUNCTION, "
                          "or a comma-separated chain of them (e.g. interviewer,rig)", text)
    out: list[SourceSpec] = []
    for p in parts:
        if p in ("interviewer", "rig"):
            spec = SourceSpec(p)  # type: ignore[arg-type]
        elif p == "rig:asr":
            spec = SourceSpec("rig", own_asr=True)
        elif p.startswith("extractor:"):
            mod, sep, fn = p[len("extractor:"):].rpartition(":")
            if not sep or not mod or not fn.isidentifier():
                raise ConfigError(OPTION, "", "an extractor is extractor:MODULE:FUNCTION "
                                  "(MODULE a dotted module or a .py file)", p)
            spec = SourceSpec("extractor", mod, fn)
        else:
            raise ConfigError(OPTION, "", "unknown score source (interviewer, rig, rig:asr "
                              "or extractor:MODULE:FUNCTION)", p)
        if any(s.kind == spec.kind for s in out):
            raise ConfigError(OPTION, "", f"{spec.kind} is named twice", text)
        out.append(spec)
    return tuple(out)


def load_extractor(spec: SourceSpec) -> Callable[[BotRecord], object]:
    """The extractor function ``spec`` names (a ``.py`` path is imported from its file).

    Raises:
        ConfigError: the module cannot be found or imported, or has no such callable
            (names ``--score-source``, the module and the function).
    """
    where = f"extractor:{spec.module}:{spec.function}"
    mod_name = spec.module or ""
    try:
        if mod_name.endswith(".py"):
            path = Path(mod_name)
            if not path.is_file():
                raise ConfigError(OPTION, "", "extractor file not found", str(path))
            module = import_file(path, "rig_extractor_")
        else:
            module = importlib.import_module(mod_name)
    except ConfigError:
        raise
    except Exception as exc:  # ImportError, SyntaxError, an error in the module's body
        raise ConfigError(OPTION, "", f"cannot import the extractor's module "
                          f"({type(exc).__name__}: {exc})", where) from exc
    fn = getattr(module, spec.function or "", None)
    if not callable(fn):
        raise ConfigError(OPTION, "", f"module {mod_name} has no function {spec.function}",
                          where)
    try:  # it is called with the BotRecord alone: say so before the first call, not after it
        inspect.signature(fn).bind(BotRecord())
    except TypeError as exc:
        raise ConfigError(OPTION, "", f"the extractor must take one argument, the BotRecord "
                          f"({spec.function}{inspect.signature(fn)}: {exc})", where) from exc
    except ValueError:  # a builtin without a signature: checked when called
        pass
    return fn


@dataclass(frozen=True)
class Extracted:
    """What an extractor found: ``score`` 0-100 or None (none found), ``decision``,
    ``reason``; ``raw`` the return value's repr (the row's ``scorer_raw``)."""
    score: float | None
    decision: str | None
    reason: str | None
    raw: str


def _score_value(v: object, name: str, got: object) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)):
        raise ExtractorError(f"extractor {name} returned {got!r}: the score must be a number "
                             "0-100 (or None: no score found)")
    if not 0 <= float(v) <= 100:
        raise ExtractorError(f"extractor {name} returned {got!r}: the score {v!r} is outside "
                             "0-100")
    return float(v)


def run_extractor(fn: Callable[[BotRecord], object], record: BotRecord,
                  name: str | None = None) -> Extracted:
    """Call the extractor on ``record`` and check what it returns (see the module docstring).

    Raises:
        ExtractorError: it raised, or returned no number/dict/None, a dict without ``score``
            or with unknown keys, a decision other than ``advance``/``reject``, a score
            outside 0-100 (names the function and the value).
    """
    name = name or getattr(fn, "__qualname__", repr(fn))
    try:
        got = fn(record)
    except Exception as exc:
        raise ExtractorError(f"extractor {name} raised {type(exc).__name__}: {exc}") from exc
    if got is None or isinstance(got, numbers.Real):
        return Extracted(_score_value(got, name, got), None, None, repr(got))
    if not isinstance(got, dict):
        raise ExtractorError(f"extractor {name} returned {got!r} ({type(got).__name__}): "
                             "expected a 0-100 score, a dict with 'score' (and optionally "
                             "'decision', 'reason'), or None")
    unknown = set(got) - {"score", "decision", "reason"}
    if "score" not in got or unknown:
        raise ExtractorError(f"extractor {name} returned {got!r}: a dict holds 'score' and "
                             "optionally 'decision' and 'reason'"
                             + (f" (unknown: {sorted(unknown)})" if unknown else ""))
    decision, reason = got.get("decision"), got.get("reason")
    if decision not in (None, "advance", "reject"):
        raise ExtractorError(f"extractor {name} returned decision {decision!r}: advance, "
                             "reject or None")
    if reason is not None and not isinstance(reason, str):
        raise ExtractorError(f"extractor {name} returned reason {reason!r}: a string or None")
    return Extracted(_score_value(got["score"], name, got), decision, reason, repr(got))


#: How each ``score_source`` reads in a report (:func:`score_source_note`)
SOURCE_WORDS = {
    "interviewer": "the interviewer's own result",
    "extractor": "read from the bot's own output by an extractor",
    "rig_grade_bot_transcript": "graded by the rig from the bot's transcript: " + RIG_GRADE_LABEL,
    "rig_grade_rig_asr": "graded by the rig from its own ASR of the bot's input audio: "
                         + RIG_GRADE_LABEL,
    "rig_grade_sent_audio": "graded by the rig from its own ASR of the audio the rig sent "
                            "(not what the bot took in): " + RIG_GRADE_LABEL,
}


def score_source_note(sources: object) -> str | None:
    """One sentence for a report: where the scores of a campaign's real calls came from
    (``sources``: each row's ``score_source``; a simulated campaign's all ``interviewer`` or
    null gives None), e.g. "Scores: 3 of 4 calls graded by the rig from its own ASR of the
    audio the bot received: the rig's grade of what the bot received, not the bot's decision;
    1 the interviewer's own result."."""
    from collections import Counter

    n = Counter(s for s in sources if isinstance(s, str))  # type: ignore[union-attr]
    if not n or set(n) == {"interviewer"}:
        return None
    total = sum(n.values())
    parts = [f"{k} of {total} calls {SOURCE_WORDS.get(src, src)}" if i == 0
             else f"{k} {SOURCE_WORDS.get(src, src)}"
             for i, (src, k) in enumerate(n.most_common())]
    return "Scores: " + "; ".join(parts) + "."
