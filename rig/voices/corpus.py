"""Import a public speech corpus as recorded-voice folders, a read-speech bank and profiles.

``rig voices import --layout vctk|l2-arctic|cmu-arctic PATH --out voices/`` writes, for each
selected speaker, ``voices/<layout>_<speaker>/`` with ``<answer_id>.wav`` (mono 16-bit PCM,
at most ``sample_rate_hz``) for every *shared prompt* and ``speaker.json``
(:mod:`rig.voices.speaker`, ``source: corpus``); ``voices/bank/`` (a read-speech answer bank,
``bank.yaml`` ``mode: read_speech``: :mod:`rig.answers`); and ``voices/profiles/`` (one
profile per speaker, the first speaker as ``baseline.yaml``: a recorded voice on the clean
line). The profile and bank folders are replaced on each import.

Layouts (the corpora's own; the user brings the corpus):
    vctk        ``txt/<spk>/<spk>_<nnn>.txt`` +
                ``wav48_silence_trimmed/<spk>/<spk>_<nnn>_mic1.flac`` (VCTK 0.92; ``--mic``)
                or ``wav48/<spk>/<spk>_<nnn>.wav`` (0.80);
                ``speaker-info.txt`` (ACCENTS, REGION).
    l2-arctic   ``<SPK>/wav/arctic_a0001.wav`` + ``<SPK>/transcript/arctic_a0001.txt``; the L1 of
                each speaker from the corpus README's table (:data:`L2_ARCTIC_L1`).
    cmu-arctic  ``cmu_us_<spk>_arctic/wav/arctic_a0001.wav`` + ``.../etc/txt.done.data``.

A shared prompt is a text every selected speaker read: for VCTK, chosen by identical
normalised text (:func:`normalise_prompt`: VCTK numbers a speaker's utterances in its own
order); for the ARCTIC corpora, by utterance id, kept only when the normalised texts agree.
Accent labels are the corpus's own, quoted; nothing is inferred from the voices, and the
corpora's age and gender columns are not read.

Raises :class:`rig.errors.RigError` naming the path expected when a layout does not match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rig.errors import RigError

Layout = Literal["vctk", "l2-arctic", "cmu-arctic"]
LAYOUTS: tuple[str, ...] = ("vctk", "l2-arctic", "cmu-arctic")
CORPUS_NAME = {"vctk": "VCTK", "l2-arctic": "L2-ARCTIC", "cmu-arctic": "CMU ARCTIC"}
LICENCE = {"vctk": "CC BY 4.0", "cmu-arctic": "CMU ARCTIC licence (permissive)",
           "l2-arctic": "non-commercial (CC BY-NC 4.0)"}
#: First language of each L2-ARCTIC speaker, as the corpus's README table states it
#: (Zhao et al., "L2-ARCTIC: A Non-Native English Speech Corpus", Interspeech 2018).
L2_ARCTIC_L1 = {**dict.fromkeys(("ABA", "SKA", "YBAA", "ZHAA"), "Arabic"),
                **dict.fromkeys(("BWC", "LXC", "NCC", "TXHC"), "Mandarin"),
                **dict.fromkeys(("ASI", "RRBI", "SVBI", "TNI"), "Hindi"),
                **dict.fromkeys(("HJK", "HKK", "YDCK", "YKWK"), "Korean"),
                **dict.fromkeys(("EBVS", "ERMS", "MBMPS", "NJS"), "Spanish"),
                **dict.fromkeys(("HQTV", "PNV", "THV", "TLV"), "Vietnamese")}
#: Accents of the original CMU ARCTIC voices as festvox.org/cmu_arctic lists them; other
#: speakers are imported with no label (the corpus's folders carry none).
CMU_ARCTIC_ACCENT = {"bdl": "US English", "slt": "US English", "clb": "US English",
                     "rms": "US English", "jmk": "Canadian English", "awb": "Scottish English",
                     "ksp": "Indian English"}


@dataclass(frozen=True)
class Utterance:
    """One recording of a corpus: its id (``p225_003``, ``arctic_a0001``), transcript, file."""
    utt_id: str
    text: str
    audio_path: Path


@dataclass(frozen=True)
class CorpusSpeaker:
    """A corpus speaker: id, the corpus's accent label ("" when none), where the label comes
    from (``label_source``), and utterance id -> :class:`Utterance`."""
    speaker_id: str
    accent_description: str
    label_source: str
    utterances: dict[str, Utterance] = field(repr=False)
    language_background: str = ""


@dataclass(frozen=True)
class SharedPrompt:
    """A text every selected speaker read: ``answer_id`` (``<layout>_<id>``), the script, and
    speaker id -> that speaker's utterance of it."""
    answer_id: str
    script: str
    by_speaker: dict[str, Utterance]


