"""The interviewer under test, as configured in ``pipelines/*.yaml``.

A result holds only for one combination of telephony path, VAD and endpointing settings, ASR
model and flags, scorer model, prompt and rubric version. :func:`pipeline_version` hashes all
of them; the hash is stamped on every call and on the summary.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from rig.config import content_hash, load_model
from rig.pipeline_faults import FaultPolicy


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Telephony(_Frozen):
    """The interviewer's phone line: anti-aliased resampling to ``sample_rate_hz`` and a
    G.711 codec (``mulaw`` on North American and Japanese lines, ``alaw`` elsewhere), or
    ``none`` (linear). ``codec`` is a codec of the registry that the line carries
    (:data:`rig.channel.codecs.CODECS`); another name is an error listing those."""
    sample_rate_hz: Literal[8000, 16000] = 8000
    codec: str = "mulaw"

    @field_validator("codec")
    @classmethod
    def _codec(cls, v: str) -> str:
        from rig.channel.codecs import get_codec  # rig.channel loads scipy: not at import

        return get_codec(v, carrier="line").name


#: Defaults of the engine-specific VAD settings, filled in when the engine is chosen.
_SILERO_DEFAULTS = {"confidence": 0.7, "min_volume": 0.6}
_WEBRTCVAD_DEFAULTS = {"aggressiveness": 2, "frame_ms": 20}


class VadSettings(_Frozen):
    """The interviewer's VAD, under pipecat's VAD state machine (``VADParams``: speech
    confirmed after ``start_ms``, the turn closed by ``endpointing.silence_timeout_ms``).

    ``engine: silero`` (pipecat's Silero v5 ONNX): ``confidence`` (speech-probability
    threshold) and ``min_volume`` (pipecat's smoothed-volume gate). ``engine: webrtcvad``
    (Google's WebRTC GMM VAD, package webrtcvad-wheels): ``aggressiveness`` 0-3 (3 filters
    most non-speech) and ``frame_ms`` 10, 20 or 30 (its analysis frame); it decides speech
    alone (no volume gate). A setting of the other engine is a ConfigError, except at that
    engine's default (which any dumped configuration carries), dropped: a switch of
    ``vad.engine`` alone (``rig sweep --vary vad.engine=...``) stays valid. The chosen
    engine's unset settings are filled with their defaults, so writing a default or leaving
    it out gives the same ``pipeline_version``.
    """
    engine: Literal["silero", "webrtcvad"] = "silero"
    confidence: float | None = Field(None, gt=0, lt=1, description="silero only")
    start_ms: int = Field(200, ge=0, le=2000)
    min_volume: float | None = Field(None, ge=0, le=1, description="silero only")
    aggressiveness: Literal[0, 1, 2, 3] | None = Field(None, description="webrtcvad only")
    frame_ms: Literal[10, 20, 30] | None = Field(None, description="webrtcvad only")

    @model_validator(mode="before")
    @classmethod
    def _engine_fields(cls, data):
        if not isinstance(data, dict):
            return data
        data = dict(data)
        engine = data.get("engine", "silero")
        mine, theirs = ((_WEBRTCVAD_DEFAULTS, _SILERO_DEFAULTS) if engine == "webrtcvad"
                        else (_SILERO_DEFAULTS, _WEBRTCVAD_DEFAULTS))
        for k, default in theirs.items():
            if data.get(k) not in (None, default):
                raise ValueError(f"{k}: {data[k]!r} is not a setting of engine {engine!r} "
                                 f"(its settings: {', '.join(mine)}) - remove {k} or choose "
                                 "the engine it belongs to")
            data.pop(k, None)
        for k, default in mine.items():
            if data.get(k) is None:
                data[k] = default
        return data


class TurnSettings(_Frozen):
    """An end-of-turn model on top of the VAD, driven as a pipecat agent drives it
    (``TurnAnalyzerUserTurnStopStrategy``): when the VAD's timer fires, the model is asked
    whether the turn is complete; if not, the interviewer keeps listening until the model
    says so at a later VAD stop, or ``stop_ms`` of further silence (the model's own timer,
    pipecat's ``SmartTurnParams.stop_secs``, default 3 s).

    ``model: none`` (default): the VAD's timer alone closes the turn. ``smart-turn``:
    pipecat's smart-turn v3.2 CPU ONNX, shipped in the pipecat-ai wheel (no download).
    ``stop_ms`` is a smart-turn setting (a ConfigError with ``none``).
    """
    model: Literal["none", "smart-turn"] = "none"
    stop_ms: int | None = Field(None, ge=100, le=30000)

    @model_validator(mode="before")
    @classmethod
    def _model_fields(cls, data):
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if data.get("model", "none") == "none":
            if data.get("stop_ms") is not None:
                raise ValueError(f"stop_ms: {data['stop_ms']!r} is a setting of a turn model; "
                                 "with model: none the VAD's timer alone closes the turn")
        elif data.get("stop_ms") is None:
            data["stop_ms"] = 3000
        return data


class Endpointing(_Frozen):
    """The timer that closes the candidate's turn after this much silence."""
    silence_timeout_ms: int = Field(800, ge=100, le=10000)


class AsrSettings(_Frozen):
    """faster-whisper settings. ``language``: the language Whisper decodes in, a code of
    :data:`rig.language.WHISPER_LANGUAGES` (``en``, the default, ``es``, ``fr``, ...) or
    ``auto`` (Whisper detects it per turn). An English-only model (``whisper-tiny.en``) takes
    only ``en``. The default keeps every existing pipeline's version (``en`` was always in
    the hash)."""
    engine: Literal["faster-whisper"] = "faster-whisper"
    model: Literal["whisper-tiny.en", "whisper-base"] = "whisper-tiny.en"
    language: str = Field("en", description="a Whisper language code, or auto")
    beam_size: int = Field(1, ge=1, le=10)
    compute_type: Literal["int8", "float32"] = "int8"
    word_timestamps: bool = Field(
        False, description="ask faster-whisper for word times (word_timestamps=True): the "
        "text_without_speech check then looks at each word, not only each segment. Off by "
        "default and left out of pipeline_version while off (rig.pipeline.pipeline_version)")

    @field_validator("language")
    @classmethod
    def _language(cls, v: str) -> str:
        from rig.language import check_language

        return check_language(v, allow_auto=True)

    @model_validator(mode="after")
    def _english_only_model(self) -> AsrSettings:
        if self.model.endswith(".en") and self.language != "en":
            raise ValueError(f"language: {self.language!r} needs a multilingual model; "
                             f"{self.model} decodes English only (use model: whisper-base)")
        return self

    @property
    def whisper_language(self) -> str | None:
        """The ``language=`` faster-whisper takes: the code, or None for ``auto``."""
        from rig.language import whisper_language

        return whisper_language(self.language)


class ScorerSettings(_Frozen):
    """``llamacpp``: the embedded GGUF (``model`` is a verified name from :mod:`rig.models`).
    ``openai``: any OpenAI-compatible endpoint at ``base_url`` serving ``model`` (both
    required: the embedded model's default name is never sent to an endpoint); the API key
    is read from the environment variable named by ``api_key_env`` (the key itself is never
    written in a configuration). The openai fields are left out of ``pipeline_version`` when
    unset, so existing pipelines keep their version."""
    backend: Literal["llamacpp", "openai"] = "llamacpp"
    model: str = "qwen2.5-coder-1.5b-instruct-q4_k_m"
    mode: Literal["argmax", "expected"] = Field(
        "argmax", description="argmax: integer points per criterion as written; expected: "
        "expected points from the judge's distribution over credit levels (G-Eval)")
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    budget_s: float = Field(120.0, gt=0, le=3600, description="openai backend only: seconds "
                            "one grading may take; past it the grading is recorded as a "
                            "timeout, never a score. The llamacpp judge is bounded by "
                            "max_tokens and its context, never by wall time")
    max_tokens: int = Field(160, ge=32, le=1024)
    reason: bool = Field(False, description="ask for a one-sentence reason with the points")
    style_criteria: Literal["keep", "drop"] = Field(
        "keep", description="keep: grade every rubric criterion; drop: leave out the criteria "
        "a bank tags `style: true` (they grade how the answer sounds, and so the ASR, not the "
        "candidate) and rescale the rest to 100 points (rig.answers.Question.scored_rubric)")
    base_url: str | None = Field(None, description="openai: e.g. http://127.0.0.1:8080/v1")
    api_key_env: str | None = Field(None, description="openai: NAME of the key's env variable")
    timeout_s: float | None = Field(None, gt=0, le=3600, description="openai: per request")
    calibration: str | None = Field(
        None, description="a calibration.json (rig scorer calibrate): the judge's score mapped "
        "onto the reference scale, each question by the map fitted without it "
        "(rig.scorer.calibrated); its content is in pipeline_version. Unset: the judge's own "
        "score")

    @model_validator(mode="after")
    def _mode_fields(self) -> ScorerSettings:
        if self.mode == "expected" and self.reason:
            raise ValueError("reason: true needs mode: argmax (expected mode reads the "
                             "judge's level distributions and writes no reason)")
        return self

    @field_validator("model")
    @classmethod
    def _model_named(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("a model name, not an empty string")
        return v

    @model_validator(mode="after")
    def _backend_fields(self) -> ScorerSettings:
        if self.backend == "llamacpp":
            from rig.models import MODELS

            ggufs = sorted(n for n, m in MODELS.items() if m.kind == "gguf")
            if self.model not in ggufs:
                raise ValueError(f"the llamacpp backend runs a verified GGUF: one of {ggufs}")
        elif not self.base_url:
            raise ValueError("the openai backend needs base_url")
        elif "model" not in self.model_fields_set:
            # an error on the field itself, so the message names it (``scorer.model``)
            raise ValidationError.from_exception_data(type(self).__name__, [InitErrorDetails(
                type=PydanticCustomError("missing", "required by the openai backend (the "
                                         "model name the endpoint serves)"),
                loc=("model",), input=self.model_dump(exclude_unset=True))])
        return self


class TranscriptSettings(_Frozen):
    """What the scorer reads of the ASR transcript. ``fillers: drop`` removes filler words
    (um, uh, er, ah, ...: :data:`rig.asr.transcript.FILLER_WORDS`) from the text the scorer grades;
    the row's ``transcript`` and every WER are computed on the transcript as heard."""
    fillers: Literal["keep", "drop"] = "keep"


class PipelineConfig(_Frozen):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    description: str = ""
    telephony: Telephony = Telephony()
    vad: VadSettings = VadSettings()
    endpointing: Endpointing = Endpointing()
    turn: TurnSettings = Field(TurnSettings(), description="an end-of-turn model on top of "
                               "the VAD (new in issue 16: adding it changed every "
                               "pipeline_version once)")
    asr: AsrSettings = AsrSettings()
    scorer: ScorerSettings = ScorerSettings()
    transcript: TranscriptSettings = TranscriptSettings()
    faults: FaultPolicy = Field(FaultPolicy(), description="what is done with a call the "
                                "interviewer did not hear, or heard as a fault "
                                "(rig.pipeline_faults); in pipeline_version only when not "
                                "the default")
    device: Literal["cpu", "cuda", "auto"] = Field(
        "cpu", description="where faster-whisper and the embedded llama.cpp judge run: cpu "
        "(the default), cuda (fails when no CUDA GPU is usable), or auto (cuda where each "
        "engine finds one, else cpu); resolved per engine by rig.runtime.resolve_device and "
        "recorded per row (asr_device, scorer_device). Not in pipeline_version")


def load_pipeline(path: str | Path) -> PipelineConfig:
    """Load ``pipelines/X.yaml``. Raises ConfigError naming the file, field and value."""
    return load_model(path, PipelineConfig)


def pipeline_version(config: PipelineConfig) -> str:
    """``<name>-<hash>``: a hash of the whole configuration and the scorer prompt module (its
    version and source: prompt text, grammar, parser). The rubrics are not in it: each call's
    id carries its own question's rubric hash, so editing one question re-runs only that
    question's calls (see :func:`rig.campaign.call.call_id`).

    ``device`` is left out, as thread counts are (:mod:`rig.runtime`): the same weights and
    algorithm run on either device, so a campaign resumed on a GPU machine keeps its call ids
    and skips calls already made; a GPU's arithmetic may round differently (now and then a
    different greedy token), which the per-row ``asr_device``/``scorer_device`` columns let an
    analysis separate. Leaving it out also keeps every existing pipeline's version.

    Settings with defaults are in the hash like any other (``scorer.style_criteria``,
    ``transcript.fillers``), so adding one changed every pipeline's version once (issue 16).
    ``faults`` is the exception: left out while it is the default (:mod:`rig.pipeline_faults`
    says why), so adding it changed no version; so is ``asr.word_timestamps`` while off
    (issue 30: word times change no transcript, only what the checks can see)."""
    import inspect

    from rig.scorer import prompt

    leave_out: dict = {"description": True, "device": True}
    if config.faults == FaultPolicy():
        leave_out["faults"] = True
    if not config.asr.word_timestamps:
        leave_out["asr"] = {"word_timestamps"}
    extra = {}
    if config.scorer.calibration:  # the map itself, not only its path
        from rig.scorer.calibrated import calibration_sha256

        extra["calibration_sha256"] = calibration_sha256(config.scorer.calibration)
    return f"{config.name}-" + content_hash({
        "config": config.model_dump(exclude=leave_out, exclude_none=True),
        "prompt_version": prompt.PROMPT_VERSION,
        "prompt_source": inspect.getsource(prompt), **extra,
    })
