"""The content gap of an imported pair, beside its score gap.

* :func:`pair_warnings`: rig's equivalence checks of a hedged pair
  (:func:`rig.probes.hedges.check_hedged`: no hedge in the confident twin, two or more in the
  hedged twin, every content word of the confident twin kept), plus identical or
  near-empty twins, as warnings: a published set runs as it is, and the warnings say where
  its twins differ in more than style.
* :func:`lacking_words`: the content words one twin has and the other lacks (words outside
  the language's stop words; for the hedged twin, the words of its hedge markers are left
  out too).
* :func:`content_similarity_of_pairs`: the twins' content similarity, the cosine of their
  all-MiniLM-L6-v2 sentence embeddings (:mod:`rig.asr.similarity`; Reimers & Gurevych 2019),
  in [-1, 1], 1 for identical content; ``None`` per pair with a reason when the
  ``similarity`` extra is missing. The model was trained on English text: for other
  languages the figure is a rough guide only (the summary says so).
"""

from __future__ import annotations

from collections.abc import Sequence

from rig.probes.data import HEDGES, STOPWORDS
from rig.probes.hedges import HedgeLexicon, check_hedged, words
from rig.probes.replicate.read import ImportedPair

#: the English lexicon of the hedging benchmark's taxonomy (:data:`rig.probes.data.HEDGES`)
ENGLISH = HedgeLexicon("en", dict(HEDGES), STOPWORDS,
                       "the hedging benchmark's taxonomy (rig.probes.data.HEDGES)")
#: a twin shorter than this (words) is flagged: there is little content to compare
MIN_WORDS = 5


def pair_warnings(pair: ImportedPair, lex: HedgeLexicon = ENGLISH) -> list[str]:
    """Why the twins may differ in more than hedging; an empty list when rig's checks pass."""
    out = []
    if pair.reference.strip() == pair.treatment.strip():
        out.append("the twins are identical: nothing is probed")
    for name, text in (("confident", pair.reference), ("hedged", pair.treatment)):
        if len(words(text)) < MIN_WORDS:
            out.append(f"the {name} twin has {len(words(text))} words (under {MIN_WORDS})")
    return out + check_hedged(pair.reference, pair.treatment, lex)


def lacking_words(pair: ImportedPair, lex: HedgeLexicon = ENGLISH
                  ) -> tuple[list[str], list[str]]:
    """(content words of the confident twin the hedged lacks, content words of the hedged
    twin the confident lacks, hedge-marker words left out), each sorted."""
    ref, treat = set(words(pair.reference)), set(words(pair.treatment))
    hedge_words = {w for m in lex.find(pair.treatment) for w in words(m)}
    only_ref = sorted(w for w in ref - treat if w not in lex.stopwords)
    only_treat = sorted(w for w in treat - ref
                        if w not in lex.stopwords and w not in hedge_words)
    return only_ref, only_treat


def content_similarity_of_pairs(pairs: Sequence[ImportedPair], embedder=None
                                ) -> tuple[list[float | None], str | None]:
    """The twins' content similarity per pair, and ``None`` or why it is not measured.
    ``embedder`` replaces the model (tests; L2-normalised rows)."""
    from rig.asr.similarity import content_similarities
    from rig.errors import EngineUnavailable, ModelIntegrityError, ModelMissingError

    try:
        sims = content_similarities([p.reference for p in pairs],
                                    [p.treatment for p in pairs], embedder=embedder)
    except (EngineUnavailable, ModelMissingError, ModelIntegrityError) as exc:
        return [None] * len(pairs), f"content similarity not measured: {exc}"
    return [float(s) for s in sims], None
