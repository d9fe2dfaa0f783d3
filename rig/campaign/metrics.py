"""Per-call metric columns computed beside the stages (:mod:`rig.campaign.call`): content
similarity of transcript to script, which never fails the call."""

from __future__ import annotations

from collections.abc import Callable

from rig.errors import EngineUnavailable, RigError


def content_similarity_columns(similarity: Callable[[str, str], float], script: str,
                               transcript: str) -> dict:
    """``content_similarity`` of the transcript to the script and, when it cannot be computed,
    ``content_similarity_error`` (the reason; the extra missing reads
    :data:`rig.asr.similarity.EXTRA_MISSING`). Never raises: the metric failing never fails the
    call."""
    try:
        return {"content_similarity": float(similarity(script, transcript)),
                "content_similarity_error": None}
    except EngineUnavailable:
        from rig.asr.similarity import EXTRA_MISSING

        reason = EXTRA_MISSING
    except RigError as exc:  # the model package missing or altered: the message says how
        reason = str(exc)
    except Exception as exc:  # a metric's bug must not lose the call's score
        reason = f"{type(exc).__name__}: {exc}"
    return {"content_similarity": None, "content_similarity_error": reason}
