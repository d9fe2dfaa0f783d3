"""Recorded "interviews" for the ``rig replay`` tests, built from real human speech (not a test
module).

Every candidate answer is real speech from ``../shared/data/speech`` (its ``MANIFEST.tsv``
gives speaker, accent and transcript): a speaker's clips, each trimmed to its speech by frame
energy (50 ms kept on both sides), joined with silences of exactly ``pauses_s`` (seconds
between one trimmed clip and the next; the speech-free gap is therefore about 0.1 s longer).
The 1961 inaugural-address clip is first cut at its own pauses into five phrases
(``jfk.flac#0`` ... ``#4``). Long-pause answers ("thinking" pauses of 1.3-1.7 s between
sentences) and short-pause ones (0.25-0.4 s) are listed in :data:`ANSWERS`; the questions and
rubrics are ``tests/data/replay_bank`` (:data:`REPLAY_BANK`). Only the interviewer's voice
(stereo interviews) is TTS: rig's hibari engine, espeak-ng where hibari is not installed.

Builders (each writes into ``dest``, creating it, and returns it; all times in seconds from
the start of the file):

* :func:`build_per_answer` - one recording per answer (``<call_id>.wav`` + ``.json``);
* :func:`build_manifest` - the same calls with one ``manifest.jsonl``;
* :func:`build_turns` - three whole mono interviews, ``turns`` in the sidecar;
* :func:`build_stereo` - two stereo interviews (candidate left, interviewer right), no turns;
  the truth is in ``<dest>.expected.json`` beside ``dest`` (:func:`expected_turns`);
* :func:`build_bad` - one good call and one of each bad case (:data:`BAD_CASES`).

Building needs no model except the interviewer's TTS (stereo only) and is deterministic:
every noise is seeded.
"""

from __future__ import annotations

import csv
import json
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from functools import cache
from pathlib import Path
from typing import Literal

import numpy as np
import soundfile as sf

from rig.audio import Audio, active_speech_power, read_wav
from rig.channel import telephony_path
from rig.synth.noise import file_noise, mix_at_snr, noise_rng

SHARED_SPEECH = Path(__file__).resolve().parents[2] / "shared" / "data" / "speech"
REPLAY_BANK = Path(__file__).resolve().parent / "data" / "replay_bank"
RATE_HZ = 16000                 # every answer is assembled at this rate
KEEP_S = 0.05                   # kept before and after each clip's speech when trimming
LEAD_S, TAIL_S = 0.5, 2.5       # silence around a per-answer recording
TURN_MARGIN_S = 0.3             # a turn's start_s/end_s: the answer's speech +- this
LEVEL_DBFS = -24.0              # active-speech level every answer and prompt is set to
FLOOR_DBFS = -60.0              # the line's noise floor (white), under everything
Format = Literal["mulaw8k", "pcm16k"]
JFK = "whisper/jfk.flac"
JFK_PHRASES = ("And so, my fellow Americans,", "ask", "not",
               "what your country can do for you,", "ask what you can do for your country.")


@dataclass(frozen=True)
class ReplayAnswer:
    """One recorded answer: ``clips`` (MANIFEST paths, ``jfk.flac#i`` a phrase of that clip)
    joined with ``pauses_s`` (one per gap, seconds); ``bank_answer_id`` the bank answer whose
    script these words are; ``cut_answer_id`` the bank answer for the words before the first
    pause of 0.7 s or more (what a 700 ms endpointing timer keeps), None when none is."""
    answer_key: str
    question_id: str
    clips: tuple[str, ...]
    pauses_s: tuple[float, ...]
    fmt: Format
    bank_answer_id: str
    cut_answer_id: str | None = None
    noise_snr_db: float | None = None

    @property
    def longest_pause_s(self) -> float:
        return max(self.pauses_s)

    @property
    def long_pauses(self) -> bool:
        return self.longest_pause_s >= 1.0

    @property
    def speaker(self) -> str:
        return _manifest()[self.clips[0].split("#")[0]]["speaker"]

    @property
    def accent(self) -> str:
        return _manifest()[self.clips[0].split("#")[0]]["accent"]

    @property
    def reference_transcript(self) -> str:
        return " ".join(_clip_text(c) for c in self.clips)

    @property
    def duration_s(self) -> float:
        """From the first clip's start to the last clip's end (50 ms kept margins included)."""
        return render(self.answer_key).duration_s

    @property
    def clip_spans_s(self) -> tuple[tuple[float, float], ...]:
        """Each clip's (start, end) within the answer, seconds."""
        return _spans(self.answer_key)


