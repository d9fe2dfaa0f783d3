"""A faster-than-real-time event loop for in-process calls that skips only idle waits.

:class:`IdleSkipLoop` is an asyncio selector loop whose clock (``loop.time()``) jumps ahead
when the loop would otherwise sleep with nothing in flight: no callback ready, no job in an
executor thread (``run_in_executor``, hence ``asyncio.to_thread``: pipecat's Whisper STT and
piper TTS), and no socket registered with the selector besides the loop's own wake-up pipe
(an HTTP request to an LLM server, or any open connection). Then the sleep's timeout is added
to the clock instead of waited. Anything that takes real time (a thread's work, a reply on
a socket, code running on the loop) still takes it, so the order and the loop-clock spacing
of events stay those of a real-time run; only silence is skipped.

Limits (``docs/bots.md``, "Fast mode"): code that reads ``time.time()`` or
``time.monotonic()`` instead of ``loop.time()`` sees the wall clock; a keep-alive connection
stays registered after its request, so once a bot has talked to its LLM server the rest of
the call runs at real time.
"""

from __future__ import annotations

import asyncio
import selectors


class IdleSkipLoop(asyncio.SelectorEventLoop):
    """``asyncio.SelectorEventLoop`` with an idle-skipping clock (module docstring).

    Attributes:
        skipped_s: seconds of waiting skipped so far.
    """

    def __init__(self) -> None:
        super().__init__(selectors.DefaultSelector())
        self.skipped_s = 0.0
        self._jobs = 0
        select = self._selector.select

        def select_skipping(timeout=None):
            if timeout is not None and timeout > 0 and self._idle():
                self.skipped_s += timeout
                return select(0)
            return select(timeout)

        self._selector.select = select_skipping

    def _idle(self) -> bool:
        # only the loop's self-pipe is registered: no socket is waiting for anything
        return self._jobs == 0 and not self._ready and len(self._selector.get_map()) <= 1

    def time(self) -> float:
        return super().time() + self.skipped_s

    def run_in_executor(self, executor, func, *args):
        fut = super().run_in_executor(executor, func, *args)
        self._jobs += 1

        def done(_f) -> None:
            self._jobs -= 1

        fut.add_done_callback(done)
        return fut
