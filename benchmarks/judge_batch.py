"""Several transcripts of one question graded in one llama.cpp batch, beside rig's one at a time.

Issue 31, item 2 asks whether the judge can do less work per grading by decoding several
transcripts of one question together, sharing the rubric prefix in the KV cache (llama.cpp
sequences). This script grades the same (question, transcripts) both ways in one process,
alternating, with one thread (so CPU seconds are the compute, whatever else runs):

* **one at a time** (rig's way, :mod:`rig.scorer.llamacpp`, as ``bare_models.bare_judge``):
  the rubric prefix kept in the KV cache, each transcript's rest and the reply skeleton
  evaluated, then each criterion's key from that fork, the level digits' logits read;
* **batched**: a second context with one sequence per transcript (``n_seq_max``, unified KV
  cache): the prefix evaluated once in sequence 0 and copied to each transcript's sequence
  (``llama_memory_seq_cp``), every transcript's rest and skeleton in one ``llama_decode``, then
  each criterion's key for all transcripts in one more, its positions removed after.

It prints the CPU seconds of each and whether the level-digit logits are bit-identical. rig
grades a text the same whatever was graded before it (a row must not depend on the worker
count or the order: the executors' rows are compared); a batch whose logits differ from the
one-at-a-time logits would make a grade depend on which transcripts shared its batch.

    python benchmarks/judge_batch.py --calls CAMPAIGN/calls.jsonl [--questions 2] [--per 4]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _groups(calls: Path, n_questions: int, per: int) -> list[tuple]:
    """(question, [distinct transcripts]) for the first questions of ``calls.jsonl``."""
    from rig.answers import load_bank
    from rig.paths import DEFAULTS as D

    bank = load_bank(D.answer_bank / "core")
    questions = {q.question_id: q for q in bank.questions}
    texts: dict[str, list[str]] = defaultdict(list)
    for line in calls.read_text().splitlines():
        r = json.loads(line)
        t = (r.get("transcript") or "").strip()
        if t and t not in texts[r["question_id"]] and len(texts[r["question_id"]]) < per:
            texts[r["question_id"]].append(t)
    qids = [q for q in texts if len(texts[q]) == per][:n_questions]
    return [(questions[q], texts[q]) for q in qids]


def _tok(llm, text: str) -> list[int]:
    return llm.tokenize(text.encode(), add_bos=False, special=False)


def one_at_a_time(llm, question, texts: list[str]) -> list[np.ndarray]:
    """rig's evaluations, transcript by transcript (``bare_models``' prime and forks); per
    transcript a (criteria, 5) array of the level digits' logits."""
    from bare_models import _prompt_parts, _split_tokens, expected_digit_logits, prime_prefix

    out, held = [], None
    for text in texts:
        prefix, rest = _split_tokens(llm, *_prompt_parts(llm, question, text, "expected"))
        held = prime_prefix(llm, prefix, held)
        out.append(expected_digit_logits(llm, question, rest))
    return out


