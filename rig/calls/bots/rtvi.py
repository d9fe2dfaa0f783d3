"""A pipecat bot's RTVI data-channel messages, read into a :class:`rig.calls.bots.record.BotRecord`.

pipecat adds an RTVI processor and observer to every pipeline task by default
(``PipelineTask``/``PipelineWorker`` ``enable_rtvi``); over SmallWebRTC its messages
(``{"label": "rtvi-ai", "type": ..., "data": ...}``, pipecat's
``processors/frameworks/rtvi/models.py``) go to the client on the data channel the client
opened. A bot written without rig in mind therefore still tells a WebRTC caller what it said
and what it heard, if the caller opens a data channel and says ``client-ready``
(:func:`client_ready_message`).

:func:`bot_record` reads:

- ``said``: one :class:`~rig.calls.bots.record.BotTurn` per ``bot-started-speaking`` ...
  ``bot-stopped-speaking`` (times: when the messages arrived, seconds on the link's clock),
  its text the bot's TTS text of that turn: ``bot-tts-text`` messages when there are any;
  else the spoken ``bot-output`` segments (``spoken_status`` "completed", or v1 ``spoken``);
  else ``bot-transcription`` (the LLM's sentences). The TTS makes its text before the audio
  plays, so text that arrives between turns joins the next turn (after the last turn: the
  last). Empty when the bot sent none of these.
- ``heard``: the bot's final transcripts of the candidate: ``user-transcription`` with
  ``final`` true, else ``user-input`` of ``input_type`` "transcription".
- ``messages``: every message, in order, each with ``"t_s"`` (its arrival, s) added.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from rig.calls.bots.record import BotRecord, BotTurn

LABEL = "rtvi-ai"
#: The RTVI protocol version the rig's client announces (pipecat 1.14 serves 2.2.0 and 1.x).
CLIENT_VERSION = "2.2.0"
_TEXT_SOURCES = ("bot-tts-text", "bot-output", "bot-transcription")


def client_ready_message() -> dict:
    """The RTVI ``client-ready`` message (a bot may wait for it to start its input audio or
    its conversation: pipecat's ``on_client_ready``)."""
    return {"label": LABEL, "type": "client-ready", "id": uuid.uuid4().hex[:8],
            "data": {"version": CLIENT_VERSION, "about": {"library": "rig"}}}


def _text(msg: dict) -> str | None:
    """The bot text a message carries for ``said`` (None: not a said-text message, or a
    ``bot-output`` segment not yet or never spoken)."""
    data = msg.get("data") or {}
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        return None
    if msg.get("type") == "bot-output":
        if data.get("spoken") is False or data.get("will_be_spoken") is False:
            return None
        if data.get("spoken_status") not in (None, "completed"):
            return None
        progress = data.get("spoken_progress") or {}
        if isinstance(progress, dict) and progress.get("accumulated_text"):
            return str(progress["accumulated_text"])
    return data["text"]


def bot_record(messages: Sequence[tuple[float, dict]]) -> BotRecord:
    """What the bot said and heard, from its RTVI messages ``(t_s, message)`` in arrival
    order (non-RTVI and malformed messages are kept in ``messages`` and otherwise ignored).
    """
    rtvi = [(t, m) for t, m in messages if isinstance(m, dict) and m.get("label") == LABEL]
    kind = next((k for k in _TEXT_SOURCES
                 if any(m.get("type") == k and _text(m) for _, m in rtvi)), None)
    turns: list[list] = []  # [start, end, [texts]]
    speaking = False
    early: list[str] = []
    for t, m in rtvi:
        typ = m.get("type")
        if typ == "bot-started-speaking":
            turns.append([t, None, early])
            early, speaking = [], True
        elif typ == "bot-stopped-speaking" and turns:
            turns[-1][1], speaking = t, False
        elif typ == kind and (text := _text(m)):
            (turns[-1][2] if speaking else early).append(text)
    if early:  # text with no speaking turn around it
        if turns:
            turns[-1][2].extend(early)
        else:
            turns.append([None, None, early])
    said = tuple(BotTurn(s, e, " ".join(" ".join(texts).split())) for s, e, texts in turns
                 if texts)
    finals = [(t, str(m["data"]["text"])) for t, m in rtvi
              if m.get("type") == "user-transcription" and isinstance(m.get("data"), dict)
              and m["data"].get("final") and m["data"].get("text")]
    if not finals:
        finals = [(t, str(m["data"]["text"])) for t, m in rtvi
                  if m.get("type") == "user-input" and isinstance(m.get("data"), dict)
                  and m["data"].get("input_type", "transcription") == "transcription"
                  and m["data"].get("text")]
    kept = tuple({**m, "t_s": t} if isinstance(m, dict) else {"raw": m, "t_s": t}
                 for t, m in messages)
    return BotRecord(said=said, heard=tuple(finals), messages=kept)
