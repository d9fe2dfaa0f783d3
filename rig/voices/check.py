"""``rig voices check``: a speaker folder against the answer bank, file by file.

Coverage: the bank's answers with a recording (``<answer_id>.wav`` or ``.flac``), the ones
missing, and files that name no answer of the bank. Per recording:

* ``level_dbfs``: RMS level of the speech, 10 log10 of the mean power of the 20 ms frames
  inside the VAD's turns (below), in dB relative to full scale (a full-scale square wave is
  0 dBFS, a full-scale sine -3); the noise between the words counts, the silence before and
  after the answer does not.
* ``peak_dbfs``; ``clipped_fraction``: the share of samples at full scale (16-bit -32768 or
  32767; |x| >= 32767/32768 as float), where a clipped recording sits.
* ``snr_db``: rig's blind SNR estimate (:func:`rig.monitor.snr.estimate_snr_db`, the
  VAD-segmented energy ratio of ``rig monitor``) on the turns of pipecat's Silero VAD
  (:func:`rig.vad.detect_turns`, a 300 ms silence timer), at 16 kHz; None with the reason
  when the recording has too little silence outside speech to measure the noise on.
* ``wer``: Whisper's transcript (:func:`rig.asr.whisper.transcribe`) against the script's words
  (:func:`rig.script.reference_text`, the clean policy), both normalised
  (:func:`rig.asr.wer.wer`); and ``longest_missed_run``, the longest run of consecutive script
  words the transcript does not have (jiwer's alignment): a skipped line shows there even
  when the WER of a long answer stays low.
* ``wpm``: words per minute on speech time, the measure of the synthesised voices
  (:func:`rig.synth.pace.measure_wpm`: the script's spoken words, fillers included, over the
  span from the first speech onset to the last speech end, less the deliberate pauses); the
  deliberate pauses are the k longest silences between VAD turns, k the number of
  ``[pause]`` cues in the script.

Flags (each a reason to listen and perhaps re-take): ``re-take: misread?`` (WER above
``max_wer`` or a run of ``min_missed_run`` script words not heard), ``clipped``, ``quiet``,
``noisy``, ``rate under 16 kHz``. Whisper's WER also rises with an accent it handles badly,
which is what a campaign measures: listen before re-taking, and never re-take to lower it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from rig.answers import load_bank
from rig.audio import active_speech_power, read_wav
from rig.errors import ConfigError, RigError
from rig.script import Filler, Words, parse_script, reference_text

#: |sample| at or above this is at full scale (the largest positive 16-bit value).
FULL_SCALE = 32767 / 32768
#: The VAD's silence timer for the turns that split speech from silence here (ms).
SPLIT_SILENCE_MS = 300
ANALYSIS_RATE_HZ = 16000


@dataclass(frozen=True)
class Thresholds:
    """When a file is flagged. ``max_wer``: WER against the script; ``min_missed_run``:
    consecutive script words not in the transcript; ``max_clipped_fraction``: share of samples
    at full scale; ``min_level_dbfs``: speech RMS; ``min_snr_db``: estimated SNR;
    ``min_sample_rate_hz``: the recording's rate."""
    max_wer: float = 0.2
    min_missed_run: int = 4
    max_clipped_fraction: float = 0.001
    min_level_dbfs: float = -40.0
    min_snr_db: float = 20.0
    min_sample_rate_hz: int = 16000


@dataclass(frozen=True)
class FileCheck:
    """One recording's measures (module docstring); None where not measurable (``notes``
    says why)."""
    answer_id: str
    file: str
    sample_rate_hz: int
    channels: int
    duration_s: float
    level_dbfs: float | None
    peak_dbfs: float | None
    clipped_fraction: float
    snr_db: float | None
    wer: float | None
    longest_missed_run: int
    missed_words: str
    transcript: str
    wpm: float | None
    flags: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class VoiceCheck:
    """A folder's check: coverage, ``speaker.json`` (or the problem with it), every file."""
    folder: str
    answers: str
    asr_model: str
    n_answers: int
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    speaker: dict | None
    speaker_problem: str | None
    files: tuple[FileCheck, ...]
    thresholds: Thresholds = field(default_factory=Thresholds)

    def to_json(self) -> dict:
        """A JSON-ready dict (NaN-free)."""
        out = asdict(self)
        out["n_recorded"] = len(self.files)
        return out


def level_dbfs(samples: np.ndarray, sample_rate_hz: int, turns=None) -> float | None:
    """RMS level of the speech in dBFS (module docstring): over the 20 ms frames inside the
    VAD ``turns`` (start to speech end, seconds) when given, else over the active-speech
    frames (:func:`rig.audio.active_speech_power`). None when silent or no frame is speech."""
    if turns is None:
        p = active_speech_power(samples, sample_rate_hz)
    else:
        from rig.monitor.snr import FRAME_MS, frame_powers

        pw = frame_powers(samples, sample_rate_hz)
        t = (np.arange(len(pw)) + 0.5) * FRAME_MS / 1000
        inside = np.zeros(len(pw), bool)
        for tr in turns:
            inside |= (t >= tr.start_s) & (t < tr.speech_end_s)
        p = float(pw[inside].mean()) if inside.any() else 0.0
    return 10.0 * math.log10(p) if p > 0 else None


