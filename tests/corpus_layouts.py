"""Tiny corpora in the VCTK (0.92 and 0.80), L2-ARCTIC and CMU ARCTIC layouts, for the tests
of :mod:`rig.voices.corpus` (not a test module).

Two "speakers" per corpus, three shared prompts (CMU ARCTIC a0001-a0003, their real
transcripts). With ``real=True`` the audio is real speech from ``../shared/data/speech/
cmu-arctic`` (CMU ARCTIC licence): speaker 1 is aew reading a0001-a0003; speaker 2 is the same
recordings played 10% slower (the samples relabelled at 0.9 x the rate: a lower, slower
voice), plus axb's own a0004-a0006 as prompts only speaker 2 read (which the import must
leave out). The corpora's speaker ids and labels are made up for the layout; the voices are
not those speakers'. With ``real=False`` every file is 0.3 s of seeded noise (layout tests).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

SHARED_ARCTIC = Path(__file__).resolve().parents[2] / "shared" / "data" / "speech" / \
    "cmu-arctic"
TEXTS = {"a0001": "Author of the danger trail, Philip Steels, etc.",
         "a0002": "Not at this particular case, Tom, apologized Whittemore.",
         "a0003": "For the twentieth time that evening the two men shook hands.",
         "a0004": "Lord, but I'm glad to see you again, Phil.",
         "a0005": "Will we ever forget it.",
         "a0006": "God bless 'em, I hope I'll go on seeing them forever."}
SHARED_IDS = ("a0001", "a0002", "a0003")


def _clip(uid: str, speaker: int, real: bool) -> tuple[np.ndarray, int]:
    """(samples, rate) of speaker 1 or 2 reading ``uid``."""
    if not real:
        rng = np.random.default_rng(int(uid[1:]) * 10 + speaker)
        return (0.1 * rng.standard_normal(4800)).astype(np.float32), 16000
    who = "aew" if uid in SHARED_IDS else "axb"
    data, sr = sf.read(SHARED_ARCTIC / f"cmu_arctic_us_{who}_{uid}.wav", dtype="float32")
    return data, (int(sr * 0.9) if speaker == 2 and uid in SHARED_IDS else int(sr))


def _utts(speaker: int) -> list[str]:
    """Speaker 1 read the shared prompts; speaker 2 its own three first, then the shared."""
    return list(SHARED_IDS) if speaker == 1 else ["a0004", "a0005", "a0006", *SHARED_IDS]


def make_vctk(root: Path, real: bool = False, version: str = "0.92") -> Path:
    """VCTK: ``txt/p901/p901_001.txt`` + ``wav48_silence_trimmed/p901/p901_001_mic1.flac``
    (0.92) or ``wav48/p901/p901_001.wav`` (0.80), ``speaker-info.txt``. Speaker p902 reads the
    shared prompts as its 004-006 (VCTK numbers each speaker's utterances its own way)."""
    for n, sid in ((1, "p901"), (2, "p902")):
        for i, uid in enumerate(_utts(n), start=1):
            stem = f"{sid}_{i:03d}"
            (root / "txt" / sid).mkdir(parents=True, exist_ok=True)
            (root / "txt" / sid / f"{stem}.txt").write_text(TEXTS[uid] + "\n")
            data, sr = _clip(uid, n, real)
            if version == "0.92":
                d = root / "wav48_silence_trimmed" / sid
                d.mkdir(parents=True, exist_ok=True)
                sf.write(d / f"{stem}_mic1.flac", data, sr)
            else:
                d = root / "wav48" / sid
                d.mkdir(parents=True, exist_ok=True)
                sf.write(d / f"{stem}.wav", data, sr)
    ids = ("p901", "p902") if version == "0.92" else ("901", "902")
    (root / "speaker-info.txt").write_text(
        "ID  AGE  GENDER  ACCENTS  REGION COMMENTS \n"
        f"{ids[0]}  23  F    English    Southern  England\n"
        f"{ids[1]}  22  M    Scottish    Edinburgh  (mic2 files unavailable)\n")
    return root


def make_l2_arctic(root: Path, real: bool = False) -> Path:
    """L2-ARCTIC: ``ABA/wav/arctic_a0001.wav`` + ``ABA/transcript/arctic_a0001.txt`` (ABA and
    ASI: L1 Arabic and Hindi in the corpus's table), and a ``suitcase_corpus`` folder that is
    not a speaker."""
    for n, sid in ((1, "ABA"), (2, "ASI")):
        for d in ("wav", "transcript"):
            (root / sid / d).mkdir(parents=True, exist_ok=True)
        for uid in _utts(n):
            data, sr = _clip(uid, n, real)
            sf.write(root / sid / "wav" / f"arctic_{uid}.wav", data, sr)
            (root / sid / "transcript" / f"arctic_{uid}.txt").write_text(TEXTS[uid])
    (root / "suitcase_corpus").mkdir(exist_ok=True)
    return root


def make_cmu_arctic(root: Path, real: bool = False) -> Path:
    """CMU ARCTIC: ``cmu_us_ts1_arctic/wav/arctic_a0001.wav`` + ``etc/txt.done.data``."""
    for n, sid in ((1, "ts1"), (2, "ts2")):
        d = root / f"cmu_us_{sid}_arctic"
        (d / "wav").mkdir(parents=True, exist_ok=True)
        (d / "etc").mkdir(parents=True, exist_ok=True)
        lines = []
        for uid in _utts(n):
            data, sr = _clip(uid, n, real)
            sf.write(d / "wav" / f"arctic_{uid}.wav", data, sr)
            lines.append(f'( arctic_{uid} "{TEXTS[uid]}" )')
        (d / "etc" / "txt.done.data").write_text("\n".join(lines) + "\n")
    return root
