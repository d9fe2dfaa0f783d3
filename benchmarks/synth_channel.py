"""Synthesis and channel throughput per profile, in audio seconds per wall second, and what
each profile's render measured.

    python benchmarks/synth_channel.py [--repeats 3] [--profiles profiles/core] [--builtin]

For each profile of the set (default ``profiles/core``), on one answer script:

* ``synth``: an uncached speech render (plan, TTS, trim, level; for a ``wpm`` pace, every
  try the fitting makes); the engine is loaded and warmed up before timing, its load time is
  printed separately;
* ``cached``: the same render read back from the on-disk cache;
* ``noise``: mixing the profile's noise at its SNR (``-`` when it has none; babble's talker
  tracks are synthesized and cached on the warm-up run, so this is the per-call cost);
* ``channel``: the profile's caller channel + telephony path (8 kHz G.711 mu-law) + back to
  16 kHz (what every call does after synthesis);
* ``total``: synth + noise + channel, the uncached cost of one call's audio.

Then what the render measured against what the profile claims: words per minute (target),
SNR on active speech (target), packets concealed by the channel's network steps (measured on
this call / set), samples clipped. Figures are medians over ``--repeats`` runs. Engines that
are not installed are skipped with the reason. ``--builtin`` uses a fixed list of profiles
instead of a folder (also white/pink/file noise, espeak-ng en-us and piper).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rig.channel import apply_caller_channel_report, telephony_path  # noqa: E402
from rig.errors import EngineUnavailable  # noqa: E402
from rig.profiles import (  # noqa: E402
    Disfluency,
    Noise,
    Pace,
    Pauses,
    Profile,
    Voice,
    load_profiles,
)
from rig.synth import get_engine, render_speech  # noqa: E402
from rig.synth.noise import add_noise  # noqa: E402

SCRIPT = ("In my last role I led a team of five engineers that rebuilt our billing system. "
          "We planned the migration in small steps, tested every step against real invoices, "
          "and shipped two weeks early. [pause 0.6s] The hardest part was keeping finance in the "
          "loop, so I sent a short written update every Friday. If I did it again, I would "
          "involve the support team earlier, because they knew where the old system hurt.")
DISHES = REPO / "tests" / "data" / "noise_dishes_10s.wav"


def builtin_profiles() -> list[Profile]:
    def p(pid: str, **kw) -> Profile:
        return Profile(profile_id=pid, **kw)

    return [
        p("baseline"),
        p("slow", pace=Pace(rate=0.7)),
        p("wpm_130", pace=Pace(wpm=130)),
        p("long_pauses", pauses=Pauses(count=2, pause_s=1.5)),
        p("fillers", disfluency=Disfluency(fillers_per_100_words=6.0)),
        p("white_10db", noise=Noise(kind="white", snr_db=10.0)),
        p("pink_10db", noise=Noise(kind="pink", snr_db=10.0)),
        p("dishes_5db", noise=Noise(kind="file", snr_db=5.0, path=str(DISHES))),
        p("espeak_en_us", voice=Voice(engine="espeak-ng", voice_id="en-us")),
        p("espeak_scotland", voice=Voice(engine="espeak-ng", voice_id="en-gb-scotland")),
        p("piper_joe", voice=Voice(engine="piper", voice_id="joe")),
    ]


def timed(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def claims(prof: Profile, speech, snr, report) -> str:
    parts = []
    if speech.wpm_measured is not None:
        target = f"/{prof.pace.wpm:g}" if prof.pace.wpm is not None else ""
        stretch = f" x{speech.stretch:g}" if speech.stretch != 1.0 else ""
        parts.append(f"{speech.wpm_measured:.0f}{target} wpm (rate {speech.rate:g}{stretch})")
    if snr is not None:
        parts.append(f"SNR {snr:.2f}/{prof.noise.snr_db:g} dB")
    if report.packets:
        parts.append(f"concealed {report.missing_pct:.1f}/{report.expected_missing_pct:.1f}% "
                     f"of {report.packets}")
    if report.clipped_samples:
        parts.append(f"clipped {report.clipped_pct:.2f}%")
    return "; ".join(parts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--profiles", type=Path, default=REPO / "profiles" / "core",
                    help="a profile set folder")
    ap.add_argument("--builtin", action="store_true", help="use the built-in profile list")
    args = ap.parse_args()

    if args.builtin:
        profiles = builtin_profiles()

        def resolver(prof: Profile):
            return None
    else:
        pset = load_profiles(args.profiles)
        profiles = list(pset.profiles)

        def resolver(prof: Profile):
            return lambda rel: pset.resolve_path(prof, rel)

    print(f"script: {len(SCRIPT.split())} words; medians of {args.repeats} runs; "
          "throughput = audio seconds / wall second")
    print(f"{'profile':<21}{'engine':<26}{'audio_s':>8}{'load_s':>7}{'synth':>8}{'cached':>8}"
          f"{'noise':>8}{'channel':>8}{'total':>8}  measured/claimed")
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        for prof in profiles:
            label = f"{prof.voice.engine}:{prof.voice.voice_id}"
            if prof.voice.engine == "recorded":
                print(f"{prof.profile_id:<21}{label:<26}  skipped (recorded voice)")
                continue
            resolve = resolver(prof)
            t0 = time.perf_counter()
            try:
                engine = get_engine(prof.voice.engine, prof.voice.voice_id)
                engine.synthesize("Warm up.", 1.0)
                warm = render_speech(SCRIPT, prof, 0, resolve_path=resolve, use_cache=False)
                add_noise(warm.audio, prof.noise, 0, resolve, cache_dir=cache)  # babble tracks
            except EngineUnavailable as exc:
                print(f"{prof.profile_id:<21}{label:<26}  skipped: {exc}")
                continue
            load_s = time.perf_counter() - t0

            def synth(prof=prof, resolve=resolve):
                return render_speech(SCRIPT, prof, 0, resolve_path=resolve, use_cache=False)

            synth_s, speech = timed(synth, args.repeats)
            render_speech(SCRIPT, prof, 0, resolve_path=resolve, cache_dir=cache)
            cached_s, _ = timed(lambda prof=prof, resolve=resolve: render_speech(
                SCRIPT, prof, 0, resolve_path=resolve, cache_dir=cache), args.repeats)
            noise_s, (noisy, snr) = timed(
                lambda prof=prof, speech=speech, resolve=resolve: add_noise(
                    speech.audio, prof.noise, 0, resolve, cache_dir=cache), args.repeats)
            if prof.noise.kind == "none":
                noise_s = 0.0

            def channel(prof=prof, noisy=noisy):
                out, report = apply_caller_channel_report(noisy, prof.channel, 0)
                telephony_path(out).resample(16000)
                return report

            channel_s, report = timed(channel, args.repeats)
            dur = speech.audio.duration_s

            def rate(s: float, dur: float = dur) -> str:
                return f"{dur / s:8.0f}" if s > 0 else f"{'inf':>8}"

            noise = rate(noise_s) if prof.noise.kind != "none" else f"{'-':>8}"
            print(f"{prof.profile_id:<21}{label:<26}{dur:8.1f}{load_s:7.2f}{rate(synth_s)}"
                  f"{rate(cached_s)}{noise}{rate(channel_s)}"
                  f"{rate(synth_s + noise_s + channel_s)}  {claims(prof, speech, snr, report)}",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
