"""How an interviewer treated one profile's callers on real calls: the turn-taking and
conduct part of a profile's entry in ``summary.json`` (``profiles.<id>.turn_taking``), built by
:func:`rig.campaign.taking_summary.profile_turn_taking` from the rows' turn-taking and conduct
columns (docs/calls.md, "Turn-taking and conduct")."""

from __future__ import annotations

from rig.campaign.schema_base import _f, _Part


class ProfileTurnTaking(_Part):
    """Turn-taking and conduct over a profile's real calls (rows with the columns; failed
    calls included when they got that far). Null: no call had the figure."""

    n_calls: int = _f("calls with turn-taking columns", ge=0)
    n_latency: int = _f("calls with a response latency", ge=0)
    response_latency_p50_ms: float | None = _f(
        "ms: median of the calls' response_latency_ms (numpy linear percentile)")
    response_latency_p95_ms: float | None = _f(
        "ms: 95th percentile of the calls' response_latency_ms (numpy linear percentile)")
    candidate_turns: int = _f("the candidate's turns, summed over calls", ge=0)
    talked_over_turns: int = _f("of them, turns the interviewer started speaking in", ge=0)
    talk_over_rate: float | None = _f("talked_over_turns / candidate_turns")
    n_barge_ins: int = _f("calls where the candidate barged in", ge=0)
    barge_in_stopped_rate: float | None = _f("share of those where the interviewer stopped")
    barge_in_stop_p50_ms: float | None = _f("ms: median barge-in stop time, where it stopped")
    n_backchannel_calls: int = _f("calls with a backchannel", ge=0)
    backchannel_stopped_rate: float | None = _f(
        "share of those where the interviewer stopped at a backchannel (not robust)")
    dead_air_max_s: float | None = _f("s: the longest dead air of any call")
    dead_air_p50_s: float | None = _f("s: median of the calls' longest dead air")
    n_conduct_checked: int = _f("calls whose interviewer words were checked", ge=0)
    ai_disclosed_rate: float | None = _f("share of those with an AI disclosure at the start")
    n_prohibited_calls: int = _f("calls with at least one prohibited question", ge=0)
    prohibited_topics: dict[str, int] = _f("prohibited topic id -> calls it was asked in")
    n_accommodation_asked: int = _f("calls where the candidate asked to repeat more slowly",
                                    ge=0)
    accommodation_handled_rate: float | None = _f("share of those where the interviewer did")
