"""Logic of the in-process pipecat adapter: loading a bot factory (``pipecat:PATH.py:FACTORY``,
its errors), the campaign options that select it, and the bot's own view of the graded turn
from its frames (:func:`rig.calls.bots.turn.inproc_result`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.calls.bots.app import factory_kind, load_bot, parse_spec
from rig.calls.bots.record import BotRecord, BotTurn
from rig.calls.run.options import TransportOptions, transport_call_options
from rig.errors import ConfigError

pytestmark = pytest.mark.unit

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "pipecat_interviewer" / "bot.py"


def _bot(tmp_path: Path, text: str, name: str = "bot.py") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("spec", ["bot.py:run_bot", "pipecat:bot.py", "pipecat::run_bot",
                                  "pipecat:bot.py:1bad"])
def test_malformed_spec_names_the_option_and_value(spec):
    with pytest.raises(ConfigError, match=r"pipecat:PATH\.py:FACTORY") as e:
        parse_spec(spec)
    assert "--interviewer" in str(e.value) and repr(spec) in str(e.value)


def test_spec_path_may_hold_colons(tmp_path):
    assert parse_spec("pipecat:C:/bots/bot.py:make") == (Path("C:/bots/bot.py"), "make")


def test_missing_file_is_named(tmp_path):
    missing = tmp_path / "nope.py"
    with pytest.raises(ConfigError, match="no such bot file") as e:
        load_bot(f"pipecat:{missing}:run_bot")
    assert str(missing) in str(e.value)


def test_not_a_python_file(tmp_path):
    p = _bot(tmp_path, "x = 1\n", "bot.txt")
    with pytest.raises(ConfigError, match="must be a Python file"):
        load_bot(f"pipecat:{p}:run_bot")


def test_import_error_names_file_and_exception(tmp_path):
    p = _bot(tmp_path, "import no_such_module_xyz\n")
    with pytest.raises(ConfigError, match="importing the bot failed: ModuleNotFoundError") as e:
        load_bot(f"pipecat:{p}:run_bot")
    assert str(p) in str(e.value)


def test_missing_function_lists_the_functions(tmp_path):
    p = _bot(tmp_path, "async def run_bot(transport, runner_args):\n    pass\n"
                       "def helper():\n    pass\n")
    with pytest.raises(ConfigError, match="no function make_bot") as e:
        load_bot(f"pipecat:{p}:make_bot")
    msg = str(e.value)
    assert str(p) in msg and "make_bot" in msg and "helper, run_bot" in msg


@pytest.mark.parametrize("src", [
    "def run_bot(transport, runner_args):\n    pass\n",           # not async
    "async def run_bot():\n    pass\n",                            # no transport
    "async def run_bot(a, b, c):\n    pass\n",                     # three
    "run_bot = 3\n",                                               # not a function
])
def test_wrong_signature_names_the_factory(tmp_path, src):
    p = _bot(tmp_path, src)
    with pytest.raises(ConfigError) as e:
        load_bot(f"pipecat:{p}:run_bot")
    msg = str(e.value)
    assert str(p) in msg and "run_bot" in msg
    assert "wrong signature" in msg or "not a function" in msg


def test_factory_kinds(tmp_path):
    p = _bot(tmp_path, "async def run_bot(transport, runner_args, extra=1):\n    pass\n"
                       "def create(transport):\n    pass\n"
                       "async def acreate(transport):\n    pass\n")
    assert load_bot(f"pipecat:{p}:run_bot").kind == "runner"
    assert load_bot(f"pipecat:{p}:create").kind == "create"
    assert load_bot(f"pipecat:{p}:acreate").kind == "create"
    assert factory_kind(lambda: None) is None


def test_same_file_name_in_two_folders_does_not_collide(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    pa = _bot(tmp_path / "a", "def create(transport):\n    return 'a'\n")
    pb = _bot(tmp_path / "b", "def create(transport):\n    return 'b'\n")
    assert load_bot(f"pipecat:{pa}:create").factory(None) == "a"
    assert load_bot(f"pipecat:{pb}:create").factory(None) == "b"


def test_example_bot_loads_as_runner():
    pytest.importorskip("pipecat.services.piper.tts", reason="needs pipecat-ai and piper")
    assert load_bot(f"pipecat:{EXAMPLE}:run_bot").kind == "runner"


def test_options_pipecat_needs_interviewer_and_only_pipecat_takes_it(tmp_path):
    with pytest.raises(ConfigError, match="needs --interviewer"):
        transport_call_options(TransportOptions("pipecat"), environ={})
    p = _bot(tmp_path, "def create(transport):\n    pass\n")
    with pytest.raises(ConfigError, match="--interviewer needs --transport pipecat"):
        transport_call_options(TransportOptions("webrtc", interviewer=f"pipecat:{p}:create"),
                               environ={})
    with pytest.raises(ConfigError, match="no function nope"):
        transport_call_options(TransportOptions("pipecat", interviewer=f"pipecat:{p}:nope"),
                               environ={})
    out = transport_call_options(TransportOptions("pipecat", interviewer=f"pipecat:{p}:create"),
                                 environ={})
    assert out == {"interviewer_url": None, "bot": f"pipecat:{p}:create"}


def test_inproc_result_reads_the_bots_turn_from_its_frames():
    frames = pytest.importorskip("pipecat.frames.frames", reason="needs pipecat-ai")
    from rig.calls.bots.turn import inproc_result

    rec = BotRecord(
        said=(BotTurn(1.0, 6.0, "Hello. Tell me about a time ...?"),
              BotTurn(30.0, 33.0, "Okay, I understand. Thank you for your time. Goodbye.")),
        heard=((3.0, "hello"), (18.0, "first half"), (27.0, "second half"), (40.0, "later")),
        frames=((2.5, frames.UserStartedSpeakingFrame()),  # the greeting's echo: before
                (2.9, frames.UserStoppedSpeakingFrame()),
                (7.1, frames.UserStartedSpeakingFrame()),
                (18.0, frames.UserStoppedSpeakingFrame()),  # a pause in the answer
                (19.0, frames.UserStartedSpeakingFrame()),
                (26.5, frames.UserStoppedSpeakingFrame()),  # the turn it replied to ends
                (31.0, frames.UserStartedSpeakingFrame()),  # talk after its reply: lost
                (41.0, frames.EndFrame())))
    t0 = 1000.0
    res = inproc_result(rec, t0, t0 + 7.0, "q01_conflict", "cid")
    assert res["status"] == "ok" and res["transport"] == "pipecat_inproc"
    (q,) = res["questions"]
    assert q["turn_speech_start_epoch_s"] == pytest.approx(t0 + 7.1)
    # the answer's first pause is not the end of its turn: the last user-stopped event before
    # the bot replied is (issue 27: the pause read as the close lost 106 of 124 words)
    assert q["turn_close_epoch_s"] == pytest.approx(t0 + 26.5)
    assert q["turn_closed_by"] == "silence_timeout" and q["heard_speech"] is True
    assert q["prompt_end_epoch_s"] == pytest.approx(t0 + 6.0)
    # what it had heard of the answer when it replied (at 30 s), not the later words
    assert q["transcript"] == "first half second half"
    assert q["score"] is None and q["parse_status"] == "not_scored"


def test_inproc_result_without_user_speech_is_no_speech():
    frames = pytest.importorskip("pipecat.frames.frames", reason="needs pipecat-ai")
    from rig.calls.bots.turn import inproc_result

    rec = BotRecord(said=(BotTurn(0.5, 4.0, "Question?"),), frames=((9.0, frames.EndFrame()),))
    (q,) = inproc_result(rec, 0.0, 5.0, "q", "c")["questions"]
    assert q["turn_closed_by"] == "no_speech" and q["turn_speech_start_epoch_s"] is None
    assert q["turn_close_epoch_s"] == 9.0 and q["transcript"] == ""
    assert q["heard_speech"] is False


def test_idle_skip_loop_skips_only_idle_waits():
    """The fast clock skips a sleep with nothing in flight, and waits for real while a thread
    job runs (loop-clock assertions only)."""
    import asyncio
    import time

    from rig.calls.bots.fastclock import IdleSkipLoop

    async def main():
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        await asyncio.sleep(10.0)
        idle = (loop.time() - t0, loop.skipped_s)
        t1, skipped1 = loop.time(), loop.skipped_s
        done = []
        await asyncio.gather(asyncio.sleep(1.0),
                             asyncio.to_thread(lambda: (time.sleep(0.3), done.append(1))))
        return idle, loop.time() - t1, loop.skipped_s - skipped1, done

    with asyncio.Runner(loop_factory=IdleSkipLoop) as runner:
        (virt, skipped), virt2, skipped2, done = runner.run(main())
    assert virt >= 10.0 and skipped == pytest.approx(10.0, abs=0.05)
    # the thread's 0.3 s were waited, not skipped: at most the remaining 0.7 s was skipped
    assert done == [1] and virt2 >= 1.0 and skipped2 <= 0.7 + 0.05


def test_bot_clock_option_needs_interviewer_and_a_known_value(tmp_path):
    p = _bot(tmp_path, "def create(transport):\n    pass\n")
    with pytest.raises(ConfigError, match="--bot-clock needs --transport pipecat"):
        transport_call_options(TransportOptions("webrtc", bot_clock="fast"), environ={})
    with pytest.raises(ConfigError, match="real or fast"):
        transport_call_options(TransportOptions("pipecat", interviewer=f"pipecat:{p}:create",
                                                bot_clock="turbo"), environ={})
    out = transport_call_options(TransportOptions("pipecat", interviewer=f"pipecat:{p}:create",
                                                  bot_clock="fast"), environ={})
    assert out["bot_clock"] == "fast"


def test_transport_caller_runs_fast_calls_on_the_idle_skip_loop(tmp_path):
    """``bot_clock`` picks each in-process call's event loop; a bad bot fails at
    construction, before any call."""
    import asyncio

    from rig.calls.run.caller import TransportCaller

    bank = Path(__file__).resolve().parent / "data" / "calls_bank"
    p = _bot(tmp_path, "def create(transport):\n    pass\n")

    async def loop_kind():
        return type(asyncio.get_running_loop()).__name__

    for clock, kind in (("fast", "IdleSkipLoop"), ("real", "_UnixSelectorEventLoop")):
        caller = TransportCaller("pipecat", bank, tmp_path, bot=f"pipecat:{p}:create",
                                 bot_clock=clock)
        assert caller._run_loop(loop_kind()) == kind
    with pytest.raises(ConfigError, match="no function nope"):
        TransportCaller("pipecat", bank, tmp_path, bot=f"pipecat:{p}:nope")