class Batched:
    """A context with one KV sequence per transcript (plus the prefix's), on ``llm``'s model."""

    def __init__(self, llm, n_seq: int):
        import llama_cpp
        from llama_cpp import _internals

        params = llama_cpp.llama_context_default_params()
        for name, _ in llama_cpp.llama_context_params._fields_:
            setattr(params, name, getattr(llm.context_params, name))
        params.n_seq_max, params.kv_unified = n_seq + 1, True
        params.n_ctx = params.n_batch = llm.context_params.n_ctx * 2  # one decode, all rests
        # (split into n_ubatch-token ubatches by llama.cpp, as Llama.eval splits its tokens)
        self.llm, self.n_seq = llm, n_seq
        self.ctx = _internals.LlamaContext(model=llm._model, params=params, verbose=False)
        self.mem = llama_cpp.llama_get_memory(self.ctx.ctx)
        self.n_vocab = llm.n_vocab()

    def decode(self, items: list[tuple[int, int, int, bool]]) -> None:
        """One ``llama_decode`` of (token, position, sequence, logits?) items."""
        import llama_cpp

        batch = llama_cpp.llama_batch_init(len(items), 0, 1)
        try:
            for i, (tok, pos, seq, logits) in enumerate(items):
                batch.token[i], batch.pos[i] = tok, pos
                batch.n_seq_id[i], batch.seq_id[i][0] = 1, seq
                batch.logits[i] = logits
            batch.n_tokens = len(items)
            rc = llama_cpp.llama_decode(self.ctx.ctx, batch)
            if rc != 0:
                raise RuntimeError(f"llama_decode returned {rc}")
        finally:
            llama_cpp.llama_batch_free(batch)

    def logits(self, i: int) -> np.ndarray:
        import llama_cpp

        return np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(self.ctx.ctx, i),
                                     shape=(self.n_vocab,))

    def grade(self, question, texts: list[str]) -> list[np.ndarray]:
        """All ``texts`` of ``question`` in one batch after the shared prefix."""
        import llama_cpp
        from bare_models import _prompt_parts, _split_tokens

        from rig.scorer.levels import LEVEL_DIGITS, reply_key, reply_prefix

        llm = self.llm
        digits = [_tok(llm, d)[0] for d in LEVEL_DIGITS]
        llama_cpp.llama_memory_clear(self.mem, True)
        parts = [_split_tokens(llm, *_prompt_parts(llm, question, t, "expected")) for t in texts]
        prefix = parts[0][0]
        if any(p != prefix for p, _ in parts):
            raise SystemExit("the transcripts' rubric prefixes differ")
        self.decode([(tok, i, 0, False) for i, tok in enumerate(prefix)])
        ends = []
        for k in range(1, len(texts) + 1):
            llama_cpp.llama_memory_seq_cp(self.mem, 0, k, 0, len(prefix))
        items = []
        for k, (_, rest) in enumerate(parts, start=1):
            toks = rest + _tok(llm, reply_prefix())
            items += [(tok, len(prefix) + j, k, False) for j, tok in enumerate(toks)]
            ends.append(len(prefix) + len(toks))
        self.decode(items)
        rows: list[list[np.ndarray]] = [[] for _ in texts]
        for c in question.rubric:
            key = _tok(llm, reply_key(c.id, True))
            items, last = [], []
            for k, end in enumerate(ends, start=1):
                items += [(tok, end + j, k, j == len(key) - 1) for j, tok in enumerate(key)]
                last.append(len(items) - 1)
            self.decode(items)
            for k, i in enumerate(last):
                rows[k].append(self.logits(i)[digits].copy())
            for k, end in enumerate(ends, start=1):
                llama_cpp.llama_memory_seq_rm(self.mem, k, end, -1)
        return [np.array(r) for r in rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=Path, required=True, help="a campaign's calls.jsonl")
    ap.add_argument("--questions", type=int, default=2)
    ap.add_argument("--per", type=int, default=4, help="transcripts per question (batch size)")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    if not args.calls.is_file():
        raise SystemExit(f"--calls: no such file: {args.calls}")
    from llama_cpp import Llama

    from rig.models import ensure_model
    from rig.paths import DEFAULTS as D
    from rig.pipeline import load_pipeline

    pipeline = load_pipeline(D.pipelines / "reference.yaml")
    llm = Llama(model_path=str(ensure_model(pipeline.scorer.model)), n_ctx=2048,
                n_threads=args.threads, n_threads_batch=args.threads, verbose=False)
    batched = Batched(llm, args.per)
    cpu = {"one at a time": 0.0, "batched": 0.0}
    same = differ = 0
    max_abs = 0.0
    for n, (q, texts) in enumerate(_groups(args.calls, args.questions, args.per)):
        order = ("one at a time", "batched") if n % 2 == 0 else ("batched", "one at a time")
        got = {}
        for way in order:
            t0 = time.process_time()
            got[way] = (one_at_a_time(llm, q, texts) if way == "one at a time"
                        else batched.grade(q, texts))
            cpu[way] += time.process_time() - t0
        for a, b in zip(got["one at a time"], got["batched"], strict=True):
            if np.array_equal(a, b):
                same += 1
            else:
                differ += 1
            max_abs = max(max_abs, float(np.abs(a - b).max()))
        print(f"  {q.question_id}: {len(texts)} transcripts, {len(q.rubric)} criteria; CPU s "
              f"so far: one at a time {cpu['one at a time']:.1f}, batched {cpu['batched']:.1f}",
              flush=True)
    print(f"level-digit logits: {same} transcripts bit-identical, {differ} differ "
          f"(largest difference {max_abs:.3g} in a logit)")
    print(f"CPU s: one at a time {cpu['one at a time']:.2f}, batched {cpu['batched']:.2f} "
          f"-> batched / one at a time {cpu['batched'] / cpu['one at a time']:.3f} "
          f"({args.threads} thread(s))")


if __name__ == "__main__":
    main()