def peak_dbfs(samples: np.ndarray) -> float | None:
    """Peak sample level in dBFS; None for all zeros."""
    peak = float(np.max(np.abs(samples))) if len(samples) else 0.0
    return 20.0 * math.log10(peak) if peak > 0 else None


def clipped_fraction(samples: np.ndarray) -> float:
    """Share of samples (float, full scale 1.0) with |x| >= :data:`FULL_SCALE`."""
    if not len(samples):
        return 0.0
    return float(np.count_nonzero(np.abs(samples) >= FULL_SCALE - 1e-7)) / len(samples)


def script_tokens(script: str) -> int:
    """Spoken tokens of a script: its words and its filler cues (what the synthesised voices'
    word count holds)."""
    return sum(len(s.text.split()) if isinstance(s, Words) else isinstance(s, Filler)
               for s in parse_script(script))


def pause_cues(script: str) -> int:
    """Number of ``[pause ...]`` cues in a script."""
    return sum(1 for s in parse_script(script) if not isinstance(s, Words | Filler))


def speaking_rate_wpm(n_tokens: int, turns, n_pauses: int) -> float | None:
    """Words per minute on speech time (:func:`rig.synth.pace.measure_wpm`): ``n_tokens``
    over the span from the first turn's start to the last turn's speech end, less the
    ``n_pauses`` longest silences between turns. None without turns or tokens."""
    from rig.synth.pace import measure_wpm

    if not turns or n_tokens <= 0:
        return None
    start, end = turns[0].start_s, turns[-1].speech_end_s
    gaps = sorted((max(0.0, b.start_s - a.speech_end_s) for a, b in itertools.pairwise(turns)),
                  reverse=True)
    pauses_s = sum(gaps[:n_pauses])
    edges = np.linspace(start, end, n_tokens + 1)
    words = [SimpleNamespace(start_s=float(edges[i]), end_s=float(edges[i + 1]))
             for i in range(n_tokens)]
    return measure_wpm(words, pauses_s)


def missed_run(reference: str, hypothesis: str) -> tuple[int, str]:
    """The longest run of consecutive reference words that the hypothesis does not have
    (deleted or substituted in jiwer's alignment, both normalised by :func:`rig.asr.wer.normalize`),
    and those words. ``(0, "")`` when every word is matched."""
    import jiwer

    from rig.asr.wer import normalize

    ref, hyp = normalize(reference), normalize(hypothesis)
    if not ref:
        return 0, ""
    if not hyp:
        return len(ref.split()), ref
    out = jiwer.process_words(ref, hyp)
    words, hit = ref.split(), np.zeros(len(ref.split()), bool)
    for chunk in out.alignments[0]:
        if chunk.type == "equal":
            hit[chunk.ref_start_idx:chunk.ref_end_idx] = True
    best, best_at, run = 0, 0, 0
    for i, h in enumerate(hit):
        run = 0 if h else run + 1
        if run > best:
            best, best_at = run, i - run + 1
    return best, " ".join(words[best_at:best_at + best])


def flags_for(fc: FileCheck, t: Thresholds) -> tuple[str, ...]:
    """The flags of a file's measures under ``t`` (module docstring)."""
    out = []
    if (fc.wer is not None and fc.wer > t.max_wer) or fc.longest_missed_run >= t.min_missed_run:
        out.append("re-take: misread?")
    if fc.clipped_fraction > t.max_clipped_fraction:
        out.append("clipped")
    if fc.level_dbfs is None or fc.level_dbfs < t.min_level_dbfs:
        out.append("quiet")
    if fc.snr_db is not None and fc.snr_db < t.min_snr_db:
        out.append("noisy")
    if fc.sample_rate_hz < t.min_sample_rate_hz:
        out.append(f"rate under {t.min_sample_rate_hz // 1000} kHz")
    return tuple(out)


