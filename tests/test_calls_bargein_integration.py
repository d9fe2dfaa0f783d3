"""Barge-in on a real call: a profile with ``interruption.barge_in_offset_s`` makes the caller
agent start its answer before the interviewer's question has ended (the offline path can only
record the setting). Over the Twilio websocket on loopback, every stage real; the interviewer's
turn starts during its own question and it still hears the whole answer. About 30 s."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from rig.calls.run.caller import TransportCaller
from rig.campaign.runner import CampaignSpec, run_campaign

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "tests" / "data" / "calls_bank"


def test_the_agent_barges_in_and_the_interviewer_hears_the_whole_answer(tmp_path):
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    base = yaml.safe_load((ROOT / "profiles" / "demo" / "baseline.yaml").read_text())
    base["interruption"] = {"barge_in_offset_s": 1.5}
    (profiles / "baseline.yaml").write_text(yaml.safe_dump(base))
    out = tmp_path / "c"
    spec = CampaignSpec(answers_path=BANK, profiles_path=profiles,
                        pipeline_path=ROOT / "pipelines" / "reference.yaml", out_dir=out,
                        answer_ids=("qr_strong",), n_boot=200, transport="twilio")
    with TransportCaller("twilio", BANK, out) as caller:
        run_campaign(spec, progress=False, call_fn=caller)
    r = pd.read_parquet(out / "calls.parquet").iloc[0]
    assert r["status"] == "ok", r["error"]
    assert r["barge_in_offset_s"] == 1.5
    # the answer's first frame went out before the question's audio ended
    print(f"barge-in: answer started {-r['response_delay_measured_s']:.2f} s before the end "
          f"of the question; wer {r['wer']:.3f}")
    assert r["response_delay_measured_s"] < 0
    assert r["wer"] <= 0.1 and not r["truncated"]
    assert r["transport_hung_up_by"] in ("caller", "interviewer")
