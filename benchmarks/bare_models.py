"""The physical limit of a campaign on this machine: its ASR and judge work through bare
faster-whisper and bare llama.cpp calls, with no rig around them.

Used by ``benchmarks/release_campaign.py``. Everything that is input preparation (rendering,
channel and telephony path, resampling to 16 kHz, building the prompt text) happens before
the clock starts; what is timed is the model call and its tokenising:

* ASR: ``WhisperModel.transcribe`` with the pipeline's settings on every call's line audio up
  to turn close (the audio rig transcribed), segments consumed.
* Judge: every distinct (question, text) the campaign graded, transcripts and oracle scripts
  alike (rig grades an identical prompt once per process; so does this). ``expected`` mode:
  evaluate the prompt and the reply skeleton, then each criterion's key from the same fork and
  read the logits (what :mod:`rig.scorer.llamacpp` does); ``argmax``: one grammar-constrained
  completion. The KV cache keeps the longest common prefix with the previous prompt (the best
  a bare program can do; the texts are graded grouped by question, as rig plans them).

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
    asr_load_s: float = 0.0
    judge_load_s: float = 0.0
    n_transcribed: int = 0
    n_graded: int = 0
    audio_transcribed_s: float = 0.0

    @property
    def compute_s(self) -> float:
        return self.asr_s + self.judge_s


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


def _prompt_text(llm, question, text: str, mode: str) -> str:
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    from rig.scorer.levels import levels_user_prompt_head
    from rig.scorer.prompt import SYSTEM_PROMPT, rubric_head, transcript_block

    head = levels_user_prompt_head(question) if mode == "expected" else rubric_head(question)
    fmt = Jinja2ChatFormatter(template=llm.metadata["tokenizer.chat_template"],
                              eos_token="", bos_token="")
    return fmt(messages=[{"role": "system", "content": SYSTEM_PROMPT},
                         {"role": "user", "content": head + transcript_block(text)}]).prompt


def _keep_common_prefix(llm, tokens: list[int]) -> list[int]:
    """Keep the KV cache's longest common prefix with ``tokens``; return the rest."""
    n = min(llm.n_tokens, len(tokens) - 1)
    have = llm.input_ids[:n].tolist()
    k = 0
    while k < n and have[k] == tokens[k]:
        k += 1
    llm.n_tokens = k
    return tokens[k:]


def bare_judge(items: list[tuple], pipeline, threads: int, n_gpu_layers: int = 0,
               times: BareTimes | None = None) -> BareTimes:
    """Grade each (question, text) with a bare ``llama_cpp.Llama``, in the given order."""
    import llama_cpp
    from llama_cpp import Llama, LlamaGrammar

    from rig.models import ensure_model
    from rig.scorer.levels import LEVEL_DIGITS, reply_key, reply_prefix
    from rig.scorer.prompt import grammar

    times = times or BareTimes()
    s = pipeline.scorer
    t0 = time.perf_counter()
    llm = Llama(model_path=str(ensure_model(s.model)), n_ctx=2048, n_threads=threads,
                n_threads_batch=threads, n_gpu_layers=n_gpu_layers, verbose=False)
    times.judge_load_s = time.perf_counter() - t0
    prompts = [(q, _prompt_text(llm, q, text, s.mode)) for q, text in items]
    grammars = ({q.rubric_hash: LlamaGrammar.from_string(grammar(q), verbose=False)
                 for q, _ in items} if s.mode != "expected" else {})
    try:
        for q, prompt in prompts:
            t0 = time.perf_counter()
            if s.mode == "expected":
                digits = [llm.tokenize(d.encode(), add_bos=False, special=False)[0]
                          for d in LEVEL_DIGITS]
                tokens = llm.tokenize((prompt + reply_prefix()).encode(), add_bos=False,
                                      special=True)
                llm.eval(_keep_common_prefix(llm, tokens))
                fork = llm.n_tokens
                for c in q.rubric:
                    llm.n_tokens = fork
                    llm.eval(llm.tokenize(reply_key(c.id, True).encode(), add_bos=False,
                                          special=False))
                    row = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1),
                                                shape=(llm.n_vocab(),))
                    z = row[digits].astype(np.float64)
                    np.exp(z - z.max())
            else:
                tokens = llm.tokenize(prompt.encode(), add_bos=False, special=True)
                llm.create_completion(tokens, grammar=grammars[q.rubric_hash],
                                      temperature=s.temperature, max_tokens=s.max_tokens)
            times.judge_s += time.perf_counter() - t0
            times.n_graded += 1
    finally:
        llm.close()
    return times
