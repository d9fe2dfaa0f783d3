"""The embedded scorer: llama.cpp (llama-cpp-python) running a verified GGUF on the CPU
(or with every layer offloaded to a GPU, ``n_gpu_layers=-1``, see :mod:`rig.runtime`).

**Reproducible across processes.** llama.cpp's own prompt cache reuses the longest prefix
that the previous prompt shares with the next one and evaluates only the rest; how the prompt
is cut into batches then depends on what was graded before, and a different cut changes the
floating-point arithmetic and so, now and then, a greedy token (``q02_weak``'s oracle grade
was 90 in one process and 100 in another). Here every prompt is evaluated in two fixed parts:
the chat template up to the end of the rubric (the ``head``, kept in the KV cache while the
next prompt shares it, else evaluated afresh from position 0) and the rest in one batch. The
grade of a prompt then depends on the prompt alone, not on the process's history; a test
grades the same scripts in orders that share prefixes differently and compares.

**Rubric snapshots.** Evaluating a rubric prefix afresh (~450 tokens) costs about two gradings'
worth of compute on one core (``benchmarks/judge_overhead.py``), and gradings of several
questions interleave (replay turns, validation banks, probes). After each fresh evaluation the
prefix's KV cells are copied out (``llama_state_seq_get_data``, ~28 KB per token for the
1.5B judge), and a later miss on the same prefix copies them back
(``llama_state_seq_set_data``) instead of evaluating: the same bytes in the same cells at the
same positions as the fresh evaluation, so the grade is unchanged (the order test above
covers it). Up to ``SNAPSHOT_BYTES`` are kept per loaded model, least recently used dropped.
Each snapshot is also written to disk (:mod:`rig.scorer.kv_store`), where a process that never
evaluated the prefix (a local worker, a Ray actor on the node, a resumed run, the next
``rig`` command) finds it and restores it: a campaign's workers evaluate each rubric once
between them (twice when two reach it at the same moment), not once each.

**Where an ``argmax`` grading's time goes.** It generates about 40-47 tokens (the points JSON,
which the model pretty-prints), each sampled under the GBNF grammar, after evaluating the
prompt (the ~300-token rubric prefix only when the question changes). Measured per grading,
the generation took 24-115 s on a loaded 2-core machine for the same 45 tokens (never near
``max_tokens``: every reply stopped on its own), and ~2.8 s median when idle: load and the
per-token grammar check, not a runaway reply, make the slow gradings (one of 40 ran past a
120 s budget in ``benchmarks/judge_validity.py``). ``expected`` mode generates nothing: it
evaluates about ten forced tokens per criterion in one batch.

**Bounded by tokens, never by wall time.** A grading here is deterministic local compute:
its work is bounded by the context (``n_ctx``: a prompt that does not fit with its reply is
``too_long``, never cut) and the reply cap (``max_tokens``), and it is never stopped or
discarded for the wall time it took. ``scorer.budget_s`` applies to remote endpoints only
(:mod:`rig.scorer.openai_compat`): a machine's load must not change a row (issue 29; a test
grades under a clock that jumps past any budget and compares with a grading at rest).

**Graded judging** (``mode="expected"``): the reply skeleton ``{"levels": {"<id>": `` is
written for the judge and the logits at the level position are read directly
(``llama_get_logits_ith``), so no ``logits_all`` (which slows prompt evaluation, and whose
token logprobs were offset by one position in llama-cpp-python issue 1983) is needed. Every
criterion is read from the same state (the prompt and ``{"levels": {``), so the level of one
criterion cannot anchor the next: on the core bank this ranked the answers better (Spearman
0.85 against 0.83 when each criterion followed the levels chosen before it).
"""

from __future__ import annotations

import atexit
import ctypes
import threading
import weakref
from collections import OrderedDict
from functools import lru_cache

import numpy as np

from rig.cpus import usable_cpus
from rig.errors import EngineUnavailable
from rig.models import ensure_model
from rig.scorer import kv_store
from rig.scorer.amx import safe_model_params
from rig.scorer.base import (
    LevelsReply,
    Scorer,
    ScoringMode,
    TranscriptTooLong,
)
from rig.scorer.levels import LEVEL_DIGITS, reply_key, reply_prefix

_SPLIT = "\x00RIG_SPLIT\x00"
#: bytes of rubric-prefix KV snapshots kept per loaded model (see the module docstring)
SNAPSHOT_BYTES = 128 * 2**20
#: per loaded ``Llama``: prefix tokens -> its KV snapshot (bytes), least recently used first
_SNAPSHOTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


