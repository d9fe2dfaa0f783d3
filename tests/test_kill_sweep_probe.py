"""Kill tests of `rig sweep` and a probe (issue 19, item 1): each SIGKILLed at seeded random
moments and rerun: every (variant, call) in sweep.parquet once, every ask in asks.jsonl once,
the outputs equal to an uninterrupted run's (timings aside), and a summary that is either
absent or whole after every kill. Fake stages and a fake scorer (the logic under test is the
logs and the resume). No assertion on wall time."""

from __future__ import annotations

import json
import random
import signal
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from kill_drivers import SWEEP_VARY, probe_driver, sweep_campaign, sweep_driver, sweep_logged
from kill_util import finish, kill_group, log_ids, n_lines, start, wait_until

from rig.campaign.row import RUNTIME_COLUMNS
from rig.campaign.store import CallLog

pytestmark = pytest.mark.integration


def _kill_and_resume(code: str, logged, moments: list[int], rng: random.Random,
                     check) -> list[int]:
    """Start ``code``, SIGKILL it once ``logged()`` reaches each moment (plus 0-0.1 s),
    ``check()`` after each kill, then run it to the end; the exit codes."""
    codes = []
    for target in moments:
        proc = start(code)
        try:
            if wait_until(lambda t=target: logged() >= t, proc, what=f"{target} lines"):
                time.sleep(rng.uniform(0.0, 0.1))
                proc.send_signal(signal.SIGKILL)
            codes.append(proc.wait(timeout=60))
        finally:
            kill_group(proc)
        check()
    proc = start(code)
    codes.append(finish(proc))
    return codes


def _whole_json_or_none(path: Path) -> None:
    if path.exists():
        json.loads(path.read_text())  # a half-written file raises


def _frame(path: Path, drop: set[str]) -> pd.DataFrame:
    df = pd.read_parquet(path)
    keys = [c for c in ("variant", "call_id", "condition", "variant", "session", "position")
            if c in df.columns]
    return (df.drop(columns=[c for c in df.columns if c in drop])
            .sort_values(list(dict.fromkeys(keys))).reset_index(drop=True))


def _table(out: Path) -> list[dict]:
    """sweep.json's verdict table without its stage times (``*_s_per_call``)."""
    return [{k: v for k, v in r.items() if not k.endswith("_s_per_call")}
            for r in json.loads((out / "sweep.json").read_text())["table"]]


def test_a_sweep_killed_three_times_and_rerun_has_each_call_once(tmp_path):
    camp = sweep_campaign(tmp_path / "camp")
    ref, out = tmp_path / "ref", tmp_path / "s"
    assert finish(start(sweep_driver(camp, ref, sleep_s=0.0))) == 0
    n = len(pd.read_parquet(camp / "calls.parquet"))
    rng = random.Random(19)
    moments = sorted(rng.sample(range(1, 2 * n - 2), 3))

    def check() -> None:
        _whole_json_or_none(out / "sweep.json")
        for log in out.glob("variants/*/calls.jsonl"):
            CallLog(log)  # loads: a torn last line at most, which it sets aside

    codes = _kill_and_resume(sweep_driver(camp, out), lambda: sweep_logged(out), moments,
                             rng, check)
    assert codes[-1] == 0 and codes[:-1].count(-signal.SIGKILL) >= 2, codes
    for log in out.glob("variants/*/calls.jsonl"):
        ids = log_ids(log)
        assert len(ids) == len(set(ids)) == n, log
    got = pd.read_parquet(out / "sweep.parquet")
    assert got.groupby("variant")["call_id"].apply(lambda s: s.is_unique).all()
    assert len(got) == 3 * n, SWEEP_VARY  # the campaign and two variants
    drop = set(RUNTIME_COLUMNS)
    pd.testing.assert_frame_equal(_frame(out / "sweep.parquet", drop),
                                  _frame(ref / "sweep.parquet", drop))
    assert _table(out) == _table(ref)


def test_a_probe_killed_three_times_and_rerun_asks_each_prompt_once(tmp_path):
    ref, out = tmp_path / "ref", tmp_path / "p"
    assert finish(start(probe_driver(ref, sleep_s=0.0))) == 0
    n_asks = len(log_ids(ref / "asks.jsonl"))
    rng = random.Random(19)
    moments = sorted(rng.sample(range(1, n_asks - 2), 3))

    def check() -> None:
        _whole_json_or_none(out / "summary.json")
        _whole_json_or_none(out / "probe.json")
        if (out / "asks.jsonl").exists():
            CallLog(out / "asks.jsonl")

    codes = _kill_and_resume(probe_driver(out), lambda: n_lines(out / "asks.jsonl"),
                             moments, rng, check)
    assert codes[-1] == 0 and codes[:-1].count(-signal.SIGKILL) >= 2, codes
    ids = log_ids(out / "asks.jsonl")
    assert len(ids) == len(set(ids)) == n_asks
    for name in ("scores.parquet", "decisions.parquet"):
        pd.testing.assert_frame_equal(_frame(out / name, {"seconds", "cached"}),
                                      _frame(ref / name, {"seconds", "cached"}))
    assert json.loads((out / "summary.json").read_text()) == json.loads(
        (ref / "summary.json").read_text())


if not sys.platform.startswith("linux"):  # pragma: no cover
    pytestmark = [pytestmark, pytest.mark.skip(reason="needs /proc and SIGKILL")]
