"""The rubric prompt, its output grammar, and the reply parser.

The scorer grades one transcript against one question's rubric: for each criterion it awards
integer points from 0 to the criterion's maximum; the score is their sum (0-100). The reply is
JSON ``{"points": {"<criterion_id>": <int>, ...}, "reason": "<one sentence>"}``; with the
llama.cpp backend a GBNF grammar forces that shape and each criterion's range.

A reply that is not valid JSON (a key named twice included), lacks a criterion, or awards
points outside a criterion's range is a parse failure (its raw text is kept); it is never
turned into a score.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Literal

from rig.answers import Question
from rig.config import DuplicateKeyError, loads_strict

PROMPT_VERSION = 2  # 2: the transcript on its own lines (a stable prefix split)
MAX_REASON_CHARS = 160

#: ``timeout``: the grading ran past the scorer's ``budget_s`` (recorded, never a score).
#: ``too_long``: the prompt and the reply do not fit the judge's context (never cut; see
#: :class:`rig.scorer.base.TranscriptTooLong`)
ParseStatus = Literal["ok", "invalid_json", "missing_field", "out_of_range", "error", "timeout",
                      "too_long"]

SYSTEM_PROMPT = (
    "You are a strict, fair interview grader. You grade one candidate answer from a phone "
    "interview against a rubric. The answer is an automatic transcript of speech. Grade only "
    "what the candidate actually said: award points for each criterion only when the answer "
    "gives evidence for it, and give 0 points when the answer does not address it. Do not "
    "reward or penalise speaking style. Reply with JSON only."
)


def rubric_head(question: Question, with_reason: bool = False) -> str:
    """The user message up to the transcript: question, rubric, reply format. It is the same
    for every call of a question, so a backend may keep its evaluation (llama.cpp's KV cache)
    and evaluate only :func:`transcript_block` per call."""
    lines = [f"Interview question: {question.question}", "", "Rubric:"]
    for c in question.rubric:
        lines.append(f"- {c.id} (0 to {c.points} points): {c.description}")
    example = ", ".join(f'"{c.id}": <0-{c.points}>' for c in question.rubric)
    reason = ', "reason": "<one short sentence>"' if with_reason else ""
    lines += [
        "",
        f'Reply as JSON: {{"points": {{{example}}}{reason}}}',
        "",
        "Candidate's answer (transcript):",
        '"""',
        "",
    ]
    return "\n".join(lines)


def transcript_block(transcript: str) -> str:
    """The per-call tail of the user message: the transcript, closed by triple quotes."""
    return f'{transcript.strip()}\n"""'


def user_prompt(question: Question, transcript: str, with_reason: bool = False) -> str:
    """The whole user message: :func:`rubric_head` then :func:`transcript_block`."""
    return rubric_head(question, with_reason) + transcript_block(transcript)


def _range_rule(name: str, hi: int) -> str:
    """GBNF for the integers 0..hi (hi <= 100) written without leading zeros."""
    alts = [f"[0-{min(9, hi)}]"]
    for tens in range(1, min(9, hi // 10) + 1):
        last = 9 if tens < hi // 10 else hi % 10
        alts.append(f'"{tens}" [0-{last}]')
    if hi == 100:
        alts.append('"100"')
    return f"{name} ::= " + " | ".join(alts)


def grammar(question: Question, with_reason: bool = False) -> str:
    """GBNF (llama.cpp) forcing the reply JSON, each criterion's points within 0..max."""
    items, rules = [], []
    for i, c in enumerate(question.rubric):
        items.append(f'"\\"{c.id}\\":" ws n{i}')
        rules.append(_range_rule(f"n{i}", c.points))
    body = ' "," ws '.join(items)
    reason = ' "," ws "\\"reason\\":" ws reason' if with_reason else ""
    return "\n".join([
        f'root ::= "{{" ws "\\"points\\":" ws "{{" ws {body} ws "}}"{reason} ws "}}"',
        f'reason ::= "\\"" [^"\\\\\\n]{{0,{MAX_REASON_CHARS}}} "\\""',
        "ws ::= [ \\t\\n]{0,2}",
        *rules,
    ])


@dataclass(frozen=True)
class ParsedReply:
    status: ParseStatus
    score: float | None
    points: dict[str, int] | None
    reason: str | None
    detail: str = ""


_JSON_OBJ = re.compile(r"\{.*\}", re.DOTALL)


def parse_reply(raw: str, question: Question) -> ParsedReply:
    """Parse a scorer reply. Never raises; a failure has ``score=None`` and a status:
    ``invalid_json`` (no JSON object, a truncated one, or one naming a key twice: the
    detail names the key), ``missing_field`` (no ``points`` object, or a criterion without
    points), ``out_of_range`` (a value that is not a whole number, a string for a number, a
    boolean, NaN or infinite, or outside 0..the criterion's points).

    Points for a criterion the rubric does not have (``"total": 80`` beside the rubric's
    criteria) are not added to the score; the reply stays ``ok`` (its score is that of the
    rubric's criteria) and ``detail`` notes the ids left out, so the note reaches the row's
    ``scorer_error``."""
    m = _JSON_OBJ.search(raw or "")
    if not m:
        return ParsedReply("invalid_json", None, None, None, "no JSON object in the reply")
    try:
        obj = loads_strict(m.group(0))
    except (json.JSONDecodeError, DuplicateKeyError) as exc:
        return ParsedReply("invalid_json", None, None, None, str(exc))
    except RecursionError:
        return ParsedReply("invalid_json", None, None, None, "JSON nested too deeply")
    pts = obj.get("points") if isinstance(obj, dict) else None
    if not isinstance(pts, dict):
        return ParsedReply("missing_field", None, None, None, "no 'points' object")
    points: dict[str, int] = {}
    for c in question.rubric:
        if c.id not in pts:
            return ParsedReply("missing_field", None, None, None, f"no points for {c.id!r}")
        v = pts[c.id]
        if (isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v)
                or v != int(v)):
            return ParsedReply("out_of_range", None, None, None, f"{c.id}={v!r} not an integer")
        if not 0 <= v <= c.points:
            return ParsedReply("out_of_range", None, None, None,
                               f"{c.id}={v} outside 0..{c.points}")
        points[c.id] = int(v)
    reason = obj.get("reason") if isinstance(obj.get("reason"), str) else None
    extra = [k for k in pts if k not in points]
    note = (f"ignored: points for {len(extra)} "
            f"{'criterion' if len(extra) == 1 else 'criteria'} not in the rubric "
            f"({', '.join(repr(k) for k in extra[:5])}{', ...' if len(extra) > 5 else ''})"
            if extra else "")
    return ParsedReply("ok", float(sum(points.values())), points, reason, note)
