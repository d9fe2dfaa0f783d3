"""The guide's release campaign, timed against the physical limit of this machine.

Design (:mod:`rig.stats.sample_size`'s worked example): 32 answers x 7 profiles (the baseline
and 6 variants) x 3 repeats = 672 planned calls, on ``answer_bank/core`` (10 questions x 4
answers: 40) and ``profiles/core`` (the baseline and 15 variants). The 32 answers are the four
of each of the first 8 questions, ordered as a Latin square over questions and tiers so that
``--fraction F`` (the first ``round(32 F)`` of them, at least 1) keeps the mix of questions
and tiers; every run keeps all 7 profiles and 3 repeats. Repeats that cannot differ (a
profile that draws nothing from the seed, with a judge at temperature 0) are planned but not
run, as in any campaign.

Prints, in one run on the same inputs:
  * audio seconds per wall second for the campaign (the rendered call audio of the calls run,
    over the campaign's wall time), per executor run;
  * the same model work with no rig around it (``bare_models.py``): each call's line audio up
    to turn close through pipecat's Silero VAD and bare faster-whisper, and every distinct
    oracle script, turn text and transcript the campaign graded through bare llama.cpp; and
    rig's overhead over them: campaign wall / bare compute;
  * 1 worker vs N (local executor), and local vs Ray on this machine (when the executors are
    installed: ``rig.campaign.executors``, Ray from the ``ray`` extra);
  * the judge's prompt-prefix cache hit rate (in-process run).

The speech renders are made once before the timed runs (the render cache, as a team that
re-runs a release on an unchanged bank has): the campaign runs then all start from the same
warm cache and differ only in how they run. The warm-up time is printed apart.

    python benchmarks/release_campaign.py --fraction 0.1 [--workers 2]
        [--executors serial,local1,local,ray] [--bare-processes 1,N] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

RELEASE_PROFILES = ("baseline", "fast", "long_pauses", "fillers", "babble_10db",
                    "mobile_amr_nb_loss3", "webrtc_opus_jitter")
N_ANSWERS, N_QUESTIONS, N_REPEATS = 32, 8, 3
TIMING = ("t_synth_s", "t_channel_s", "t_vad_s", "t_asr_s", "t_scorer_s", "campaign_id")


def release_answer_ids(bank, fraction: float) -> tuple[str, ...]:
    """The first ``round(32 * fraction)`` (at least 1) answers of the release design: answer
    i is tier ``(i + i // 8) % 4`` of question ``i % 8`` (a Latin square: any prefix spreads
    over questions and tiers)."""
    if not 0 < fraction <= 1:
        raise SystemExit(f"--fraction: in (0, 1] (got {fraction})")
    questions = bank.questions[:N_QUESTIONS]
    per_q = [[a.answer_id for a in q.answers] for q in questions]
    if len(questions) < N_QUESTIONS or any(len(ids) < 4 for ids in per_q):
        raise SystemExit(f"{bank.path}: the release design needs {N_QUESTIONS} questions "
                         "of 4 answers")
    order = [per_q[i % N_QUESTIONS][(i + i // N_QUESTIONS) % 4] for i in range(N_ANSWERS)]
    return tuple(order[:max(1, round(N_ANSWERS * fraction))])


class LoadMeter:
    """The 1-minute load average sampled every ``every_s`` seconds while the block runs (the
    machine's other work, which these figures depend on): ``str()`` gives min/mean/max."""

    def __init__(self, every_s: float = 15.0):
        self.every_s, self.samples = every_s, [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(self.every_s):
            self.samples.append(os.getloadavg()[0])

    def __enter__(self) -> LoadMeter:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(os.getloadavg()[0])

    def __str__(self) -> str:
        x = self.samples
        return f"load average {min(x):.1f}/{sum(x) / len(x):.1f}/{max(x):.1f} (min/mean/max)"


def _run(spec, label: str, **kwargs) -> dict:
    from rig.campaign.runner import run_campaign

    t0 = time.perf_counter()
    with LoadMeter() as load:
        res = run_campaign(spec, progress=False, **kwargs)
    wall = time.perf_counter() - t0
    ok = [r for r in res.rows if r["status"] == "ok"]
    audio_s = sum(r["audio_duration_s"] or 0.0 for r in ok)
    print(f"  {label:28s} {len(res.rows):4d} calls ({len(ok)} ok)  wall {wall:7.1f} s  "
          f"audio {audio_s:7.1f} s  -> {audio_s / wall:5.2f} audio s per wall s; {load}",
          flush=True)
    return {"label": label, "wall_s": wall, "audio_s": audio_s, "rows": res.rows,
            "result": res}


def _same_rows(a: list[dict], b: list[dict]) -> str:
    def key(rows):
        return {r["call_id"]: {k: v for k, v in r.items() if k not in TIMING} for r in rows}
    ka, kb = key(a), key(b)
    if ka == kb:
        return "identical (timing columns aside)"
    diff = sorted(c for c in ka.keys() & kb.keys() if ka[c] != kb[c])
    cols = sorted({k for c in diff for k in ka[c] if ka[c].get(k) != kb[c].get(k)})
    return (f"DIFFER: {len(diff)} of {len(ka)} rows, columns {cols[:6]}; "
            f"ids only in one: {len(ka.keys() ^ kb.keys())}")


def _call_inputs(rows, bank, profiles, pipeline):
    """Per ok call (made before timing): its line audio up to turn close as float32 at
    16 kHz (the ASR's input) and as int16 PCM bytes at the line's rate (the VAD's), and its
    turn text (the script's words, fillers left out, that started before the turn closed)
    when words were lost, else None: what :func:`rig.campaign.call.run_call_front` builds.
    The release profiles have no line outage, whose window would also drop words."""
    from rig.asr.whisper import ASR_SAMPLE_RATE_HZ
    from rig.campaign.call import render_call_audio

    answers = {a.answer_id: a for _, a in bank.answers()}
    profs = {p.profile_id: p for p in profiles.profiles}
    for r in rows:
        if r["status"] != "ok":
            continue
        p = profs[r["profile_id"]]
        if p.outage.duration_s:
            raise SystemExit(f"profile {p.profile_id}: a line outage's turn text is not "
                             "rebuilt here")
        made = render_call_audio(answers[r["answer_id"]], p, r["seed"],
                                 resolve_path=lambda rel, p=p: profiles.resolve_path(p, rel),
                                 telephony=pipeline.telephony)
        close = r["turn_close_s"]
        line = made.audio.head(close)
        turn_text = (" ".join(w.word for w in made.rendered.words
                              if not w.is_filler and w.start_s < close)
                     if r["words_lost"] else None)
        yield (line.resample(ASR_SAMPLE_RATE_HZ).samples, line.to_pcm16().tobytes(),
               turn_text)


def _graded_texts(rows, bank, turn_texts: list[str | None]) -> list[tuple]:
    """Every distinct (question, text) the campaign graded: oracle scripts, turn texts of
    calls that lost words, transcripts; grouped by question in plan order."""
    questions = {q.question_id: q for q in bank.questions}
    answers = {a.answer_id: a for _, a in bank.answers()}
    seen, out = set(), []
    ok = [r for r in rows if r["status"] == "ok"]
    for r, turn_text in zip(ok, turn_texts, strict=True):
        q = questions[r["question_id"]]
        for text in (answers[r["answer_id"]].clean_text, turn_text, r["transcript"]):
            if text is not None and (q.question_id, text.strip()) not in seen:
                seen.add((q.question_id, text.strip()))
                out.append((q, text))
    return sorted(out, key=lambda qt: qt[0].question_id)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fraction", type=float, default=1.0,
                    help="share of the 32 answers (same profiles, repeats and mix)")
    ap.add_argument("--workers", type=int, default=max(2, (os.cpu_count() or 2) // 2),
                    help="N for the local and Ray runs (default: one per two cores, >= 2)")
    ap.add_argument("--executors", default="serial,local,ray",
                    help="runs to time: serial (1 worker, in this process), local1 (the local "
                         "executor's 1 worker, when serial is not run), local (N workers), ray")
    ap.add_argument("--no-bare", action="store_true", help="skip the bare-model pass")
    ap.add_argument("--bare-processes", default="1,N",
                    help="bare passes: 1 (one process, all cores), N (split over --workers "
                         "processes), or both (default 1,N)")
    ap.add_argument("--out", type=Path, default=None, help="keep the campaigns here")
    args = ap.parse_args()
    if not 0 < args.fraction <= 1:  # before any folder is made or model loaded
        raise SystemExit(f"--fraction: in (0, 1] (got {args.fraction})")
    root = args.out or Path(tempfile.mkdtemp(prefix="rig-release-bench-"))
    os.environ["RIG_AUDIO_CACHE"] = str(root / "audio-cache")  # workers inherit it

    from rig.answers import load_bank
    from rig.campaign.runner import CampaignSpec, plan_campaign
    from rig.paths import DEFAULTS as D
    from rig.pipeline import load_pipeline, pipeline_version
    from rig.profiles import load_profiles
    from rig.runtime import build_stages, default_runtime

    bank = load_bank(D.answer_bank / "core")
    profiles = load_profiles(D.profiles / "core")
    pipeline = load_pipeline(D.pipelines / "reference.yaml")
    ids = release_answer_ids(bank, args.fraction)
    cores = os.cpu_count() or 1

    def spec(name: str) -> CampaignSpec:
        return CampaignSpec(answers_path=D.answer_bank / "core",
                            profiles_path=D.profiles / "core",
                            pipeline_path=D.pipelines / "reference.yaml", out_dir=root / name,
                            repeats=N_REPEATS, answer_ids=ids, profile_ids=RELEASE_PROFILES,
                            n_boot=200)

    plan = plan_campaign(spec("plan"), bank, profiles, pipeline_version(pipeline), pipeline)
    n_planned = len(plan.calls) + plan.repeats_skipped["n"]
    print(f"release design x {args.fraction:g}: {len(ids)} answers x {len(RELEASE_PROFILES)} "
          f"profiles x {N_REPEATS} repeats = {n_planned} planned calls, {len(plan.calls)} "
          f"run ({plan.repeats_skipped['n']} repeats that cannot differ skipped)")
    print(f"machine: {cores} CPUs (os.cpu_count), load average {os.getloadavg()[0]:.1f} "
          f"at start; pipeline {pipeline.name}, device {pipeline.device}", flush=True)

    t0 = time.perf_counter()
    from rig.campaign.call import render_call_audio

    for c in plan.calls:  # speech renders into the cache, before any timed run
        render_call_audio(c.answer, c.profile, c.seed,
                          resolve_path=lambda rel, p=c.profile: profiles.resolve_path(p, rel))
    print(f"render warm-up (TTS into the cache, channel): {time.perf_counter() - t0:.1f} s",
          flush=True)

    runs: dict[str, dict] = {}
    wanted = [k.strip() for k in args.executors.split(",") if k.strip()]
    print("campaign runs (same plan, warm render cache, fresh output folder each):")
    if "serial" in wanted:
        runtime = default_runtime(1, cores)
        stages = build_stages(pipeline, runtime)
        t0 = time.perf_counter()
        stages.transcribe(_silence(), _asr_options(pipeline))  # load both models first,
        stages.scorer.score(bank.questions[0], "warm up", 0)   # timed apart
        stages.scorer._memo.clear()
        stages.scorer._hits = stages.scorer._misses = 0
        print(f"  model load (Whisper + GGUF + Silero), in-process: "
              f"{time.perf_counter() - t0:.1f} s; runtime {runtime.to_dict()}")
        runs["serial"] = _run(spec("serial"), "1 worker (in-process)", stages=stages)
        _stage_shares(runs["serial"])
    bare: dict[int, float] = {}
    procs = {k.strip() for k in args.bare_processes.split(",")}
    if "serial" in runs and not args.no_bare:  # before the executor runs: a lost Ray
        bare = _bare_pass(runs["serial"], bank, profiles, pipeline, cores, args.workers, procs)
    _executor_runs([k for k in wanted if k != "ray"], args.workers, cores, spec, runs)
    if not bare and runs and not args.no_bare:  # between local and Ray, for the same reason
        bare = _bare_pass(next(iter(runs.values())), bank, profiles, pipeline, cores,
                          args.workers, procs)
    _executor_runs([k for k in wanted if k == "ray"], args.workers, cores, spec, runs)
    _executor_ratios(args.workers, cores, runs)

    base = runs.get("serial") or next(iter(runs.values()), None)
    for name, r in runs.items():
        if base is not None and r is not base:
            print(f"  rows {name} vs {base['label']}: {_same_rows(base['rows'], r['rows'])}")
    for r in runs.values():
        pc = r["result"].runtime.get("judge_prefix_cache")
        if pc:
            rate = "-" if pc["hit_rate"] is None else f"{100 * pc['hit_rate']:.0f}%"
            print(f"  judge prefix cache, {r['label']:28s}: {pc['hits']} hits, "
                  f"{pc['misses']} misses ({rate}; as the workers reported them; memoised "
                  "repeats of a text are neither)")
    for name, r in runs.items():
        n = 1 if name in ("serial", "local1") else args.workers
        if n in bare:
            print(f"  rig overhead, {r['label']:28s}: wall / bare compute on {n} "
                  f"process(es) = {r['wall_s'] / bare[n]:.2f}  ({r['audio_s'] / r['wall_s']:.2f}"
                  f" vs {base['audio_s'] / bare[n]:.2f} audio s per wall s)")
    for name, r in runs.items():
        n = 1 if name in ("serial", "local1") else args.workers
        if n in bare:
            print("  " + in_run_split(r["label"], r["wall_s"], models_seconds(
                r["rows"], r["result"].out_dir) / n, bare[n]))


def models_seconds(rows: list[dict], out_dir: Path) -> float:
    """The models' own seconds in a campaign run, summed over its workers: the rows' VAD,
    ASR and judge stages (turn-text gradings included) and the oracle phase's gradings
    (``oracle.jsonl``'s ``seconds``; a memoised repeat is 0)."""
    import json

    stages = sum((r.get(k) or 0.0) for r in rows for k in ("t_vad_s", "t_asr_s", "t_scorer_s"))
    oracle = Path(out_dir) / "oracle.jsonl"
    lines = oracle.read_text().splitlines() if oracle.exists() else []
    return stages + sum(json.loads(x).get("seconds") or 0.0 for x in lines if x.strip())


def in_run_split(label: str, wall_s: float, models_per_worker_s: float, bare_s: float) -> str:
    """wall / bare split into two factors that multiply to it: rig's share outside the models
    (wall / the models' own seconds per worker, both timed in the same run) and the models'
    speed in that run against the bare pass's (timed minutes apart: the machine's drift)."""
    return (f"split, {label:28s}: wall / the models' own time per worker in this run "
            f"({models_per_worker_s:.1f} s) = {wall_s / models_per_worker_s:.3f}; those "
            f"models took {models_per_worker_s / bare_s:.3f}x the bare pass's time")


def _stage_shares(run: dict) -> None:
    rows, wall = run["rows"], run["wall_s"]
    parts = {k: sum(r[f"t_{k}_s"] or 0.0 for r in rows)
             for k in ("synth", "channel", "vad", "asr", "scorer")}
    parts["rest (oracle, I/O, summary, report)"] = wall - sum(parts.values())
    print("    " + ", ".join(f"{k} {100 * v / wall:.0f}%" for k, v in parts.items()))


def _silence():
    from rig.audio import Audio

    return Audio.silence(1.0, 16000)


def _asr_options(pipeline):
    from rig.asr.whisper import AsrOptions

    a = pipeline.asr
    return AsrOptions(model=a.model, language=a.language, beam_size=a.beam_size,
                      compute_type=a.compute_type)


def _executor_runs(wanted, workers, cores, spec, runs) -> None:
    """Local 1 vs N and Ray N, through the executors when they are installed."""
    todo = [k for k in wanted if k in ("local1", "local", "ray")]
    if not todo:
        return
    try:
        from rig.campaign.executors import ExecutorSpec
    except ImportError:
        print("  (local and Ray runs skipped: rig.campaign.executors is not in this rig)")
        return
    for n in ((1,) if "local1" in todo and "serial" not in runs else ()) + (
            (workers,) if "local" in todo else ()):  # local1: the serial executor's 1 worker
        runs[f"local{n}"] = _run(spec(f"local{n}"), f"local executor, {n} worker(s)",
                                 executor=ExecutorSpec(kind="local", workers=n))
    if "ray" in todo:
        try:
            import ray  # noqa: F401
        except ImportError:
            print("  (Ray run skipped: pip install 'rig[ray]')")
            return
        # a Ray instance of its own: never attach to another job's cluster on this machine
        os.environ.setdefault("RAY_ADDRESS", "local")
        runs["ray"] = _run(spec("ray"), f"Ray (local head), {workers} actors",
                           executor=ExecutorSpec(kind="ray", workers=workers))


def _executor_ratios(workers: int, cores: int, runs: dict) -> None:
    one = runs.get("local1") or runs.get("serial")
    if one is not None and f"local{workers}" in runs:
        n = runs[f"local{workers}"]
        print(f"  speed-up {workers} workers over 1: {one['wall_s'] / n['wall_s']:.2f}x "
              f"on {cores} CPUs")
    if "ray" in runs and f"local{workers}" in runs:
        ratio = runs["ray"]["wall_s"] / runs[f"local{workers}"]["wall_s"]
        print(f"  Ray / local wall time at {workers} workers: {ratio:.2f}")


def _bare_pass(base, bank, profiles, pipeline, cores, workers: int,
               procs: set[str]) -> dict[int, float]:
    """Bare-model compute seconds for ``base``'s calls, in one process of ``cores`` threads
    (``"1" in procs``) and split over ``workers`` processes of ``cores // workers`` threads
    (``"N" in procs``), each printed; ``{processes: seconds}``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bare_models import bare_asr, bare_judge, bare_split, bare_vad

    rows = base["rows"]
    audios, lines, turn_texts = (list(x) for x in
                                 zip(*_call_inputs(rows, bank, profiles, pipeline), strict=True))
    texts = _graded_texts(rows, bank, turn_texts)
    graded = base["result"].runtime.get("judge_prefix_cache") or {}
    rig_asr = sum(r["t_asr_s"] or 0.0 for r in rows)
    rig_judge = sum(r["t_scorer_s"] or 0.0 for r in rows)
    rig_vad = sum(r["t_vad_s"] or 0.0 for r in rows)
    print(f"bare models on the same inputs ({len(audios)} calls' line audio, {len(texts)} "
          f"distinct gradings ({sum(t is not None for t in turn_texts)} turn texts); rig: "
          f"{graded.get('hits', 0) + graded.get('misses', 0)} gradings, stages VAD "
          f"{rig_vad:.1f} s, ASR {rig_asr:.1f} s, scorer {rig_judge:.1f} s without the oracle "
          f"phase; load average {os.getloadavg()[0]:.1f}):")
    out: dict[int, float] = {}
    if "1" in procs:
        threads = max(1, cores)  # one process: the whole machine, as the 1-worker run had
        with LoadMeter() as load:
            times = bare_vad(lines, pipeline)
            times = bare_asr(audios, pipeline, threads, times=times)
            times = bare_judge(texts, pipeline, threads, times=times)
        print(f"  one process of {threads} threads ({load}; loads apart: Whisper "
              f"{times.asr_load_s:.1f} s, GGUF {times.judge_load_s:.1f} s):")
        print(f"  Silero VAD:     {times.n_vad} calls, {times.vad_s:.1f} s")
        print(f"  faster-whisper: {times.n_transcribed} calls, "
              f"{times.audio_transcribed_s:.1f} s of line audio up to turn close, "
              f"{times.asr_s:.1f} s")
        print(f"  llama.cpp:      {times.n_graded} distinct gradings (oracle scripts, turn "
              f"texts and transcripts; rig's token evaluations), {times.judge_s:.1f} s")
        print(f"  bare compute {times.compute_s:.1f} s -> physical limit "
              f"{base['audio_s'] / times.compute_s:.2f} audio s per wall s on one process",
              flush=True)
        out[1] = times.compute_s
    if workers > 1 and "N" in procs:
        each = max(1, cores // workers)
        with LoadMeter() as load:
            wall, parts = bare_split(audios, lines, texts, pipeline, workers, each)
        print(f"  split over {workers} processes of {each} thread(s): "
              + ", ".join(f"{t.compute_s:.1f} s ({t.n_transcribed} calls, VAD {t.vad_s:.1f} s, "
                          f"ASR {t.asr_s:.1f} s; {t.n_graded} gradings, {t.judge_s:.1f} s)"
                          for t in parts)
              + f" -> {wall:.1f} s, limit {base['audio_s'] / wall:.2f} audio s per wall s "
              f"({load})", flush=True)
        out[workers] = wall
    return out


if __name__ == "__main__":
    main()
