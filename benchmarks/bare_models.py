"""The physical limit of a campaign on this machine: its ASR and judge work through bare
faster-whisper and bare llama.cpp calls, with no rig around them.

Used by ``benchmarks/release_campaign.py``. Everything that is input preparation (rendering,
channel and telephony path, resampling to 16 kHz, building the prompt text) happens before
the clock starts; what is timed is the model call and its tokenising:

* VAD: pipecat's ``SileroVADAnalyzer`` (the pipeline's settings) on every call's line audio up
  to turn close, 20 ms frames of int16 PCM at the line's rate, the model's state reset per
  call: the model and pipecat's state machine, not rig's turn tracking around them.
* ASR: ``WhisperModel.transcribe`` with the pipeline's settings on every call's line audio up
  to turn close (the audio rig transcribed), segments consumed.
* Judge: every distinct (question, text) the campaign graded, transcripts, oracle scripts and
  the turn texts of calls that lost words (stage attribution's grade) alike (rig grades an
  identical prompt once per process; so does this), doing exactly rig's token evaluations
  (:mod:`rig.scorer.llamacpp`): the prompt cut after the rubric head; the head kept in the KV
  cache while the next prompt shares it, else the cache reset and the head evaluated; then the
  rest. ``expected`` mode: the rest and the reply skeleton in one batch, then each criterion's
  key from the same fork, logits read; ``argmax``: one grammar-constrained completion. (Keeping
  the longest common prefix with the previous prompt instead, as this file did before,
  evaluates fewer tokens than rig for transcripts of one answer that start alike, and rig
  cannot do that without making a grade depend on what was graded before; ``judge_overhead.py``
  measures both.)
* ``bare_split``: the same work over N processes of ``cores // N`` threads, as N workers
  share the machine: its wall time is the limit an N-worker campaign compares with.

Model load times are measured apart and not in the compute figures.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np


@dataclass
class BareTimes:
    """Seconds of model compute, and of model loading, for one bare pass."""
    asr_s: float = 0.0
    judge_s: float = 0.0
    vad_s: float = 0.0
    asr_load_s: float = 0.0
    judge_load_s: float = 0.0
    n_transcribed: int = 0
    n_graded: int = 0
    n_vad: int = 0
    audio_transcribed_s: float = 0.0

    @property
    def compute_s(self) -> float:
        return self.vad_s + self.asr_s + self.judge_s


def bare_vad(lines_pcm16: list[bytes], pipeline, times: BareTimes | None = None) -> BareTimes:
    """Run pipecat's Silero VAD analyzer over each call's int16 PCM line audio (at the
    pipeline's telephony rate) in 20 ms frames, model state reset per call."""
    import asyncio

    from rig.vad.analyzers import silero_analyzer
    from rig.vad.params import FRAME_MS, TurnParams

    times = times or BareTimes()
    rate = pipeline.telephony.sample_rate_hz
    vad = silero_analyzer(rate, TurnParams.from_pipeline(pipeline))  # rig's settings, as built
    frame = rate * FRAME_MS // 1000 * 2

    async def run(pcm: bytes) -> None:
        for i in range(0, len(pcm) - frame + 1, frame):
            await vad.analyze_audio(pcm[i:i + frame])

    try:
        for pcm in lines_pcm16:
            t0 = time.perf_counter()
            vad._model.reset_states()
            asyncio.run(run(pcm))
            times.vad_s += time.perf_counter() - t0
            times.n_vad += 1
    finally:
        vad._executor.shutdown(wait=False)
    return times


def bare_asr(audios_16k: list[np.ndarray], pipeline, threads: int, device: str = "cpu",
             times: BareTimes | None = None) -> BareTimes:
    """Transcribe each float32 16 kHz array with a bare ``WhisperModel``."""
    from faster_whisper import WhisperModel

    from rig.models import ensure_model

    times = times or BareTimes()
    t0 = time.perf_counter()
    model = WhisperModel(str(ensure_model(pipeline.asr.model)), device=device,
                         compute_type=pipeline.asr.compute_type, cpu_threads=threads)
    times.asr_load_s = time.perf_counter() - t0
    for samples in audios_16k:
        if len(samples) < 1600:  # rig skips audio under 0.1 s too
            continue
        t0 = time.perf_counter()
        segments, _ = model.transcribe(samples, language=pipeline.asr.language,
                                       beam_size=pipeline.asr.beam_size, vad_filter=False,
                                       temperature=0.0, condition_on_previous_text=False)
        " ".join(s.text.strip() for s in segments)
        times.asr_s += time.perf_counter() - t0
        times.n_transcribed += 1
        times.audio_transcribed_s += len(samples) / 16000
    return times


def _prompt_parts(llm, question, text: str, mode: str) -> tuple[str, str]:
    """The chat prompt's text cut after the rubric head, as rig cuts it (``pre``, ``post``)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    from rig.scorer.levels import levels_user_prompt_head
    from rig.scorer.prompt import SYSTEM_PROMPT, rubric_head, transcript_block

    head = levels_user_prompt_head(question) if mode == "expected" else rubric_head(question)
    fmt = Jinja2ChatFormatter(template=llm.metadata["tokenizer.chat_template"],
                              eos_token="", bos_token="")
    mark = "\x00CUT\x00"
    prompt = fmt(messages=[{"role": "system", "content": SYSTEM_PROMPT},
                           {"role": "user", "content": head + mark + transcript_block(text)}]
                 ).prompt
    pre, post = prompt.split(mark)
    return pre, post


def _prompt_text(llm, question, text: str, mode: str) -> str:
    """The whole chat prompt's text (``judge_overhead.py``'s longest-common-prefix loop)."""
    return "".join(_prompt_parts(llm, question, text, mode))


def _keep_common_prefix(llm, tokens: list[int]) -> list[int]:
    """Keep the KV cache's longest common prefix with ``tokens``; return the rest (not what
    rig does: see the module's notes; ``judge_overhead.py`` compares the two)."""
    n = min(llm.n_tokens, len(tokens) - 1)
    have = llm.input_ids[:n].tolist()
    k = 0
    while k < n and have[k] == tokens[k]:
        k += 1
    llm.n_tokens = k
    return tokens[k:]