_OPEN: list = []
#: one lock per (model, n_ctx, n_threads), the key of the process's loaded ``Llama``: a Llama
#: (its KV cache and position) is not safe from two threads (concurrent real calls, rig.calls)
_LOCKS: dict[tuple, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


@lru_cache(maxsize=2)
def _llama(model: str, n_ctx: int, n_threads: int, n_gpu_layers: int = 0):
    try:
        from llama_cpp import Llama
    except ImportError as exc:  # pragma: no cover
        raise EngineUnavailable("the embedded scorer needs llama-cpp-python: pip install "
                                "'llama-cpp-python==0.3.36' (or 'rig[pipeline]')") from exc
    path = str(ensure_model(model))
    with safe_model_params():  # no AMX weight layout: it segfaults (rig.scorer.amx)
        llm = Llama(model_path=path, n_ctx=n_ctx, n_threads=n_threads,
                    n_threads_batch=n_threads, n_gpu_layers=n_gpu_layers, verbose=False)
    _OPEN.append(llm)
    return llm


@atexit.register
def close_models() -> None:
    """Free the loaded models now (also at exit: left to ``Llama.__del__`` during interpreter
    shutdown, the release printed tracebacks after a test run's summary). Ctrl-C is ignored
    while they are freed (a second Ctrl-C after the first stopped a run printed a
    KeyboardInterrupt traceback from inside llama.cpp's free)."""
    from rig.sigint import sigint_ignored

    _llama.cache_clear()
    with sigint_ignored():
        while _OPEN:
            _OPEN.pop().close()


@lru_cache(maxsize=64)
def _grammar(text: str):
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_string(text, verbose=False)


@lru_cache(maxsize=4)
def _formatter(template: str):
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    return Jinja2ChatFormatter(template=template, eos_token="", bos_token="")


class LlamaCppScorer(Scorer):
    """Grades with the GGUF's own chat template; ``argmax`` output constrained by a grammar.

    Args:
        model: a verified model name from :mod:`rig.models`.
        temperature: ``argmax``: 0 is greedy decoding (repeats identical); above 0 samples
            with ``seed``. ``expected``: no part: every criterion's level distribution is read
            from the same prompt state (the reply up to ``{"levels": {``) and its expectation
            is the grade, so nothing is sampled and a grading is deterministic.
        max_tokens: cap on an ``argmax`` reply (the grammar keeps replies well inside it).
        with_reason: ``argmax`` only: also ask for a one-sentence reason (about 3x slower).
        mode: ``argmax`` or ``expected`` (:mod:`rig.scorer.levels`).
        n_threads: llama.cpp threads for generation and prompt batches (default:
            min(4, :func:`rig.cpus.usable_cpus`); :func:`rig.runtime.default_runtime`
            splits the cores between workers). Not part of ``pipeline_version``: it changes
            speed, not the grade.
        n_gpu_layers: layers offloaded to the GPU (0: CPU only; -1: all of them). Set by
            :func:`rig.runtime.build_stages` from the pipeline's ``device``.

    :meth:`prefix_cache_stats` counts, per grading, whether the rubric prefix was still in
    the KV cache or restored from a snapshot (a hit: only the transcript part is evaluated)
    or was evaluated afresh (a miss).
    """

    name = "llamacpp"

    def __init__(self, model: str = "qwen2.5-coder-1.5b-instruct-q4_k_m",
                 temperature: float = 0.0, n_ctx: int = 2048, n_threads: int | None = None,
                 max_tokens: int = 160, with_reason: bool = False,
                 mode: ScoringMode = "argmax", n_gpu_layers: int = 0) -> None:
        self.model, self.temperature, self.max_tokens = model, temperature, max_tokens
        self.with_reason, self.mode = with_reason, mode
        self._n_ctx = n_ctx
        self._n_threads = n_threads or min(4, usable_cpus())
        self._n_gpu_layers = n_gpu_layers
        self._hits = self._misses = self._restored = 0

    def memo_identity(self) -> tuple:
        """(backend, model, temperature, reply cap, reason, context, GPU layers): what the
        reply to a prompt depends on. Not the thread count (it changes speed, not the
        arithmetic's result: see the class docstring) nor the seed (no part at 0)."""
        return (self.name, self.model, self.temperature, self.max_tokens, self.with_reason,
                self._n_ctx, self._n_gpu_layers)

    @property
    def n_threads(self) -> int:
        """llama.cpp threads this scorer runs with."""
        return self._n_threads

    @property
    def device(self) -> str:
        """``cuda`` when layers are offloaded to the GPU, else ``cpu`` (a row's
        ``scorer_device``)."""
        return "cuda" if self._n_gpu_layers else "cpu"

    def prefix_cache_stats(self) -> dict[str, int]:
        """``{"hits": int, "misses": int, "restored": int}``: gradings whose rubric prefix was
        kept in the KV cache or restored from a snapshot (``restored`` of them), and those
        that evaluated it afresh (a prompt whose prefix could not be cut cleanly counts as a
        miss). Memoised gradings are neither."""
        return {"hits": self._hits, "misses": self._misses, "restored": self._restored}

    def _llm(self):
        return _llama(self.model, self._n_ctx, self._n_threads, self._n_gpu_layers)

    def _lock(self) -> threading.Lock:
        with _LOCKS_GUARD:
            return _LOCKS.setdefault((self.model, self._n_ctx, self._n_threads),
                                     threading.Lock())

    def score(self, question, transcript, seed):
        """:meth:`Scorer.score` holding the loaded model's lock: gradings from several
        threads take turns."""
        with self._lock():
            return super().score(question, transcript, seed)

    def complete(self, *args, **kwargs):
        """:meth:`Scorer.complete` holding the loaded model's lock (as :meth:`score`)."""
        with self._lock():
            return super().complete(*args, **kwargs)

    def _prompt_tokens(self, llm, system: str, head: str, tail: str
                       ) -> tuple[list[int], list[int]]:
        """(prefix, rest): the chat prompt's tokens cut after ``head``. When tokenising the
        parts apart would differ from tokenising the whole, the prefix is empty (the whole
        prompt is evaluated from position 0: slower, equally reproducible)."""
        fmt = _formatter(llm.metadata["tokenizer.chat_template"])
        text = fmt(messages=[{"role": "system", "content": system},
                             {"role": "user", "content": head + _SPLIT + tail}]).prompt
        pre, post = text.split(_SPLIT)
        prefix = llm.tokenize(pre.encode(), add_bos=False, special=True)
        whole = llm.tokenize((pre + post).encode(), add_bos=False, special=True)
        if whole[:len(prefix)] != prefix:
            return [], whole
        return prefix, whole[len(prefix):]

    def _check_fits(self, n_prompt: int, n_reply: int) -> None:
        """Raise :class:`TranscriptTooLong` when ``n_prompt`` prompt tokens and up to
        ``n_reply`` reply tokens exceed the context (``n_ctx``): llama.cpp would refuse the
        prompt or drop tokens, and the transcript is never cut to fit."""
        if n_prompt + n_reply > self._n_ctx:
            raise TranscriptTooLong(
                f"the prompt is {n_prompt} tokens and the reply needs up to {n_reply}: over "
                f"the judge's context of {self._n_ctx} tokens (n_ctx); not scored")

    def _prime(self, llm, prefix: list[int]) -> None:
        """Leave exactly ``prefix`` evaluated: kept when the cache holds it (a hit), else
        evaluated afresh from position 0, always as the same batches (a miss)."""
        n = len(prefix)
        if n and llm.n_tokens >= n and llm.input_ids[:n].tolist() == prefix:
            llm.n_tokens = n  # the next eval drops the KV cells past n
            self._hits += 1
            return
        llm.reset()
        if not n:
            self._misses += 1
            return
        snaps = _SNAPSHOTS.setdefault(llm, OrderedDict())
        key = tuple(prefix)
        data = snaps.get(key)
        if data is None and SNAPSHOT_BYTES > 0:  # another process may have evaluated it
            data = kv_store.load(self._kv_identity(), prefix)
        if data is not None and _restore(llm, prefix, data):
            self._keep(snaps, key, data)
            self._hits += 1
            self._restored += 1
            return
        self._misses += 1
        llm.eval(prefix)  # from position 0 (reset above; a refused restore leaves it there)
        if SNAPSHOT_BYTES <= 0:
            snaps.clear()
            return
        data = _snapshot(llm)
        self._keep(snaps, key, data)
        kv_store.store(self._kv_identity(), prefix, data)

    @staticmethod
    def _keep(snaps: OrderedDict, key: tuple, data: bytes) -> None:
        """Keep ``data`` as the most recent snapshot; drop the oldest past the budget."""
        snaps[key] = data
        snaps.move_to_end(key)
        while snaps and sum(map(len, snaps.values())) > SNAPSHOT_BYTES:
            snaps.popitem(last=False)

    def _kv_identity(self) -> tuple:
        """What a snapshot's bytes depend on besides the prefix (:mod:`rig.scorer.kv_store`):
        the model's verified sha256, llama-cpp-python's version, llama.cpp's system info,
        context, threads, GPU layers."""
        import llama_cpp

        from rig.models import MODELS

        return (MODELS[self.model].sha256, llama_cpp.__version__, _system_info(),
                self._n_ctx, self._n_threads, self._n_gpu_layers)

    def _complete(self, system: str, user: str, grammar: str, seed: int, *, head: str = "",
                  deadline: float | None = None) -> str:
        llm = self._llm()
        head = head if user.startswith(head) else ""
        prefix, rest = self._prompt_tokens(llm, system, head, user[len(head):])
        self._check_fits(len(prefix) + len(rest), self.max_tokens)
        self._prime(llm, prefix)
        # bounded by tokens, never by wall time (``deadline`` is ignored): the reply stops at
        # ``max_tokens`` and the prompt fits ``n_ctx`` (checked above)
        out = llm.create_completion(prefix + rest, grammar=_grammar(grammar),
                                    temperature=self.temperature, seed=seed,
                                    max_tokens=self.max_tokens)
        return out["choices"][0]["text"] or ""

    def _complete_levels(self, system: str, head: str, tail: str,
                         criterion_ids: list[str], seed: int, *,
                         deadline: float | None = None) -> LevelsReply:
        import llama_cpp

        llm = self._llm()
        prefix, rest = self._prompt_tokens(llm, system, head, tail)
        reply = llm.tokenize(reply_prefix().encode(), add_bos=False, special=False)
        keys = [len(llm.tokenize(reply_key(c, True).encode(), add_bos=False, special=False))
                for c in criterion_ids]
        self._check_fits(len(prefix) + len(rest), len(reply) + max(keys, default=0))
        self._prime(llm, prefix)
        level_ids = [llm.tokenize(d.encode(), add_bos=False, special=False)
                     for d in LEVEL_DIGITS]
        if any(len(t) != 1 for t in level_ids):  # pragma: no cover - a tokenizer property
            raise EngineUnavailable(f"{self.model}: a credit level is not one token")
        ids = [t[0] for t in level_ids]
        llm.eval(rest + reply)
        fork = llm.n_tokens  # every criterion is read from here: no halo from the others
        dists: list[list[float]] = []
        chosen: dict[str, int] = {}
        for cid in criterion_ids:
            llm.n_tokens = fork
            llm.eval(llm.tokenize(reply_key(cid, True).encode(), add_bos=False,
                                  special=False))
            row = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1),
                                        shape=(llm.n_vocab(),))
            z = row[ids].astype(np.float64)
            p = np.exp(z - z.max())
            p /= p.sum()
            dists.append(p.tolist())
            chosen[cid] = int(np.argmax(z))
        return LevelsReply(dists, chosen)


