"""Drivers of the kill tests other than the campaign's (:mod:`kill_util`): ``rig monitor
ingest`` on fake VAD and ASR, ``rig sweep`` on fake stages, each probe on fake scorers, and
a campaign on the real stages. Each ``*_driver`` returns the code a subprocess runs
(:func:`kill_util.start`)."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

from kill_util import ROOT, TESTS, _key, campaign_spec, n_lines

# --- rig monitor ingest -----------------------------------------------------------------------

def _fixed_turns(audio, params):
    """The synthetic recordings hold speech from LEAD_S for 0.8 s (rig.monitor.simulate)."""
    from rig.monitor.simulate import LEAD_S
    from rig.vad import Turn

    end = LEAD_S + 0.8
    return (Turn(LEAD_S, end, min(audio.duration_s, end + params.silence_timeout_ms / 1000),
                 "silence_timeout"),)


@dataclass(frozen=True)
class SlowAsr:
    """A fake ASR taking ``sleep_s`` per call (so a kill lands mid-ingest)."""
    sleep_s: float = 0.0

    def __call__(self, audio, options):
        from rig.asr.whisper import AsrSegment, Transcript

        if self.sleep_s:
            time.sleep(self.sleep_s)
        seg = AsrSegment(0.0, audio.duration_s, "one two three four five", -0.25, 0.04)
        return Transcript(seg.text, -0.25, 0.04, audio.duration_s, (seg,), "en")


def monitor_fakes(sleep_s: float = 0.0):
    """:class:`rig.monitor.signals.SignalStages` of fixed turns and a fake ASR."""
    from rig.monitor.signals import SignalStages

    return SignalStages(_fixed_turns, SlowAsr(sleep_s))


def write_monitor_calls(folder: Path, n_calls: int = 60, seed: int = 7) -> Path:
    """``n_calls`` generated production calls (WAV + sidecar) in ``folder``."""
    from datetime import date

    from rig.monitor.simulate import WeekDesign, write_week

    write_week(folder, WeekDesign(date(2025, 1, 6), n_calls=n_calls), seed=seed)
    return folder


_INGEST_DRIVER = """
import sys
sys.path.insert(0, {tests!r})
from kill_drivers import monitor_fakes
from rig.monitor.config import MonitorConfig
from rig.monitor.ingest import ingest_folder
from rig.monitor.store import MonitorStore
progress = open({progress!r}, "a")
def on_call(source, outcome):
    progress.write(outcome + " " + source + "\\n")
    progress.flush()
with MonitorStore({db!r}) as store:
    ingest_folder({folder!r}, store, MonitorConfig(), stages=monitor_fakes({sleep_s}),
                  on_call=on_call)
    import os, time
    hold, deadline = {hold!r}, time.monotonic() + 300
    while hold and not os.path.exists(hold) and time.monotonic() < deadline:
        time.sleep(0.05)  # keep the database open until the test says so
"""


def ingest_driver(folder: Path, db: Path, progress: Path, sleep_s: float = 0.05,
                  hold_until: Path | None = None) -> str:
    """Code that ingests ``folder`` into ``db`` with :func:`monitor_fakes`, appending
    ``<outcome> <source>`` to ``progress`` after each call (as ``rig monitor ingest`` does
    with the real stages); with ``hold_until``, it then keeps the database open until that
    file exists (at most 300 s), so a test's second process meets it however loaded the
    machine is."""
    return _INGEST_DRIVER.format(tests=str(TESTS), folder=str(folder), db=str(db),
                                 progress=str(progress), sleep_s=sleep_s,
                                 hold=str(hold_until) if hold_until else None)


#: columns of the monitor's calls table that differ between two ingests of the same calls
MONITOR_RUNTIME = ("ingested_at", "t_decode_s", "t_vad_s", "t_signals_s", "t_asr_s")


def monitor_rows(db: Path) -> dict[str, str]:
    """Each stored call's row (runtime columns aside) as a JSON key, by call id."""
    from rig.monitor.store import COLUMNS, MonitorStore

    cols = [c for c in COLUMNS if c not in MONITOR_RUNTIME]
    with MonitorStore(db, read_only=True) as store:
        df = store.con.execute(f"SELECT {', '.join(cols)} FROM calls").df()
    return {r["call_id"]: _key(r) for r in df.to_dict("records")}


