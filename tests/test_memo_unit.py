"""The process-wide memos (issue 31 item 2): scorers with the same identity grade an equal
prompt once per process (scorers without one keep theirs to themselves), and equal audio is
transcribed once."""

from __future__ import annotations

import pytest

from rig.answers import load_bank
from rig.scorer.fake import FakeScorer
from rig.scorer.llamacpp import LlamaCppScorer

pytestmark = pytest.mark.unit


class _Counted(FakeScorer):
    def __init__(self, ident, calls):
        super().__init__()
        self._ident, self._calls = ident, calls

    def memo_identity(self):
        return self._ident

    def _complete(self, *args, **kwargs):
        self._calls.append(1)
        return super()._complete(*args, **kwargs)


def _question():
    from pathlib import Path

    bank = load_bank(Path(__file__).resolve().parents[1] / "answer_bank" / "mini")
    q, a = bank.answers()[0]
    return q, a.clean_text


def test_equal_identities_share_gradings_and_clear_forgets_them():
    q, text = _question()
    calls: list = []
    a, b = _Counted(("t", "same"), calls), _Counted(("t", "same"), calls)
    first = a.score(q, text, 0)
    again = b.score(q, text + "  ", 3)  # the same stripped transcript
    assert len(calls) == 1 and again.score == first.score
    assert again.seconds == 0.0 and again.seed == 3
    c = _Counted(("t", "other"), calls)
    c.score(q, text, 0)
    assert len(calls) == 2  # another identity grades for itself
    b._memo.clear()
    a.score(q, text, 0)
    assert len(calls) == 3


def test_without_an_identity_each_scorer_keeps_its_own_memo():
    q, text = _question()
    calls: list = []
    a, b = _Counted(None, calls), _Counted(None, calls)
    a.score(q, text, 0)
    a.score(q, text, 0)
    b.score(q, text, 0)
    assert len(calls) == 2


def test_the_embedded_judge_identity_is_its_settings_not_its_threads():
    one = LlamaCppScorer(n_threads=1)
    two = LlamaCppScorer(n_threads=2)
    assert one.memo_identity() == two.memo_identity()
    assert LlamaCppScorer(max_tokens=80).memo_identity() != one.memo_identity()
    assert LlamaCppScorer(with_reason=True).memo_identity() != one.memo_identity()
    assert LlamaCppScorer(n_gpu_layers=-1).memo_identity() != one.memo_identity()


def test_equal_audio_is_transcribed_once_whatever_the_threads(monkeypatch):
    import numpy as np

    import rig.asr.whisper as w
    from rig.audio import Audio

    runs: list = []

    def fake(audio16, options):
        runs.append(options)
        return w.Transcript("hello", -0.1, 0.01, audio16.duration_s)

    monkeypatch.setattr(w, "_transcribe", fake)
    w.forget_transcripts()
    tone = Audio(np.sin(np.arange(16000, dtype=np.float32) / 5.0) * 0.1, 16000)
    a = w.transcribe(tone, w.AsrOptions(cpu_threads=1))
    b = w.transcribe(tone, w.AsrOptions(cpu_threads=2))
    assert a == b and len(runs) == 1
    w.transcribe(tone, w.AsrOptions(beam_size=5))  # another setting: decoded again
    quieter = Audio(tone.samples * 0.5, 16000)
    w.transcribe(quieter, w.AsrOptions())
    assert len(runs) == 3
    w.forget_transcripts()
    w.transcribe(tone, w.AsrOptions())
    assert len(runs) == 4


def test_memos_off_runs_every_model_call():
    from rig.stages import memos_off

    q, text = _question()
    calls: list = []
    a = _Counted(("t", "off"), calls)
    a.score(q, text, 0)
    with memos_off():
        a.score(q, text, 0)
        a.score(q, text, 0)
    assert len(calls) == 3
    a.score(q, text, 0)  # the memo from before is still there
    assert len(calls) == 3