def _split_tokens(llm, pre: str, post: str) -> tuple[list[int], list[int]]:
    """(prefix, rest) tokens of ``pre + post`` cut after ``pre``, or ([], whole) when the
    cut would change the tokens (rig's rule)."""
    prefix = llm.tokenize(pre.encode(), add_bos=False, special=True)
    whole = llm.tokenize((pre + post).encode(), add_bos=False, special=True)
    if whole[:len(prefix)] != prefix:
        return [], whole
    return prefix, whole[len(prefix):]


def prime_prefix(llm, prefix: list[int], held: list[int] | None) -> list[int]:
    """rig's prime: keep the KV cache when it holds ``prefix`` (``held``), else reset it and
    evaluate ``prefix``; returns the prefix now held."""
    if prefix and held == prefix and llm.n_tokens >= len(prefix):
        llm.n_tokens = len(prefix)  # the rubric prefix is kept: evaluate the rest
    else:
        llm.reset()
        if prefix:
            llm.eval(prefix)
    return prefix


def expected_digit_logits(llm, question, rest: list[int]) -> np.ndarray:
    """``expected`` mode after the prime: ``rest`` and the reply skeleton in one batch, then
    each criterion's key from that fork; the level digits' logits, float32 (criteria, 5)."""
    import llama_cpp

    from rig.scorer.levels import LEVEL_DIGITS, reply_key, reply_prefix

    def tok(text: str) -> list[int]:
        return llm.tokenize(text.encode(), add_bos=False, special=False)

    digits = [tok(d)[0] for d in LEVEL_DIGITS]
    llm.eval(rest + tok(reply_prefix()))
    fork, rows = llm.n_tokens, []
    for c in question.rubric:
        llm.n_tokens = fork
        llm.eval(tok(reply_key(c.id, True)))
        row = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1),
                                    shape=(llm.n_vocab(),))
        rows.append(row[digits])
    return np.array(rows)


