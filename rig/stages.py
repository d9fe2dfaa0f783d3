"""The pipeline's stages as one typed bundle: :class:`Stages`, each stage a callable.

render (TTS, pauses, fillers, delay, noise) -> caller channel -> telephony path (codec) ->
VAD + endpointing (turn detector) -> ASR -> scorer. Every stage is real by default (the
``default_*`` callables, which import their engine where they run); unit tests replace some
with fakes. :func:`rig.runtime.build_stages` builds the real stages of a pipeline config with
each stage's factory (:func:`rig.scorer.factory.build_scorer`, :func:`rig.asr.whisper.build_asr`,
:func:`rig.vad.build.build_turn_detector`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rig.asr.whisper import AsrOptions, Transcript
    from rig.scorer.base import Scorer
    from rig.vad import TurnParams, TurnResult


@contextmanager
def memos_off() -> Iterator[None]:
    """Inside it, the process's ASR and judge memos are neither read nor written: every
    transcription and grading runs its model (``benchmarks/sweep.py`` measures what the memos
    save, issue 31 item 2). Not thread-safe against another thread leaving it."""
    from rig.asr import whisper
    from rig.scorer import base

    old = whisper._MEMO_ON[0], base._MEMO_ON[0]
    whisper._MEMO_ON[0] = base._MEMO_ON[0] = False
    try:
        yield
    finally:
        whisper._MEMO_ON[0], base._MEMO_ON[0] = old


def default_render(*args, **kwargs):
    from rig.synth import render_answer

    return render_answer(*args, **kwargs)


def default_caller_channel(audio, channel, seed):
    from rig.channel import apply_caller_channel

    return apply_caller_channel(audio, channel, seed)


def default_caller_channel_report(audio, channel, seed):
    from rig.channel import apply_caller_channel_report

    return apply_caller_channel_report(audio, channel, seed)


def default_telephony(audio, sample_rate_hz, codec):
    from rig.channel import telephony_path

    return telephony_path(audio, sample_rate_hz=sample_rate_hz, codec=codec)


def default_detect_turn(audio, params: TurnParams) -> TurnResult:
    from rig.vad import detect_turn

    return detect_turn(audio, params)


def default_transcribe(audio, options: AsrOptions) -> Transcript:
    from rig.asr.whisper import transcribe

    return transcribe(audio, options)


def default_content_similarity(reference: str, hypothesis: str) -> float:
    from rig.asr.similarity import content_similarity

    return content_similarity(reference, hypothesis)


@dataclass(frozen=True)
class Stages:
    """The pipeline's stages as callables (real by default), one frozen bundle: swap a stage
    with ``dataclasses.replace(stages, transcribe=...)``.

    Attributes:
        scorer: grades the transcript against the rubric (:func:`rig.scorer.factory.build_scorer`).
        render: ``(script, profile, seed, ...) -> RenderedAnswer`` (TTS, pauses, noise).
        caller_channel: ``(audio, channel, seed) -> Audio``, the profile's channel steps.
        telephony: ``(audio, sample_rate_hz, codec) -> Audio``, the pipeline's line.
        detect_turn: ``(audio, TurnParams) -> TurnResult``
            (:func:`rig.vad.build.build_turn_detector`).
        transcribe: ``(audio, AsrOptions) -> Transcript`` (:func:`rig.asr.whisper.build_asr`).
        content_similarity: ``(reference, hypothesis) -> float`` in [-1, 1].
        audio_cache_dir: the render cache folder (None: the default).
    """
    scorer: Scorer
    render: Callable = default_render
    caller_channel: Callable = default_caller_channel
    telephony: Callable = default_telephony
    detect_turn: Callable = default_detect_turn
    transcribe: Callable = default_transcribe
    content_similarity: Callable[[str, str], float] = default_content_similarity
    audio_cache_dir: Path | None = None
    #: where ``transcribe`` runs (``cpu``, ``cuda``, ...), copied to the row's ``asr_device``
    asr_device: str | None = None
    #: where ``scorer`` runs, copied to the row's ``scorer_device``
    scorer_device: str | None = None
    #: grades ``score_turn_text``; None: ``scorer`` (a real transport sets the campaign's own)
    turn_text_scorer: Scorer | None = None
    #: where each call's audio is written (:func:`rig.drilldown.audio.write_call_audio`:
    #: ``<call_id>.caller.flac``, ``.line.flac``, ``.json``); None: not written
    audio_dir: Path | None = None
