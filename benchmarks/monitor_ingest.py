"""Ingest throughput of `rig monitor`: calls per minute, and where the time goes.

Writes N production-like calls into a temporary folder (real human speech from tests/data,
turns separated by pauses, white or kitchen noise at 0-30 dB, half as raw 8 kHz mu-law and
half as 16 kHz WAV, each with a JSON sidecar), ingests them with the real Silero VAD and
faster-whisper into a fresh DuckDB file, and prints:
  * calls per minute and audio seconds per wall second;
  * the share of ingest wall time in decoding, the VAD, the other signal computations (SNR,
    channel class, counts), ASR, and the rest (metadata, hashing, the database insert),
    measured side by side in the same run.
The first call also loads the models; --warmup (default 1) calls are ingested first into a
separate database and left out of the figures. Compare ratios, not seconds, across machines.

    python benchmarks/monitor_ingest.py [--calls 20] [--turns 4]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
CLIPS = ("cmu_arctic_us_aew_a0003.wav", "cmu_arctic_us_axb_a0006.wav",
         "sense_and_sensibility_01_austen_64kb-0870.wav")


def write_calls(folder: Path, n: int, turns: int, seed: int) -> float:
    """Write ``n`` calls; returns the total audio seconds."""
    from rig.audio import Audio, read_wav, write_wav
    from rig.channel.codecs import encode
    from rig.synth.noise import file_noise, mix_at_snr, white_noise

    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    clips16 = [read_wav(DATA / c, 16000) for c in CLIPS]
    total = 0.0
    for i in range(n):
        parts = [Audio.silence(0.5, 16000)]
        for k in range(turns):
            parts += [clips16[(i + k) % len(clips16)],
                      Audio.silence(float(rng.choice([0.4, 1.2, 2.5])), 16000)]
        clean = Audio.concat(parts)
        narrow = i % 2 == 0
        audio = clean.resample(8000) if narrow else clean
        sr = audio.sample_rate_hz
        noise = (white_noise(len(audio.samples), rng) if i % 3 else
                 file_noise(DATA / "noise_dishes_10s.wav", len(audio.samples), sr, rng))
        mix, _ = mix_at_snr(audio, noise, float(rng.choice([0, 5, 10, 20, 30])))
        total += mix.duration_s
        stem = f"bench-{seed}-{i:04d}"
        if narrow:
            (folder / f"{stem}.ulaw").write_bytes(encode(mix, "mulaw").tobytes())
        else:
            write_wav(folder / f"{stem}.wav", mix)
        (folder / f"{stem}.json").write_text(json.dumps({
            "call_id": stem, "timestamp": f"2025-01-{6 + i % 7:02d}T10:00:00Z",
            "employer": "acme", "job_family": "support", "language": "en",
            "score": float(rng.integers(30, 95)), "decision": "advance" if i % 2 else "reject"}))
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--turns", type=int, default=4, help="candidate turns per call")
    ap.add_argument("--warmup", type=int, default=1)
    args = ap.parse_args()

    from rig.monitor.config import MonitorConfig
    from rig.monitor.ingest import ingest_folder
    from rig.monitor.store import MonitorStore

    cfg = MonitorConfig()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.warmup:
            write_calls(root / "warmup", args.warmup, args.turns, seed=1)
            with MonitorStore(root / "warmup.duckdb") as store:
                ingest_folder(root / "warmup", store, cfg)
        audio_s = write_calls(root / "calls", args.calls, args.turns, seed=2)
        with MonitorStore(root / "monitor.duckdb") as store:
            t0 = time.perf_counter()
            res = ingest_folder(root / "calls", store, cfg)
            wall = time.perf_counter() - t0
        if res.bad:
            raise SystemExit(f"benchmark calls were skipped: {res.bad[:3]}")
    t = res.timings_s
    rest = wall - sum(t.values())
    print(f"{res.n_ingested} calls, {audio_s:.0f} s of audio ({audio_s / res.n_ingested:.1f} s "
          f"per call, {args.turns} candidate turns), ASR {cfg.signals.asr_model}")
    print(f"ingest throughput: {res.n_ingested / (wall / 60):.1f} calls per minute, "
          f"{audio_s / wall:.1f} audio seconds per wall second ({wall:.1f} s wall)")
    print("share of ingest wall time: " + ", ".join(
        f"{name} {100 * v / wall:.1f}%" for name, v in
        (("decode", t["decode"]), ("VAD", t["vad"]), ("other signals", t["signals"]),
         ("ASR", t["asr"]), ("rest (metadata, hashing, DB)", rest))))
    sig = t["vad"] + t["signals"]
    print(f"signal extraction (VAD + SNR/channel/counts) vs ASR: {sig:.1f} s vs "
          f"{t['asr']:.1f} s ({sig / t['asr']:.2f} : 1)")


if __name__ == "__main__":
    main()