def check_file(path: Path, answer_id: str, script: str, asr_model: str = "whisper-base",
               thresholds: Thresholds = Thresholds(), stages=None) -> FileCheck:
    """Measure one recording against its script.

    Args:
        stages: :class:`rig.monitor.signals.SignalStages` (the VAD and the ASR; real by
            default, fakes in unit tests).

    Raises:
        AudioFileError: the file does not decode (the message names it).
    """
    import soundfile as sf

    from rig.asr.wer import wer
    from rig.asr.whisper import AsrOptions
    from rig.monitor.signals import SignalStages
    from rig.monitor.snr import estimate_snr_db
    from rig.vad import TurnParams

    stages = stages or SignalStages()
    audio = read_wav(path)
    channels = sf.info(str(path)).channels
    x, sr = audio.samples, audio.sample_rate_hz
    notes = [] if channels == 1 else [f"{channels} channels, mixed to mono"]
    a16 = audio.resample(ANALYSIS_RATE_HZ)
    turns = stages.detect_turns(a16, TurnParams(silence_timeout_ms=SPLIT_SILENCE_MS))
    snr, why = estimate_snr_db(a16, turns)
    if snr is None:
        notes.append(f"snr: {why}")
    text = stages.transcribe(audio, AsrOptions(model=asr_model)).text
    ref = reference_text(script)
    w = wer(ref, text).wer
    run, missed = missed_run(ref, text)
    wpm = speaking_rate_wpm(script_tokens(script), turns, pause_cues(script))
    if wpm is None:
        notes.append("wpm: no speech detected")
    fc = FileCheck(answer_id=answer_id, file=path.name, sample_rate_hz=sr, channels=channels,
                   duration_s=round(audio.duration_s, 3), level_dbfs=_r(level_dbfs(x, sr, turns)),
                   peak_dbfs=_r(peak_dbfs(x)), clipped_fraction=clipped_fraction(x),
                   snr_db=_r(snr), wer=_r(w, 4), longest_missed_run=run, missed_words=missed,
                   transcript=text, wpm=_r(wpm, 1), notes=tuple(notes))
    return replace(fc, flags=flags_for(fc, thresholds))


def _r(x: float | None, nd: int = 2) -> float | None:
    return None if x is None else round(float(x), nd)


def check_voice(folder: str | Path, answers: str | Path, asr_model: str = "whisper-base",
                thresholds: Thresholds = Thresholds(), stages=None) -> VoiceCheck:
    """Check every recording of a speaker folder against the bank (module docstring).

    Raises:
        ConfigError: the folder does not exist or the bank does not load.
        RigError: a recording does not decode (named).
    """
    from rig.synth.recorded import EXTENSIONS
    from rig.voices.speaker import SPEAKER_FILE, read_speaker

    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(folder, "", "speaker folder not found")
    bank = load_bank(answers)
    scripts = {a.answer_id: a.script for _, a in bank.answers()}
    found: dict[str, Path] = {}  # the file a campaign reads: .wav before .flac
    for ext in EXTENSIONS:
        for p in sorted(folder.iterdir()):
            if p.is_file() and p.suffix.lower() == ext:
                found.setdefault(p.stem, p)
    speaker, problem = None, None
    try:
        speaker = read_speaker(folder).model_dump()
    except RigError as exc:
        problem = str(exc) if (folder / SPEAKER_FILE).is_file() else f"no {SPEAKER_FILE}"
    files = []
    for aid, path in found.items():
        if aid in scripts:
            try:
                files.append(check_file(path, aid, scripts[aid], asr_model, thresholds, stages))
            except ValueError as exc:  # AudioFileError names the file
                raise RigError(str(exc)) from None
    return VoiceCheck(folder=str(folder), answers=str(answers), asr_model=asr_model,
                      n_answers=len(scripts),
                      missing=tuple(a for a in scripts if a not in found),
                      extra=tuple(sorted(a for a in found if a not in scripts)),
                      speaker=speaker, speaker_problem=problem, files=tuple(files),
                      thresholds=thresholds)


def render_check(result: VoiceCheck, console) -> None:
    """The check as a rich table and a few lines on ``console``."""
    from rich.table import Table

    def f(x, fmt):
        return "-" if x is None else format(x, fmt)

    n = len(result.files)
    console.print(f"{result.folder}: {n} of {result.n_answers} answers of {result.answers} "
                  f"recorded", highlight=False)
    if result.speaker_problem:
        console.print(f"speaker.json: {result.speaker_problem}", style="red", highlight=False)
    t = Table("answer", "s", "Hz", "level dBFS", "peak dBFS", "clipped %", "SNR dB", "WER",
              "wpm", "flags", title=f"WER by {result.asr_model}")
    for c in result.files:
        t.add_row(c.answer_id, f"{c.duration_s:.1f}", str(c.sample_rate_hz),
                  f(c.level_dbfs, ".1f"), f(c.peak_dbfs, ".1f"),
                  f"{100 * c.clipped_fraction:.2f}", f(c.snr_db, ".1f"), f(c.wer, ".2f"),
                  f(c.wpm, ".0f"), ", ".join(c.flags)
                  + (f" (missed: {c.missed_words!r})" if "re-take: misread?" in c.flags
                     and c.missed_words else ""))
    if n:
        console.print(t)
    if result.missing:
        console.print(f"missing ({len(result.missing)}): " + ", ".join(result.missing),
                      highlight=False)
    if result.extra:
        console.print("not in the bank: " + ", ".join(result.extra), highlight=False)