# --- rig sweep --------------------------------------------------------------------------------

def sweep_campaign(out: Path) -> Path:
    """A finished 40-call campaign on fakes to sweep (answer_bank/core's first 4 questions x
    long_pauses and the baseline)."""
    sys.path.insert(0, str(TESTS))
    from executor_fakes import make_stages

    from rig.campaign.runner import run_campaign

    spec = campaign_spec(out, profile_ids=("long_pauses",), question_ids=(
        "q01_conflict", "q02_upset_customer", "q03_hard_bug", "q04_front_desk",
        "q05_caught_error"))
    run_campaign(spec, stages=make_stages(), progress=False)
    return Path(out)


SWEEP_VARY = "endpointing.silence_timeout_ms=500,2000"

_SWEEP_DRIVER = """
import sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from executor_fakes import make_stages
from rig.sweep import parse_vary, run_sweep
run_sweep(Path({campaign!r}), [parse_vary({vary!r})], Path({out!r}), n_boot=200,
          stages_for=lambda p: make_stages(sleep_s={sleep_s}))
"""


def sweep_driver(campaign: Path, out: Path, sleep_s: float = 0.03) -> str:
    """Code that runs (or resumes) the sweep :data:`SWEEP_VARY` of ``campaign`` into ``out``
    on fake stages (``sleep_s`` per call's ASR)."""
    return _SWEEP_DRIVER.format(tests=str(TESTS), campaign=str(campaign), out=str(out),
                                vary=SWEEP_VARY, sleep_s=sleep_s)


def sweep_logged(out: Path) -> int:
    """Lines in every variant's calls.jsonl of the sweep in ``out``."""
    return sum(n_lines(p) for p in Path(out).glob("variants/*/calls.jsonl"))


# --- probes -----------------------------------------------------------------------------------

#: the probes with a resumable run, and the folder's ask logs of each (a kill test checks every
#: one of them)
PROBE_KINDS: dict[str, tuple[str, ...]] = {
    "hedging": ("asks.jsonl",), "accent_markers": ("asks.jsonl",),
    "name_swap": ("asks.jsonl",), "dual_framing": ("asks.jsonl", "judge_asks.jsonl"),
    "invariance": ("asks.jsonl",)}


def _slow(reply, sleep_s: float):
    def slow(user: str, seed: int) -> str:
        if sleep_s:
            time.sleep(sleep_s)
        return reply(user, seed)
    return slow


def run_probe_kind(kind: str, out: Path, sleep_s: float = 0.0) -> None:
    """Run (or resume) a small probe of ``kind`` (:data:`PROBE_KINDS`) into ``out`` with the
    probe tests' fake scorers, ``sleep_s`` per ask (the judge's included):

    * ``hedging``: 4 sessions x 5 questions (and the decision), 3 conditions, 2 variants
      (144 asks);
    * ``accent_markers``: 2 sessions x 4 questions (and the decision), 3 conditions,
      2 variants (60 asks);
    * ``name_swap``: the gendered set, 2 resumes, 2 names per group, 3 conditions,
      3 features (72 asks);
    * ``dual_framing``: 2 topics (2 statements each), 6 iterations, both frames (48 asks),
      with an LLM judge of the replies the rules leave unsettled (judge_asks.jsonl);
    * ``invariance``: name swaps and controls on 3 items, 2 names per group (2 asks a pair).
    """
    sys.path.insert(0, str(TESTS))
    from test_probes_bias_unit import SysFake, biased_reply
    from test_probes_unit import ProbeFake, style_biased_reply

    from rig.probes import (
        FramingSpec,
        InvarianceSpec,
        NameSwapSpec,
        ProbeSpec,
        run_dual_framing,
        run_invariance,
        run_name_swap,
        run_probe,
    )

    out = Path(out)
    if kind == "hedging":
        run_probe(ProbeSpec("hedging", out, n_sessions=4, questions_per_session=5, seed=3),
                  ProbeFake(_slow(style_biased_reply, sleep_s)))
    elif kind == "accent_markers":
        run_probe(ProbeSpec("accent_markers", out, n_sessions=2, questions_per_session=4,
                            seed=5), ProbeFake(_slow(style_biased_reply, sleep_s)))
    elif kind == "name_swap":
        run_name_swap(NameSwapSpec(out, name_sets=("gendered",), kinds=("resume",), n_items=2,
                                   names_per_group=2, seed=2),
                      SysFake(_slow(biased_reply, sleep_s)))
    elif kind == "dual_framing":
        judge = SysFake(_slow(lambda user, seed: '{"stance": "disagree"}', sleep_s))
        run_dual_framing(FramingSpec(out, topics=("remote_office", "age_hiring"),
                                     iterations=6, seed=1),
                         SysFake(_slow(biased_reply, sleep_s)), judge=judge)
    elif kind == "invariance":
        run_invariance(InvarianceSpec(out, n_items=3, names_per_group=2, seed=4),
                       SysFake(_slow(biased_reply, sleep_s)))
    else:
        raise ValueError(f"unknown probe kind {kind!r}; known: {sorted(PROBE_KINDS)}")