_LJ = tuple(f"coqui-tts-ljspeech/LJ001-000{i}.wav" for i in range(1, 9))
_AUSTEN = tuple(f"pocketsphinx/librivox/sense_and_sensibility_01_austen_64kb-0{n}.wav"
                for n in (870, 880, 890, 920, 930))
_AXB = tuple(f"cmu-arctic/cmu_arctic_us_axb_a000{i}.wav" for i in (4, 5, 6))
_AEW = tuple(f"cmu-arctic/cmu_arctic_us_aew_a000{i}.wav" for i in (3, 2))
_JFK = tuple(f"{JFK}#{i}" for i in range(5))

ANSWERS: dict[str, ReplayAnswer] = {a.answer_key: a for a in (
    ReplayAnswer("printing_lj_long", "printing", _LJ[:5], (0.3, 1.5, 0.3, 1.7), "mulaw8k",
                 "printing_lj_long", "printing_lj_long_first"),
    ReplayAnswer("printing_lj_short", "printing", _LJ[4:], (0.35, 0.3, 0.25), "pcm16k",
                 "printing_lj_short", noise_snr_db=10.0),
    ReplayAnswer("character_librivox_long", "character", _AUSTEN, (1.4, 1.6, 1.7, 1.3),
                 "pcm16k", "character_librivox_long", "character_librivox_long_first"),
    ReplayAnswer("character_librivox_short", "character", _AUSTEN[1:4], (0.3, 0.4), "mulaw8k",
                 "character_librivox_short"),
    ReplayAnswer("reunion_axb_long", "reunion", _AXB, (1.5, 1.7), "mulaw8k", "reunion_axb",
                 "reunion_axb_first"),
    ReplayAnswer("reunion_axb_short", "reunion", _AXB, (0.35, 0.4), "pcm16k", "reunion_axb"),
    ReplayAnswer("reunion_aew_short", "reunion", _AEW, (0.4,), "mulaw8k", "reunion_aew"),
    ReplayAnswer("service_jfk_long", "service", _JFK, (1.5, 0.3, 0.4, 1.6), "pcm16k",
                 "service_jfk", "service_jfk_first"),
    ReplayAnswer("service_jfk_short", "service", _JFK, (0.3, 0.25, 0.3, 0.35), "mulaw8k",
                 "service_jfk", noise_snr_db=10.0),
)}


@cache
def _manifest() -> dict[str, dict[str, str]]:
    with (SHARED_SPEECH / "MANIFEST.tsv").open(encoding="utf-8", newline="") as fh:
        return {row["path"]: row for row in csv.DictReader(fh, delimiter="\t")}


def _clip_text(clip: str) -> str:
    path, _, idx = clip.partition("#")
    return JFK_PHRASES[int(idx)] if idx else _manifest()[path]["transcript"]