@lru_cache(maxsize=1)
def _system_info() -> str:
    """llama.cpp's build and CPU features (``llama_print_system_info``): a snapshot from a
    build with other kernels is not read back (a cache on a network home)."""
    import llama_cpp

    return llama_cpp.llama_print_system_info().decode(errors="replace")


def forget_snapshots() -> None:
    """Drop every rubric snapshot of this process: the next grading of each question
    evaluates its rubric prefix afresh (a test that counts the judge's misses)."""
    _SNAPSHOTS.clear()


def _snapshot(llm) -> bytes:
    """Sequence 0's KV cells as llama.cpp serialises them (``llama_state_seq_get_data``)."""
    import llama_cpp

    size = llama_cpp.llama_state_seq_get_size(llm.ctx, 0)
    buf = (ctypes.c_uint8 * size)()
    n = llama_cpp.llama_state_seq_get_data(llm.ctx, buf, size, 0)
    return ctypes.string_at(buf, n)


def _restore(llm, prefix: list[int], data: bytes) -> bool:
    """Put ``data`` (a :func:`_snapshot` taken right after ``prefix`` was evaluated from
    position 0) back as sequence 0 and mark ``prefix`` evaluated. False when llama.cpp
    refuses it (the caller then evaluates the prefix afresh)."""
    import llama_cpp

    buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
    if llama_cpp.llama_state_seq_set_data(llm.ctx, buf, len(data), 0) != len(data):
        return False
    llm.input_ids[:len(prefix)] = prefix
    llm.n_tokens = len(prefix)
    return True
