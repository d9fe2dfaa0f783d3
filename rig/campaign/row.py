"""The call row: one typed record per call, the schema of ``calls.jsonl`` and ``calls.parquet``.

:class:`CallRow` declares every column of a call's row with its type (``str``, ``float``,
``int`` or ``bool``, each nullable); :data:`ROW_TYPES`, the Parquet types that
:func:`rig.campaign.store.write_parquet` writes, is derived from it, as is the column order of
both files. :func:`rig.campaign.call.run_call` builds its row through :class:`CallRow` and
returns ``CallRow.to_dict()`` (a plain dict: the rest of rig works with dicts); the runner's
log writes that dict as one JSON line. ``docs/calls.md`` lists the columns.

Reading rows back (:meth:`CallRow.from_dict`) is tolerant of older logs: a column a row lacks
(it was logged before the column existed) reads as None, and ``transport`` as ``sim`` (every
row logged before the transport columns existed was a simulated call). It is strict about
what it cannot place: a key that is no column, or a value of the wrong type, is a
:class:`~rig.errors.RigError` naming the call id, the column and the value.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from rig.campaign.row_groups import (  # noqa: F401  (re-exported)
    FAULT_COLUMNS,
    SCORE_SOURCE_COLUMNS,
    TRANSPORT_COLUMNS,
)
from rig.campaign.row_taking import TAKING_COLUMNS  # noqa: F401  (re-exported)
from rig.campaign.row_types import BAD, coerce, column_type
from rig.errors import RigError


@dataclass(frozen=True)
class CallRow:
    """One call's row. Every column is nullable; the groups below follow the call's stages.

    Identity and inputs: ``campaign_id`` (``--campaign-id``, default the output folder's
    name), ``call_id`` (:func:`rig.campaign.call.call_id`, 16 hex digits; never null),
    ``answer_id``, ``question_id``, ``category``, ``tier`` (``strong``/``borderline``/``weak``),
    ``reference_score`` and ``cutoff`` (0-100), ``profile_id``, ``profile_hash``, ``repeat``,
    ``seed`` (= repeat), ``pipeline_version``, ``script`` (the answer's clean text).

    Pipeline: ``asr_model``, ``scorer_model``, ``temperature`` (the scorer's),
    ``silence_timeout_ms`` (endpointing), ``asr_device`` and ``scorer_device`` (where ASR
    and the scorer ran, e.g. ``cpu``, ``cuda``; null when the stages do not say),
    ``vad_engine`` and ``turn_model`` (the turn detector; null on rows logged before them).

    Oracle and outcome: ``oracle_score`` (0-100, the scorer on the clean script),
    ``oracle_parse_status``, ``oracle_decision``; ``status`` (``ok``/``error``), ``error``
    (``<stage>: <exception>``), ``traceback``; ``parse_status`` (``not_scored`` until the
    scorer ran), ``score`` (0-100), ``decision`` (``advance``/``reject``),
    ``score_minus_oracle`` (points).

    Stage attribution (:func:`rig.campaign.call.finish_call`; ``docs/measurement.md``):
    ``score_turn_text`` (0-100, the scorer's grade of the script's words spoken before the
    turn closed, as text), ``turn_text_parse_status`` (that grading's parse status; the
    oracle's when no word was lost, as the oracle's grade is reused then; ``not_scored`` when
    the call failed before scoring), ``loss_turn_detection`` (``score_turn_text -
    oracle_score``, points) and ``loss_asr`` (``score - score_turn_text``, points); the two
    sum to ``score_minus_oracle``, and are null whenever a grade they need is.

    Condition (the profile's settings, :meth:`rig.profiles.Profile.record`): ``profile_json``,
    ``accent_label``, ``language``, ``pace_rate``, ``pace_wpm_target``, ``pauses_count``,
    ``pauses_pause_s``, ``pauses_placement``, ``response_delay_s``, ``fillers_per_100_words``,
    ``repetitions_per_100_words``, ``barge_in_offset_s``, ``noise_kind``, ``snr_db_target``.

    Caller channel (:meth:`rig.channel.ChannelReport.to_row`; null but the chain when a test
    replaces the stage): ``channel_chain``, ``channel_steps`` (JSON),
    ``channel_output_rate_hz``, ``channel_packets``, ``channel_packets_lost``,
    ``channel_packets_late``, ``channel_loss_pct``, ``channel_late_pct``,
    ``channel_missing_pct``, ``channel_missing_pct_expected``, ``channel_clipped_pct``.

    Render (:class:`rig.synth.base.RenderedAnswer`): ``audio_duration_s``, ``speech_start_s``,
    ``speech_end_s``, ``snr_db_measured`` (dB, null without noise), ``voice_engine``,
    ``voice_id``, ``voice_version``, ``pace_rate_used``, ``pace_wpm_measured``,
    ``pauses_total_s``, ``fillers_spoken``, ``repetitions_spoken``.

    Turn (VAD and endpointing): ``turn_speech_start_s``, ``turn_close_s`` (s from the start
    of the render), ``turn_closed_by``, ``words_total``, ``words_lost`` (script words starting
    after turn close), ``truncated``, ``words_lost_share`` (0-1).

    ASR and WER: ``transcript``, ``asr_avg_logprob``, ``asr_no_speech_prob``,
    ``wer_reference_policy`` (``clean``), ``wer`` (against the script), ``wer_spoken``
    (against the words before turn close), ``wer_verbatim`` (against every word spoken),
    ``wer_unit`` (``word``; ``char``: the three are character error rates, for a language
    written without spaces, :mod:`rig.language`), ``cer`` (character error rate against the
    script), ``spoken_language`` (the bank's language), ``asr_language`` and
    ``asr_language_prob`` (the language Whisper decoded in and its probability: 1.0 when the
    pipeline fixed it),
    ``content_similarity`` (cosine, -1..1) and ``content_similarity_error``.

    Suspects (:mod:`rig.asr.checks`): ``asr_suspect``/``turn_suspect`` (True: flagged, False:
    checked and clean, null: not checked) and ``asr_suspect_reason``/``turn_suspect_reason``.

    Faults: :data:`FAULT_COLUMNS` (:mod:`rig.campaign.faults`).

    Scorer: ``scorer_raw``, ``scorer_reason``, ``scorer_error``, ``scorer_mode``,
    ``scorer_top_prob_min`` (0-1), ``scorer_entropy_mean_bits``, ``scorer_criteria_json``.

    Transport: :data:`TRANSPORT_COLUMNS` (``transport`` ``sim`` on a simulated call).

    Score source and the bot's words: :data:`SCORE_SOURCE_COLUMNS` (``score_source``
    ``interviewer`` on a simulated row with a score: read back from an older log too).

    Turn-taking and conduct: :data:`TAKING_COLUMNS` (null on a simulated call).

    Stage times (s, wall clock): ``t_synth_s``, ``t_channel_s``, ``t_vad_s``, ``t_asr_s``,
    ``t_scorer_s`` (null for a stage that did not run).

    Raises:
        RigError: a value of the wrong type (an ``int`` column given ``2.5``, a ``str`` column
            given a number), naming the call id, the column and the value. Numbers are
            normalised: numpy scalars become Python ones, an integral ``int`` column value
            given as a float (``3.0``) becomes ``3``, an ``int`` in a ``float`` column
            becomes a ``float``, and a non-finite float becomes None (JSON has no NaN).
    """

    # identity and inputs
    campaign_id: str | None = None
    call_id: str | None = None
    answer_id: str | None = None
    question_id: str | None = None
    category: str | None = None
    tier: str | None = None
    reference_score: float | None = None
    cutoff: float | None = None
    profile_id: str | None = None
    profile_hash: str | None = None
    repeat: int | None = None
    seed: int | None = None
    pipeline_version: str | None = None
    script: str | None = None
    # pipeline
    asr_model: str | None = None
    scorer_model: str | None = None
    temperature: float | None = None
    silence_timeout_ms: int | None = None
    asr_device: str | None = None
    scorer_device: str | None = None
    vad_engine: str | None = None
    turn_model: str | None = None
    # oracle and outcome
    oracle_score: float | None = None
    oracle_parse_status: str | None = None
    oracle_decision: str | None = None
    status: str | None = None
    error: str | None = None
    traceback: str | None = None
    parse_status: str | None = None
    score: float | None = None
    decision: str | None = None
    score_minus_oracle: float | None = None
    score_turn_text: float | None = None
    turn_text_parse_status: str | None = None
    loss_turn_detection: float | None = None
    loss_asr: float | None = None
    # condition (the profile's settings)
    profile_json: str | None = None
    accent_label: str | None = None
    language: str | None = None
    pace_rate: float | None = None
    pace_wpm_target: float | None = None
    pauses_count: int | None = None
    pauses_pause_s: float | None = None
    pauses_placement: str | None = None
    response_delay_s: float | None = None
    fillers_per_100_words: float | None = None
    repetitions_per_100_words: float | None = None
    barge_in_offset_s: float | None = None
    noise_kind: str | None = None
    snr_db_target: float | None = None
    # caller channel
    channel_chain: str | None = None
    channel_steps: str | None = None
    channel_output_rate_hz: int | None = None
    channel_packets: int | None = None
    channel_packets_lost: int | None = None
    channel_packets_late: int | None = None
    channel_loss_pct: float | None = None
    channel_late_pct: float | None = None
    channel_missing_pct: float | None = None
    channel_missing_pct_expected: float | None = None
    channel_clipped_pct: float | None = None
    # render
    audio_duration_s: float | None = None
    speech_start_s: float | None = None
    speech_end_s: float | None = None
    snr_db_measured: float | None = None
    voice_engine: str | None = None
    voice_id: str | None = None
    voice_version: str | None = None
    pace_rate_used: float | None = None
    pace_wpm_measured: float | None = None
    pauses_total_s: float | None = None
    fillers_spoken: int | None = None
    repetitions_spoken: int | None = None
    # turn
    turn_speech_start_s: float | None = None
    turn_close_s: float | None = None
    turn_closed_by: str | None = None
    words_total: int | None = None
    words_lost: int | None = None
    truncated: bool | None = None
    words_lost_share: float | None = None
    # ASR and WER
    transcript: str | None = None
    asr_avg_logprob: float | None = None
    asr_no_speech_prob: float | None = None
    wer_reference_policy: str | None = None
    wer: float | None = None
    wer_spoken: float | None = None
    wer_verbatim: float | None = None
    wer_unit: str | None = None
    cer: float | None = None
    spoken_language: str | None = None
    asr_language: str | None = None
    asr_language_prob: float | None = None
    content_similarity: float | None = None
    content_similarity_error: str | None = None
    asr_suspect: bool | None = None
    asr_suspect_reason: str | None = None
    turn_suspect: bool | None = None
    turn_suspect_reason: str | None = None
    # faults (FAULT_COLUMNS, in its order)
    faults: str | None = None
    fault_excluded: bool | None = None
    wer_errors: int | None = None
    wer_reference_words: int | None = None
    wer_spoken_errors: int | None = None
    wer_spoken_reference_words: int | None = None
    outage_s: float | None = None
    outage_start_s: float | None = None
    asr_timestamps_clamped: int | None = None
    # scorer
    scorer_raw: str | None = None
    scorer_reason: str | None = None
    scorer_error: str | None = None
    scorer_mode: str | None = None
    scorer_top_prob_min: float | None = None
    scorer_entropy_mean_bits: float | None = None
    scorer_criteria_json: str | None = None
    # transport (TRANSPORT_COLUMNS, in its order)
    transport: str | None = None
    transport_codec: str | None = None
    transport_packet_unit: str | None = None
    transport_packets_sent: int | None = None
    transport_packets_received: int | None = None
    transport_packets_lost: int | None = None
    transport_jitter_ms: float | None = None
    transport_call_duration_s: float | None = None
    transport_underruns: int | None = None
    transport_hung_up_by: str | None = None
    repeat_requests: int | None = None
    repeat_requests_heard: int | None = None
    time_to_first_answer_s: float | None = None
    response_delay_measured_s: float | None = None
    interviewer_gap_s: float | None = None
    interviewer_status: str | None = None
    recording_path: str | None = None
    # score source (SCORE_SOURCE_COLUMNS, in its order)
    score_source: str | None = None
    interviewer_said: str | None = None
    interviewer_heard: str | None = None
    question_asked: str | None = None
    question_match_similarity: float | None = None
    interviewer_heard_speech: bool | None = None
    interviewer_heard_context: str | None = None
    # turn-taking and conduct (TAKING_COLUMNS: rig.calls.run.turn_taking, rig.calls.conduct)
    response_latency_ms: float | None = None
    candidate_turns: int | None = None
    talked_over_turns: int | None = None
    barge_in_stop_ms: float | None = None
    barge_in_stopped: bool | None = None
    backchannels: int | None = None
    backchannel_stopped: bool | None = None
    dead_air_max_s: float | None = None
    conduct_ai_disclosed: bool | None = None
    conduct_prohibited: str | None = None
    conduct_prohibited_count: int | None = None
    conduct_accommodation_handled: bool | None = None
    # stage times
    t_synth_s: float | None = None
    t_channel_s: float | None = None
    t_vad_s: float | None = None
    t_asr_s: float | None = None
    t_scorer_s: float | None = None

    #: column name -> Python type (str, float, int, bool), filled below from the annotations
    TYPES: ClassVar[dict[str, type]]

    def __post_init__(self) -> None:
        for name, kind in CallRow.TYPES.items():
            v = getattr(self, name)
            if v is not None:
                w = coerce(v, kind)
                if w is BAD:
                    raise RigError(
                        f"call row {self.call_id!r}: column {name!r} is {kind.__name__}, got "
                        f"{v!r} ({type(v).__name__})")
                if w is not v:
                    object.__setattr__(self, name, w)

    def to_dict(self) -> dict[str, Any]:
        """Every column, in :data:`COLUMNS` order (plain Python values, JSON-ready)."""
        return {name: getattr(self, name) for name in COLUMNS}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CallRow:
        """A row from a dict (``run_call``'s, or a line of ``calls.jsonl`` of any rig version
        that had these columns): missing columns are None, a missing or null ``transport`` is
        ``sim``, and a simulated row with a score and no ``score_source`` has
        ``interviewer`` (the simulated interviewer's scorer graded it).

        Raises:
            RigError: a key that is no column (a row from a newer rig, or a misspelt key), or
                a value of the wrong type; the message names the call id and the keys."""
        unknown = d.keys() - _COLUMN_SET
        if unknown:
            raise RigError(f"call row {d.get('call_id')!r}: unknown column(s) "
                           f"{sorted(unknown)}; the known columns are CallRow's "
                           "(rig.campaign.row; a row written by a newer rig?)")
        row = cls(**d)
        if row.transport is None:
            object.__setattr__(row, "transport", "sim")
        if row.transport == "sim" and row.score_source is None and row.score is not None:
            object.__setattr__(row, "score_source", "interviewer")
        return row


_hints = typing.get_type_hints(CallRow)
CallRow.TYPES = {f.name: column_type(f.name, _hints[f.name]) for f in fields(CallRow)}

#: Every column of a call row, in order (the order of ``calls.parquet``).
COLUMNS: tuple[str, ...] = tuple(CallRow.TYPES)
_COLUMN_SET = frozenset(COLUMNS)

_PARQUET = {str: "string", float: "float64", int: "int64", bool: "bool"}
#: The type of every column of a call row in ``calls.parquet`` (``string``, ``float64``,
#: ``int64``, ``bool``), derived from :class:`CallRow`. A column that is null on every row of
#: a campaign (the transport columns of a simulated one, ``error`` when no call failed) is
#: still written with its type, so the ``calls.parquet`` of any two campaigns, simulated or
#: over a real transport, have the same types and read together (``duckdb``,
#: ``pyarrow.dataset``).
ROW_TYPES: dict[str, str] = {name: _PARQUET[kind] for name, kind in CallRow.TYPES.items()}

#: Columns that may differ between two runs of the same campaign (same inputs, pipeline and
#: seeds) without any result differing, so :func:`comparable` leaves them out: the stage
#: times ``t_*_s`` (wall clock: machine load, worker count, warm caches), ``campaign_id``
#: (defaults to the output folder's name, so two runs into two folders differ) and
#: ``recording_path`` (a real call's recording, under the output folder). Everything else is
#: a function of the inputs on the same machine and devices, on a simulated call; a real
#: transport's measurements (jitter, packet counts, delays) differ from call to call by
#: nature and are not covered.
RUNTIME_COLUMNS: frozenset[str] = frozenset(
    {"t_synth_s", "t_channel_s", "t_vad_s", "t_asr_s", "t_scorer_s", "campaign_id",
     "recording_path"})


def comparable(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` without :data:`RUNTIME_COLUMNS`: two runs of a campaign on the same machine,
    under any executor and worker count, give equal ``comparable`` rows per call id."""
    return {k: v for k, v in row.items() if k not in RUNTIME_COLUMNS}


def normalized_row(d: dict[str, Any]) -> dict[str, Any]:
    """``CallRow.from_dict(d).to_dict()``: every column, typed and in order (a row of an
    older log gains its missing columns as None, ``transport`` ``sim``).

    Raises:
        RigError: as :meth:`CallRow.from_dict`."""
    return CallRow.from_dict(d).to_dict()


def with_transport_columns(row: dict) -> dict:
    """``row`` with every transport column (a row logged before they existed, on resume or
    ``rig campaign summarize``, was a simulated call: ``transport`` ``sim``, facts null).
    Other keys are kept as they are (see :func:`normalized_row` for the typed whole row)."""
    out = dict(row)
    for c in TRANSPORT_COLUMNS:
        out.setdefault(c, None)
    if out["transport"] is None:
        out["transport"] = "sim"
    return out
