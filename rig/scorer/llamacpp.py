"""The embedded scorer: llama.cpp (llama-cpp-python) running a verified GGUF on the CPU."""

from __future__ import annotations

import os
from functools import lru_cache

from rig.errors import EngineUnavailable
from rig.models import ensure_model
from rig.scorer.base import Scorer


@lru_cache(maxsize=2)
def _llama(model: str, n_ctx: int, n_threads: int):
    try:
        from llama_cpp import Llama
    except ImportError as exc:  # pragma: no cover
        raise EngineUnavailable("the embedded scorer needs llama-cpp-python: pip install "
                                "'llama-cpp-python==0.3.36' (or 'rig[pipeline]')") from exc
    return Llama(model_path=str(ensure_model(model)), n_ctx=n_ctx, n_threads=n_threads,
                 verbose=False)


@lru_cache(maxsize=64)
def _grammar(text: str):
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_string(text, verbose=False)


class LlamaCppScorer(Scorer):
    """Chat completion with the GGUF's own chat template, output constrained by the grammar.

    Args:
        model: a verified model name from :mod:`rig.models`.
        temperature: 0 is greedy decoding (repeats identical); above 0 samples with ``seed``.
        max_tokens: cap on the reply (the grammar's reason cap keeps replies well inside it).
        with_reason: also ask for a one-sentence reason (about 3x slower on 2 CPU cores).
    """

    name = "llamacpp"

    def __init__(self, model: str = "qwen2.5-coder-1.5b-instruct-q4_k_m",
                 temperature: float = 0.0, n_ctx: int = 2048, n_threads: int | None = None,
                 max_tokens: int = 160, with_reason: bool = False) -> None:
        self.model, self.temperature, self.max_tokens = model, temperature, max_tokens
        self.with_reason = with_reason
        self._n_ctx = n_ctx
        self._n_threads = n_threads or min(4, os.cpu_count() or 2)

    def _complete(self, system: str, user: str, grammar: str, seed: int) -> str:
        llm = _llama(self.model, self._n_ctx, self._n_threads)
        out = llm.create_chat_completion(
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            grammar=_grammar(grammar), temperature=self.temperature, seed=seed,
            max_tokens=self.max_tokens)
        return out["choices"][0]["message"]["content"] or ""
