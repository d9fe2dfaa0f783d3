"""The one place a scorer is built from a pipeline's ``scorer:`` settings.

:func:`build_scorer` turns :class:`rig.pipeline.ScorerSettings` into the backend it names:
``llamacpp`` (:class:`rig.scorer.llamacpp.LlamaCppScorer`, the embedded GGUF) or ``openai``
(:class:`rig.scorer.openai_compat.OpenAICompatScorer`, any OpenAI-compatible endpoint). The
campaign (:func:`rig.runtime.build_stages`), the CLI and the probes (:mod:`rig.probes.core`)
all build theirs here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rig.pipeline import ScorerSettings
    from rig.scorer.base import Scorer


def build_scorer(settings: ScorerSettings, *, grading: bool = True,
                 max_tokens: int | None = None, n_ctx: int | None = None,
                 n_threads: int | None = None, n_gpu_layers: int | None = None) -> Scorer:
    """The scorer ``settings`` describe (backend, model, temperature, reply cap; with
    ``grading``, also ``reason``, ``mode`` and, for the openai backend, ``budget_s``).

    ``budget_s`` is a wall-clock limit and so goes to a remote endpoint only: the embedded
    llama.cpp judge is bounded by tokens (``max_tokens``, ``n_ctx``) and never discards a
    finished grading for the time it took, so a machine's load cannot change a row.

    Args:
        settings: a pipeline's ``scorer:`` section.
        grading: pass the grading settings (``reason``, ``mode``, ``budget_s``); False leaves
            them at the backend's defaults (the probes, which ask free prompts).
        max_tokens: reply cap in tokens (None: ``settings.max_tokens``).
        n_ctx: ``llamacpp`` context in tokens (None: the backend's default, 2048).
        n_threads: ``llamacpp`` threads (None: the backend's default).
        n_gpu_layers: ``llamacpp`` layers offloaded to a GPU (None: the backend's, 0).

    Raises:
        ConfigError: the openai backend's ``base_url`` is not an http(s) URL or its key
            variable is unset.
    """
    s = settings
    max_tokens = s.max_tokens if max_tokens is None else max_tokens
    graded = {"with_reason": s.reason, "mode": s.mode} if grading else {}
    if s.backend == "openai":
        from rig.scorer.openai_compat import OpenAICompatScorer

        budget = {"budget_s": s.budget_s} if grading else {}
        remote = OpenAICompatScorer(s.base_url or "", s.model, s.api_key_env,
                                    temperature=s.temperature, max_tokens=max_tokens,
                                    timeout_s=s.timeout_s or 120.0, **graded, **budget)
        return _calibrated(remote, s) if grading else remote
    from rig.scorer.llamacpp import LlamaCppScorer

    engine = {k: v for k, v in (("n_ctx", n_ctx), ("n_threads", n_threads),
                                ("n_gpu_layers", n_gpu_layers)) if v is not None}
    scorer = LlamaCppScorer(model=s.model, temperature=s.temperature, max_tokens=max_tokens,
                            **graded, **engine)
    return _calibrated(scorer, s) if grading else scorer


def _calibrated(scorer: Scorer, s: ScorerSettings) -> Scorer:
    """``scorer`` with ``s.calibration`` applied (:mod:`rig.scorer.calibrated`), or itself."""
    if not s.calibration:
        return scorer
    from rig.scorer.calibrated import calibrated_scorer, load_calibration

    return calibrated_scorer(scorer, load_calibration(s.calibration))