def bare_judge(items: list[tuple], pipeline, threads: int, n_gpu_layers: int = 0,
               times: BareTimes | None = None) -> BareTimes:
    """Grade each (question, text) with a bare ``llama_cpp.Llama``, in the given order."""
    from llama_cpp import Llama, LlamaGrammar

    from rig.models import ensure_model
    from rig.scorer.prompt import grammar

    times = times or BareTimes()
    s = pipeline.scorer
    t0 = time.perf_counter()
    llm = Llama(model_path=str(ensure_model(s.model)), n_ctx=2048, n_threads=threads,
                n_threads_batch=threads, n_gpu_layers=n_gpu_layers, verbose=False)
    times.judge_load_s = time.perf_counter() - t0
    parts = [(q, _prompt_parts(llm, q, text, s.mode)) for q, text in items]
    grammars = ({q.rubric_hash: LlamaGrammar.from_string(grammar(q), verbose=False)
                 for q, _ in items} if s.mode != "expected" else {})
    held: list[int] | None = None  # the prefix the KV cache holds
    try:
        for q, (pre, post) in parts:
            t0 = time.perf_counter()
            prefix, rest = _split_tokens(llm, pre, post)
            held = prime_prefix(llm, prefix, held)
            if s.mode == "expected":
                expected_digit_logits(llm, q, rest)
            else:
                llm.create_completion(prefix + rest, grammar=grammars[q.rubric_hash],
                                      temperature=s.temperature, max_tokens=s.max_tokens)
            times.judge_s += time.perf_counter() - t0
            times.n_graded += 1
    finally:
        llm.close()
    return times


def _split_worker(audios, lines, items, pipeline, threads, barrier, results, index) -> None:
    """One process of :func:`bare_split`: load both models, wait for the others, compute."""
    import os

    from faster_whisper import WhisperModel
    from llama_cpp import Llama

    from rig.models import ensure_model

    WhisperModel(str(ensure_model(pipeline.asr.model)), device="cpu",  # warm the page cache
                 compute_type=pipeline.asr.compute_type, cpu_threads=threads)
    Llama(model_path=str(ensure_model(pipeline.scorer.model)), n_ctx=2048, n_threads=threads,
          verbose=False).close()
    barrier.wait()  # every process computes at once, as N workers do
    t0 = time.perf_counter()
    times = bare_vad(lines, pipeline)
    times = bare_asr(audios, pipeline, threads, times=times)
    times = bare_judge(items, pipeline, threads, times=times)
    results.put((index, os.getpid(), time.perf_counter() - t0 - times.asr_load_s
                 - times.judge_load_s, times))


def bare_split(audios_16k: list[np.ndarray], lines_pcm16: list[bytes], items: list[tuple],
               pipeline, n_procs: int, threads: int) -> tuple[float, list[BareTimes]]:
    """The same VAD, ASR and judge work over ``n_procs`` spawned processes of ``threads``
    threads each (N workers of ``cores // N`` threads): audio dealt out longest first to the
    least loaded process (a call's line audio for the VAD with its 16 kHz audio for the ASR),
    gradings by question (as rig's queue keeps a worker on one question).

    Returns (seconds until the last process finished its compute, loads excluded; each
    process's :class:`BareTimes`). The processes start computing together (a barrier after
    their warm-up loads)."""
    import multiprocessing as mp

    audio_share: list[list] = [[] for _ in range(n_procs)]
    line_share: list[list] = [[] for _ in range(n_procs)]
    load = [0.0] * n_procs
    for a, line in sorted(zip(audios_16k, lines_pcm16, strict=True), key=lambda al: len(al[0]),
                          reverse=True):
        i = load.index(min(load))
        audio_share[i].append(a)
        line_share[i].append(line)
        load[i] += len(a)
    groups: dict[str, list] = {}
    for q, text in items:
        groups.setdefault(q.question_id, []).append((q, text))
    text_share: list[list] = [[] for _ in range(n_procs)]
    for g in sorted(groups.values(), key=len, reverse=True):
        i = min(range(n_procs), key=lambda k: len(text_share[k]))
        text_share[i].extend(g)
    if len(groups) < n_procs:  # fewer questions than processes: split the largest groups
        flat = [it for g in groups.values() for it in g]
        text_share = [flat[i::n_procs] for i in range(n_procs)]
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(n_procs), ctx.Queue()
    procs = [ctx.Process(target=_split_worker, args=(audio_share[i], line_share[i],
                                                     text_share[i], pipeline, threads,
                                                     barrier, results, i))
             for i in range(n_procs)]
    from rig.campaign.executors.local import thread_pools_sized

    with thread_pools_sized(threads):  # the OpenMP and BLAS pools rig's local workers have
        for p in procs:
            p.start()
    out = [results.get() for _ in procs]
    for p in procs:
        p.join()
    out.sort(key=lambda r: r[0])
    return max(r[2] for r in out), [r[3] for r in out]
