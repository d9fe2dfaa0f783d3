"""The base of every part of ``summary.json`` (:mod:`rig.campaign.schema`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator


class _Part(BaseModel):
    """A part of the file: unknown keys are refused when rig builds it, and skipped when it
    reads a file (validation context ``{"ignore_unknown": True}``: a newer minor version)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _skip_unknown(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, dict) and (info.context or {}).get("ignore_unknown"):
            return {k: v for k, v in data.items() if k in cls.model_fields}
        return data


def _f(description: str, **kw: Any) -> Any:
    return Field(description=description, **kw)

