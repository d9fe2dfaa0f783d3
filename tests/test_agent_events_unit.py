"""The caller agent's decisions reach the call's recording log
(rig.calls.run.call_row.write_recording) and the report's drill-down
(rig.drilldown.page.agent_events_html); the replies it can say
(rig.calls.agent.loop.render_replies)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rig.audio import Audio
from rig.calls.agent.loop import AgentResult, AnswerPlay, render_replies
from rig.calls.agent.utterances import REPLY_TEXTS
from rig.calls.run.call_row import write_recording
from rig.drilldown.page import agent_events_html

pytestmark = pytest.mark.unit
SILENCE = Audio(np.zeros(8000, np.float32), 8000)
EVENTS = ((1.2, "heard_greeting", "Hello! <Welcome>."), (4.2, "cue_silence", "3.0 s"),
          (4.2, "reply_scheduled", "greeting at 4.20"), (9.0, "heard_question", "Why?"),
          (9.0, "skipped", "not an answer in the bank: 'Why?'"),
          (60.0, "time_limit", "hanging up at the call's limit of 60 s"))


def result() -> AgentResult:
    play = AnswerPlay("q01", 100.0, 99.5, False, "Tell me about a conflict.", 0.71)
    return AgentResult(90.0, 60.0, (play,), 0, ((9.0, "Why?"),), EVENTS, "caller_time_limit",
                       SILENCE, SILENCE, 0, ((0.5, 1.2),), 0)


def test_the_recording_log_holds_every_event_and_what_each_answer_was_asked(tmp_path):
    wav = write_recording(tmp_path / "rec" / "c1.wav", "c1", result())
    log = json.loads(wav.with_suffix(".json").read_text())
    assert [tuple(e) for e in log["events"]] == [tuple(e) for e in EVENTS]
    assert log["plays"][0]["asked_text"] == "Tell me about a conflict."
    assert log["plays"][0]["match_similarity"] == pytest.approx(0.71)


def test_the_drilldown_lists_the_events_escaped(tmp_path):
    wav = write_recording(tmp_path / "c1.wav", "c1", result())
    html = agent_events_html(wav.with_suffix(".json"))
    assert "Agent events (6)" in html and html.count("<li>") == 6
    assert "&lt;Welcome&gt;" in html and "<Welcome>" not in html
    assert "60.00 s</code> time_limit" in html
    assert agent_events_html(tmp_path / "missing.json") == ""
    (tmp_path / "bad.json").write_text("{not json")
    assert agent_events_html(tmp_path / "bad.json") == ""


def test_replies_that_cannot_be_rendered_are_left_out():
    def synth(text: str) -> Audio:
        if "sorry" in text.lower():
            raise FileNotFoundError("no recording")
        return SILENCE

    got = render_replies(synth)
    assert set(got) == set(REPLY_TEXTS) - {"skip"}
