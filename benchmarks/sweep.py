"""What a sweep saves: a 4-value endpointing-timer sweep against 4 campaigns from scratch.

Measured in one run, on the same answers and profiles (default: the mini bank's two strong
answers under ``long_pauses`` and the baseline, the reference pipeline):

1. ``campaign``: the campaign at the reference timer (800 ms), from an empty render cache.
2. ``sweep``: ``rig sweep`` of that campaign over 500, 800, 1200, 2000 ms (800 ms is the
   campaign: its rows are reused; the other three re-run turn detection, ASR and scoring from
   the cached renders, the oracle grades reused).
3. ``scratch``: the same 4 timers as 4 campaigns, each from its own empty render cache (what
   a team does without ``rig sweep``: render, line, VAD, ASR, oracle and call scoring, all
   again), each starting with empty ASR and judge memos, as a fresh process would.
4. ``sweep, memos off``: step 2 again inside :func:`rig.stages.memos_off`: every variant's
   turns transcribed and graded by the models, as before the process-wide memos (issue 31
   item 2). Its rows must equal step 2's (timing columns aside): checked and printed.

Wall and CPU seconds (this process, all threads) of each; CPU seconds are what the load moves
least. Before each step the memos are emptied (a fresh ``rig`` process starts with none).

The models are loaded before the clock starts (one warm-up call), so the figures compare the
work, not model loading. Prints seconds and the ratio sweep / scratch (and campaign + sweep /
scratch); nothing is asserted. Usage::

    python benchmarks/sweep.py [--answer-id q01_strong --answer-id q03_strong]
        [--profile long_pauses] [--out /tmp/rig-sweep-bench]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
TIMERS_MS = (500, 800, 1200, 2000)


def _campaign(out: Path, pipeline_path: Path, answers: tuple, profiles: tuple, cache: Path
              ) -> float:
    from rig.campaign.runner import CampaignSpec, run_campaign

    os.environ["RIG_AUDIO_CACHE"] = str(cache)
    spec = CampaignSpec(answers_path=ROOT / "answer_bank" / "mini",
                        profiles_path=ROOT / "profiles" / "demo", pipeline_path=pipeline_path,
                        out_dir=out, answer_ids=answers, profile_ids=profiles, n_boot=200)
    with _timed() as t:
        run_campaign(spec, progress=False)
    return t


class _timed:
    """Wall and CPU seconds (this process, user + system) of a block, memos emptied first."""

    def __enter__(self):
        from rig.asr.whisper import forget_transcripts
        from rig.scorer.base import forget_gradings

        forget_gradings()
        forget_transcripts()
        self.wall, self.cpu = 0.0, 0.0
        self._w, self._c = time.perf_counter(), _cpu()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self._w, _cpu() - self._c


class _Sum:
    def __init__(self, wall: float, cpu: float) -> None:
        self.wall, self.cpu = wall, cpu

    def __add__(self, t):
        return _Sum(self.wall + t.wall, self.cpu + t.cpu)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _rows(folder: Path):
    import pandas as pd

    df = pd.read_parquet(folder / "sweep.parquet")
    keep = [c for c in df.columns if not c.startswith("t_") and c not in
            ("campaign_id", "started_at", "finished_at", "seconds")]
    return df[keep].sort_values(["variant", "answer_id", "profile_id"]).reset_index(drop=True)


def _pipeline_with_timer(base: Path, timer_ms: int, folder: Path) -> Path:
    data = yaml.safe_load(base.read_text())
    data.setdefault("endpointing", {})["silence_timeout_ms"] = timer_ms
    path = folder / f"timer_{timer_ms}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--answer-id", action="append", default=None)
    ap.add_argument("--profile", action="append", default=None)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    answers = tuple(a.answer_id or ("q01_strong", "q03_strong"))
    profiles = tuple(a.profile or ("long_pauses",))
    out = a.out or Path(tempfile.mkdtemp(prefix="rig-sweep-bench-"))
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    ref = ROOT / "pipelines" / "reference.yaml"

    from rig.sweep import Vary, run_sweep

    # warm-up: load the models (and the TTS voice) once, outside every measurement
    _campaign(out / "warmup", ref, answers[:1], (), out / "cache_warmup")

    t_campaign = _campaign(out / "campaign", ref, answers, profiles, out / "cache_campaign")
    vary = [Vary("endpointing.silence_timeout_ms", TIMERS_MS)]
    with _timed() as t_sweep:
        res = run_sweep(out / "campaign", vary, out / "sweep", n_boot=200,
                        audio_cache_dir=out / "cache_campaign")
    from rig.stages import memos_off

    with _timed() as t_off, memos_off():
        run_sweep(out / "campaign", vary, out / "sweep_memos_off", n_boot=200,
                  audio_cache_dir=out / "cache_campaign")
    same = _rows(out / "sweep").equals(_rows(out / "sweep_memos_off"))

    t_scratch = _Sum(0.0, 0.0)
    for ms in TIMERS_MS:
        p = _pipeline_with_timer(ref, ms, out)
        t_scratch = t_scratch + _campaign(out / f"scratch_{ms}", p, answers, profiles,
                                          out / f"cache_scratch_{ms}")

    n = len(res.sweep["variants"][0]["summary"]["profiles"])
    print(f"answers {list(answers)}, profiles {list(profiles)} + baseline ({n} profiles), "
          f"timers {list(TIMERS_MS)} ms; load before/after: {os.getloadavg()[0]:.1f}")
    print(f"{'':50} {'wall_s':>8} {'cpu_s':>8}")
    for name, t in (("campaign at 800 ms (from an empty render cache)", t_campaign),
                    (f"sweep of 4 timer values ({res.n_run} calls re-run)", t_sweep),
                    ("sweep, memos off (every turn transcribed, graded)", t_off),
                    ("4 campaigns from scratch", t_scratch)):
        print(f"{name:50} {t.wall:8.1f} {t.cpu:8.1f}")
    print(f"ratio sweep / scratch:              wall {t_sweep.wall / t_scratch.wall:.2f}, "
          f"CPU {t_sweep.cpu / t_scratch.cpu:.2f}")
    print(f"ratio sweep / sweep with memos off: wall {t_sweep.wall / t_off.wall:.2f}, "
          f"CPU {t_sweep.cpu / t_off.cpu:.2f}; rows identical: {same}")
    print(f"ratio (campaign + sweep) / scratch: "
          f"CPU {(t_campaign.cpu + t_sweep.cpu) / t_scratch.cpu:.2f}")
    for r in res.sweep["table"]:
        if r["profile_id"] != res.sweep["baseline"]:
            print(f"  {r['variant']:<40} {r['profile_id']:<14} delta "
                  f"{r['mean_delta']!s:>8}  truncation {r['truncation_rate']}  {r['verdict']}")


if __name__ == "__main__":
    main()
