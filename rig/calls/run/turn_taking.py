"""Turn-taking on a real call, from both sides of the caller agent's recording.

Both sides come from :class:`rig.calls.agent.loop.AgentResult`: ``sent`` (what the caller agent
played) and ``received`` (the interviewer's audio as it came out of the caller's playout
buffer), aligned frame by frame on the agent's 20 ms clock from connect. So every time here is
on that one clock, as the candidate heard the call: the transport's latency one way is inside
the interviewer's times, never a clock offset between two machines.

Activity is frame energy, not a VAD: a 20 ms frame is *active* when its RMS is at least
:data:`SPEECH_DBFS`; active frames closer than :data:`MERGE_GAP_S` are one segment and a
segment shorter than :data:`MIN_SEGMENT_S` is dropped (a click). The caller's *turns* are its plays
(an answer or a short reply: the agent's ``answer_started``/``reply_started`` events), each
up to its last frame at or above :data:`PLAYING_DBFS` before the next play (its sent audio is
digital silence between plays). A profile's noise bed is part of the caller's
audio and counts as its speech (the interviewer's VAD hears it too).

Measures (:func:`measure`):

- response latency: the end of the caller's speech in a turn to the interviewer's first
  active frame after it; negative when the interviewer's audio had started before the caller
  finished (it talked over the end). The row's ``response_latency_ms`` is the graded answer's
  (the last answer played).
- talk-over: an interviewer segment that *starts* while the caller speaks in a turn (after
  the caller started: an interviewer already speaking when the caller starts is a barge-in by
  the caller). ``talked_over_turns`` of ``candidate_turns``.
- barge-in: a caller turn that starts while the interviewer speaks; its stop time is the
  interviewer's segment end minus the caller's onset; ``barge_in_stopped`` is False when the
  interviewer's audio outlasted the caller's turn.
- backchannel: a caller turn of under :data:`BACKCHANNEL_MAX_S` of speech that starts while
  the interviewer speaks ("mm-hm"); ``backchannel_stopped`` is True when the interviewer's
  audio stopped within :data:`BACKCHANNEL_STOP_S` of its onset (it yielded the floor to a
  backchannel, which a robust interviewer does not).
- dead air: the longest stretch with neither side active, between the first and the last
  active frame of the call.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from rig.audio import Audio

FRAME_S = 0.02
#: A frame at or above this RMS (dBFS) is speech (either side).
SPEECH_DBFS = -45.0
#: A sent frame at or above this RMS (dBFS) is the caller playing something (its silence
#: between plays is digital zero).
PLAYING_DBFS = -80.0
MERGE_GAP_S = 0.3
MIN_SEGMENT_S = 0.06
BACKCHANNEL_MAX_S = 1.0
BACKCHANNEL_STOP_S = 1.0

Segment = tuple[float, float]


def frame_dbfs(audio: Audio, frame_s: float = FRAME_S) -> np.ndarray:
    """RMS per ``frame_s`` frame of ``audio``, dBFS (-inf... clipped at -200)."""
    n = max(1, round(frame_s * audio.sample_rate_hz))
    x = np.asarray(audio.samples, np.float64)
    k = len(x) // n
    if k == 0:
        return np.zeros(0)
    rms = np.sqrt(np.mean(x[:k * n].reshape(k, n) ** 2, axis=1))
    return 20 * np.log10(np.maximum(rms, 1e-10))


def segments(active: np.ndarray, frame_s: float = FRAME_S, merge_gap_s: float = MERGE_GAP_S,
             min_len_s: float = MIN_SEGMENT_S) -> list[Segment]:
    """Runs of True frames as (start, end) seconds, gaps under ``merge_gap_s`` merged, runs
    under ``min_len_s`` dropped."""
    out: list[list[float]] = []
    idx = np.flatnonzero(np.diff(np.concatenate([[0], active.astype(np.int8), [0]])))
    for a, b in zip(idx[::2], idx[1::2], strict=True):
        s, e = a * frame_s, b * frame_s
        if out and s - out[-1][1] < merge_gap_s:
            out[-1][1] = e
        else:
            out.append([s, e])
    return [(s, e) for s, e in out if e - s >= min_len_s - 1e-9]


@dataclass(frozen=True)
class TurnTaking:
    """One call's turn-taking (row columns of the same names; see the module docs)."""
    response_latency_ms: float | None = None
    candidate_turns: int | None = None
    talked_over_turns: int | None = None
    barge_in_stop_ms: float | None = None
    barge_in_stopped: bool | None = None
    backchannels: int | None = None
    backchannel_stopped: bool | None = None
    dead_air_max_s: float | None = None

    def to_row(self) -> dict:
        return asdict(self)


def _inside(t: float, segs: Sequence[Segment]) -> Segment | None:
    return next(((s, e) for s, e in segs if s <= t < e), None)


