"""rig.runtime and the per-process reuse on the real engines: the kept Silero session finds
the same turns as a fresh one, call after call; device auto resolves to the CPU here and cuda
fails clearly; thread counts do not change a transcript; the judge's prefix cache counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from rig import vad
from rig.answers import load_bank
from rig.asr.whisper import AsrOptions, forget_transcripts, transcribe
from rig.audio import Audio, read_wav
from rig.channel import telephony_path
from rig.errors import EngineUnavailable
from rig.pipeline import PipelineConfig, ScorerSettings
from rig.runtime import Runtime, build_stages, resolve_device
from rig.vad import TurnParams, analyzers, detect_turn, detect_turns

pytestmark = pytest.mark.integration
DATA = Path(__file__).resolve().parent / "data"


def _recordings(rate_hz: int) -> list[Audio]:
    """Real speech: a read passage, and two short prompts with a pause between them (two
    turns), at ``rate_hz`` after the telephony path (8 kHz G.711) or clean (16 kHz)."""
    book = read_wav(DATA / "sense_and_sensibility_01_austen_64kb-0870.wav", 16000)
    a = read_wav(DATA / "cmu_arctic_us_aew_a0003.wav", 16000)
    b = read_wav(DATA / "cmu_arctic_us_axb_a0006.wav", 16000)
    two = Audio.concat([Audio.silence(0.7, 16000), a, Audio.silence(1.5, 16000), b,
                        Audio.silence(1.2, 16000)])
    out = [book, two]
    if rate_hz == 8000:
        return [telephony_path(x, sample_rate_hz=8000, codec="mulaw") for x in out]
    return out


@pytest.mark.parametrize("rate_hz", [8000, 16000])
def test_kept_silero_session_finds_the_turns_a_fresh_one_finds(rate_hz, monkeypatch):
    params = TurnParams(silence_timeout_ms=800)
    short = TurnParams(silence_timeout_ms=300)
    book, two = _recordings(rate_hz)
    # in a row on this thread's kept analyzers: a first close cut mid-recording, whole
    # recordings after it, two endpointing settings interleaved
    order = [(detect_turn, two, params), (detect_turns, book, params),
             (detect_turns, two, short), (detect_turn, book, short),
             (detect_turns, book, params), (detect_turns, two, params)]
    kept = [fn(audio, p) for fn, audio, p in order]
    first = vad.kept_analyzer(rate_hz, params)
    assert vad.kept_analyzer(rate_hz, params) is first  # one session, reused
    with monkeypatch.context() as m:  # a newly built analyzer for every recording
        m.setattr(analyzers, "kept_analyzer", vad.silero_analyzer)
        fresh = [fn(audio, p) for fn, audio, p in order]
    assert kept == fresh
    assert kept[0].closed_by == "silence_timeout" and kept[0].turn_close_s < two.duration_s
    assert len(kept[5]) == 2 and kept[1]
    vad.release_analyzers()


def test_a_reset_analyzer_holds_the_state_of_a_new_one():
    params = TurnParams()
    two = _recordings(8000)[1]
    detect_turn(two, params)  # leaves the kept analyzer mid-recording
    kept = vad.kept_analyzer(8000, params)
    new = vad.silero_analyzer(8000, params)
    skip = ("_model", "_executor", "_volume_tracker")
    assert ({k: v for k, v in vars(kept).items() if k not in skip}
            == {k: v for k, v in vars(new).items() if k not in skip})
    assert vars(kept._volume_tracker) == vars(new._volume_tracker)
    for k in ("_state", "_context", "_last_sr", "_last_batch_size"):
        assert str(getattr(kept._model, k)) == str(getattr(new._model, k))
    vad.release_analyzers()


@pytest.mark.skipif(resolve_device("auto", "asr") == "cuda", reason="a GPU machine")
def test_auto_is_cpu_here_and_cuda_says_how_to_get_a_gpu():
    for engine in ("asr", "scorer"):
        assert resolve_device("auto", engine) == "cpu"
        with pytest.raises(EngineUnavailable, match="device: cuda was requested"):
            resolve_device("cuda", engine)
    st = build_stages(PipelineConfig(name="p", device="auto"), Runtime(1, 1))
    assert (st.asr_device, st.scorer_device) == ("cpu", "cpu")
    with pytest.raises(EngineUnavailable):
        build_stages(PipelineConfig(name="p", device="cuda"), Runtime(1, 1))


def test_asr_thread_count_does_not_change_the_transcript():
    audio = telephony_path(read_wav(DATA / "sense_and_sensibility_01_austen_64kb-0870.wav",
                                    16000), sample_rate_hz=8000, codec="mulaw")
    one = transcribe(audio, AsrOptions(cpu_threads=1))
    forget_transcripts()  # the memo would hand the first transcript back
    two = transcribe(audio, AsrOptions(cpu_threads=2))
    assert one.text and one == two


def test_judge_prefix_cache_hits_within_a_question_and_misses_across(monkeypatch):
    # expected mode generates nothing: the prompt's evaluation is what is measured
    from rig.scorer.llamacpp import forget_snapshots

    monkeypatch.setenv("RIG_JUDGE_KV", "off")  # no rubric from disk (an earlier process's)
    forget_snapshots()  # ... or from this process's memory: a new question is a miss
    pipeline = PipelineConfig(name="p", scorer=ScorerSettings(mode="expected"))
    scorer = build_stages(pipeline, Runtime(1, 2)).scorer
    answers = list(load_bank("answer_bank/mini").answers())
    q1 = [(q, a) for q, a in answers if q.question_id == answers[0][0].question_id][:3]
    q2 = next((q, a) for q, a in answers if q.question_id != q1[0][0].question_id)
    scorer._memo.clear()  # an earlier test may have graded these answers in this process
    before = scorer.prefix_cache_stats()
    for q, a in [*q1, q2]:
        assert scorer.score(q, a.clean_text, 0).parse_status == "ok"
    q, a = q1[0]
    scorer.score(q, a.clean_text, 0)  # memoised: neither a hit nor a miss
    after = scorer.prefix_cache_stats()
    gained = {k: after[k] - before[k] for k in after}
    assert gained["hits"] >= len(q1) - 1 and gained["misses"] >= 1
    assert gained["hits"] + gained["misses"] == len(q1) + 1
