"""Monitoring settings: how signals are measured, how calls are binned into segments, when an
alert fires, and the privacy options. Every field has a documented default; a YAML file
(``rig monitor report --config monitor.yaml``) overrides any subset of them.

Example (the defaults)::

    signals:
      silence_timeout_ms: 800      # the endpointing timer that closes a turn
      resume_within_ms: 1000       # speech resuming this soon after a close = truncation event
      asr_model: whisper-tiny.en
      narrowband_below_db: -35.0   # energy 4-7 kHz vs 0.3-3.4 kHz under this = narrowband
      stereo_layout: candidate_left
    segments:
      snr_db: {edges: [10, 20, 30]}
      asr_logprob: {edges: [-1.0, -0.6, -0.3]}
      pace_wpm: {edges: [110, 170]}
      truncation_events: {edges: [1, 2]}
      repeat_requests: {edges: [1, 2]}
      categorical: [channel_class, codec, language, employer, job_family]
    alerts:
      min_n: 30
      alpha: 0.05
      correction: holm
      ratio_threshold: 0.8
      baseline_weeks: 4
      min_baseline_weeks: 3
      noise_floor_k: 2.0
      scorer_repeat_sd_points: 0.0   # the scorer's single-call repeat SD (0: unknown)
    privacy:
      hash_key_env: RIG_MONITOR_HASH_KEY
      min_cell: 5
    score_range: null              # e.g. [0, 100]: scores outside it are refused at ingest

Bad values raise :class:`rig.errors.ConfigError` as ``FILE: FIELD: problem (got VALUE)``.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rig.config import content_hash, load_model

#: Signals binned by edges, and the unit shown in their labels.
NUMERIC_SIGNALS: dict[str, str] = {
    "snr_db": "dB", "asr_logprob": "", "pace_wpm": "wpm",
    "truncation_events": "", "repeat_requests": "",
}
#: Signals that count events per call: whole-number edges label their bins 0, 1, 2+.
COUNT_SIGNALS: frozenset[str] = frozenset({"truncation_events", "repeat_requests"})
CategoricalSignal = Literal["channel_class", "codec", "language", "employer", "job_family",
                            "channel"]

#: Interviewer phrases that ask the candidate to say something again (lower case, matched on
#: word boundaries after punctuation is removed).
DEFAULT_REPEAT_PHRASES: tuple[str, ...] = (
    "could you repeat", "can you repeat", "would you repeat", "please repeat", "repeat that",
    "say that again", "say it again", "didn't catch", "did not catch", "didn't hear",
    "did not hear", "didn't quite get", "come again", "i missed that", "you're breaking up",
    "you are breaking up", "pardon",
)


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Bins(_Strict):
    """Bin edges of one numeric signal: bins are ``[-inf, e1), [e1, e2), ..., [ek, +inf)``;
    a call whose signal could not be measured falls in the bin ``unknown``."""
    edges: tuple[float, ...] = Field(min_length=1, max_length=12)

    @field_validator("edges")
    @classmethod
    def _increasing(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        if any(not math.isfinite(e) for e in v):
            raise ValueError("edges must be finite numbers")
        if any(b <= a for a, b in itertools.pairwise(v)):
            raise ValueError("edges must be strictly increasing")
        return v


class SignalsConfig(_Strict):
    """How each call's signals are measured (see :mod:`rig.monitor.signals`)."""
    silence_timeout_ms: int = Field(800, ge=100, le=10000)
    start_ms: int = Field(200, ge=0, le=2000)
    vad_confidence: float = Field(0.7, gt=0, lt=1)
    vad_min_volume: float = Field(0.6, ge=0, le=1)
    resume_within_ms: int = Field(1000, ge=0, le=10000)
    asr_model: Literal["whisper-tiny.en", "whisper-base"] = "whisper-tiny.en"
    narrowband_below_db: float = Field(-35.0, ge=-120, le=0)
    stereo_layout: Literal["candidate_left", "candidate_right"] = "candidate_left"
    repeat_phrases: tuple[str, ...] = Field(DEFAULT_REPEAT_PHRASES, min_length=1)

    @field_validator("repeat_phrases")
    @classmethod
    def _phrases(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        out = tuple(" ".join(p.lower().split()) for p in v)
        if any(not p for p in out):
            raise ValueError("a repeat phrase is empty")
        return out


class SegmentsConfig(_Strict):
    """Segment dimensions: numeric signals binned by edges, plus categorical columns."""
    snr_db: Bins = Bins(edges=(10.0, 20.0, 30.0))
    asr_logprob: Bins = Bins(edges=(-1.0, -0.6, -0.3))
    pace_wpm: Bins = Bins(edges=(110.0, 170.0))
    truncation_events: Bins = Bins(edges=(1.0, 2.0))
    repeat_requests: Bins = Bins(edges=(1.0, 2.0))
    categorical: tuple[CategoricalSignal, ...] = ("channel_class", "codec", "language",
                                                  "employer", "job_family")

    def numeric(self) -> dict[str, Bins]:
        """Signal name -> its bins, in report order."""
        return {name: getattr(self, name) for name in NUMERIC_SIGNALS}


class AlertsConfig(_Strict):
    """When a segment raises an alert (see :mod:`rig.monitor.alerts`).

    ``scorer_repeat_sd_points``: the scorer's own noise as the standard deviation of one
    call's score between repeats, in score points: a campaign's ``noise_floor.repeat_sd`` on
    the same scorer and score scale (``rig monitor report --noise-floor-from``); 0 when unknown.
    It is a single-call figure: the floor it gives a weekly mean shift is
    ``noise_floor_k`` x ``scorer_repeat_sd_points`` x sqrt(1/n_week + 1/n_baseline), the
    standard error of a difference of two means of that noise.
    """
    min_n: int = Field(30, ge=2, description="calls a segment (and its reference) needs")
    alpha: float = Field(0.05, gt=0, lt=1)
    correction: Literal["holm", "none"] = "holm"
    ratio_threshold: float = Field(0.8, gt=0, le=1)
    baseline_weeks: int = Field(4, ge=1, le=52)
    min_baseline_weeks: int = Field(3, ge=2, le=52)
    noise_floor_k: float = Field(2.0, gt=0, le=10)
    scorer_repeat_sd_points: float = Field(0.0, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: object) -> object:
        if isinstance(data, dict) and "scorer_noise_floor_points" in data:
            raise ValueError(
                "scorer_noise_floor_points is replaced by scorer_repeat_sd_points: give the "
                "scorer's single-call repeat SD (a campaign's noise_floor.repeat_sd); the old "
                "key was compared with a weekly mean shift as if it were the error of a mean, "
                "about sqrt(n) too wide")
        return data


class PrivacyConfig(_Strict):
    """``hash_key_env`` names the environment variable holding the key of the call-id hash in
    exports; ``min_cell``: segments with fewer calls show their count only."""
    hash_key_env: str = Field("RIG_MONITOR_HASH_KEY", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    min_cell: int = Field(5, ge=1)


class MonitorConfig(_Strict):
    """``score_range: [low, high]``: the interviewer's score scale (e.g. ``[0, 100]``); a call
    whose score lies outside it is refused at ingest, naming the sidecar or manifest line,
    the field and the value (a score on another scale, 4.2 of 5 among 0-100 scores, would
    otherwise move a segment's mean silently). None (the default): not checked."""
    signals: SignalsConfig = SignalsConfig()
    segments: SegmentsConfig = SegmentsConfig()
    alerts: AlertsConfig = AlertsConfig()
    privacy: PrivacyConfig = PrivacyConfig()
    score_range: tuple[float, float] | None = None

    @field_validator("score_range")
    @classmethod
    def _range(cls, v: tuple[float, float] | None) -> tuple[float, float] | None:
        if v is not None and not (math.isfinite(v[0]) and math.isfinite(v[1]) and v[0] < v[1]):
            raise ValueError("score_range is [low, high] with finite low < high")
        return v

    def signals_version(self) -> str:
        """A short hash of the measurement settings, stored with every call: calls measured
        under other settings are counted and named in the report."""
        return content_hash(self.signals)


def load_config(path: str | Path | None) -> MonitorConfig:
    """The defaults, or a YAML file overriding any of them.

    Raises:
        ConfigError: the file is missing, not YAML, or a field is invalid (names the file,
            the field and the value).
    """
    if path is None:
        return MonitorConfig()
    return load_model(path, MonitorConfig)
