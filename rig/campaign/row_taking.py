"""The turn-taking and conduct columns of a call row (declared in
:class:`rig.campaign.row.CallRow`, in this order)."""

from __future__ import annotations

#: Turn-taking (:mod:`rig.calls.run.turn_taking`, both sides on the caller agent's clock) and
#: conduct (:mod:`rig.calls.conduct`, text of ``interviewer_said``); null on a simulated call.
TAKING_COLUMNS: tuple[str, ...] = (
    "response_latency_ms", "candidate_turns", "talked_over_turns", "barge_in_stop_ms",
    "barge_in_stopped", "backchannels", "backchannel_stopped", "dead_air_max_s",
    "conduct_ai_disclosed", "conduct_prohibited", "conduct_prohibited_count",
    "conduct_accommodation_handled")
