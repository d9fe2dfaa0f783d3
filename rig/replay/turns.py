"""Finding the candidate's answers in a whole stereo interview from the interviewer's channel.

How (a recording without ``turns`` or ``question_id``):

1. The interviewer's channel is split into its turns by the VAD and an endpointing timer of
   :data:`INTERVIEWER_TIMER_MS` (1.2 s: a TTS voice's pauses between sentences are shorter,
   so one spoken question stays one turn), as :func:`rig.vad.detect_turns` does for any
   channel.
2. Each interviewer turn is transcribed (the ASR of the monitor's signals, tiny.en by
   default) and matched to the bank's question texts by TF-IDF cosine
   (:func:`rig.calls.agent.question_match.match_question`, threshold 0.3, the caller agent's own
   rule). A turn that matches no question (a greeting, "thank you", a closing line) is not a
   question.
3. The answer to a matched question spans from the end of the interviewer's speech in that
   turn to the start of the interviewer's next turn, whatever it is (or the recording's end).
   The replayed version's VAD then runs on the candidate's channel over that span, as the
   interviewer's own VAD would have listened once it stopped speaking.

When it cannot: an interviewer channel without speech, or one in which no turn matches a bank
question, is an error for the recording (named, with the best match), and the rest goes on;
a question asked twice gives two answers (the second is ``index`` + 1), each replayed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rig.asr.whisper import AsrOptions, Transcript
from rig.audio import Audio
from rig.calls.agent.question_match import MATCH_THRESHOLD, match_question
from rig.replay.inputs import ReplayInputError, ReplayTurn
from rig.vad import Turn, TurnParams

#: The endpointing timer that splits the interviewer's channel into turns (ms).
INTERVIEWER_TIMER_MS = 1200


def turns_from_interviewer(interviewer: Audio, questions: Sequence[tuple[str, str]], *,
                           detect_turns: Callable[[Audio, TurnParams], tuple[Turn, ...]],
                           transcribe: Callable[[Audio, AsrOptions], Transcript],
                           asr_options: AsrOptions, source: str,
                           threshold: float = MATCH_THRESHOLD) -> tuple[ReplayTurn, ...]:
    """The candidate's answers of a stereo interview (method in the module docstring).

    Args:
        interviewer: the interviewer's channel, float32 mono at 8 or 16 kHz.
        questions: the bank's ``(question_id, question text)`` pairs.
        detect_turns, transcribe: the VAD and ASR stages.
        asr_options: how the interviewer's turns are transcribed.
        source: the recording's name, for errors.

    Returns:
        One :class:`ReplayTurn` per matched question (``source="interviewer_channel"``,
        ``match_similarity`` set), in time order.

    Raises:
        ReplayInputError: no interviewer speech, or no turn matches a bank question.
    """
    iturns = detect_turns(interviewer, TurnParams(silence_timeout_ms=INTERVIEWER_TIMER_MS))
    if not iturns:
        raise ReplayInputError(f"{source}: the interviewer's channel holds no speech: rig cannot "
                               "find the answers; give turns (question_id, start_s, end_s) in "
                               "the metadata, or check layout")
    found: list[ReplayTurn] = []
    best: tuple[float, str] = (0.0, "")
    for i, it in enumerate(iturns):
        clip = interviewer.slice(it.start_s, it.speech_end_s + 0.2)
        said = transcribe(clip, asr_options).text
        qid, sim = match_question(said, questions, threshold)
        if sim > best[0]:
            best = (sim, said)
        if qid is None:
            continue
        end = iturns[i + 1].start_s if i + 1 < len(iturns) else None
        found.append(ReplayTurn(len(found), qid, it.speech_end_s, end, "interviewer_channel",
                                match_similarity=round(sim, 4)))
    if not found:
        raise ReplayInputError(
            f"{source}: no interviewer turn matches a bank question (similarity >= "
            f"{threshold:g}; best {best[0]:.2f}: {best[1][:80]!r}): give turns in the "
            "metadata, or a bank holding the questions asked")
    return tuple(found)
