"""One caller profile: an audio condition, its dimensions, its hash and its row columns.

A profile is an audio condition (voice, pace, pauses, response delay, disfluency, barge-in,
noise, channel, language), never a demographic category: its ``accent_label`` is refused when
it names one. :attr:`Profile.content_hash` covers everything that shapes the audio.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rig.channel.outage import Outage
from rig.channel.steps import Channel
from rig.config import content_hash
from rig.profiles.settings import (
    DEFAULT_BABBLE_VOICES,
    Disfluency,
    Interruption,
    Noise,
    Pace,
    Pauses,
    Voice,
)

Dimension = Literal["voice", "pace", "pauses", "response_delay", "disfluency", "interruption",
                    "noise", "channel", "language"]
DIMENSIONS: tuple[str, ...] = ("voice", "pace", "pauses", "response_delay", "disfluency",
                               "interruption", "noise", "channel", "language")
# Which top-level fields belong to which dimension (``accent_label`` describes the voice).
_FIELDS_OF: dict[str, tuple[str, ...]] = {
    "voice": ("voice", "accent_label", "span_voices"),
    "pace": ("pace",),
    "pauses": ("pauses",),
    "response_delay": ("response_delay_s",),
    "disfluency": ("disfluency",),
    "interruption": ("interruption",),
    "noise": ("noise",),
    "channel": ("channel", "outage"),
    "language": ("language",),
}
#: Dimensions that change nothing in the offline (file) path; they are recorded with the call
#: and act in real calls (see :class:`Interruption`).
OFFLINE_RECORD_ONLY: tuple[str, ...] = ("interruption",)

# Words that name a demographic category; an accent label describes audio, never a person.
_DEMOGRAPHIC_WORDS = frozenset({
    "male", "female", "man", "woman", "men", "women", "boy", "girl", "gender", "sex", "race",
    "racial", "ethnic", "ethnicity", "black", "white", "caucasian", "hispanic", "latino",
    "latina", "latinx", "asian", "elderly", "old", "young", "age", "aged", "religion",
    "religious", "disabled", "disability",
})


class Profile(BaseModel):
    """One audio condition. Every field but the id, description and ``changes`` shapes the
    audio and is covered by :attr:`content_hash`."""
    model_config = ConfigDict(frozen=True, extra="forbid")
    profile_id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    description: str = ""
    changes: tuple[Dimension, ...] = ()
    voice: Voice = Voice()
    accent_label: str = Field("US English (synthetic, hibari 'heart')", min_length=1,
                              max_length=200)
    pace: Pace = Pace()
    pauses: Pauses = Pauses()
    response_delay_s: float = Field(0.5, ge=0.0, le=10.0)
    disfluency: Disfluency = Disfluency()
    interruption: Interruption = Interruption()
    noise: Noise = Noise()
    channel: Channel = Channel()
    outage: Outage = Field(Outage(), description="frames stop mid-answer for duration_s "
                           "(samples absent: rig.channel.outage); part of the channel dimension")
    language: str = Field("en", description="the language the caller speaks: a Whisper "
                          "code (rig.language.WHISPER_LANGUAGES); a campaign pairs it with "
                          "banks of the same language")
    span_voices: dict[str, Voice] = Field(default_factory=dict, description="a voice per "
                                          "language for a script's code-switched spans "
                                          "([lang en] ... [/lang], rig.script); a span in a "
                                          "language not named here is spoken by `voice`; "
                                          "part of the voice dimension")

    @field_validator("span_voices")
    @classmethod
    def _span_voices(cls, v: dict[str, Voice]) -> dict[str, Voice]:
        from rig.language import check_language

        for lang, voice in v.items():
            if check_language(lang) != lang:
                raise ValueError(f"span_voices key {lang!r}: write the code in lower case")
            if voice.engine == "recorded":
                raise ValueError(f"span_voices.{lang}: a recorded voice cannot speak a span "
                                 "(the recording holds the whole answer); name a synthesiser")
        return v

    @field_validator("language")
    @classmethod
    def _language(cls, v: str) -> str:
        from rig.language import check_language

        return check_language(v)

    @field_validator("accent_label")
    @classmethod
    def _audio_not_demographic(cls, v: str) -> str:
        words = set(re.findall(r"[a-z]+", v.lower()))
        hits = sorted(words & _DEMOGRAPHIC_WORDS)
        if hits:
            raise ValueError(f"accent_label describes an audio condition, never a demographic "
                             f"category; {hits[0]!r} names one")
        return v

    def dimensions_changed(self, baseline: Profile) -> list[str]:
        """The dimensions in which this profile differs from ``baseline``."""
        mine, base = self.model_dump(), baseline.model_dump()
        return [d for d in DIMENSIONS if any(mine[f] != base[f] for f in _FIELDS_OF[d])]

    def setting(self, dimension: str) -> str:
        """The profile's value of one dimension, in words with units."""
        spans = "".join(f"; [{lang}] {v.engine}:{v.voice_id}"
                        for lang, v in sorted(self.span_voices.items()))
        return {
            "voice": f"{self.voice.engine}:{self.voice.voice_id}{spans}",
            "pace": self.pace.describe(), "pauses": self.pauses.describe(),
            "response_delay": f"{self.response_delay_s:g} s",
            "disfluency": self.disfluency.describe(), "interruption": self.interruption.describe(),
            "noise": self.noise.describe(),
            "channel": self.channel.describe() + ("" if not self.outage.duration_s
                                                  else f"; outage: {self.outage.describe()}"),
            "language": self.language,
        }[dimension]

    def record(self) -> dict[str, Any]:
        """The profile's settings as flat columns for a call's row (``profile_*``), plus the
        whole profile as JSON."""
        return {
            "profile_json": json.dumps(self.model_dump(mode="json"), sort_keys=True,
                                       separators=(",", ":")),
            "accent_label": self.accent_label, "language": self.language,
            "pace_rate": self.pace.rate, "pace_wpm_target": self.pace.wpm,
            "pauses_count": self.pauses.count, "pauses_pause_s": self.pauses.pause_s,
            "pauses_placement": self.pauses.placement,
            "response_delay_s": self.response_delay_s,
            "fillers_per_100_words": self.disfluency.fillers_per_100_words,
            "repetitions_per_100_words": self.disfluency.repetitions_per_100_words,
            "barge_in_offset_s": self.interruption.barge_in_offset_s,
            "noise_kind": self.noise.kind, "snr_db_target": self.noise.snr_db,
        }

    @property
    def content_hash(self) -> str:
        """Hash of everything that shapes the audio (not the id or description).

        Fields added after the first release are left out while they hold their neutral
        value, and a clean channel hashes as it always did, so a profile that uses none of
        them keeps its hash (and its calls keep their ids)."""
        d = self.model_dump(exclude={"profile_id", "description", "changes"})
        for section, key, neutral in _NEWER_FIELDS:
            if section is None:
                if d.get(key) == neutral:
                    d.pop(key, None)
            elif d[section].get(key) == neutral:
                d[section].pop(key, None)
        if not d["channel"]["steps"]:
            d["channel"] = {"kind": "clean"}
        return content_hash(d)


# (section, field, neutral value) of the fields added after the first release.
_NEWER_FIELDS: tuple[tuple[str | None, str, Any], ...] = (
    ("pace", "wpm", None),
    ("disfluency", "repetitions_per_100_words", 0.0),
    ("noise", "talkers", 6),
    ("noise", "voices", DEFAULT_BABBLE_VOICES),
    ("interruption", "backchannel_after_s", 0.0),
    ("interruption", "ask_repeat_slowly", False),
    (None, "interruption", {"barge_in_offset_s": 0.0}),
    ("voice", "model_path", None),
    ("voice", "config_path", None),
    ("voice", "speaker_wav", None),
    (None, "outage", {"duration_s": 0.0, "at_share": 0.5}),
    (None, "span_voices", {}),
)
