"""The measured segments of a replayed turn: the monitor's signals of its call, and the
longest pause of the answer itself.

Per call (:func:`call_segments`), as ``rig monitor ingest`` measures them
(:func:`rig.monitor.signals.measure_call`, under the monitor config's ``signals`` and binned
by its ``segments`` edges): ``snr_db``, ``channel_class``, ``codec``, ``pace_wpm``,
``asr_logprob`` (the monitor's ASR confidence of the call), ``language``, ``employer``,
``job_family``. Where the monitor's VAD-segmented SNR is not measurable (an answer recorded
without pauses around it) the replay falls back to WADA-SNR (Kim and Stern 2008,
:func:`rig.monitor.wada.wada_snr_db`, clipped to the monitor's [-10, 60] dB); ``snr_method``
says which one gave the value. WADA reads about 3 dB low on real continuous speech, more so
above 10 dB (measured: docs/monitoring.md), so such a call near a bin edge can land in the
lower bin.

Per turn (:func:`longest_pause_s`): the longest silence inside the answer, the gap between
consecutive stretches of speech that pipecat's Silero VAD finds at 8 kHz with a
:data:`PAUSE_TIMER_MS` (300 ms) timer and :data:`PAUSE_START_MS` (100 ms) to confirm speech
(onset of the next stretch minus the last speech of the one before). It is what an
endpointing timer races against, so a shorter timer's truncations show in the segments of
long pauses. Bins :data:`PAUSE_EDGES_S`. Measured on 9 real answers with known pauses of
0.45-1.8 s (tests/replay_data.py: studio speech, two with kitchen noise at 10 dB, half
through G.711): mean absolute error 0.05 s, largest 0.16 s; the VAD's own settings (250 ms,
200 ms, at the file's rate) erred by up to 0.6 s on the noisy ones. A soft, quiet sentence
end can be missed and lengthen the pause (a reviewer's 1.5 s gaps after a LibriVox clip
ending 15 dB under the rest read 2.0 s).

Segments are audio and line conditions and the interview's context, never a person's
demographics.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise

from rig.audio import Audio
from rig.monitor.config import MonitorConfig
from rig.monitor.meta import CallMeta
from rig.monitor.segments import bin_label
from rig.monitor.signals import CallAudio, SignalStages, measure_call, vad_rate
from rig.vad import Turn, TurnParams

#: The timer that splits an answer into its stretches of speech for the pause measure (ms).
PAUSE_TIMER_MS = 300
#: The speech the VAD needs before it confirms a stretch, for the pause measure (ms).
PAUSE_START_MS = 100
#: Bins of ``longest_pause_s``: under 0.5 s, [0.5, 1), [1, 2), 2 s and over.
PAUSE_EDGES_S: tuple[float, ...] = (0.5, 1.0, 2.0)
#: The segment dimensions of a replay, in report order (row column -> dimension name).
DIMENSIONS: dict[str, str] = {
    "seg_longest_pause_s": "longest_pause_s", "seg_snr_db": "snr_db",
    "seg_pace_wpm": "pace_wpm", "seg_asr_logprob": "asr_logprob",
    "channel_class": "channel_class", "codec": "codec", "language": "language",
    "employer": "employer", "job_family": "job_family",
}


def call_segments(audio: CallAudio, meta: CallMeta, config: MonitorConfig,
                  stages: SignalStages | None = None) -> dict:
    """The call-level segment columns of a replay row (see the module docstring).

    Raises:
        ValueError: the candidate's channel is empty; RigError: a model is missing.
    """
    # repeat requests are no replay segment: a count of 0 in the metadata spares the monitor's
    # transcription of the interviewer's channel for them (turns are found apart)
    sig = measure_call(audio, meta.model_copy(update={"repeat_requests": 0}), config.signals,
                       stages)
    snr, method = sig.snr_db, ("vad_energy" if sig.snr_db is not None else None)
    if snr is None:
        from rig.monitor.snr import SNR_RANGE_DB
        from rig.monitor.wada import wada_snr_db

        cand = audio.candidate.resample(vad_rate(audio.candidate.sample_rate_hz))
        snr, _why = wada_snr_db(cand)
        if snr is not None:  # the monitor's range
            snr = min(SNR_RANGE_DB[1], max(SNR_RANGE_DB[0], snr))
        method = "wada" if snr is not None else "none"
    seg = config.segments
    return {
        "employer": meta.employer, "job_family": meta.job_family, "language": sig.language,
        "channel_class": sig.channel_class, "codec": sig.codec or "unknown", "snr_db": snr,
        "snr_method": method, "asr_logprob_call": sig.asr_avg_logprob,
        "pace_wpm": sig.pace_wpm,
        "seg_snr_db": bin_label(snr, seg.snr_db.edges, "dB"),
        "seg_asr_logprob": bin_label(sig.asr_avg_logprob, seg.asr_logprob.edges),
        "seg_pace_wpm": bin_label(sig.pace_wpm, seg.pace_wpm.edges, "wpm"),
    }


def longest_pause_s(clip: Audio,
                    detect_turns: Callable[[Audio, TurnParams], tuple[Turn, ...]]) -> float | None:
    """The longest silence between stretches of speech in ``clip`` (seconds; 0.0 for one
    stretch; None when no speech is found). ``clip``: float32 mono, any rate (run at 8 kHz:
    the module docstring has the settings and the measured accuracy)."""
    audio = clip.resample(8000)
    turns = detect_turns(audio, TurnParams(silence_timeout_ms=PAUSE_TIMER_MS,
                                           start_ms=PAUSE_START_MS))
    if not turns:
        return None
    return max([0.0, *(max(0.0, b.start_s - a.speech_end_s) for a, b in pairwise(turns))])


def pause_segment(pause_s: float | None) -> str:
    """The bin of a longest pause (:data:`PAUSE_EDGES_S`)."""
    return bin_label(pause_s, PAUSE_EDGES_S, "s")
