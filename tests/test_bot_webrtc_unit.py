"""What a pipecat bot's RTVI data-channel messages tell rig (rig.calls.bots.rtvi.bot_record), the
client-ready message, and the WebRTC offer body that serves rig's interviewer and pipecat's
development runner alike."""

from __future__ import annotations

import pytest

from rig.calls.bots.rtvi import LABEL, bot_record, client_ready_message
from rig.calls.transports.webrtc import WebRTCLink

pytestmark = pytest.mark.unit


def m(typ: str, **data) -> dict:
    return {"label": LABEL, "type": typ, "data": data} if data else {"label": LABEL,
                                                                     "type": typ}


def test_said_is_the_tts_text_of_each_speaking_turn():
    msgs = [(0.1, m("bot-ready")),
            (0.5, m("bot-tts-text", text="Hello, this is your screening interview.")),
            (0.7, m("bot-started-speaking")),
            (1.2, m("bot-tts-text", text="Tell me about a time")),
            (1.3, m("bot-tts-text", text=" you disagreed.")),
            (6.0, m("bot-stopped-speaking")),
            (9.0, m("user-transcription", text="I once", final=False, user_id="",
                    timestamp="")),
            (9.5, m("user-transcription", text="I once disagreed.", final=True, user_id="",
                    timestamp="")),
            (9.6, m("user-input", text="I once disagreed.", input_type="transcription")),
            (12.0, m("bot-tts-text", text="Thank you for your time. Goodbye.")),
            (12.2, m("bot-started-speaking")),
            (14.0, m("bot-stopped-speaking")),
            (14.1, {"label": "other", "type": "x"}), (14.2, "not json")]
    rec = bot_record(msgs)
    assert [t.text for t in rec.said] == [
        "Hello, this is your screening interview. Tell me about a time you disagreed.",
        "Thank you for your time. Goodbye."]
    assert (rec.said[0].start_s, rec.said[0].end_s) == (0.7, 6.0)
    assert rec.heard == ((9.5, "I once disagreed."),)  # finals only, not the user-input copy
    assert len(rec.messages) == len(msgs) and rec.messages[-1] == {"raw": "not json",
                                                                   "t_s": 14.2}
    assert rec.messages[0]["t_s"] == 0.1


def test_bot_output_segments_when_there_is_no_tts_text():
    msgs = [(0.5, m("bot-started-speaking")),
            (0.6, m("bot-output", text="Hello", spoken_status="in-progress",
                    will_be_spoken=True)),
            (1.0, m("bot-output", text="Hello there.", spoken_status="completed",
                    will_be_spoken=True)),
            (1.1, m("bot-output", text="(thinking)", will_be_spoken=False)),
            (1.2, m("bot-output", text="How are you?", spoken=True)),  # v1
            (2.0, m("bot-stopped-speaking"))]
    assert [t.text for t in bot_record(msgs).said] == ["Hello there. How are you?"]


def test_llm_transcription_is_the_last_resort_and_user_input_for_heard():
    msgs = [(1.0, m("bot-transcription", text="Welcome.")),
            (2.0, m("user-input", text="Hi there.", input_type="transcription")),
            (3.0, m("user-input", text="typed", input_type="chat"))]
    rec = bot_record(msgs)
    assert [(t.start_s, t.text) for t in rec.said] == [(None, "Welcome.")]
    assert rec.heard == ((2.0, "Hi there."),)


def test_a_bot_that_sends_nothing_leaves_the_record_empty():
    rec = bot_record([])
    assert rec.said == () and rec.heard == () and rec.messages == ()


def test_client_ready_names_a_protocol_version():
    msg = client_ready_message()
    assert msg["label"] == LABEL and msg["type"] == "client-ready"
    assert int(msg["data"]["version"].split(".")[0]) >= 1


def test_the_offer_body_carries_the_parameters_for_both_kinds_of_server():
    from pipecat.transports.smallwebrtc.request_handler import SmallWebRTCRequest

    link = WebRTCLink("http://127.0.0.1:9/api/offer", {"call_id": "c1", "question_ids": "q1"})
    body = link.offer_body("v=0", "offer")
    assert body["call_id"] == "c1" and body["sdp"] == "v=0"  # rig's interviewer reads these
    # pipecat's runner builds its request model from the body; rig's extra fields are dropped
    req = SmallWebRTCRequest(**{k: v for k, v in body.items()
                                if k in SmallWebRTCRequest.__dataclass_fields__})
    assert req.request_data == {"call_id": "c1", "question_ids": "q1"}
