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


@dataclass(frozen=True)
class LostWords:
    """The words lost at the turn close counted in the alignment's words (normalised, as
    :func:`align_transcript`): ``n_lost`` of the script's ``n_total``, of which
    ``n_deleted`` are deletions in the alignment (the rest align with a heard word: the ASR
    made up a word that matches). ``raw_lost``/``raw_total``: the row's ``words_lost`` and
    ``words_total`` (script words as written, before normalisation; None when unknown)."""
    n_lost: int
    n_total: int
    n_deleted: int
    raw_lost: int | None = None
    raw_total: int | None = None

    def text(self) -> str:
        """``"52 of 93 words lost"``, with the row's count as written when the number lost
        differs: ``"52 of 93 words lost (51 of 94 as written)"``."""
        out = f"{self.n_lost} of {self.n_total} words lost"
        if self.raw_lost is not None and self.raw_lost != self.n_lost:
            out += f" ({self.raw_lost} of {self.raw_total} as written)"
        return out


def lost_words(steps: list[AlignedWord], lost: list[str], raw_lost: int | None = None,
               raw_total: int | None = None) -> LostWords:
    """Count ``lost`` (the script's words spoken after the turn closed, as written: the
    ``lost`` words of :func:`script_words`, fillers left out) in the words of ``steps``
    (:func:`align_transcript` of the same script): they are the script's last words, so the
    last ``n_lost`` script words of the alignment, ``n_lost`` their number once normalised
    (at most the script's)."""
    from rig.asr.wer import normalize

    return _tail(steps, len(normalize(" ".join(lost)).split()) if lost else 0, raw_lost,
                 raw_total)


def _tail(steps: list[AlignedWord], n: int, raw_lost: int | None = None,
          raw_total: int | None = None) -> LostWords:
    """The last ``n`` script words of ``steps`` (at most all of them) as :class:`LostWords`."""
    refs = [s for s in steps if s.ref is not None]
    n = max(0, min(len(refs), n))
    tail = refs[len(refs) - n:] if n else []
    return LostWords(n, len(refs), sum(s.op == "delete" for s in tail), raw_lost, raw_total)


def alignment_words(steps: list[AlignedWord], lost: LostWords | int | None) -> str:
    """The alignment's counts in words, tied to the words lost at the turn close, so the two
    counts a reader sees are explained by each other: the alignment's deletions are script
    words (normalised: "twenty five" and "25" are one word) missing from the transcript, of
    which the ones spoken after the turn closed are ``lost`` (:func:`lost_words`, in the
    same normalised words; an int: a count of them) and the rest were missed by the ASR."""
    c = alignment_counts(steps)
    head = (f"Alignment (normalised words): {c['equal']} equal, {c['substitute']} substituted, "
            f"{c['delete']} deleted, {c['insert']} inserted")
    if not isinstance(lost, LostWords):
        lost = _tail(steps, int(lost or 0))
    if not lost.n_lost:
        return head + "."
    out = (head + f"; of the {c['delete']} deleted, {lost.n_deleted} were spoken after the "
           f"turn closed (struck through in the script) and {c['delete'] - lost.n_deleted} "
           "missed by the ASR")
    if lost.n_deleted < lost.n_lost:
        out += (f"; {lost.n_lost - lost.n_deleted} of the {lost.n_lost} lost words align "
                "with a word the ASR wrote")
    return out + "."


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
