"""Does an in-process bot's pipeline have something that hears the candidate? Checked once
its pipeline is built, at the StartFrame of rig's input transport
(:mod:`rig.calls.transports.pipecat_inproc`), before the candidate says a word.

:func:`walk_processors` follows pipecat's processor links (``next``) from rig's input
transport to the end of the chain, entering compound processors (a ``ParallelPipeline``'s
branches, a nested ``Pipeline``: their ``processors``). :func:`check_pipeline` then looks inside
each processor (its attributes, a few levels deep, not into other processors) for:

- a **VAD**: a ``VADAnalyzer`` anywhere (an LLM user aggregator's
  ``LLMUserAggregatorParams.vad_analyzer``, a ``VADProcessor``, a transport's params);
- a **turn detector** on top of it: a ``BaseTurnAnalyzer`` (smart-turn) in a stop strategy;
- the **user-turn start strategies** (``VADUserTurnStartStrategy``,
  ``TranscriptionUserTurnStartStrategy``, ``ExternalUserTurnStartStrategy``, ...);
- the **STT** services, and whether they are *segmented* (``SegmentedSTTService``: Whisper,
  Moonshine...: they transcribe only the audio between VAD speech events), and services that
  hear audio themselves (a realtime speech-to-speech LLM).

The verdict (:data:`Hearing`): ``hears`` a VAD is configured; ``deaf`` no VAD, and nothing
else can start a user turn (no STT transcribes without a VAD, no service detects speech
itself): the bot will not hear the answer; ``unknown`` no VAD, but a streaming STT's
transcriptions or a service's own turn events may start a user turn (rig cannot tell before
the call; the call's own user-speech events say).

Classes are matched by name along their MRO, so this module imports no pipecat and unit tests
can build a chain of fakes. Sources: pipecat 1.14's ``LLMUserAggregator`` (``_vad_controller``
from ``params.vad_analyzer``, ``UserTurnStrategies`` defaults: VAD and transcription start,
smart-turn stop), ``VADProcessor``, ``SegmentedSTTService`` (buffers audio between
``VADUserStartedSpeakingFrame`` and ``VADUserStoppedSpeakingFrame``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from typing import Literal

#: the verdict of :func:`check_pipeline` (module docstring)
Hearing = Literal["hears", "deaf", "unknown"]
#: how deep :func:`_components` looks inside one processor's attributes
DEPTH = 5
#: user-turn start strategies that start a turn without a VAD (from transcripts or a service)
_NO_VAD_START = {"TranscriptionUserTurnStartStrategy", "ExternalUserTurnStartStrategy",
                 "MinWordsUserTurnStartStrategy", "WakePhraseUserTurnStartStrategy"}
#: words in a speech-to-speech LLM service's class name (it hears the audio itself)
_S2S_WORDS = ("Realtime", "Live", "NovaSonic", "SpeechToSpeech")


def _mro(obj: object) -> set[str]:
    return {c.__name__ for c in type(obj).__mro__}


def _name(obj: object) -> str:
    return getattr(obj, "name", None) or type(obj).__name__


def walk_processors(first: object, limit: int = 500) -> list[object]:
    """The processors from ``first`` along pipecat's ``next`` links, a compound processor's
    ``processors`` entered before its ``next`` (each processor once, in the order met; at
    most ``limit``)."""
    seen: set[int] = set()
    out: list[object] = []
    stack = [first]
    while stack and len(out) < limit:
        p = stack.pop()
        if p is None or id(p) in seen:
            continue
        seen.add(id(p))
        out.append(p)
        stack.append(getattr(p, "next", None) or getattr(p, "_next", None))
        subs = getattr(p, "processors", None)
        if isinstance(subs, (list, tuple)):
            stack.extend(reversed(subs))
    return out


def _children(obj: object):
    if isinstance(obj, dict):
        return list(obj.values())
    if isinstance(obj, (list, tuple, set, frozenset)):
        return list(obj)
    if is_dataclass(obj) and not isinstance(obj, type):
        return [getattr(obj, f.name, None) for f in fields(obj)]
    d = getattr(obj, "__dict__", None)
    if isinstance(d, dict):
        return list(d.values())
    return []


_LEAF = (str, bytes, int, float, bool, type(None))
_NOT_ENTERED = {"FrameProcessor", "BaseTaskManager", "BaseClock", "PipelineWorker",
                "PipelineTask"}


def _skipped(obj: object) -> bool:
    """Not looked into: another processor, pipecat's task machinery, rig's own call objects,
    a builtin function."""
    if callable(obj) and not hasattr(obj, "__dict__"):
        return True
    return type(obj).__module__.startswith("rig.calls") or bool(_mro(obj) & _NOT_ENTERED)


def _components(proc: object, depth: int = DEPTH) -> list[object]:
    """Objects held by ``proc`` (its attributes, their attributes..., ``depth`` levels), not
    entering other frame processors, pipecat's task manager or clock, rig's own call objects
    or plain values."""
    out, seen, level = [], {id(proc)}, [proc]
    for _ in range(depth):
        nxt = []
        for obj in level:
            for c in _children(obj):
                if isinstance(c, _LEAF) or id(c) in seen:
                    continue
                seen.add(id(c))
                if _skipped(c):
                    continue
                out.append(c)
                nxt.append(c)
        level = nxt
    return out


@dataclass(frozen=True)
class PipelineCheck:
    """What :func:`check_pipeline` found. Each entry is ``"Class in Processor"``.

    Attributes:
        processors: the processors met, by name, in link order.
        vad: where a VAD analyzer is configured.
        turn_analyzers: turn analyzers (smart-turn) configured.
        start_strategies: user-turn start strategies configured.
        stt: STT services, ``(segmented)`` marked.
        s2s: speech-to-speech services (they hear the audio themselves).
        hearing: the verdict (:data:`Hearing`).
        message: the verdict in a sentence, naming what was found.
    """
    processors: tuple[str, ...]
    vad: tuple[str, ...]
    turn_analyzers: tuple[str, ...]
    start_strategies: tuple[str, ...]
    stt: tuple[str, ...]
    s2s: tuple[str, ...]
    hearing: Hearing
    message: str

    def to_dict(self) -> dict:
        return {"hearing": self.hearing, "message": self.message,
                "processors": list(self.processors), "vad": list(self.vad),
                "turn_analyzers": list(self.turn_analyzers),
                "start_strategies": list(self.start_strategies), "stt": list(self.stt),
                "speech_to_speech": list(self.s2s)}


def _verdict(vad, turn, starts, stt, s2s) -> tuple[Hearing, str]:
    if vad:
        extra = f"; turn detector {', '.join(turn)}" if turn else ""
        return "hears", f"a VAD is configured: {', '.join(vad)}{extra}"
    streaming = [s for s in stt if not s.endswith("(segmented)")]
    no_vad_start = [s for s in starts if s.split(" in ")[0] in _NO_VAD_START]
    # no start strategies seen: no user aggregator; a service's own turn events may still come
    if s2s or (streaming and (no_vad_start or not starts)):
        why = ", ".join(s2s + streaming)
        return "unknown", (f"no VAD in the bot's pipeline; a user turn can start only from "
                           f"{why} (its transcriptions or its own speech events): rig cannot "
                           "tell before the call whether it hears the answer")
    seg = [s for s in stt if s.endswith("(segmented)")]
    why = (f"its STT ({', '.join(seg)}) transcribes only between VAD speech events"
           if seg else "no STT or speech-to-speech service was found either")
    return "deaf", ("no VAD or turn detector in the bot's pipeline (no VADAnalyzer in an "
                    f"LLM user aggregator's vad_analyzer, a VADProcessor or a transport); {why}"
                    ": it will not hear the answer")


def check_pipeline(first: object) -> PipelineCheck:
    """Walk the bot's processors from ``first`` (rig's input transport) and give the verdict
    (module docstring). Never raises on an odd processor: what cannot be read is skipped."""
    procs = walk_processors(first)
    vad, turn, starts, stt, s2s = [], [], [], [], []
    for p in procs:
        pn = _name(p)
        names = _mro(p)
        if "STTService" in names:
            stt.append(pn + (" (segmented)" if "SegmentedSTTService" in names else ""))
        if "LLMService" in names and any(w in type(p).__name__ for w in _S2S_WORDS):
            s2s.append(pn)
        try:
            comps = _components(p)
        except Exception:  # an attribute that cannot be read: skip this processor's inside
            comps = []
        for c in comps:
            cn = _mro(c)
            where = f"{type(c).__name__} in {pn}"
            if "VADAnalyzer" in cn:
                vad.append(where)
            elif "BaseTurnAnalyzer" in cn:
                turn.append(where)
            elif "BaseUserTurnStartStrategy" in cn:
                starts.append(where)
    dedup = lambda xs: tuple(dict.fromkeys(xs))  # noqa: E731
    vad, turn, starts = dedup(vad), dedup(turn), dedup(starts)
    hearing, message = _verdict(vad, turn, starts, stt, s2s)
    return PipelineCheck(tuple(_name(p) for p in procs), vad, turn, starts, tuple(stt),
                         tuple(s2s), hearing, message)
