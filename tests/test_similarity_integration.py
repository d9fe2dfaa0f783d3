"""content_similarity on the real all-MiniLM-L6-v2 (the ``similarity`` extra), checked against
an independent computation: Whisper's normaliser, then transformers' AutoModel with mean
pooling written out here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sentence_transformers", reason="needs the 'similarity' extra")

from rig.answers import load_bank
from rig.asr.similarity import (
    MODEL_NAME,
    WINDOW_TOKENS,
    _encoder,
    _windows,
    content_similarities,
    content_similarity,
)
from rig.asr.wer import normalize
from rig.models import ensure_model

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def scripts() -> dict[str, str]:
    return {a.answer_id: a.clean_text
            for _, a in load_bank(ROOT / "answer_bank" / "core").answers()}


def _first_half(text: str) -> str:
    words = text.split()
    return " ".join(words[: len(words) // 2])


def _mean_pooled(texts: list[str]) -> np.ndarray:
    """Independent: Whisper's English normaliser, then transformers' BertModel on the package's
    folder, mean of the last hidden state over the attention mask, L2-normalised (the model
    card's recipe)."""
    import torch
    from transformers import AutoModel, AutoTokenizer
    from whisper_normalizer.english import EnglishTextNormalizer

    norm = EnglishTextNormalizer()
    texts = [" ".join(norm(t).split()) for t in texts]
    path = ensure_model(MODEL_NAME)
    tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    model = AutoModel.from_pretrained(str(path), local_files_only=True).eval()
    enc = tok(texts, padding=True, truncation=True, max_length=256, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).float()
    pooled = (hidden * mask).sum(1) / mask.sum(1)
    return torch.nn.functional.normalize(pooled, dim=1).numpy().astype(np.float64)


def test_identical_paraphrase_unrelated_and_empty() -> None:
    text = ("I asked my coworker to talk after the shift, listened to why she wanted to restock "
            "at opening, and we agreed to a two week trial.")
    para = ("After work I sat down with my colleague, heard her reasons for restocking first "
            "thing, and we settled on trying it for two weeks.")
    other = "The train to the coast leaves at nine and the tickets are cheaper on weekdays."
    assert content_similarity(text, text) == pytest.approx(1.0, abs=1e-6)
    s_para, s_other = content_similarity(text, para), content_similarity(text, other)
    assert s_para > 0.6 and s_other < 0.25 and s_para - s_other > 0.4
    assert content_similarity(text, "") == 0.0


def test_how_the_asr_writes_numbers_and_punctuation_costs_nothing(scripts) -> None:
    script = scripts["q01_strong"]  # "... at seven thirty ... restock at ten, as a two week"
    asr = (script.replace("seven thirty", "730").replace("at ten, as a two week",
                                                         "at 10. As a two-week")
           .replace("Sure. When", "Sure, when"))
    assert asr != script
    assert content_similarity(script, asr) > 0.995


def test_a_truncated_transcript_scores_below_the_full_one(scripts) -> None:
    for aid in ("q01_strong", "q03_strong", "q05_border_hi"):
        full = scripts[aid]
        assert content_similarity(full, full) == pytest.approx(1.0, abs=1e-6)
        assert content_similarity(full, _first_half(full)) < 0.95


def test_matches_an_independent_mean_pooling_to_1e5(scripts) -> None:
    refs = [scripts["q01_strong"], scripts["q02_weak"], scripts["q04_border_lo"]]
    hyps = [_first_half(refs[0]), scripts["q02_strong"], scripts["q04_strong"]]
    ours = content_similarities(refs, hyps)
    v = _mean_pooled(refs + hyps)
    theirs = np.sum(v[:3] * v[3:], axis=1)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)
    # and sentence-transformers' own encode, as its users would compute it
    e = _encoder().encode([normalize(t) for t in refs + hyps],
                          normalize_embeddings=True).astype(np.float64)
    np.testing.assert_allclose(ours, np.sum(e[:3] * e[3:], axis=1), atol=1e-5)


def test_a_text_over_256_word_pieces_is_read_whole(scripts) -> None:
    """sentence-transformers alone truncates at 256 word pieces, so a transcript that kept
    only the first 256 would look complete. Read in windows, the lost part counts."""
    model = _encoder()
    first = normalize(" ".join(scripts[a] for a in ("q01_strong", "q01_border_hi", "q01_weak")))
    second = normalize(" ".join(scripts[a] for a in ("q06_strong", "q06_border_hi")))
    long_text = f"{first} {second}"
    n_first = len(model.tokenizer(first, add_special_tokens=False, verbose=False)["input_ids"])
    assert n_first > 256
    windows = _windows(model, long_text)
    assert len(windows) >= 2
    assert " ".join(windows).split() == long_text.split()  # cut at word starts, nothing lost
    assert all(len(model.tokenizer(w, add_special_tokens=False)["input_ids"]) <= WINDOW_TOKENS
               for w in windows)
    plain = model.encode([long_text, first], normalize_embeddings=True)
    assert float(plain[0] @ plain[1]) > 0.99  # what truncation alone would report
    assert content_similarity(long_text, first) < 0.95
    assert content_similarity(long_text, long_text) == pytest.approx(1.0, abs=1e-6)


def test_an_embedding_does_not_depend_on_its_batch_companions(scripts) -> None:
    """One text per batch, one thread: a script embedded beside a long text equals the same
    script embedded alone, bit for bit (with padding in a shared batch it differed by 2e-8,
    and a call's content_similarity then differed between a worker and the driver)."""
    from rig.asr.similarity import _model_embed

    texts = list(scripts.values())
    short, long = texts[0], " ".join(texts[1:3])
    alone = _model_embed([short])
    together = _model_embed([long, short])
    assert np.array_equal(alone[0], together[1])
