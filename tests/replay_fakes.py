"""Fake stages for the replay's unit tests (module level: spawned workers import them).

The "speech" is 440 Hz tone bursts of 0.3 s ("words") separated by gaps; the fake VAD finds
the bursts by energy and closes a turn after ``silence_timeout_ms`` of quiet; the fake ASR
says ``w`` once per burst; the fake scorer gives points in proportion to the words heard
(12 words = full marks).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import soundfile as sf

from rig.asr.whisper import Transcript
from rig.audio import Audio
from rig.monitor.signals import SignalStages
from rig.replay.version import VersionStages
from rig.scorer.fake import FakeScorer
from rig.vad import Turn

SR = 8000
WORD_S = 0.3


def answer_samples(gaps_s: list[float], sr: int = SR, lead_s: float = 0.5,
                   tail_s: float = 1.5) -> np.ndarray:
    """One burst per word, ``gaps_s[i]`` seconds of quiet after word i (len = words - 1)."""
    t = np.arange(int(WORD_S * sr)) / sr
    word = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    parts = [np.zeros(int(lead_s * sr), np.float32)]
    for i in range(len(gaps_s) + 1):
        parts.append(word)
        if i < len(gaps_s):
            parts.append(np.zeros(int(gaps_s[i] * sr), np.float32))
    parts.append(np.zeros(int(tail_s * sr), np.float32))
    rng = np.random.default_rng(0)
    x = np.concatenate(parts)
    return (x + rng.normal(0, 1e-3, len(x))).astype(np.float32)


def _bursts(audio: Audio) -> list[tuple[float, float]]:
    n = audio.sample_rate_hz // 50
    k = len(audio.samples) // n
    if k == 0:
        return []
    e = np.sqrt(np.mean(audio.samples[: k * n].reshape(k, n) ** 2, axis=1)) > 0.05
    out, start = [], None
    for i, on in enumerate(e):
        if on and start is None:
            start = i
        if not on and start is not None:
            out.append((start * 0.02, i * 0.02))
            start = None
    if start is not None:
        out.append((start * 0.02, k * 0.02))
    return out


def fake_detect_turns(audio: Audio, params) -> tuple[Turn, ...]:
    """Turns of bursts joined while the gaps are under the timer."""
    timer = params.silence_timeout_ms / 1000
    turns: list[Turn] = []
    cur: list[float] | None = None
    for a, b in _bursts(audio):
        if cur is not None and a - cur[1] >= timer:
            turns.append(Turn(cur[0], cur[1], cur[1] + timer, "silence_timeout"))
            cur = None
        cur = [a, b] if cur is None else [cur[0], b]
    if cur is not None:
        end = audio.duration_s
        if end - cur[1] >= timer:
            turns.append(Turn(cur[0], cur[1], cur[1] + timer, "silence_timeout"))
        else:
            turns.append(Turn(cur[0], cur[1], end, "end_of_audio"))
    return tuple(turns)


def fake_transcribe(audio: Audio, options) -> Transcript:
    n = sum(1 for a, b in _bursts(audio) if b - a >= 0.1)
    return Transcript(text=" ".join(["word"] * n), avg_logprob=-0.2, no_speech_prob=0.01,
                      audio_s=audio.duration_s)


def _reply(user: str, seed: int) -> str:
    crit = re.findall(r"^- (\w+) \(0 to (\d+) points\)", user, re.MULTILINE)
    said = user.rsplit('"""', 2)[-2] if user.count('"""') >= 2 else ""
    frac = min(1.0, len(said.split()) / 12)
    return json.dumps({"points": {c: round(int(m) * frac) for c, m in crit}})


def fake_stages() -> VersionStages:
    return VersionStages(FakeScorer(_reply), fake_transcribe, fake_detect_turns)


def fake_signal_stages() -> SignalStages:
    return SignalStages(detect_turns=fake_detect_turns, transcribe=fake_transcribe)


def write_call(folder: Path, call_id: str, samples: np.ndarray, sr: int = SR, **fields) -> Path:
    """``<call_id>.wav`` (PCM_16) and its sidecar with the monitor's fields and ``fields``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{call_id}.wav"
    sf.write(path, samples, sr, subtype="PCM_16")
    meta = {"call_id": call_id, "timestamp": "2026-11-02T10:00:00Z", "employer": "acme",
            "job_family": "support", "score": None, "decision": None, **fields}
    (folder / f"{call_id}.json").write_text(json.dumps(meta))
    return path
