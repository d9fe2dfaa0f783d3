"""Generated production weeks with known truth, to check the monitor end to end.

:func:`write_week` writes a folder of calls (recordings + JSON sidecars, or a manifest) as a
production system would push them, with a known share of noisy calls and a known score
effect on them, and returns the truth per call. The recordings are either synthetic
"speech" (a voiced harmonic tone with a 4 Hz syllable envelope: fast, for the statistics
checks with fake VAD and ASR) or real recordings given by the caller (for the checks on the
real VAD and ASR). Noise is white Gaussian, mixed at the target SNR on active speech with
:func:`rig.synth.noise.mix_at_snr` (the definition the SNR estimate is checked against).

Scores are whole points, N(mean, sd) clipped to 0-100; the decision is ``advance`` when the
score reaches ``cutoff``. Everything is seeded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
from scipy import stats

from rig.audio import Audio, write_wav
from rig.channel.codecs import encode
from rig.synth.noise import mix_at_snr, white_noise

#: Where the synthetic speech lies in each generated recording, seconds.
LEAD_S = 0.4
TAIL_S = 0.5


@dataclass(frozen=True)
class WeekDesign:
    """One generated week.

    ``noisy_share`` of the calls are mixed at ``noisy_snr_db``, the rest at ``clean_snr_db``;
    scores are N(``clean_mean`` or ``noisy_mean``, ``score_sd``), whole points.
    """
    week_start: date
    n_calls: int = 200
    noisy_share: float = 0.35
    clean_snr_db: float = 35.0
    noisy_snr_db: float = 3.0
    clean_mean: float = 70.0
    noisy_mean: float = 70.0
    score_sd: float = 10.0
    cutoff: float = 60.0
    speech_s: float = 0.8
    sample_rate_hz: int = 8000
    employers: tuple[str, ...] = ("acme", "globex")
    job_families: tuple[str, ...] = ("support", "sales")
    id_prefix: str = "call"


def synthetic_speech(duration_s: float, sample_rate_hz: int, rng: np.random.Generator
                     ) -> np.ndarray:
    """A voiced-speech stand-in: harmonics of a 110-150 Hz fundamental (falling 1/k), under a
    4 Hz raised-cosine syllable envelope; float32, shape ``(n,)``, peak 0.5."""
    n = round(duration_s * sample_rate_hz)
    t = np.arange(n) / sample_rate_hz
    f0 = rng.uniform(110, 150)
    x = sum(np.sin(2 * np.pi * f0 * k * t + rng.uniform(0, 2 * np.pi)) / k
            for k in range(1, 20) if f0 * k < sample_rate_hz / 2 * 0.9)
    env = 0.55 - 0.45 * np.cos(2 * np.pi * 4.0 * t)
    y = x * env
    return (0.5 * y / np.max(np.abs(y))).astype(np.float32)


def write_week(folder: str | Path, design: WeekDesign, seed: int, *, fmt: str = "wav",
               layout: str = "sidecar", speech: Sequence[Audio] | None = None
               ) -> list[dict]:
    """Write ``design.n_calls`` calls into ``folder`` and return the truth of each.

    Args:
        fmt: ``wav`` (16-bit PCM at ``design.sample_rate_hz``) or ``ulaw`` (raw 8 kHz mu-law).
        layout: ``sidecar`` (``<id>.json`` beside each recording) or ``manifest``
            (``manifest.jsonl``).
        speech: real recordings to use (cycled, resampled), each padded with ``LEAD_S`` and
            ``TAIL_S`` of silence; default synthetic speech of ``design.speech_s``.

    Returns:
        One dict per call: ``call_id``, ``timestamp``, ``noisy`` (bool), ``snr_db_target``,
        ``snr_db_mixed`` (measured on the mix), ``score``, ``decision``, ``employer``,
        ``job_family``, ``file``.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    sr = 8000 if fmt == "ulaw" else design.sample_rate_hz
    truth: list[dict] = []
    lines: list[str] = []
    start = datetime.combine(design.week_start, datetime.min.time(), UTC)
    for i in range(design.n_calls):
        noisy = bool(rng.random() < design.noisy_share)
        snr = design.noisy_snr_db if noisy else design.clean_snr_db
        if speech:
            core = speech[i % len(speech)].resample(sr).samples
        else:
            core = synthetic_speech(design.speech_s, sr, rng)
        clean = np.concatenate([np.zeros(round(LEAD_S * sr), np.float32), core,
                                np.zeros(round(TAIL_S * sr), np.float32)])
        mix, measured = mix_at_snr(Audio(clean, sr), white_noise(len(clean), rng), snr)
        mean = design.noisy_mean if noisy else design.clean_mean
        score = float(np.clip(np.round(rng.normal(mean, design.score_sd)), 0, 100))
        decision = "advance" if score >= design.cutoff else "reject"
        cid = f"{design.id_prefix}-{design.week_start.isoformat()}-{i:04d}"
        ts = start + timedelta(seconds=float(rng.uniform(0, 7 * 86400 - 1)))
        name = f"{cid}.{'ulaw' if fmt == 'ulaw' else 'wav'}"
        if fmt == "ulaw":
            (folder / name).write_bytes(encode(mix, "mulaw").tobytes())
        else:
            write_wav(folder / name, mix)
        meta = {"call_id": cid, "timestamp": ts.isoformat(),
                "employer": design.employers[i % len(design.employers)],
                "job_family": design.job_families[(i // 2) % len(design.job_families)],
                "language": "en", "channel": "pstn", "score": score, "decision": decision}
        if layout == "manifest":
            lines.append(json.dumps({**meta, "audio": name}))
        else:
            (folder / f"{cid}.json").write_text(json.dumps(meta), encoding="utf-8")
        truth.append({**meta, "noisy": noisy, "snr_db_target": snr,
                      "snr_db_mixed": measured, "file": name})
    if layout == "manifest":
        with (folder / "manifest.jsonl").open("a", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
    return truth


def expected_selection_ratio(design: WeekDesign) -> float | None:
    """The population selection-rate ratio noisy / clean of ``design`` (whole-point scores,
    advance at >= cutoff; clipping ignored): the truth a week's estimate scatters around."""
    def p_adv(mean: float) -> float:
        return float(stats.norm.sf(design.cutoff - 0.5, mean, design.score_sd))

    lo, hi = sorted((p_adv(design.noisy_mean), p_adv(design.clean_mean)))
    return lo / hi if hi > 0 else None