def _frame_db(x: np.ndarray, hop: int) -> np.ndarray:
    k = max(1, len(x) // hop)
    return 10 * np.log10(np.mean(x[:k * hop].astype(np.float64).reshape(k, hop) ** 2, 1)
                         + 1e-20)


def _speech_frames(x: np.ndarray) -> np.ndarray:
    """Per 10 ms frame: speech by energy (within 40 dB of the loudest frame and 10 dB above
    the clip's own noise floor, its 10th-percentile frame)."""
    db = _frame_db(x, RATE_HZ // 100)
    return db > max(db.max() - 40.0, np.percentile(db, 10) + 10.0)


def _trim(x: np.ndarray) -> np.ndarray:
    """``x`` from its first to its last speech frame, ``KEEP_S`` kept on both sides."""
    idx = np.flatnonzero(_speech_frames(x))
    hop, keep = RATE_HZ // 100, round(KEEP_S * RATE_HZ)
    return x[max(0, idx[0] * hop - keep):min(len(x), (idx[-1] + 1) * hop + keep)]


@cache
def _jfk_phrases() -> tuple[np.ndarray, ...]:
    """The inaugural clip cut at its pauses (0.25 s or more without speech), each phrase with
    ``KEEP_S`` kept on both sides."""
    x = read_wav(SHARED_SPEECH / JFK, RATE_HZ).samples
    idx = np.flatnonzero(_speech_frames(x))
    cut = np.flatnonzero(np.diff(idx) > 25)
    hop, keep = RATE_HZ // 100, round(KEEP_S * RATE_HZ)
    out = tuple(x[max(0, a * hop - keep):(b + 1) * hop + keep]
                for a, b in zip(np.r_[idx[0], idx[cut + 1]], np.r_[idx[cut], idx[-1]],
                                strict=True))
    if len(out) != len(JFK_PHRASES):
        raise ValueError(f"{JFK}: expected {len(JFK_PHRASES)} phrases, found {len(out)}")
    return out


def _clip_audio(clip: str) -> np.ndarray:
    path, _, idx = clip.partition("#")
    if idx:
        return _jfk_phrases()[int(idx)]
    return _trim(read_wav(SHARED_SPEECH / path, RATE_HZ).samples)


def _at_level(x: np.ndarray, dbfs: float = LEVEL_DBFS) -> np.ndarray:
    gain = 10 ** (dbfs / 20) / np.sqrt(active_speech_power(x, RATE_HZ))
    return (x * min(gain, 0.95 / float(np.max(np.abs(x))))).astype(np.float32)


@cache
def _rendered(key: str) -> tuple[Audio, tuple[tuple[float, float], ...]]:
    a = ANSWERS[key]
    parts, spans, t = [], [], 0
    for i, clip in enumerate(a.clips):
        x = _clip_audio(clip)
        spans.append((t / RATE_HZ, (t + len(x)) / RATE_HZ))
        parts.append(x)
        t += len(x)
        if i < len(a.pauses_s):
            gap = round(a.pauses_s[i] * RATE_HZ)
            parts.append(np.zeros(gap, np.float32))
            t += gap
    return Audio(_at_level(np.concatenate(parts)), RATE_HZ), tuple(spans)


def render(key: str) -> Audio:
    """Answer ``key``'s clean speech: 16 kHz float32 mono, first speech to last (no lead)."""
    return _rendered(key)[0]


def _spans(key: str) -> tuple[tuple[float, float], ...]:
    return _rendered(key)[1]


def _seed(name: str) -> int:
    return zlib.crc32(name.encode())


def _line(x: np.ndarray, name: str, snr_db: float | None = None) -> np.ndarray:
    """``x`` (16 kHz) with the kitchen noise at ``snr_db`` (on active speech) and the noise
    floor, both seeded by ``name``."""
    if snr_db is not None:
        kitchen = file_noise(SHARED_SPEECH / "noise" / "doing_the_dishes.wav", len(x), RATE_HZ,
                             noise_rng(_seed(name)))
        x = mix_at_snr(Audio(x.astype(np.float32), RATE_HZ), kitchen, snr_db)[0].samples
    floor = np.random.default_rng(_seed(name)).standard_normal(len(x)) * 10 ** (FLOOR_DBFS / 20)
    return (x + floor).astype(np.float32)


def _write(path: Path, channels: list[np.ndarray], fmt: Format) -> float:
    """Write 16 kHz channels as ``fmt`` (8 kHz G.711 mu-law WAV through rig's telephony path,
    or 16 kHz PCM_16); returns the file's duration, seconds."""
    if fmt == "mulaw8k":
        chans = [telephony_path(Audio(c, RATE_HZ), 8000, "mulaw").to_pcm16() for c in channels]
        rate, subtype = 8000, "ULAW"
    else:
        chans = [Audio(c, RATE_HZ).to_pcm16() for c in channels]
        rate, subtype = RATE_HZ, "PCM_16"
    data = np.stack(chans, axis=1) if len(chans) > 1 else chans[0]
    sf.write(path, data, rate, subtype=subtype)
    return len(chans[0]) / rate


_EMPLOYERS, _FAMILIES = ("acme-logistics", "northwind-clinic"), ("warehouse", "front_desk")
_T0 = datetime(2025, 3, 3, 9, 0, tzinfo=timezone(timedelta(hours=1)))


def _meta(i: int, call_id: str, fmt: Format, layout: str, score: float | None) -> dict:
    """The monitor's fields for the ``i``-th call (every other timestamp written in UTC);
    ``decision`` from ``score`` against the bank's cutoff (60 for every question)."""
    ts = _T0 + timedelta(minutes=23 * i)
    stamp = (ts.astimezone(UTC).isoformat().replace("+00:00", "Z") if i % 2 else
             ts.isoformat())
    meta = {"call_id": call_id, "timestamp": stamp, "employer": _EMPLOYERS[i % 2],
            "job_family": _FAMILIES[i // 2 % 2], "score": score,
            "decision": None if score is None else "advance" if score >= 60 else "reject",
            "language": "en", "channel": "pstn" if fmt == "mulaw8k" else "voip",
            "layout": layout}
    if fmt == "mulaw8k":
        meta["codec"] = "mulaw"
    return meta


@cache
def _bank_scores() -> dict[str, float]:
    """The replay bank's mean reference grade per answer id (0-100)."""
    from rig.answers import load_bank

    return {a.answer_id: a.reference_score for _, a in load_bank(REPLAY_BANK).answers()}


def bank_score(answer_id: str) -> float:
    """The replay bank's mean reference grade of ``answer_id`` (0-100)."""
    return _bank_scores()[answer_id]


def _answer_call(key: str, i: int) -> tuple[str, dict, np.ndarray, Format]:
    """(call_id, metadata, 16 kHz samples, format) of answer ``key`` as the ``i``-th call.
    The recorded score is the bank's mean reference grade of the answer (None for the third
    call: an interviewer that gave no score)."""
    a = ANSWERS[key]
    call_id = f"call-{i + 1:02d}-{key}"
    x = np.concatenate([np.zeros(round(LEAD_S * RATE_HZ), np.float32), render(key).samples,
                        np.zeros(round(TAIL_S * RATE_HZ), np.float32)])
    score = None if i == 2 else _bank_scores()[a.bank_answer_id]
    meta = _meta(i, call_id, a.fmt, "mono", score)
    meta |= {"question_id": a.question_id, "reference_transcript": a.reference_transcript}
    return call_id, meta, _line(x, key, a.noise_snr_db), a.fmt


def _dump(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def build_per_answer(dest: Path) -> Path:
    """Every answer of :data:`ANSWERS` as its own call: ``<call_id>.wav`` + ``<call_id>.json``
    (the monitor's fields, ``question_id``, ``reference_transcript``). The answer's speech
    starts at ``LEAD_S`` and is followed by ``TAIL_S`` of silence."""
    dest.mkdir(parents=True, exist_ok=True)
    for i, key in enumerate(ANSWERS):
        call_id, meta, x, fmt = _answer_call(key, i)
        _write(dest / f"{call_id}.wav", [x], fmt)
        _dump(dest / f"{call_id}.json", meta)
    return dest


def build_manifest(dest: Path) -> Path:
    """The calls of :func:`build_per_answer` with one ``manifest.jsonl`` (``audio`` names each
    recording) instead of sidecars."""
    dest.mkdir(parents=True, exist_ok=True)
    lines = []
    for i, key in enumerate(ANSWERS):
        call_id, meta, x, fmt = _answer_call(key, i)
        _write(dest / f"{call_id}.wav", [x], fmt)
        lines.append(json.dumps(meta | {"audio": f"{call_id}.wav"}))
    (dest / "manifest.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dest


#: The whole interviews: (call_id, format, answers, silence before each answer in s).
TURN_CALLS: tuple[tuple[str, Format, tuple[str, ...], tuple[float, ...]], ...] = (
    ("interview-1", "mulaw8k", ("reunion_axb_long", "printing_lj_short", "service_jfk_short"),
     (1.0, 3.5, 4.5)),
    ("interview-2", "pcm16k", ("character_librivox_long", "reunion_aew_short"), (1.2, 4.0)),
    ("interview-3", "pcm16k", ("printing_lj_long", "character_librivox_short",
                               "service_jfk_long"), (0.8, 5.0, 3.0)),
)


def _turn(key: str, start_s: float) -> dict:
    a = ANSWERS[key]
    end_s = start_s + a.duration_s
    return {"question_id": a.question_id, "start_s": round(start_s - TURN_MARGIN_S, 3),
            "end_s": round(end_s + TURN_MARGIN_S, 3),
            "reference_transcript": a.reference_transcript}


def _place(chunks: list[tuple[float, np.ndarray]], total_s: float) -> np.ndarray:
    out = np.zeros(round(total_s * RATE_HZ), np.float32)
    for t, x in chunks:
        i = round(t * RATE_HZ)
        out[i:i + len(x)] += x
    return out


def build_turns(dest: Path) -> Path:
    """:data:`TURN_CALLS` as mono recordings of the candidate alone: each answer (clean, no
    kitchen noise) after 3-5 s of near-silence (where the interviewer spoke); the sidecar's
    ``turns`` give each answer's ``question_id``, ``start_s``/``end_s`` (its speech
    +- ``TURN_MARGIN_S``, seconds from the file start) and ``reference_transcript``."""
    dest.mkdir(parents=True, exist_ok=True)
    for i, (call_id, fmt, keys, gaps_s) in enumerate(TURN_CALLS):
        t, chunks, turns = 0.0, [], []
        for key, gap_s in zip(keys, gaps_s, strict=True):
            t += gap_s
            chunks.append((t, render(key).samples))
            turns.append(_turn(key, t))
            t += ANSWERS[key].duration_s
        x = _line(_place(chunks, t + TAIL_S), call_id)
        _write(dest / f"{call_id}.wav", [x], fmt)
        _dump(dest / f"{call_id}.json", _meta(10 + i, call_id, fmt, "mono", 70.0) |
              {"turns": turns})
    return dest


@cache
def _interviewer_engine():
    from rig.errors import EngineUnavailable
    from rig.synth.engines import get_engine

    try:
        return get_engine("hibari", "heart")
    except EngineUnavailable:
        return get_engine("espeak-ng", "en-us")


@cache
def say(text: str) -> np.ndarray:
    """The interviewer saying ``text``: TTS, 16 kHz float32, trimmed, at ``LEVEL_DBFS``."""
    audio = _interviewer_engine().synthesize(text, 1.0).resample(RATE_HZ)
    return _at_level(_trim(audio.samples))


#: The stereo interviews: (call_id, format, [(answer, what the interviewer asks)]).
STEREO_CALLS: tuple[tuple[str, Format, tuple[tuple[str, str], ...]], ...] = (
    ("stereo-1", "pcm16k", (
        ("printing_lj_long", "Tell me what you know about the history of printing."),
        ("reunion_axb_short", "Tell me about a time you saw an old friend again."),
        ("service_jfk_long", "What does serving your country mean to you?"))),
    ("stereo-2", "mulaw8k", (
        ("character_librivox_long", "Could you describe a character from a novel you have "
                                    "read?"),
        ("service_jfk_short", "What does serving your country mean to you?"))),
)
GREETING = "Hello, and thank you for taking this call. I have a few questions for you."
ACKS = ("Thank you.", "Okay, thanks for that.")
CLOSING = "That was my last question. Thank you for your time, and goodbye."
ANSWER_DELAY_S, ACK_DELAY_S, PROMPT_GAP_S = 0.5, 0.8, 0.4


def _stereo_script(qa: tuple[tuple[str, str], ...]) -> tuple[list, list, list, list, float]:
    """Timing of one stereo interview: (candidate chunks, interviewer chunks, interviewer
    lines, turns, total duration); chunks are (start_s, 16 kHz samples)."""
    cand, iv, said, turns = [], [], [], []

    def speak(text: str, at_s: float) -> float:
        x = say(text)
        iv.append((at_s, x))
        said.append({"text": text, "start_s": round(at_s, 3),
                     "end_s": round(at_s + len(x) / RATE_HZ, 3)})
        return at_s + len(x) / RATE_HZ

    t = speak(GREETING, 0.6) + PROMPT_GAP_S
    for j, (key, question) in enumerate(qa):
        if j:
            t = speak(ACKS[(j - 1) % len(ACKS)], t + ACK_DELAY_S) + PROMPT_GAP_S
        t = speak(question, t) + ANSWER_DELAY_S
        end_s = t + ANSWERS[key].duration_s
        cand.append((t, render(key).samples))
        turns.append(_turn(key, t) | {"answer_key": key, "speech_start_s": round(t, 3),
                                      "speech_end_s": round(end_s, 3)})
        t = end_s
    return cand, iv, said, turns, speak(CLOSING, t + ACK_DELAY_S) + 1.0


def build_stereo(dest: Path) -> Path:
    """:data:`STEREO_CALLS` as stereo WAVs: channel 0 the candidate, channel 1 the
    interviewer (TTS), ``layout: candidate_left``, no ``turns`` and no ``question_id``. The
    interviewer greets, asks each question, the candidate answers ``ANSWER_DELAY_S`` after it
    ends, the interviewer acknowledges and asks the next, then closes. The truth (question ids,
    answer spans, what the interviewer said and when) goes to ``<dest>.expected.json`` beside
    ``dest`` (read it with :func:`expected_turns`)."""
    dest.mkdir(parents=True, exist_ok=True)
    truth: dict[str, dict] = {}
    for i, (call_id, fmt, qa) in enumerate(STEREO_CALLS):
        cand, iv, said, turns, total_s = _stereo_script(qa)
        left = _line(_place(cand, total_s), f"{call_id}-candidate")
        right = _line(_place(iv, total_s), f"{call_id}-interviewer")
        _write(dest / f"{call_id}.wav", [left, right], fmt)
        _dump(dest / f"{call_id}.json", _meta(20 + i, call_id, fmt, "candidate_left", 65.0))
        truth[call_id] = {"turns": turns, "interviewer": said}
    _dump(_expected_path(dest), truth)
    return dest


def _expected_path(dest: Path) -> Path:
    return dest.parent / f"{dest.name}.expected.json"


def expected_turns(dest: Path) -> dict[str, dict]:
    """What :func:`build_stereo` put in ``dest``: per call id, ``turns`` (``question_id``,
    ``answer_key``, ``start_s``/``end_s`` = the speech +- ``TURN_MARGIN_S``,
    ``speech_start_s``/``speech_end_s``, ``reference_transcript``) and ``interviewer`` (each
    line's ``text``, ``start_s``, ``end_s``); seconds from the file start."""
    return json.loads(_expected_path(dest).read_text(encoding="utf-8"))


#: build_bad's call ids and what is wrong with each (None: the good one).
BAD_CASES: dict[str, str | None] = {
    "bad-00-good": None,
    "bad-01-turn-past-end": "a turns entry whose end_s is past the recording's end",
    "bad-02-unknown-question": "question_id names no question of the bank",
    "bad-03-stereo-no-layout": "a stereo recording whose sidecar has no layout",
    "bad-04-empty": "a 0-byte recording with a valid sidecar",
}


def build_bad(dest: Path) -> Path:
    """One good per-answer call and one call per bad case of :data:`BAD_CASES`."""
    dest.mkdir(parents=True, exist_ok=True)
    _, meta, x, fmt = _answer_call("reunion_aew_short", 6)
    for call_id in BAD_CASES:
        m = meta | {"call_id": call_id}
        path = dest / f"{call_id}.wav"
        if call_id == "bad-01-turn-past-end":
            n_s = _write(path, [x], fmt)
            m.pop("question_id")
            m["turns"] = [_turn("reunion_aew_short", LEAD_S),
                          {**_turn("reunion_aew_short", LEAD_S), "start_s": n_s - 1.0,
                           "end_s": round(n_s + 5.0, 3)}]
        elif call_id == "bad-02-unknown-question":
            _write(path, [x], fmt)
            m["question_id"] = "no_such_question"
        elif call_id == "bad-03-stereo-no-layout":
            _write(path, [x, _line(np.zeros_like(x), call_id)], fmt)
            for k in ("layout", "question_id", "reference_transcript"):
                m.pop(k)
        elif call_id == "bad-04-empty":
            path.write_bytes(b"")
        else:
            _write(path, [x], fmt)
        _dump(dest / f"{call_id}.json", m)
    return dest
