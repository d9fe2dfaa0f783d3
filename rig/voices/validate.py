"""Validate every shipped voice on the clean line: how intelligible is the synthesiser itself?

Each voice speaks the bank's scripts under the baseline profile (its pace, delay and quiet
room, only the voice swapped), through the baseline's line (8 kHz G.711 mu-law, the
reference pipeline's telephony) into the pipeline's ASR on the whole clip (no VAD, no turn
close: nothing is cut). Per voice: WER on normalised text (:mod:`rig.asr.wer`) pooled (errors over
reference words) and as a mean per answer with a Student t 95% CI, content similarity
(:mod:`rig.asr.similarity`, when the ``similarity`` extra is installed), and words per minute
measured on the output.

The rule (``synthesiser_limited``): a voice is synthesiser-limited when its mean per-answer
WER exceeds the baseline voice's by more than ``LIMITED_WER_MARGIN`` (0.10) *and* the 95%
paired t interval of the per-answer differences (voice - baseline voice, same answers) lies
wholly above 0. Then a profile using that voice measures mostly the synthesiser, not the
condition it names.

Which voices: every voice a profile of the given sets names, plus each engine's own list
(:func:`engine_voices`: hibari's shipped voices, piper's voice packages, espeak-ng's native
English variants from ``espeak-ng --voices=en``, the MBROLA English databases installed, the
Kokoro voice ids when that engine is present, and an engine module's ``shipped_voices()``
when it has one); voices not installed here are listed
with the reason. A voice is keyed ``engine:voice_id`` (:func:`voice_key`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from rig.errors import EngineUnavailable, RigError

#: A voice's mean WER must exceed the baseline voice's by more than this to be flagged.
LIMITED_WER_MARGIN = 0.10
SCHEMA_VERSION = 1
BASELINE_VOICE = "hibari:heart"
_MBROLA_ENGLISH = ("en1", "us1", "us2", "us3")


def voice_key(engine: str, voice_id: str, options: dict | None = None) -> str:
    """``engine:voice_id``, plus ``?k=v&...`` (sorted) when the voice takes options."""
    opts = "&".join(f"{k}={v}" for k, v in sorted((options or {}).items()))
    return f"{engine}:{voice_id}" + (f"?{opts}" if opts else "")


@dataclass
class VoiceResult:
    """One voice's validation. WERs are fractions (0.1 = 10%); ``*_ci95`` are [low, high] or
    None (fewer than 2 answers, or no spread); ``wpm_mean`` in words per minute."""
    key: str
    engine: str
    voice_id: str
    label: str
    profiles: list[str] = field(default_factory=list)
    available: bool = True
    reason: str | None = None
    n_answers: int = 0
    wer_pooled: float | None = None
    wer_mean: float | None = None
    wer_ci95: list[float] | None = None
    wer_delta_vs_baseline: float | None = None
    wer_delta_ci95: list[float] | None = None
    content_similarity_mean: float | None = None
    wpm_mean: float | None = None
    synthesiser_limited: bool | None = None
    answers: list[dict] = field(default_factory=list)


def _espeak_variants() -> dict[str, str]:
    """espeak-ng's native English variants: language code -> its voice name, spaced."""
    try:
        out = subprocess.run(["espeak-ng", "--voices=en"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    rows = [line.split() for line in out.splitlines()[1:]]
    return {r[1]: r[3].replace("_", " ") for r in rows
            if len(r) >= 5 and r[4].startswith("gmw/")}


def default_label(engine: str, voice_id: str) -> str:
    """A voice's label when no profile names it: what it is, and that it is synthetic."""
    if engine == "espeak-ng" and voice_id in (names := _espeak_variants()):
        return f"{names[voice_id]} (synthetic, espeak-ng formant '{voice_id}')"
    return {"hibari:heart": "US English (synthetic, hibari 'heart')",
            "piper:joe": "US English (synthetic, piper 'joe')"}.get(
        f"{engine}:{voice_id}", f"synthetic, {engine} '{voice_id}'")


def engine_voices() -> list[tuple[str, str]]:
    """(engine, voice_id) of every voice the engines offer here (see the module docstring)."""
    from rig.synth.engines import ENGINES
    from rig.synth.espeak import mbrola_database

    found: list[tuple[str, str]] = [("hibari", "heart"), ("piper", "joe")]
    found += [("espeak-ng", v) for v in _espeak_variants()]
    found += [("mbrola", v) for v in _MBROLA_ENGLISH if mbrola_database(v) is not None]
    from rig.profiles import settings

    if "kokoro" in ENGINES:  # the Kokoro voices rig knows, <voice>.<phonemes>
        found += [("kokoro", v) for v in getattr(settings, "KOKORO_VOICE_IDS", ())]
    for engine in ENGINES:
        try:
            mod = __import__(f"rig.synth.{engine.replace('-', '_')}", fromlist=["_"])
        except ImportError:
            continue
        lister = getattr(mod, "shipped_voices", None)
        if callable(lister):
            found += [(engine, v) for v in lister()]
    return list(dict.fromkeys(found))


def shipped_voices(profile_dirs: Sequence[Path]) -> list[VoiceResult]:
    """The voices to validate: those the profile sets name (with their labels and profile
    ids), then :func:`engine_voices`; the baseline voice first."""
    from rig.profiles import load_profiles

    out: dict[str, VoiceResult] = {}
    for folder in profile_dirs:
        s = load_profiles(folder)
        for p in s.profiles:
            if p.voice.engine == "recorded":
                continue
            k = voice_key(p.voice.engine, p.voice.voice_id)
            v = out.setdefault(k, VoiceResult(k, p.voice.engine, p.voice.voice_id,
                                              p.accent_label))
            v.profiles.append(f"{Path(folder).name}/{p.profile_id}")
    for engine, voice_id in engine_voices():
        k = voice_key(engine, voice_id)
        out.setdefault(k, VoiceResult(k, engine, voice_id, default_label(engine, voice_id)))
    return sorted(out.values(), key=lambda v: v.key != BASELINE_VOICE)


def _ci(values: np.ndarray) -> list[float] | None:
    from rig.stats.common import NotComputable
    from rig.stats.intervals import t_interval

    if len(values) < 2:  # one answer: no interval, whatever its value
        return None
    try:
        iv = t_interval(values)
    except NotComputable:  # no spread
        return [float(values[0])] * 2 if len(values) and np.ptp(values) == 0 else None
    return [float(iv[0]), float(iv[1])]


def flag_limited(voice_wers: Sequence[float], baseline_wers: Sequence[float],
                 margin: float = LIMITED_WER_MARGIN
                 ) -> tuple[bool | None, float, list[float] | None]:
    """The ``synthesiser_limited`` rule on per-answer WERs of the same answers in the same
    order: (flag, mean difference, its 95% paired t CI or None). A difference without spread
    (every answer shifted alike) has the CI [d, d]. With one answer there is no interval and
    the flag is None (not decided).

    Raises:
        ValueError: the two sequences differ in length or are empty.
    """
    a, b = np.asarray(voice_wers, float), np.asarray(baseline_wers, float)
    if len(a) != len(b) or len(a) == 0:
        raise ValueError(f"flag_limited: {len(a)} voice WERs against {len(b)} baseline WERs")
    d = a - b
    ci = _ci(d)
    mean = float(d.mean())
    if ci is None:
        return None, mean, None
    return bool(mean > margin and ci[0] > 0), mean, ci


def measure_voice(v: VoiceResult, answers, baseline_profile, asr_options,
                  similarity: Callable | None, progress: Callable[[str], None],
                  language: str = "en") -> None:
    """Render, transmit and transcribe every answer with voice ``v``; fill ``v`` in place
    (``available=False`` with the reason when the engine is not installed). ``language``:
    the answers' language, whose normaliser (and CER where words are not space-separated)
    the error rate uses (:func:`rig.asr.wer.error_rate`)."""
    from rig.asr.wer import error_rate
    from rig.asr.whisper import transcribe
    from rig.campaign.call import render_call_audio
    from rig.pipeline import Telephony
    from rig.profiles import Voice

    profile = baseline_profile.model_copy(
        update={"voice": Voice(engine=v.engine, voice_id=v.voice_id)})
    rows = []
    for a in answers:
        try:
            made = render_call_audio(a, profile, 0, telephony=Telephony())
        except (EngineUnavailable, RigError) as exc:
            v.available, v.reason = False, str(exc)
            return
        ref = made.rendered.reference("clean")
        hyp = transcribe(made.audio, asr_options).text
        w = error_rate(ref, hyp, language)
        rows.append({"answer_id": a.answer_id, "wer": w.wer, "reference_words": w.reference_words,
                     "errors": w.substitutions + w.deletions + w.insertions,
                     "wpm": made.rendered.wpm_measured, "reference": ref, "transcript": hyp})
        progress(f"{v.key} {a.answer_id}: WER {w.wer:.3f}")
    if similarity is not None:
        sims = similarity([r["reference"] for r in rows], [r["transcript"] for r in rows])
        for r, s in zip(rows, sims, strict=True):
            r["content_similarity"] = float(s)
        v.content_similarity_mean = float(np.mean(sims))
    wers = np.array([r["wer"] for r in rows], float)
    v.answers, v.n_answers = rows, len(rows)
    v.wer_pooled = sum(r["errors"] for r in rows) / max(1, sum(r["reference_words"]
                                                               for r in rows))
    v.wer_mean, v.wer_ci95 = float(wers.mean()), _ci(wers)
    wpms = [r["wpm"] for r in rows if r["wpm"] is not None]
    v.wpm_mean = float(np.mean(wpms)) if wpms else None


def _similarity() -> tuple[Callable | None, str | None]:
    try:
        from rig.asr.similarity import _encoder, content_similarities
        _encoder()
    except Exception as exc:  # the extra or its model is missing: not measured
        return None, f"not measured: {exc}"
    return content_similarities, None


def validate_voices(voices: list[VoiceResult], answers, baseline_profile, asr_options, *,
                    use_similarity: bool = True,
                    progress: Callable[[str], None] = lambda s: None,
                    language: str = "en") -> dict:
    """Measure ``voices`` (the baseline voice among them, or first added) and apply the rule.

    ``language``: the answers' language. In English the baseline voice is
    :data:`BASELINE_VOICE`; in any other language it is the baseline profile's voice (a
    voice that speaks the language), and content similarity is not measured (the shipped
    sentence-embedding model is English only).

    Returns:
        the ``voices.json`` document (``schema_version``, ``generated``, ``machine``,
        ``answer_ids``, ``asr``, ``line``, ``rule``, ``baseline_voice``, ``voices``: one
        :class:`VoiceResult` each).
    """
    sim, sim_note = _similarity() if use_similarity else (None, "not measured: not asked")
    if language != "en":
        sim, sim_note = None, (f"not measured: the sentence-embedding model is English only "
                               f"(answers in {language!r})")
    bv = baseline_profile.voice
    base_key, base_engine, base_id = ((BASELINE_VOICE, "hibari", "heart") if language == "en"
                                      else (voice_key(bv.engine, bv.voice_id), bv.engine,
                                            bv.voice_id))
    if not any(v.key == base_key for v in voices):
        voices = [VoiceResult(base_key, base_engine, base_id, "baseline voice"), *voices]
    for v in voices:
        measure_voice(v, answers, baseline_profile, asr_options, sim, progress, language)
    base = next(v for v in voices if v.key == base_key)
    if not base.available:
        raise RigError(f"the baseline voice {base_key} is not installed: {base.reason}")
    base_wers = [r["wer"] for r in base.answers]
    for v in voices:
        if v.available:
            v.synthesiser_limited, v.wer_delta_vs_baseline, v.wer_delta_ci95 = flag_limited(
                [r["wer"] for r in v.answers], base_wers)
    return {"schema_version": SCHEMA_VERSION,
            "generated": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} "
                       f"{platform.release()}, Python {platform.python_version()}",
            "answer_ids": [a.answer_id for a in answers],
            "asr": {"model": asr_options.model, "beam_size": asr_options.beam_size,
                    "compute_type": asr_options.compute_type},
            "line": "baseline profile, 8 kHz G.711 mu-law", "baseline_voice": base_key,
            "language": language, "asr_language": asr_options.language or "auto",
            "rule": f"synthesiser_limited: mean per-answer WER - baseline voice's > "
                    f"{LIMITED_WER_MARGIN:g} and the 95% paired t CI of the differences > 0",
            "content_similarity_note": sim_note, "voices": [asdict(v) for v in voices]}


def _profiles(names: list[str], most: int = 3) -> str:
    if not names:
        return "-"
    more = f" +{len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def _f(x: float | None, nd: int = 3) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def _flag(limited: bool | None) -> str:
    return {True: "yes", False: "no"}.get(limited, "not decided (one answer: no interval)")


def markdown_table(doc: dict) -> str:
    """The validation as a markdown table, with its date, machine, ASR and rule above it."""
    head = (f"Measured {doc['generated']} on {doc['machine']}; {doc['line']}; ASR "
            f"{doc['asr']['model']} (beam {doc['asr']['beam_size']}); "
            f"{doc['voices'][0]['n_answers']} answer"
            f"{'' if doc['voices'][0]['n_answers'] == 1 else 's'} per voice "
            f"({', '.join(doc.get('answer_ids', []))}). {doc['rule']}.\n\n"
            "| voice | label | profiles | WER pooled | WER mean (95% CI) | content similarity "
            "| wpm | synthesiser-limited |\n|---|---|---|---|---|---|---|---|\n")
    lines = []
    for v in doc["voices"]:
        if not v["available"]:
            lines.append(f"| `{v['key']}` | {v['label']} | {_profiles(v['profiles'])} "
                         f"| not installed here | | | | |")
            continue
        ci = v["wer_ci95"]
        ci_s = f" ({_f(ci[0])}-{_f(ci[1])})" if ci else ""
        sim = (_f(v["content_similarity_mean"]) if v["content_similarity_mean"] is not None
               else "not measured")
        lines.append(f"| `{v['key']}` | {v['label']} | {_profiles(v['profiles'])} | "
                     f"{_f(v['wer_pooled'])} | {_f(v['wer_mean'])}{ci_s} | {sim} | "
                     f"{_f(v['wpm_mean'], 0)} | {_flag(v['synthesiser_limited'])} |")
    return head + "\n".join(lines) + "\n"


def write_outputs(doc: dict, out_dir: Path) -> tuple[Path, Path]:
    """Write ``voices.json`` and ``voices.md`` atomically under ``out_dir``."""
    from rig.paths import write_text_atomic

    out_dir.mkdir(parents=True, exist_ok=True)
    j, m = out_dir / "voices.json", out_dir / "voices.md"
    write_text_atomic(j, json.dumps(doc, indent=1, allow_nan=False) + "\n")
    write_text_atomic(m, markdown_table(doc))
    return j, m
