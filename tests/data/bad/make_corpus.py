"""Regenerate the binary and derived files of the bad-input corpus (``python
tests/data/bad/make_corpus.py``). The text files were written by hand from real layouts
(answer_bank/mini, profiles/core, pipelines/reference.yaml) with one fault each; this script
writes the audio files, whose faults are easier to make than to type, and the Parquet file
named ``.csv``. Deterministic."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import soundfile as sf

HERE = Path(__file__).parent
RATE = 4000


def tone(n: int = 4400, amp: float = 0.3) -> np.ndarray:
    t = np.arange(n) / RATE
    return (amp * np.sin(2 * np.pi * 440 * t)).astype(np.float32)


def write(name: str, data, subtype: str = "PCM_16", fmt: str = "WAV", rate: int = RATE) -> Path:
    path = HERE / "audio" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), data, rate, subtype=subtype, format=fmt)
    return path


def main() -> None:
    audio = HERE / "audio"
    audio.mkdir(exist_ok=True)
    x = tone()
    # refused
    full = write("truncated.wav", x).read_bytes()
    (audio / "truncated.wav").write_bytes(full[: len(full) // 2])  # a partial copy
    write("zero_samples.wav", np.zeros(0, np.float32))
    bad = x.copy()
    bad[100:110] = np.nan
    write("nan_samples.wav", bad, "FLOAT")
    inf = x.copy()
    inf[50] = np.inf
    write("inf_samples.wav", inf, "FLOAT")
    write("float_beyond_full_scale.wav", x * 10, "FLOAT")
    write("digital_silence.wav", np.zeros(4400, np.float32))
    mp3 = write("mp3_named.wav", np.tile(x, 2), "MPEG_LAYER_III", "MP3", rate=8000)
    assert mp3.read_bytes()[:3] in (b"ID3", b"\xff\xfb", b"\xff\xf3") or mp3.read_bytes()[0] == 0xFF
    (audio / "empty.wav").write_bytes(b"")
    (audio / "text_named.wav").write_text("call_id,score\nc1,70\n", encoding="utf-8")
    write("three_channels.wav", np.stack([x, x, x], axis=1))
    write("rate_1hz.wav", x[:8], rate=1)  # a header whose rate field is wrong
    # accepted (converted): 8-bit, 24-bit, float, stereo, extensible, streaming sizes
    write("pcm_u8.wav", x, "PCM_U8")
    write("pcm_24.wav", x, "PCM_24")
    write("float32.wav", x, "FLOAT")
    write("stereo.wav", np.stack([x, x * 0.5], axis=1))
    write("extensible.wav", x, "PCM_16", "WAVEX")
    stream = bytearray(write("streaming_ffff.wav", x).read_bytes())
    stream[4:8] = struct.pack("<I", 0xFFFFFFFF)  # RIFF size unknown (a live writer)
    i = stream.find(b"data")
    stream[i + 4:i + 8] = struct.pack("<I", 0xFFFFFFFF)  # data size unknown
    (audio / "streaming_ffff.wav").write_bytes(bytes(stream))
    zero = bytearray(write("streaming_zero.wav", x).read_bytes())
    zero[4:8] = struct.pack("<I", 0)  # a writer that leaves 0 where it cannot seek back
    zero[i + 4:i + 8] = struct.pack("<I", 0)
    (audio / "streaming_zero.wav").write_bytes(bytes(zero))
    # refused: a data chunk that really is empty, a LIST chunk after it (not samples)
    empty = bytearray(write("empty_data_then_list.wav", np.zeros(0, np.float32)).read_bytes())
    info = b"INFOISFT" + struct.pack("<I", 4) + b"rig\x00"
    empty += b"LIST" + struct.pack("<I", len(info)) + info
    empty[4:8] = struct.pack("<I", len(empty) - 8)
    (audio / "empty_data_then_list.wav").write_bytes(bytes(empty))
    write("good.wav", x)
    parquet_named_csv()


def parquet_named_csv() -> None:
    """``stats/parquet_named.csv``: score_text.csv's rows with numeric scores, as Parquet."""
    import pandas as pd

    rows = pd.read_csv(HERE / "stats" / "score_text.csv")
    rows["score"] = [70, 65, 55, 50, 30, 28, 80, 78]
    rows.to_parquet(HERE / "stats" / "parquet_named.csv", index=False)


if __name__ == "__main__":
    main()
