"""The campaign's record of what rig could check of the interviewer bot
(``OUT/bot_compat.json``), and the warnings it says once (issue 27, item 6).

- In-process (``--interviewer pipecat:FILE:FACTORY``): the load-time notes
  (:attr:`rig.calls.bots.app.BotApp.notes`: the pipecat version, settings the installed
  pipecat drops, what in-process replaces) are said before the first call (warnings) and
  written; each call's pipeline check (:mod:`rig.calls.bots.pipeline_check`, at its
  StartFrame) is kept per attempt, and the first one whose verdict is not ``hears`` is said
  at that call (a bot with no VAD "will not hear the answer").
- An external interviewer over the network (``--interviewer-url``): rig cannot inspect the
  bot; said once.

``bot_compat.json``: ``{"bot", "transport", "notes": [{kind, severity, text}], "pipeline":
{hearing, message, processors, vad, ...} of the first call checked (null before one)}``,
rewritten atomically when it changes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

from rig.calls.bots.compat import CompatNote

FILE_NAME = "bot_compat.json"


def network_note(transport: str) -> CompatNote:
    """What rig can say of a bot it reaches over ``transport``."""
    return CompatNote("not_inspectable", "warning", (
        f"the interviewer is reached over {transport}: rig cannot inspect the bot (its pipecat "
        "version, whether a VAD or turn detector is configured); whether it heard each answer "
        "comes from its RTVI user-speech messages when it sends them, else it is unknown"))


class CompatLog:
    """Says and records what rig could check of the bot (module docstring).

    Args:
        out_dir: the campaign's folder (``bot_compat.json`` goes there).
        say: where warnings go (a line each).
        bot: the bot's spec or URL, for the record.
        transport: the call transport.
    """

    def __init__(self, out_dir: Path, say: Callable[[str], None], bot: str | None,
                 transport: str) -> None:
        self.path = Path(out_dir) / FILE_NAME
        self._say, self._bot, self._transport = say, bot, transport
        self._notes: list[CompatNote] = []
        self._pipeline: dict | None = None
        self._checks: dict[str, object] = {}  # attempt id -> PipelineCheck
        self._lock = threading.Lock()
        self._warned_pipeline = False

    def loaded(self, notes: tuple[CompatNote, ...] | list[CompatNote]) -> None:
        """Record ``notes`` and say the warnings among them, now (before any call)."""
        with self._lock:
            self._notes.extend(notes)
            self._write()
        for n in notes:
            if n.severity == "warning":
                self._say(f"warning: interviewer bot: {n.text}")

    def pipeline(self, attempt_id: str, check) -> None:
        """One call's :class:`rig.calls.bots.pipeline_check.PipelineCheck` (None: not
        checked): kept for :meth:`reason`; the first is recorded, and the first that does not
        hear is said."""
        if check is None:
            return
        say = None
        with self._lock:
            self._checks[attempt_id] = check
            if self._pipeline is None:
                self._pipeline = check.to_dict()
                self._write()
            if check.hearing != "hears" and not self._warned_pipeline:
                self._warned_pipeline = True
                say = f"warning: interviewer bot's pipeline: {check.message}"
        if say:
            self._say(say)

    def reason(self, attempt_id: str | None) -> str | None:
        """The pipeline check's message for a call whose bot did not hear, when its verdict
        was not ``hears`` (None otherwise)."""
        check = self._checks.get(attempt_id or "")
        return None if check is None or check.hearing == "hears" else check.message

    def _write(self) -> None:
        from rig.paths import write_text_atomic

        if not self.path.parent.is_dir():
            return
        write_text_atomic(self.path, json.dumps({
            "bot": self._bot, "transport": self._transport,
            "notes": [n.to_dict() for n in self._notes], "pipeline": self._pipeline},
            indent=1))
