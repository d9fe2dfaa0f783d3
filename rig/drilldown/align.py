"""The drill-down's text views of a call: the script with the words lost after the turn
closed, and the transcript aligned to the script.

The alignment is jiwer's (``jiwer.process_words(...).alignments``: Levenshtein on words) on the
same normalised texts as the row's ``wer`` (:func:`rig.asr.wer.normalize`, Whisper's English
normaliser), so its counts of substitutions, deletions and insertions are the ones ``wer``
was computed from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Op = Literal["equal", "substitute", "delete", "insert"]


@dataclass(frozen=True)
class AlignedWord:
    """One step of an alignment: ``ref`` (a script word, None for an insertion) and ``hyp``
    (a transcript word, None for a deletion), both normalised."""
    op: Op
    ref: str | None
    hyp: str | None


def align_transcript(script: str, transcript: str) -> list[AlignedWord]:
    """The transcript aligned to the script, word by word (see the module): ``equal`` and
    ``substitute`` steps pair a script word with a heard one, ``delete`` is a script word not
    heard, ``insert`` a heard word not in the script. Both empty after normalisation: ``[]``.
    A substitution chunk of unequal lengths (jiwer never makes one) pairs what it can and
    keeps the rest as deletions or insertions."""
    import jiwer

    from rig.asr.wer import normalize

    ref, hyp = normalize(script or ""), normalize(transcript or "")
    if not ref and not hyp:
        return []
    if not ref:
        return [AlignedWord("insert", None, w) for w in hyp.split()]
    if not hyp:
        return [AlignedWord("delete", w, None) for w in ref.split()]
    out = jiwer.process_words(ref, hyp)
    r, h = out.references[0], out.hypotheses[0]
    steps: list[AlignedWord] = []
    for c in out.alignments[0]:
        rw, hw = r[c.ref_start_idx:c.ref_end_idx], h[c.hyp_start_idx:c.hyp_end_idx]
        if c.type == "insert":
            steps += [AlignedWord("insert", None, w) for w in hw]
        elif c.type == "delete":
            steps += [AlignedWord("delete", w, None) for w in rw]
        else:
            op: Op = "equal" if c.type == "equal" else "substitute"
            steps += [AlignedWord(op, a, b) for a, b in zip(rw, hw, strict=False)]
            steps += [AlignedWord("delete", w, None) for w in rw[len(hw):]]
            steps += [AlignedWord("insert", None, w) for w in hw[len(rw):]]
    return steps


def alignment_counts(steps: list[AlignedWord]) -> dict[str, int]:
    """``{"equal", "substitute", "delete", "insert"}`` -> number of steps of that kind."""
    counts = dict.fromkeys(("equal", "substitute", "delete", "insert"), 0)
    for s in steps:
        counts[s.op] += 1
    return counts


def alignment_words(steps: list[AlignedWord], words_lost: int | None) -> str:
    """The alignment's counts in words, tied to the words lost at the turn close, so the two
    counts a reader sees are explained by each other: the alignment's deletions are script
    words (normalised: "five" and "5" are one word) missing from the transcript, of which the
    ones spoken after the turn closed are ``words_lost`` (raw script words) and the rest were
    missed by the ASR."""
    c = alignment_counts(steps)
    head = (f"Alignment (normalised words): {c['equal']} equal, {c['substitute']} substituted, "
            f"{c['delete']} deleted, {c['insert']} inserted")
    lost = int(words_lost or 0)
    if not lost:
        return head + "."
    if c["delete"] >= lost:
        return (head + f"; of the {c['delete']} deleted, {lost} were spoken after the turn "
                f"closed (struck through in the script) and {c['delete'] - lost} missed by "
                "the ASR.")
    return (head + f"; {lost} script words were spoken after the turn closed (counted before "
            "normalisation, which can join words, and an ASR word can stand for a lost one).")


@dataclass(frozen=True)
class ScriptWord:
    """A word of the script as spoken: ``lost`` when it started after the turn closed (the
    interviewer never heard it); ``filler`` for a disfluency the render added."""
    word: str
    lost: bool
    filler: bool = False


def script_words(script: str, words_lost: int | None,
                 timings: list[dict] | None = None) -> list[ScriptWord]:
    """The script's words with the lost ones marked.

    With ``timings`` (the ``words`` of the call's audio JSON,
    :mod:`rig.drilldown.audio`: every rendered word with ``after_turn_close`` and
    ``is_filler``), each word as rendered, fillers included. Without them, ``script``'s
    whitespace-separated words with the last ``words_lost`` marked lost: the pipeline's rule
    (a script word is lost when it starts at or after the turn close, and words start in
    order, so the lost words are the script's last ``words_lost``; see
    :func:`rig.campaign.call.run_call_front`). ``words_lost`` None (a failed call): none lost.
    """
    if timings:
        return [ScriptWord(str(w["word"]), bool(w.get("after_turn_close")),
                           bool(w.get("is_filler"))) for w in timings]
    words = (script or "").split()
    n_lost = max(0, min(len(words), int(words_lost or 0)))
    return [ScriptWord(w, i >= len(words) - n_lost) for i, w in enumerate(words)]
