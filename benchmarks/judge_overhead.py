"""Where rig's judge time goes, next to a bare llama.cpp loop, on the same gradings, in one run.

For every distinct (question, text) a campaign graded (its oracle scripts and transcripts, from
``calls.jsonl``; without ``--calls``, every answer's clean script of the first questions of
``answer_bank/core``), grading by grading and in alternating order (so a change of the
machine's load hits both sides alike), it times:

* **rig**: :meth:`rig.scorer.llamacpp.LlamaCppScorer.score` (``expected`` mode), split into
  the lock, the memo lookup and budget checks (``score`` minus the backend), the chat template
  and tokenising, the prime (a hit keeps the rubric prefix; a miss resets and evaluates it),
  the evaluation of the transcript part and the reply skeleton, and the per-criterion forks;
* **bare, same tokens**: a second ``Llama`` doing exactly rig's token evaluations (the prefix
  when it changes, then the rest and skeleton, then each criterion's key from the fork), with
  no rig code around it: the honest bare figure;
* **bare, longest common prefix**: what ``bare_models.py`` did before: the KV cache keeps the
  longest prefix shared with the previous prompt, which for transcripts of one answer under
  several profiles often reaches far into the transcript. That evaluates fewer tokens than
  rig, which cuts every prompt at the rubric (the grade must not depend on what was graded
  before: :mod:`rig.scorer.llamacpp`), so it is not the same work.

Prints the seconds and evaluated tokens of each, and checks that rig and the same-token bare
loop read identical level distributions (bit for bit).

    python benchmarks/judge_overhead.py [--calls CAMPAIGN/calls.jsonl] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np


def gradings(calls: Path | None, limit: int) -> list[tuple]:
    """(question, text) pairs, oracle script first, grouped by question as rig plans them."""
    from rig.answers import load_bank
    from rig.paths import DEFAULTS as D

    bank = load_bank(D.answer_bank / "core")
    questions = {q.question_id: q for q in bank.questions}
    answers = {a.answer_id: a for _, a in bank.answers()}
    seen, out = set(), []

    def add(q, text):
        if text and (q.question_id, text.strip()) not in seen:
            seen.add((q.question_id, text.strip()))
            out.append((q, text))

    if calls is not None:
        for line in calls.read_text().splitlines():
            r = json.loads(line)
            q = questions[r["question_id"]]
            add(q, answers[r["answer_id"]].clean_text)
            add(q, r.get("transcript"))
    else:
        for q in bank.questions[:3]:
            for a in q.answers:
                add(q, a.clean_text)
    out.sort(key=lambda qt: qt[0].question_id)
    return out[:limit]


class Clock:
    """Named wall seconds (``s``), CPU seconds of this process (``cpu``) and counts, summed.
    With one llama.cpp thread the CPU seconds are the compute itself, whatever else the
    machine runs (a shared machine's load moves wall times by tens of percent)."""

    def __init__(self) -> None:
        self.s: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)
        self.n: dict[str, int] = defaultdict(int)
        self.replies: list = []

    def add(self, name: str, t0: float, c0: float) -> None:
        self.s[name] += time.perf_counter() - t0
        self.cpu[name] += time.process_time() - c0

    def timed(self, name: str, fn):
        def wrapper(*a, **k):
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                return fn(*a, **k)
            finally:
                self.add(name, t0, c0)
        return wrapper


def instrument(scorer, llm, clock: Clock) -> None:
    """Wrap the scorer's steps and its Llama's ``eval`` (counting evaluated tokens)."""
    scorer._prompt_tokens = clock.timed("template+tokenise", scorer._prompt_tokens)
    scorer._prime = clock.timed("prime (hit: keep; miss: reset+eval prefix)", scorer._prime)
    levels = clock.timed("backend (_complete_levels)", scorer._complete_levels)

    def recorded(*a, **k):
        reply = levels(*a, **k)
        clock.replies.append(reply.distributions)  # before score_levels renormalises
        return reply
    scorer._complete_levels = recorded
    lock = scorer._lock

    def timed_lock():
        lk = lock()

        class L:
            def __enter__(self_):
                t0 = time.perf_counter()
                lk.acquire()
                clock.s["lock wait"] += time.perf_counter() - t0

            def __exit__(self_, *exc):
                lk.release()
        return L()
    scorer._lock = timed_lock
    ev = llm.eval

    def counted(tokens):
        clock.n["tokens evaluated"] += len(tokens)
        clock.n["eval calls"] += 1
        return ev(tokens)
    llm.eval = clock.timed("llama eval (all)", counted)