_PROBE_DRIVER = """
import sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from kill_drivers import run_probe_kind
run_probe_kind({kind!r}, Path({out!r}), {sleep_s!r})
"""


def probe_driver(out: Path, sleep_s: float = 0.05, kind: str = "hedging") -> str:
    """Code that runs (or resumes) the probe ``kind`` (:func:`run_probe_kind`) into ``out``
    with the probe tests' fake scorers, ``sleep_s`` per ask."""
    if kind not in PROBE_KINDS:
        raise ValueError(f"unknown probe kind {kind!r}; known: {sorted(PROBE_KINDS)}")
    return _PROBE_DRIVER.format(tests=str(TESTS), kind=kind, out=str(out), sleep_s=sleep_s)


def probe_progress(out: Path, kind: str) -> int:
    """Lines in every ask log of the probe ``kind`` in ``out``, plus 1 once its first output
    (scores.parquet, written after the last ask) exists: a kill test's moments, the outputs'
    writing included."""
    out = Path(out)
    return (sum(n_lines(out / log) for log in PROBE_KINDS[kind])
            + (out / "scores.parquet").exists())


# --- the real stages ------------------------------------------------------------------------

_REAL_DRIVER = """
import sys
from pathlib import Path
sys.path.insert(0, {tests!r})
import typer
from kill_drivers import real_spec
from rig.campaign.executors import ExecutorSpec
from rig.cli.campaign import _run
try:
    _run(real_spec(Path({out!r}), Path({pipeline!r})), False, executor=ExecutorSpec("serial"))
except typer.Exit as exc:
    sys.exit(exc.exit_code)
"""


def real_pipeline(folder: Path) -> Path:
    """pipelines/reference.yaml, copied into ``folder`` (the embedded judge has no wall-clock
    budget: a machine's load cannot turn a grading into a timeout)."""
    path = Path(folder) / "reference.yaml"
    path.write_text((ROOT / "pipelines" / "reference.yaml").read_text())
    return path


def real_spec(out: Path, pipeline: Path):
    """4 calls on the real stages: 2 answers (answer_bank/mini) x the baseline and
    long_pauses (profiles/demo)."""
    from rig.campaign.runner import CampaignSpec

    return CampaignSpec(answers_path=ROOT / "answer_bank" / "mini",
                        profiles_path=ROOT / "profiles" / "demo", pipeline_path=pipeline,
                        out_dir=Path(out), repeats=1, answer_ids=("q01_strong", "q03_strong"),
                        profile_ids=("long_pauses",), n_boot=200, campaign_id="real")


def real_driver(out: Path, pipeline: Path) -> str:
    """Code that runs (or resumes) :func:`real_spec` as ``rig campaign run`` does, serial."""
    return _REAL_DRIVER.format(tests=str(TESTS), out=str(out), pipeline=str(pipeline))
