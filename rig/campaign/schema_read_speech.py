"""The read-speech part of ``summary.json`` (schema 1.5, rig issue 18): per speaker and
speaker group figures of a read-speech campaign (no scorer), split out of
:mod:`rig.campaign.schema`, which re-exports it."""

from __future__ import annotations

from rig.campaign.schema_base import _f, _Part

Interval = tuple[float, float]
NotComputable = dict[str, str]


class ReadSpeechFigures(_Part):
    """A read-speech campaign's measures over a set of completed calls (a speaker's or a
    speaker group's; rig.campaign.read_speech). Intervals treat the calls as independent: for
    a group they ignore that calls of one speaker are alike, so they are too narrow when a
    group has few speakers."""

    n_calls: int = _f("calls", ge=0)
    n_failed_calls: int = _f("calls that failed (left out of every figure)", ge=0)
    wer_mean: float | None = _f("mean WER of the transcript against the prompt")
    wer_ci95: Interval | None = _f("percentile bootstrap 95% CI of wer_mean over calls")
    wer_pooled: float | None = _f("pooled WER: all errors over all prompt words of the calls "
                                  "in wer_mean; null on rows logged before 1.8",
                                  default=None)
    truncation_rate: float | None = _f("share of completed calls with prompt words spoken "
                                       "after the turn closed")
    n_truncated: int = _f("completed calls truncated", ge=0)
    truncation_ci95: Interval | None = _f("Wilson 95% CI of truncation_rate")
    content_similarity_mean: float | None = _f("mean content_similarity of transcript and "
                                               "prompt; null when not computed")
    content_similarity_ci95: Interval | None = _f("percentile bootstrap 95% CI of "
                                                  "content_similarity_mean over calls")
    not_computable: NotComputable = _f("field -> reason, for every null figure")


class ReadSpeechSpeaker(ReadSpeechFigures):
    """One speaker (one profile with a recorded voice) of a read-speech campaign."""

    profile_id: str = _f("the speaker's profile")
    group: str = _f("the speaker's group: accent_description of its speaker.json, the "
                    "corpus's or the speaker's own label, quoted; 'unlabelled' when empty")
    corpus: str | None = _f("vctk, l2-arctic or cmu-arctic; null for a recorded speaker")
    corpus_speaker_id: str | None = _f("the speaker's id in the corpus")


class ReadSpeechGroup(ReadSpeechFigures):
    """The calls of every speaker of one group, pooled."""

    speakers: list[str] = _f("speaker ids (speaker.json speaker_id) in the group")


class ReadSpeechSummary(_Part):
    """A read-speech campaign (an answer bank with mode: read_speech): no scorer ran; per
    speaker and per speaker group, WER, truncation and content similarity."""

    by_speaker: dict[str, ReadSpeechSpeaker] = _f("speaker id -> its figures (profile order)")
    by_group: dict[str, ReadSpeechGroup] = _f("group label -> its figures, sorted by label")
    note: str = _f("how the groups are formed and what the intervals assume")