def bare_same_tokens(llm, prepared: list[tuple], clock: Clock, state: dict
                     ) -> list[list[list[float]]]:
    """rig's token evaluations with no rig around them: ``prepared`` holds, per grading,
    (prefix, rest + skeleton, [key tokens per criterion], level token ids), tokenised
    untimed (rig's tokenising is timed on its side); ``state["prefix"]``: the prefix the KV
    cache holds (kept across calls)."""
    import llama_cpp

    out = []
    last = state.get("prefix")
    for prefix, rest, keys, ids in prepared:
        t0, c0 = time.perf_counter(), time.process_time()
        if last == prefix and llm.n_tokens >= len(prefix):
            llm.n_tokens = len(prefix)
        else:
            llm.reset()
            llm.eval(prefix)
            clock.n["tokens evaluated"] += len(prefix)
        last = state["prefix"] = prefix
        llm.eval(rest)
        fork = llm.n_tokens
        dists = []
        for key in keys:
            llm.n_tokens = fork
            llm.eval(key)
            row = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1),
                                        shape=(llm.n_vocab(),))
            z = row[ids].astype(np.float64)
            p = np.exp(z - z.max())
            dists.append((p / p.sum()).tolist())
        clock.add("bare same tokens", t0, c0)
        clock.n["tokens evaluated"] += len(rest) + sum(len(k) for k in keys)
        out.append(dists)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=Path, default=None, help="a campaign's calls.jsonl")
    ap.add_argument("--threads", type=int, default=1,
                    help="llama.cpp threads (1: CPU seconds are the compute, load aside)")
    ap.add_argument("--limit", type=int, default=16, help="at most this many gradings")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bare_models import _keep_common_prefix, _prompt_text
    from llama_cpp import Llama

    from rig.models import ensure_model
    from rig.paths import DEFAULTS as D
    from rig.pipeline import load_pipeline
    from rig.scorer.levels import LEVEL_DIGITS, levels_user_prompt_head, reply_key, reply_prefix
    from rig.scorer.llamacpp import LlamaCppScorer
    from rig.scorer.prompt import SYSTEM_PROMPT, transcript_block

    pipeline = load_pipeline(D.pipelines / "reference.yaml")
    s = pipeline.scorer
    items = gradings(args.calls, args.limit)
    scorer = LlamaCppScorer(model=s.model, temperature=s.temperature, max_tokens=s.max_tokens,
                            mode=s.mode, n_threads=args.threads)
    rig_llm = scorer._llm()
    same = Llama(model_path=str(ensure_model(s.model)), n_ctx=2048, n_threads=args.threads,
                 n_threads_batch=args.threads, verbose=False)
    lcp = Llama(model_path=str(ensure_model(s.model)), n_ctx=2048, n_threads=args.threads,
                n_threads_batch=args.threads, verbose=False)
    rig_c, same_c, lcp_c = Clock(), Clock(), Clock()
    same_state: dict = {}
    instrument(scorer, rig_llm, rig_c)
    # untimed: the same tokens rig evaluates, cut where rig cuts
    ids = [same.tokenize(d.encode(), add_bos=False, special=False)[0] for d in LEVEL_DIGITS]
    prepared, lcp_tokens = [], []
    for q, text in items:
        head = levels_user_prompt_head(q)
        pre, rest = LlamaCppScorer._prompt_tokens(scorer, same, SYSTEM_PROMPT, head,
                                                  transcript_block(text))
        rest = rest + same.tokenize(reply_prefix().encode(), add_bos=False, special=False)
        keys = [same.tokenize(reply_key(c.id, True).encode(), add_bos=False, special=False)
                for c in q.rubric]
        prepared.append((pre, rest, keys, ids))
        lcp_tokens.append((lcp.tokenize((_prompt_text(lcp, q, text, "expected")
                                         + reply_prefix()).encode(), add_bos=False,
                                        special=True), keys))
    print(f"{len(items)} distinct gradings, {len({q.question_id for q, _ in items})} "
          f"question(s); {args.threads} threads each; load average {os.getloadavg()[0]:.1f}",
          flush=True)
    same_d: list = []
    for i, ((q, text), prep, (toks, keys)) in enumerate(zip(items, prepared, lcp_tokens,
                                                            strict=True)):
        def run_rig(q=q, text=text):
            t0, c0 = time.perf_counter(), time.process_time()
            scorer.score(q, text, 0)
            rig_c.add("rig score() total", t0, c0)

        def run_same(prep=prep):
            same_d.extend(bare_same_tokens(same, [prep], same_c, same_state))

        def run_lcp(toks=toks, keys=keys):
            t0, c0 = time.perf_counter(), time.process_time()
            rest = _keep_common_prefix(lcp, toks)
            lcp.eval(rest)
            lcp_c.n["tokens evaluated"] += len(rest)
            fork = lcp.n_tokens
            for key in keys:
                lcp.n_tokens = fork
                lcp.eval(key)
                lcp_c.n["tokens evaluated"] += len(key)
            lcp_c.add("bare longest common prefix", t0, c0)

        order = [run_rig, run_same, run_lcp]
        for fn in order[i % 3:] + order[:i % 3]:  # rotate: load drift hits all three alike
            fn()
        print(f"  {i + 1:2d}/{len(items)} {q.question_id} rig {rig_c.s['rig score() total']:6.1f}"
              f" same {same_c.s['bare same tokens']:6.1f} lcp "
              f"{lcp_c.s['bare longest common prefix']:6.1f} (cumulative s)", flush=True)
    for unit, k in (("wall s", "s"), ("CPU s", "cpu")):
        r, b, lc = getattr(rig_c, k), getattr(same_c, k), getattr(lcp_c, k)
        backend, total, ev = (r["backend (_complete_levels)"], r["rig score() total"],
                              r["llama eval (all)"])
        print(f"rig, per part ({unit}):")
        print(f"  score() total                          {total:8.3f}")
        print(f"  outside the backend (lock, memo, budget, parsing) {total - backend:8.4f}"
              f"  (lock wait {r['lock wait']:.4f})")
        print(f"  chat template + tokenising              {r['template+tokenise']:8.4f}")
        print(f"  prime (hit: keep; miss: reset + eval)   "
              f"{r['prime (hit: keep; miss: reset+eval prefix)']:8.3f}")
        print(f"  llama eval (prefix, rest, forks)        {ev:8.3f}")
        print(f"  backend outside eval and tokenising     "
              f"{backend - ev - r['template+tokenise']:8.4f}  (level ids, logits, softmax)")
        print(f"bare, same tokens as rig        {b['bare same tokens']:8.3f} {unit}")
        print(f"bare, longest common prefix     {lc['bare longest common prefix']:8.3f} {unit}")
        print(f"rig / bare same tokens: {total / b['bare same tokens']:.3f}; rig / bare "
              f"longest common prefix: {total / lc['bare longest common prefix']:.3f} ({unit})")
    print(f"tokens evaluated: rig {rig_c.n['tokens evaluated']} in {rig_c.n['eval calls']} "
          f"evals, bare same tokens {same_c.n['tokens evaluated']}, bare longest common "
          f"prefix {lcp_c.n['tokens evaluated']}; rig's prefix cache "
          f"{scorer.prefix_cache_stats()}")
    rig_d = rig_c.replies
    ident = rig_d == same_d
    print(f"level distributions rig vs bare same tokens: "
          f"{'bit-identical' if ident else 'DIFFER'} over {len(rig_d)} gradings")
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