def normalise_prompt(text: str) -> str:
    """A transcript compared across speakers: lower case, apostrophes kept, other punctuation
    and runs of white space collapsed to one space (``"Please call Stella."`` ->
    ``"please call stella"``)."""
    text = text.lower().replace("\u2019", "'")
    return " ".join(re.sub(r"[^a-z0-9' ]+", " ", text).split())


def _need(ok: bool, path: Path, layout: str, expected: str) -> None:
    if not ok:
        raise RigError(f"{path}: not a {CORPUS_NAME[layout]} corpus layout: expected {expected}")


def _vctk_info(root: Path) -> dict[str, tuple[str, str]]:
    """speaker-info.txt: speaker id -> (ACCENTS, REGION), as written (comments dropped)."""
    info: dict[str, tuple[str, str]] = {}
    path = root / "speaker-info.txt"
    if not path.is_file():
        return info
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        tok = re.sub(r"\(.*?\)", " ", line).split()
        if len(tok) < 4 or tok[0].upper() == "ID":
            continue
        sid = f"p{tok[0]}" if tok[0].isdigit() else tok[0]
        info[sid] = (tok[3], " ".join(tok[4:]))
    return info


def _scan_vctk(root: Path, mic: str) -> list[CorpusSpeaker]:
    txt = root / "txt"
    new, old = root / "wav48_silence_trimmed", root / "wav48"
    expected = (f"{txt}/<speaker>/<speaker>_001.txt and {new}/<speaker>/<speaker>_001_{mic}.flac"
                f" (VCTK 0.92) or {old}/<speaker>/<speaker>_001.wav (VCTK 0.80), and "
                f"{root}/speaker-info.txt")
    _need(txt.is_dir() and (new.is_dir() or old.is_dir()), root, "vctk", expected)
    info = _vctk_info(root)
    out = []
    for spk_dir in sorted(p for p in txt.iterdir() if p.is_dir()):
        sid, utts = spk_dir.name, {}
        for t in sorted(spk_dir.glob(f"{sid}_*.txt")):
            uid = t.stem
            audio = (new / sid / f"{uid}_{mic}.flac") if new.is_dir() else (old / sid /
                                                                            f"{uid}.wav")
            if audio.is_file():
                utts[uid] = Utterance(uid, t.read_text(encoding="utf-8").strip(), audio)
        accent, region = info.get(sid, ("", ""))
        source = (f"VCTK speaker-info.txt: ACCENTS {accent!r}, REGION {region!r}" if sid in info
                  else "not in speaker-info.txt: no accent label")
        if utts:
            out.append(CorpusSpeaker(sid, accent, source, utts))
    _need(bool(out), root, "vctk", expected)
    return out


def _scan_l2_arctic(root: Path) -> list[CorpusSpeaker]:
    expected = f"{root}/<SPEAKER>/wav/arctic_a0001.wav and {root}/<SPEAKER>/transcript/" \
               "arctic_a0001.txt"
    out = []
    for d in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        if not ((d / "wav").is_dir() and (d / "transcript").is_dir()):
            continue
        utts = {t.stem: Utterance(t.stem, t.read_text(encoding="utf-8").strip(),
                                  d / "wav" / f"{t.stem}.wav")
                for t in sorted((d / "transcript").glob("*.txt"))
                if (d / "wav" / f"{t.stem}.wav").is_file()}
        l1 = L2_ARCTIC_L1.get(d.name.upper(), "")
        if utts:
            out.append(CorpusSpeaker(
                d.name, f"L1 {l1}" if l1 else "",
                f"L2-ARCTIC README speaker table: first language {l1!r}" if l1
                else "not in the L2-ARCTIC README's speaker table: no accent label", utts,
                language_background=f"first language {l1} (L2-ARCTIC)" if l1 else ""))
    _need(bool(out), root, "l2-arctic", expected)
    return out


_DONE = re.compile(r'^\(\s*(\S+)\s+"(.*)"\s*\)\s*$')


