"""LLM scorers: grade a transcript against a rubric (see :mod:`rig.scorer.prompt`)."""

from rig.scorer.base import Scorer, ScoreResult
from rig.scorer.prompt import PROMPT_VERSION, ParseStatus, parse_reply

__all__ = ["PROMPT_VERSION", "ParseStatus", "ScoreResult", "Scorer", "parse_reply"]