def measure(caller_turns: Sequence[Segment], caller_speech: Sequence[Segment],
            interviewer: Sequence[Segment], graded_turn_start_s: float | None = None
            ) -> TurnTaking:
    """Turn-taking from segments on one clock (s): the caller's turns (its plays), its
    speech, and the interviewer's speech; ``graded_turn_start_s``: the start of the graded
    answer's play (its turn's latency is ``response_latency_ms``)."""
    latency = stop_ms = None
    stopped = bc_stopped = None
    talked = bcs = 0
    for ts, te in caller_turns:
        speech = [(max(s, ts), min(e, te)) for s, e in caller_speech if s < te and e > ts]
        if not speech:
            continue
        c0, c1 = speech[0][0], speech[-1][1]
        if any(c0 < s < c1 for s, _ in interviewer):
            talked += 1
        at_onset = _inside(c0, interviewer)
        if at_onset is not None:
            if c1 - c0 <= BACKCHANNEL_MAX_S:
                bcs += 1
                bc_stopped = bool(bc_stopped) or at_onset[1] <= c0 + BACKCHANNEL_STOP_S
            elif stop_ms is None and stopped is None:
                stopped = at_onset[1] < c1
                stop_ms = (at_onset[1] - c0) * 1000 if stopped else None
        if graded_turn_start_s is not None and latency is None and te > graded_turn_start_s:
            over = _inside(c1 - 1e-9, interviewer)
            if over is not None and over[0] > c0:
                latency = (over[0] - c1) * 1000
            else:
                nxt = [s for s, _ in interviewer if s >= c1]
                latency = (min(nxt) - c1) * 1000 if nxt else None
    both = sorted([*caller_speech, *interviewer])
    dead = 0.0
    if both:
        reach = both[0][1]
        for s, e in both[1:]:
            dead = max(dead, s - reach)
            reach = max(reach, e)
    return TurnTaking(
        response_latency_ms=None if latency is None else round(latency, 1),
        candidate_turns=len(caller_turns), talked_over_turns=talked,
        barge_in_stop_ms=None if stop_ms is None else round(stop_ms, 1),
        barge_in_stopped=stopped, backchannels=bcs,
        backchannel_stopped=bc_stopped if bcs else None,
        dead_air_max_s=round(dead, 3) if both else None)


def play_turns(sent_dbfs: np.ndarray, starts_s: Sequence[float],
               frame_s: float = FRAME_S) -> list[Segment]:
    """The caller's turns: from each play's start to its last playing frame before the next
    play's start (a play with no playing frame is left out)."""
    out: list[Segment] = []
    playing = sent_dbfs >= PLAYING_DBFS
    bounds = [*sorted(starts_s), len(playing) * frame_s]
    for a, b in itertools.pairwise(bounds):
        idx = np.flatnonzero(playing[round(a / frame_s):round(b / frame_s)])
        if len(idx):
            out.append((a, a + (idx[-1] + 1) * frame_s))
    return out


def turn_taking(sent: Audio, received: Audio, play_starts_s: Sequence[float],
                graded_turn_start_s: float | None) -> TurnTaking:
    """:func:`measure` on the caller agent's two aligned sides and its plays' starts (s from
    connect; see the module docs)."""
    tx, rx = frame_dbfs(sent), frame_dbfs(received)
    return measure(play_turns(tx, play_starts_s), segments(tx >= SPEECH_DBFS),
                   segments(rx >= SPEECH_DBFS), graded_turn_start_s)


def turn_taking_columns(agent) -> dict:
    """The turn-taking columns of a real call's row from its
    :class:`rig.calls.agent.loop.AgentResult` (all None without one)."""
    if agent is None:
        return TurnTaking().to_row()
    graded = (agent.plays[-1].start_epoch_s - agent.t0_epoch_s) if agent.plays else None
    starts = [t for t, kind, _ in agent.events
              if kind in ("answer_started", "reply_started", "backchannel_started")]
    return turn_taking(agent.sent, agent.received, starts, graded).to_row()


def taking_columns(agent, said: str | None, conduct: str | None = None) -> dict:
    """A real call's :data:`rig.campaign.row_taking.TAKING_COLUMNS`: turn-taking from the
    caller agent's result, conduct from the interviewer's words (``conduct``: the list's path;
    None: the shipped one)."""
    from rig.calls.conduct import conduct_columns, load_conduct

    out = turn_taking_columns(agent)
    out.update(conduct_columns(said, load_conduct(conduct), accommodation_turns(agent)))
    return out


def accommodation_turns(agent) -> tuple[str, str] | None:
    """When the caller asked to repeat more slowly (its ``slower`` reply): the interviewer's
    words it heard before the request (its last utterance) and after it (until the caller's
    next answer), on the agent's clock; None when it did not ask."""
    if agent is None:
        return None
    t = next((t for t, k, d in agent.events if k == "reply_started" and d == "slower"), None)
    if t is None:
        return None
    nxt = min((s for s, k, _ in agent.events if k == "answer_started" and s > t),
              default=float("inf"))
    before = [x for e, x in agent.heard if e <= t]
    return (before[-1] if before else "",
            " ".join(x for e, x in agent.heard if t < e <= nxt))
