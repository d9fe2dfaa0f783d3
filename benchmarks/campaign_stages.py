"""Throughput of a demo-sized campaign and the share of wall time in each stage.

Runs the demo campaign (or a smaller one with --answers N) into a fresh temporary folder with
a fresh synthesis cache, so every stage does its full work, and prints:
  * audio seconds processed per wall second (the rendered call audio, summed);
  * the share of wall time spent in synthesis, channel, VAD, ASR, scorer, and the rest
    (oracle scoring, model loading, I/O, summary and report).
All figures come from one run, side by side; compare ratios, not seconds, across machines.

    python benchmarks/campaign_stages.py [--answers 2] [--repeats 1]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import pandas as pd


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--answers", type=int, default=0, help="first N demo answers (0 = all)")
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RIG_AUDIO_CACHE"] = str(Path(tmp) / "audio")
        from rig.campaign.runner import CampaignSpec, run_campaign
        from rig.paths import DEFAULTS as D

        ids = D.demo_answer_ids[: args.answers] if args.answers else D.demo_answer_ids
        spec = CampaignSpec(answers_path=D.answer_bank / "core",
                            profiles_path=D.profiles / "demo",
                            pipeline_path=D.pipelines / "reference.yaml",
                            out_dir=Path(tmp) / "bench", repeats=args.repeats,
                            answer_ids=ids, baseline_repeats=2, n_boot=1000)
        t0 = time.perf_counter()
        res = run_campaign(spec, progress=False)
        wall = time.perf_counter() - t0
    df = pd.DataFrame(res.rows)
    audio_s = float(df["audio_duration_s"].sum())
    stages = {k: float(df[f"t_{k}_s"].fillna(0).sum())
              for k in ("synth", "channel", "vad", "asr", "scorer")}
    stages["rest"] = wall - sum(stages.values())
    print(f"calls: {len(df)}  audio: {audio_s:.1f} s  wall: {wall:.1f} s")
    print(f"audio seconds per wall second: {audio_s / wall:.2f}")
    for k, v in stages.items():
        print(f"  {k:8s} {100 * v / wall:5.1f} % of wall time  "
              f"({audio_s / v if v > 0 else float('inf'):8.1f} audio s per stage s)")


if __name__ == "__main__":
    main()
