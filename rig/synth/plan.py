"""The render plan: what is spoken, in which chunks, and where the silences go.

A plan is a sequence of :class:`Chunk` (text synthesized in one engine call) and
:class:`Silence` (exact silence, in seconds). It is built from the script's marks and the
profile's pauses and fillers, deterministically given the seed:

1. The script's word runs are split into words; a word ending in ``.``, ``!`` or ``?`` ends a
   sentence (not after a title such as "Dr." or a single-letter initial, nor when the next word
   starts in lower case).
2. The profile's extra pauses (``count`` x ``pause_s``) go at evenly spaced candidate places:
   the sentence ends other than the last (``sentence_end``) or the middle word boundary of a
   sentence of two or more words (``mid_sentence``). With k candidates and n <= k pauses, the
   i-th pause takes candidate ``floor((i + 0.5) * k / n)``. When there are fewer candidates
   than pauses, the pauses are spread the same way over all word boundaries. A profile pause
   at the same place as a script ``[pause]`` adds to it.
3. Fillers: ``round(fillers_per_100_words * words / 100)`` of them (rounded half up), each
   before a distinct word drawn with the seed (before the first word is allowed: "Um, I led
   ..."; a word that already follows a scripted filler is skipped), the filler word drawn from
   ``filler_words``. The script's own ``[um]`` marks are kept as written and are not counted.
4. Word repetitions: ``round(repetitions_per_100_words * words / 100)`` distinct words, drawn
   with the seed (stream 4), are said twice: first alone, without their punctuation, as a cut
   phrase ("the, the team"), then as written. The first saying is a disfluency token, like a
   filler: not in the clean reference, in the verbatim one.
5. Words are grouped into chunks: a chunk ends at a sentence end, a pause, a filler, a
   repetition or a change of language (a ``[lang xx]`` span of :mod:`rig.script`: the span's
   chunks carry its ``language``); each filler and each repetition is its own chunk. Between
   two chunks with no pause, the renderer inserts a short natural gap: ``sentence_gap_s``
   after a sentence end, ``phrase_gap_s`` otherwise (both well below an endpointing timer of
   several hundred ms).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rig.profiles.settings import Disfluency, Pauses
from rig.script import Filler, Pause, Words, parse_script

#: Silence between two sentences spoken without a pause mark (s).
SENTENCE_GAP_S = 0.25
#: Silence between two phrases of one sentence split at a filler (s).
PHRASE_GAP_S = 0.1

_SENT_END = re.compile(r"[.!?]['\")\]”’]*$")
_TITLES = {"mr.", "mrs.", "ms.", "dr.", "prof.", "st.", "jr.", "sr.", "vs.", "etc.", "e.g.",
           "i.e.", "inc.", "no.", "approx."}
_FILLER_STREAM = 1  # the seed sequence's second word: keeps fillers apart from noise draws
_REPETITION_STREAM = 4
_PUNCT = "\"'()[]{}.,;:!?“”‘’…-"

ChunkKind = Literal["words", "filler", "repetition"]


@dataclass(frozen=True)
class Chunk:
    """Text synthesized in one engine call.

    Attributes:
        text: what the engine is asked to say.
        words: the reference words of the chunk in order (one word for a filler).
        is_filler: the chunk is a disfluency token (a filler or the first saying of a
            repeated word): not part of the clean reference.
        ends_sentence: the chunk ends a sentence (selects the gap that follows it).
        kind: ``words`` (script words), ``filler`` or ``repetition``.
        language: the ``[lang xx]`` span the words are in (None: the bank's language).
    """

    text: str
    words: tuple[str, ...]
    is_filler: bool = False
    ends_sentence: bool = False
    kind: ChunkKind = "words"
    language: str | None = None


@dataclass(frozen=True)
class Silence:
    """Exact silence. ``source``: ``script`` (a [pause] mark) or ``profile`` (added pause)."""

    duration_s: float
    source: str


Step = Chunk | Silence


@dataclass(frozen=True)
class _Word:
    text: str
    ends_sentence: bool
    language: str | None = None


def _ends_sentence(word: str, next_word: str | None) -> bool:
    if not _SENT_END.search(word):
        return False
    if word.lower() in _TITLES or re.fullmatch(r"[A-Z]\.", word):
        return False
    return not (next_word and next_word[0].islower())


def _spread(candidates: list[int], n: int) -> list[int]:
    k = len(candidates)
    return [candidates[math.floor((i + 0.5) * k / n)] for i in range(n)]


def pause_boundaries(words: list[_Word], pauses: Pauses) -> list[int]:
    """Word indices after which the profile's extra pauses go (see module docstring).

    Raises:
        ValueError: the answer has fewer word boundaries than pauses to place.
    """
    n = pauses.count if pauses.pause_s > 0 else 0
    if n == 0:
        return []
    if pauses.placement == "sentence_end":
        candidates = [i for i, w in enumerate(words[:-1]) if w.ends_sentence]
    else:
        candidates, start = [], 0
        for i, w in enumerate(words):
            if w.ends_sentence or i == len(words) - 1:
                if i - start >= 1:  # two or more words
                    candidates.append(start + (i - start - 1) // 2)
                start = i + 1
    if len(candidates) < n:
        candidates = list(range(len(words) - 1))
    if len(candidates) < n:
        raise ValueError(f"cannot place {n} pauses in an answer of {len(words)} words "
                         f"({len(candidates)} word boundaries)")
    return _spread(candidates, n)


def filler_count(n_words: int, per_100_words: float) -> int:
    """Fillers inserted into an answer of ``n_words`` words (rounded half up)."""
    return math.floor(per_100_words * n_words / 100 + 0.5)


def make_plan(script: str, pauses: Pauses, disfluency: Disfluency, seed: int) -> list[Step]:
    """Build the render plan of ``script`` under a profile's pauses and fillers.

    Args:
        script: the answer script with its marks (``[pause 1.2s]``, ``[um]``).
        pauses: the profile's extra pauses.
        disfluency: the profile's filler rate and words, and its repetition rate.
        seed: non-negative; draws filler places and words, and the repeated words.

    Returns:
        Chunks and silences in order; no two chunks are adjacent without the renderer's gap.

    Raises:
        ValueError: an unknown script mark, a script without words, or pauses that cannot be
            placed.
    """
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    segments = parse_script(script)
    flat = [(w, seg.language) for seg in segments if isinstance(seg, Words)
            for w in seg.text.split()]
    if not flat:
        raise ValueError("the script has no spoken words")
    words = [_Word(w, _ends_sentence(w, flat[i + 1][0] if i + 1 < len(flat) else None), lang)
             for i, (w, lang) in enumerate(flat)]
    words[-1] = _Word(words[-1].text, True, words[-1].language)

    # Tokens: ("w", index) for a word, ("pause", s, source), ("filler", word).
    tokens: list[tuple] = []
    i = 0
    for seg in segments:
        if isinstance(seg, Words):
            for _ in seg.text.split():
                tokens.append(("w", i))
                i += 1
        elif isinstance(seg, Pause):
            tokens.append(("pause", seg.pause_s, "script"))
        elif isinstance(seg, Filler):
            tokens.append(("filler", seg.word))

    after = pause_boundaries(words, pauses)
    n_fill = filler_count(len(words), disfluency.fillers_per_100_words)
    # Words right after a scripted filler take no second one ("um um").
    taken = {tokens[j + 1][1] for j, t in enumerate(tokens[:-1])
             if t[0] == "filler" and tokens[j + 1][0] == "w"}
    free = [k for k in range(len(words)) if k not in taken]
    before: dict[int, str] = {}
    if n_fill and disfluency.filler_words and free:
        rng = np.random.default_rng([seed, _FILLER_STREAM])
        slots = rng.choice(free, size=min(n_fill, len(free)), replace=False)
        picks = rng.choice(len(disfluency.filler_words), size=len(slots))
        before = {int(s): disfluency.filler_words[int(p)] for s, p in zip(slots, picks,
                                                                         strict=True)}

    n_rep = filler_count(len(words), disfluency.repetitions_per_100_words)
    repeated: set[int] = set()
    if n_rep:
        rng = np.random.default_rng([seed, _REPETITION_STREAM])
        candidates = [k for k in range(len(words)) if words[k].text.strip(_PUNCT)]
        repeated = {int(k) for k in rng.choice(candidates, size=min(n_rep, len(candidates)),
                                                replace=False)}

    expanded: list[tuple] = []
    for tok in tokens:
        if tok[0] == "w" and tok[1] in before:
            expanded.append(("filler", before[tok[1]]))
        if tok[0] == "w" and tok[1] in repeated:
            expanded.append(("repeat", words[tok[1]].text.strip(_PUNCT), words[tok[1]].language))
        expanded.append(tok)
        if tok[0] == "w":
            expanded.extend(("pause", pauses.pause_s, "profile") for b in after if b == tok[1])

    steps: list[Step] = []
    run: list[_Word] = []

    def flush() -> None:
        if run:
            steps.append(Chunk(" ".join(w.text for w in run), tuple(w.text for w in run),
                               ends_sentence=run[-1].ends_sentence, language=run[0].language))
            run.clear()

    for tok in expanded:
        if tok[0] == "w":
            if run and run[-1].language != words[tok[1]].language:
                flush()
            run.append(words[tok[1]])
            if words[tok[1]].ends_sentence:
                flush()
        elif tok[0] == "pause":
            flush()
            steps.append(Silence(float(tok[1]), tok[2]))
        else:
            flush()
            rep = tok[0] == "repeat"
            steps.append(Chunk(tok[1], (tok[1],), is_filler=True,
                               kind="repetition" if rep else "filler",
                               language=tok[2] if rep else None))
    flush()
    return steps
