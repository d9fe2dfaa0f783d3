"""How intelligibly each Kokoro voice reads English, against hibari heart and espeak-ng en-gb.

    python benchmarks/kokoro_voices.py [--answers q03_weak q06_weak q10_border_lo]
                                       [--voices kokoro:jf_alpha.en-gb ...] [--out kokoro.json]

Each voice renders the bank answers (``answer_bank/core``, the profile's defaults otherwise:
rate 1.0, no pauses, no noise) through the clean line (8 kHz G.711 mu-law, as ``rig profiles
render --line``); Whisper tiny.en and base (int8, beam 1, language en) transcribe it; the WER
is Whisper-normalised and pooled over the answers (errors over reference words); the words
per minute are the renderer's measure (``RenderedAnswer.wpm_measured``), averaged; ``p_en``
and ``p_ja`` are Whisper base's language identification (the first 30 s of each answer's line
audio), averaged: how English the voice sounds to a multilingual model. Renders are
cached in the usual cache, so a second run only transcribes. Results go to ``--out`` (JSON)
and a table on stdout. docs/voices.md ("Kokoro voices") quotes a run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rig.answers import load_bank  # noqa: E402
from rig.asr.wer import wer  # noqa: E402
from rig.asr.whisper import AsrOptions, transcribe  # noqa: E402
from rig.campaign.call import render_call_audio  # noqa: E402
from rig.errors import RigError  # noqa: E402
from rig.models import ensure_model  # noqa: E402
from rig.paths import write_text_atomic  # noqa: E402
from rig.pipeline import Telephony  # noqa: E402
from rig.profiles import Profile, Voice  # noqa: E402
from rig.profiles.settings import KOKORO_VOICE_IDS  # noqa: E402
from rig.script import reference_text  # noqa: E402

ANSWERS = ("q03_weak", "q06_weak", "q10_border_lo")
BASELINES = ("hibari:heart", "espeak-ng:en-gb")
MODELS = ("whisper-tiny.en", "whisper-base")


def language_probs(audio) -> dict[str, float]:
    """Whisper base's language probabilities for ``audio`` (its first 30 s)."""
    from faster_whisper import WhisperModel

    global _LID
    if _LID is None:
        _LID = WhisperModel(str(ensure_model("whisper-base")), device="cpu",
                            compute_type="int8", cpu_threads=2)
    _, _, probs = _LID.detect_language(audio.resample(16000).samples)
    return dict(probs)


_LID = None


def measure(voice: str, answers: list, models: tuple[str, ...]) -> dict:
    engine, _, voice_id = voice.partition(":")
    profile = Profile(profile_id="v", voice=Voice(engine=engine, voice_id=voice_id),
                      accent_label=f"synthetic {voice}")
    errors = {m: 0 for m in models}
    words, wpm, audio_s, per_answer, p_en, p_ja = 0, [], 0.0, {}, [], []
    t0 = time.perf_counter()
    for a in answers:
        made = render_call_audio(a, profile, 0, telephony=Telephony())
        ref = reference_text(a.script)
        wpm.append(made.rendered.wpm_measured)
        audio_s += made.audio.duration_s
        probs = language_probs(made.audio)
        p_en.append(probs.get("en", 0.0))
        p_ja.append(probs.get("ja", 0.0))
        per_answer[a.answer_id] = {}
        for m in models:
            hyp = transcribe(made.audio, AsrOptions(model=m)).text
            r = wer(ref, hyp)
            errors[m] += r.substitutions + r.deletions + r.insertions
            per_answer[a.answer_id][m] = {"wer": r.wer, "hypothesis": hyp}
        words += r.reference_words
    return {"voice": voice, "reference_words": words, "audio_s": round(audio_s, 1),
            "wpm_mean": round(statistics.fmean(wpm), 1),
            "wer": {m: round(errors[m] / words, 3) for m in models},
            "p_en": round(statistics.fmean(p_en), 3), "p_ja": round(statistics.fmean(p_ja), 3),
            "wall_s": round(time.perf_counter() - t0, 1), "answers": per_answer}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--answers", nargs="+", default=list(ANSWERS))
    ap.add_argument("--voices", nargs="+",
                    default=[*BASELINES, *(f"kokoro:{v}" for v in KOKORO_VOICE_IDS)])
    ap.add_argument("--out", type=Path, default=Path("reports/kokoro_voices.json"))
    args = ap.parse_args()
    bank = {a.answer_id: a for _, a in load_bank(REPO / "answer_bank" / "core").answers()}
    answers = [bank[i] for i in args.answers]
    rows = []
    print(f"{'voice':32s} {'wpm':>5s} " + " ".join(f"{m:>16s}" for m in MODELS)
          + f" {'p_en':>6s} {'p_ja':>6s}")
    for v in args.voices:
        try:
            row = measure(v, answers, MODELS)
        except RigError as exc:
            print(f"{v:32s} skipped: {exc}")
            continue
        rows.append(row)
        print(f"{v:32s} {row['wpm_mean']:5.0f} "
              + " ".join(f"{row['wer'][m]:16.3f}" for m in MODELS)
              + f" {row['p_en']:6.3f} {row['p_ja']:6.3f}", flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(args.out, json.dumps({"answers": args.answers, "rows": rows},
                                               indent=1))


if __name__ == "__main__":
    main()
