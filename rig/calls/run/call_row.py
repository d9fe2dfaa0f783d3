"""What a real call adds to its campaign row: the transport columns and the call's recording.

:func:`transport_columns` fills :data:`rig.campaign.row.TRANSPORT_COLUMNS` (and the
repeat, delay and interviewer columns) from what the caller agent did, the link's packet
counts and the interviewer's result; :func:`write_recording` writes both sides of the call as
a stereo WAV (left: what the caller sent, right: what it received from the interviewer) with a
JSON of the agent's events beside it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from rig.calls.agent.loop import AgentResult
from rig.calls.media import TransportFacts
from rig.campaign.row import TRANSPORT_COLUMNS


def interviewer_gap_s(question: dict | None) -> float | None:
    """The interviewer's gap on its own clock: the end of its last prompt before the graded
    turn (the question, or its last repeat request) to the start of speech its VAD detected in
    that turn (negative on a barge-in); None when it detected none or did not say."""
    if not question:
        return None
    start = question.get("turn_speech_start_epoch_s")
    end = question.get("prompt_end_epoch_s", question.get("question_end_epoch_s"))
    return None if start is None or end is None else start - end


def transport_columns(transport: str, agent: AgentResult | None, stats: dict, result: dict,
                      question: dict | None, recording: Path | None) -> dict:
    """The transport columns of one real call's row.

    Args:
        transport: ``webrtc``, ``twilio`` or ``sip``.
        agent: what the caller agent did; None when the call never got that far (then every
            column but ``transport`` is null).
        stats: the link's ``stats()`` (codec, packet unit and counts, jitter in ms).
        result: the interviewer's result of the call (``{}`` without one).
        question: the graded question of that result (None without one).
        recording: the call's recording (:func:`write_recording`).
    """
    out: dict = dict.fromkeys(TRANSPORT_COLUMNS)
    out["transport"] = transport
    if agent is None:
        return out
    facts = TransportFacts(
        transport=transport, codec=stats.get("codec", "unknown"),
        packet_unit=stats.get("packet_unit"),
        packets_sent=int(stats.get("packets_sent") or 0),
        packets_received=int(stats.get("packets_received") or 0),
        packets_lost=stats.get("packets_lost"), jitter_ms=stats.get("jitter_ms"),
        call_duration_s=agent.duration_s, underruns=agent.underruns,
        hung_up_by=agent.hung_up_by)
    out.update(facts.to_row())
    out.update({
        "repeat_requests": question["repeat_requests"] if question else None,
        "repeat_requests_heard": agent.repeat_requests_heard,
        "time_to_first_answer_s": agent.time_to_first_answer_s,
        # the agent's clock: the question's end as it heard it to its first answer's
        # first frame (what the profile's response_delay_s sets)
        "response_delay_measured_s": agent.response_delay_s,
        "interviewer_gap_s": interviewer_gap_s(question),
        "interviewer_status": result.get("status"),
        "recording_path": str(recording),
    })
    return out


def write_recording(path: Path, call_id: str, agent: AgentResult) -> Path:
    """Write ``path`` (16-bit stereo WAV at the agent's rate, left: caller sent, right:
    interviewer received, cut to the shorter side) and ``path`` with ``.json`` (the agent's
    events, what it heard, its utterances and plays); returns ``path``."""
    import soundfile as sf

    path.parent.mkdir(parents=True, exist_ok=True)
    n = min(len(agent.sent.samples), len(agent.received.samples))
    sf.write(str(path), np.stack([agent.sent.samples[:n], agent.received.samples[:n]], axis=1),
             agent.sent.sample_rate_hz, subtype="PCM_16")
    (path.with_suffix(".json")).write_text(json.dumps({
        "call_id": call_id, "t0_epoch_s": agent.t0_epoch_s, "events": agent.events,
        "heard": agent.heard, "utterances": agent.utterances,
        "plays": [p.__dict__ for p in agent.plays],
        "response_delay_s": agent.response_delay_s, "underruns": agent.underruns,
        "empty_ticks": agent.empty_ticks,
        "channels": ["caller_sent", "interviewer_received"]}, indent=1))
    return path
