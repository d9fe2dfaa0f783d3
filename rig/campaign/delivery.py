"""Delivery variation: what a real caller changes between two deliveries of the same answer.

With the reference pipeline every stage is deterministic (Whisper at temperature 0, the
embedded judge in ``expected`` mode, the simulated line), so two repeats of a call through
an unseeded profile are bit-identical and the noise floor cannot be measured from them
(:mod:`rig.campaign.repeats`, :mod:`rig.stats.noise`). What does vary between real repeats of
a call is the input: nobody says an answer at the same tempo twice (speech tempo varies
within a speaker from utterance to utterance: Quené 2008, "Multilevel modeling of
between-speaker and within-speaker variation in spontaneous speech tempo", JASA 123(2)),
and the line's noise, packet loss and jitter differ on every call (those are the profile's
own seeded settings).

``--vary-delivery PCT`` makes the first of these real: in every call of the campaign, the
speech rate is the profile's times ``1 + PCT/100 * z`` with ``z`` a standard normal draw,
clipped to +/-2.5, from ``numpy.random.default_rng([repeat, 20, answer key])`` (stream 20 of
the call's seed). The draw depends on the answer and the repeat only, so within one repeat
every profile speaks the answer at the same tempo (the pairs stay paired) and the repeats of
one answer differ as two deliveries do. Repeat 0 is drawn too (it is not a privileged
"nominal" delivery), so the spread between repeats is the whole spread. The profile's
``pace.wpm`` target (or ``pace.rate``) is scaled, clipped to its allowed range; a recorded
voice is left as recorded. PCT is an assumption the user states (default none; 5 is a
conservative choice, not a measured figure): the floor measured is the floor under that
much variation of the engine's rate.

The rate is the engine's parameter, not the tempo: each call records the words per minute
measured on its render (``pace_wpm_measured``). With hibari 'heart' the tempo moves much
less than the rate (measured 2026-12-03 on two answers of ``answer_bank/mini``, three
repeats each at PCT 5: rates x0.974 to x1.084 gave 212.4 to 215.8 wpm, x0.875 to x0.977
gave 202.8 to 207.4 wpm, i.e. about a fifth of the rate's change), so the tempo SD is then
about PCT/5; the transcripts of one of the two answers still differed between repeats.
"""

from __future__ import annotations

import hashlib

import numpy as np

from rig.profiles import Profile

#: The seed stream of the delivery draw (fillers 1, noise 2, repetitions 4, the line 10).
DELIVERY_STREAM = 20
#: The draw is clipped to this many standard deviations.
CLIP_SD = 2.5
#: Largest allowed ``--vary-delivery``, % (beyond it a "repeat" is another condition).
MAX_PCT = 20.0


def rate_factor(answer_id: str, repeat: int, sd_pct: float) -> float:
    """The speech-rate multiplier of ``answer_id``'s delivery in ``repeat`` (module docstring);
    1.0 when ``sd_pct`` is 0. Raises ValueError when ``sd_pct`` is outside [0, MAX_PCT]."""
    if not 0.0 <= sd_pct <= MAX_PCT:
        raise ValueError(f"--vary-delivery must be within 0 and {MAX_PCT:g} (%), got {sd_pct}")
    if sd_pct == 0:
        return 1.0
    key = int.from_bytes(hashlib.sha256(answer_id.encode()).digest()[:8], "big")
    z = float(np.random.default_rng([repeat, DELIVERY_STREAM, key]).standard_normal())
    return 1.0 + sd_pct / 100.0 * float(np.clip(z, -CLIP_SD, CLIP_SD))


def varied_profile(profile: Profile, answer_id: str, repeat: int, sd_pct: float) -> Profile:
    """``profile`` speaking ``answer_id`` in ``repeat`` at its varied rate: ``pace.wpm`` (or
    ``pace.rate``) times :func:`rate_factor`, clipped to the field's range. The profile
    itself when ``sd_pct`` is 0 or the voice is recorded. Its ``content_hash`` differs, so the
    call id does too (a campaign with and without variation never shares a call)."""
    if sd_pct == 0 or profile.voice.engine == "recorded":
        return profile
    f = rate_factor(answer_id, repeat, sd_pct)
    pace = profile.pace
    if pace.wpm is not None:
        new = pace.model_copy(update={"wpm": float(np.clip(pace.wpm * f, 60.0, 320.0))})
    else:
        new = pace.model_copy(update={"rate": float(np.clip((pace.rate or 1.0) * f, 0.5, 2.0))})
    return profile.model_copy(update={"pace": new})