def _scan_cmu_arctic(root: Path) -> list[CorpusSpeaker]:
    expected = (f"{root}/cmu_us_<speaker>_arctic/wav/arctic_a0001.wav and "
                f"{root}/cmu_us_<speaker>_arctic/etc/txt.done.data")
    _need(root.is_dir(), root, "cmu-arctic", expected)
    dirs = [root] if re.fullmatch(r"cmu_us_\w+_arctic", root.name) else sorted(
        p for p in root.iterdir() if re.fullmatch(r"cmu_us_\w+_arctic", p.name) and p.is_dir())
    out = []
    for d in dirs:
        done = d / "etc" / "txt.done.data"
        if not done.is_file():
            continue
        sid = d.name[len("cmu_us_"):-len("_arctic")]
        utts = {}
        for line in done.read_text(encoding="utf-8", errors="replace").splitlines():
            m = _DONE.match(line.strip())
            if m and (d / "wav" / f"{m.group(1)}.wav").is_file():
                utts[m.group(1)] = Utterance(m.group(1), m.group(2).strip(),
                                             d / "wav" / f"{m.group(1)}.wav")
        accent = CMU_ARCTIC_ACCENT.get(sid, "")
        if utts:
            out.append(CorpusSpeaker(sid, accent, f"festvox.org/cmu_arctic: {accent!r}" if accent
                                     else "CMU ARCTIC gives no accent label for this speaker",
                                     utts))
    _need(bool(out), root, "cmu-arctic", expected)
    return out


def scan_corpus(layout: str, root: str | Path, speakers: tuple[str, ...] = (),
                mic: str = "mic1") -> list[CorpusSpeaker]:
    """The speakers of the corpus at ``root`` (those in ``speakers`` when given, in that
    order; else all, sorted), each with its transcribed recordings.

    Raises:
        RigError: an unknown layout, a folder that does not match the layout (the message
            names the paths expected), or a requested speaker the corpus lacks."""
    root = Path(root)
    if layout not in LAYOUTS:
        raise RigError(f"--layout: unknown layout {layout!r}; use one of {', '.join(LAYOUTS)}")
    scan = {"vctk": lambda: _scan_vctk(root, mic), "l2-arctic": lambda: _scan_l2_arctic(root),
            "cmu-arctic": lambda: _scan_cmu_arctic(root)}[layout]
    if not root.is_dir():
        raise RigError(f"{root}: corpus folder not found")
    found = {s.speaker_id: s for s in scan()}
    if not speakers:
        return list(found.values())
    missing = [s for s in speakers if s not in found]
    if missing:
        raise RigError(f"{root}: --speakers: no transcribed recordings for {missing} in this "
                       f"{CORPUS_NAME[layout]} corpus; it has {sorted(found)[:20]}")
    return [found[s] for s in dict.fromkeys(speakers)]


def shared_prompts(layout: str, speakers: list[CorpusSpeaker],
                   max_prompts: int | None = None) -> list[SharedPrompt]:
    """The prompts every speaker in ``speakers`` read, in the first speaker's utterance order
    (at most ``max_prompts``; None or 0: all). VCTK: matched by :func:`normalise_prompt`
    text; ARCTIC: by utterance id, when the normalised texts agree. The script is the first
    speaker's transcript."""
    first = speakers[0]
    by_text = [{} for _ in speakers]  # per speaker: normalised text -> first utterance
    if layout == "vctk":
        for index, s in zip(by_text, speakers, strict=True):
            for u in s.utterances.values():
                index.setdefault(normalise_prompt(u.text), u)
    prompts, seen = [], set()
    for uid, utt in first.utterances.items():
        key, by = normalise_prompt(utt.text), {}
        if not key or key in seen:
            continue
        seen.add(key)
        for index, s in zip(by_text, speakers, strict=True):
            if layout == "vctk":
                match = index.get(key)
            else:
                u = s.utterances.get(uid)
                match = u if u is not None and normalise_prompt(u.text) == key else None
            if match is None:
                break
            by[s.speaker_id] = match
        else:
            short = uid.split("_", 1)[1] if layout == "vctk" else uid.removeprefix("arctic_")
            prompts.append(SharedPrompt(f"{layout.replace('-', '_')}_{short}", utt.text, by))
        if max_prompts and len(prompts) >= max_prompts:
            break
    return prompts
