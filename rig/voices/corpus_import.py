"""Write an imported corpus (:mod:`rig.voices.corpus`): speaker folders, the read-speech bank
and the profile set, under one ``--out`` folder.

``<out>/<layout>_<speaker>/``  ``<answer_id>.wav`` per shared prompt + ``speaker.json``;
``<out>/bank/``                ``bank.yaml`` (``mode: read_speech``) + ``read.yaml``;
``<out>/profiles/``            ``baseline.yaml`` (the first speaker) + one YAML per other
                               speaker (voice ``recorded``, clean line).

Files are written atomically; the bank's and the profile set's YAML files are replaced on
each import (use another ``--out`` to keep two corpora side by side).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import soundfile as sf
import yaml
from pydantic import ValidationError

from rig.errors import RigError
from rig.paths import atomic_write, make_out_dir, write_text_atomic
from rig.voices.corpus import (
    CORPUS_NAME,
    LICENCE,
    CorpusSpeaker,
    SharedPrompt,
    scan_corpus,
    shared_prompts,
)

BANK_DIRNAME, PROFILES_DIRNAME = "bank", "profiles"


@dataclass(frozen=True)
class ImportResult:
    """What :func:`import_corpus` wrote: the speaker folders (first is the baseline), the bank
    and profile folders, the prompts used and the ones left out (``answer_id: reason``)."""
    layout: str
    speaker_dirs: tuple[Path, ...]
    bank_dir: Path
    profiles_dir: Path
    answer_ids: tuple[str, ...]
    prompts_left_out: tuple[str, ...]


def _write_audio(src: Path, dst: Path, max_rate_hz: int) -> int:
    """``src`` as mono 16-bit PCM WAV at ``dst``, downsampled (soxr) to ``max_rate_hz`` when
    above it; returns the rate written."""
    from rig.audio import read_wav

    audio = read_wav(src)
    if audio.sample_rate_hz > max_rate_hz:
        audio = audio.resample(max_rate_hz)
    atomic_write(dst, lambda tmp: sf.write(str(tmp), audio.samples, audio.sample_rate_hz,
                                           subtype="PCM_16", format="WAV"))
    return audio.sample_rate_hz


def _usable(prompts: list[SharedPrompt]) -> tuple[list[SharedPrompt], list[str]]:
    """The prompts a read-speech bank accepts as scripts, and the others with the reason."""
    from rig.answers import ReadSpeechAnswer

    good, bad = [], []
    for p in prompts:
        try:
            ReadSpeechAnswer(answer_id=p.answer_id, script=p.script)
            good.append(p)
        except ValidationError as exc:
            bad.append(f"{p.answer_id}: {exc.errors()[0]['msg']}")
    return good, bad


def profile_label(layout: str, speaker: CorpusSpeaker) -> str:
    """The profile's ``accent_label``: ``recorded: VCTK speaker p225, accent as labelled by
    the corpus: English`` (a label the profile model refuses, e.g. one naming a demographic
    word, is replaced by a pointer to speaker.json)."""
    from rig.profiles import Profile

    accent = speaker.accent_description or "none given"
    label = (f"recorded: {CORPUS_NAME[layout]} speaker {speaker.speaker_id}, accent as "
             f"labelled by the corpus: {accent}")[:200]
    try:
        Profile(profile_id="x", accent_label=label)
    except ValidationError:
        label = (f"recorded: {CORPUS_NAME[layout]} speaker {speaker.speaker_id} (the corpus's "
                 "label is in speaker.json)")
    return label


def _write_bank(out: Path, layout: str, root: Path, prompts: list[SharedPrompt],
                speakers: list[CorpusSpeaker]) -> Path:
    bank = out / BANK_DIRNAME
    bank.mkdir(parents=True, exist_ok=True)
    meta = {"name": f"{layout}-shared-prompts", "version": 1, "mode": "read_speech",
            "description": f"{len(prompts)} prompts every one of {len(speakers)} "
                           f"{CORPUS_NAME[layout]} speakers read ({root}); licence of the "
                           f"recordings: {LICENCE[layout]}"}
    question = {"question_id": f"{layout.replace('-', '_')}_read", "category": "read_speech",
                "question": "Read the sentence aloud.",
                "answers": [{"answer_id": p.answer_id, "script": p.script} for p in prompts]}
    write_text_atomic(bank / "bank.yaml", yaml.safe_dump(meta, sort_keys=False))
    write_text_atomic(bank / "read.yaml", yaml.safe_dump(question, sort_keys=False,
                                                         allow_unicode=True, width=100))
    return bank


def _write_profiles(out: Path, layout: str, speakers: list[CorpusSpeaker],
                    folders: list[Path]) -> Path:
    prof = out / PROFILES_DIRNAME
    prof.mkdir(parents=True, exist_ok=True)
    for old in prof.glob("*.yaml"):
        old.unlink()
    for i, (s, folder) in enumerate(zip(speakers, folders, strict=True)):
        pid = "baseline" if i == 0 else folder.name.lower()
        doc = {"profile_id": pid,
               "description": f"{CORPUS_NAME[layout]} speaker {s.speaker_id} reading the "
                              f"corpus's shared prompts, clean line"
                              + (" (the baseline: the first speaker imported)" if i == 0
                                 else ""),
               "voice": {"engine": "recorded", "voice_id": f"../{folder.name}"},
               "accent_label": profile_label(layout, s)}
        if i == 0:  # the baseline is complete
            doc.update({"pace": {"rate": 1.0},
                        "pauses": {"count": 0, "pause_s": 0.0, "placement": "sentence_end"},
                        "response_delay_s": 0.5,
                        "disfluency": {"fillers_per_100_words": 0.0,
                                       "filler_words": ["um", "uh"]},
                        "noise": {"kind": "none", "snr_db": None, "path": None},
                        "channel": {"kind": "clean"}, "language": "en"})
        write_text_atomic(prof / f"{pid}.yaml", yaml.safe_dump(doc, sort_keys=False,
                                                               allow_unicode=True))
    return prof


def import_corpus(layout: str, root: str | Path, out: str | Path, *,
                  speakers: tuple[str, ...] = (), max_prompts: int | None = 30,
                  sample_rate_hz: int = 16000, mic: str = "mic1") -> ImportResult:
    """Import the corpus at ``root`` (layout ``layout``) into ``out`` (module docstring):
    the speakers ``speakers`` (default all, sorted), the prompts they all read (at most
    ``max_prompts``; 0 or None: all), audio at most ``sample_rate_hz``.

    Raises:
        RigError: the layout does not match (names the paths expected), a speaker is unknown,
            the speakers share no prompt, an audio file cannot be read, or ``out`` is a file
            or cannot be written."""
    from rig.voices.speaker import SpeakerInfo, write_speaker

    root, out = Path(root), Path(out)
    if sample_rate_hz < 8000:
        raise RigError(f"--sample-rate-hz: at least 8000 (got {sample_rate_hz})")
    found = scan_corpus(layout, root, speakers, mic)
    prompts, left_out = _usable(shared_prompts(layout, found, max_prompts))
    if not prompts:
        raise RigError(f"{root}: the {len(found)} speakers {[s.speaker_id for s in found][:10]}"
                       " share no transcribed prompt (choose speakers with --speakers)")
    make_out_dir(out)
    folders = []
    for s in found:
        folder = make_out_dir(out / f"{layout}_{s.speaker_id}")
        try:
            rates = {_write_audio(p.by_speaker[s.speaker_id].audio_path,
                                  folder / f"{p.answer_id}.wav", sample_rate_hz)
                     for p in prompts}
        except ValueError as exc:  # AudioFileError names the file
            raise RigError(str(exc)) from None
        except OSError as exc:  # a missing file, a full disk
            raise RigError(f"{exc.filename or folder}: {exc.strerror or exc}") from None
        write_speaker(folder, SpeakerInfo(
            speaker_id=folder.name, source="corpus", accent_description=s.accent_description,
            language_background=s.language_background,
            sample_rate_hz=min(rates), corpus=layout, corpus_speaker_id=s.speaker_id,
            licence=LICENCE[layout],
            notes=f"accent label: {s.label_source}; imported by rig voices import from {root}"))
        folders.append(folder)
    bank = _write_bank(out, layout, root, prompts, found)
    profiles = _write_profiles(out, layout, found, folders)
    return ImportResult(layout, tuple(folders), bank, profiles,
                        tuple(p.answer_id for p in prompts), tuple(left_out))
