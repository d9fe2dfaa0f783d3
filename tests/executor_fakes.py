"""Fake stages for the executor tests, at module level so that spawned workers and Ray actors
can import them (``Stages`` of bound methods of one :class:`FakeLine` pickle together, and
the instance carries the render's words to the turn detector and ASR of the same call).

A :class:`FakeLine` with ``kill_dir`` SIGKILLs its own process in the middle of a call (in
ASR, after render, channel and VAD) when the file ``kill_dir/<answer_id>`` holds a count
above zero, decrementing it first: ``1`` kills one worker once, ``9`` every worker that tries.
``sleep_s`` makes each call's ASR sleep that long; ``spin_s`` makes it busy a core that long
(CPU time of its process), for timings that load the machine as a real call does.
"""

from __future__ import annotations

import itertools
import os
import signal
import time
from pathlib import Path

import numpy as np

from rig.asr.whisper import Transcript
from rig.audio import Audio
from rig.campaign.row import comparable as comparable_row
from rig.scorer.fake import FakeScorer
from rig.stages import Stages
from rig.synth.base import RenderedAnswer, WordTiming
from rig.vad import TurnResult

SR = 8000
ROOT = Path(__file__).resolve().parents[1]


class FakeLine:
    """Render, turn detection and ASR of a simulated call, without models."""

    def __init__(self, kill_dir: Path | None = None, sleep_s: float = 0.0,
                 spin_s: float = 0.0) -> None:
        self.kill_dir, self.sleep_s, self.spin_s = kill_dir, sleep_s, spin_s
        self.words: tuple = ()
        self.answer_id = ""

    def render(self, script, profile, seed, *, answer_id="", resolve_path=None,
               cache_dir=None):
        """One word every 0.3 s; a profile with pauses gets a gap after word 5."""
        from rig.script import reference_text

        words, t = [], profile.response_delay_s
        for i, w in enumerate(reference_text(script).split()):
            if profile.pauses.count and i == 5:
                t += profile.pauses.pause_s
            words.append(WordTiming(w, t, t + 0.25))
            t += 0.3
        self.words, self.answer_id = tuple(words), answer_id
        audio = Audio(np.zeros(int((t + 2) * SR), np.float32), SR)
        return RenderedAnswer(audio=audio, words=self.words, speech_start_s=words[0].start_s,
                              speech_end_s=t, snr_db_measured=None, engine="fake",
                              voice_id="x", render_key="fake", engine_version="fake 1",
                              rate=1.0, wpm_measured=None, pauses_total_s=0.0)

    def detect_turn(self, audio, params):
        """Closes the turn at the first gap between words longer than the timeout."""
        w = self.words
        gap = params.silence_timeout_ms / 1000
        for a, b in itertools.pairwise(w):
            if b.start_s - a.end_s > gap:
                return TurnResult(w[0].start_s, a.end_s + gap, "silence_timeout", ())
        return TurnResult(w[0].start_s, w[-1].end_s + 0.8, "silence_timeout", ())

    def transcribe(self, audio, options):
        """The words heard up to the turn close; may kill this process (see the module)."""
        self._maybe_die()
        if self.sleep_s:
            time.sleep(self.sleep_s)
        end = time.process_time() + self.spin_s
        while time.process_time() < end:
            pass
        n = int(audio.duration_s / 0.3) + 1
        return Transcript(" ".join(w.word for w in self.words[: max(0, n)]), -0.2, 0.01,
                          audio.duration_s)

    def _maybe_die(self) -> None:
        if self.kill_dir is None:
            return
        f = Path(self.kill_dir) / self.answer_id
        try:
            left = int(f.read_text())
        except (FileNotFoundError, ValueError):
            return
        if left > 0:
            f.write_text(str(left - 1))
            os.kill(os.getpid(), signal.SIGKILL)


def word_recall(reference: str, hypothesis: str) -> float:
    """A fake content similarity: the share of the reference's distinct words heard."""
    ref = set(reference.lower().split())
    return len(ref & set(hypothesis.lower().split())) / len(ref)


def same(audio, *_a):
    return audio


def make_stages(kill_dir: Path | None = None, sleep_s: float = 0.0,
                spin_s: float = 0.0) -> Stages:
    line = FakeLine(kill_dir, sleep_s, spin_s)
    return Stages(scorer=FakeScorer(), render=line.render, caller_channel=same,
                  telephony=same, detect_turn=line.detect_turn, transcribe=line.transcribe,
                  content_similarity=word_recall)


def comparable(rows: list[dict]) -> list[dict]:
    """Rows sorted by call id without the columns that differ between runs
    (:data:`rig.campaign.row.RUNTIME_COLUMNS`: timings, ...)."""
    return sorted((comparable_row(r) for r in rows), key=lambda r: r["call_id"])


class CountingScorer(FakeScorer):
    """A :class:`FakeScorer` that counts prompt-prefix cache hits as llama.cpp's does: a
    grading whose rubric head is the previous grading's is a hit, else a miss."""

    def __init__(self) -> None:
        super().__init__()
        self._last_head: str | None = None
        self._hits = self._misses = 0

    def _count(self, head: str) -> None:
        if head == self._last_head:
            self._hits += 1
        else:
            self._misses += 1
        self._last_head = head

    def _complete(self, system, user, grammar, seed, *, head="", deadline=None):
        self._count(head)
        return super()._complete(system, user, grammar, seed, head=head, deadline=deadline)

    def prefix_cache_stats(self) -> dict[str, int]:
        return {"hits": self._hits, "misses": self._misses}


def make_counting_stages(device: str | None = None) -> Stages:
    """:func:`make_stages` with a :class:`CountingScorer`; both engines on ``device`` (None:
    as :func:`make_stages`, whose rows then equal these)."""
    line = FakeLine()
    return Stages(scorer=CountingScorer(), render=line.render, caller_channel=same,
                  telephony=same, detect_turn=line.detect_turn, transcribe=line.transcribe,
                  content_similarity=word_recall, asr_device=device, scorer_device=device)
