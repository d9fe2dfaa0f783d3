"""The CLI package: option suggestions only for close matches, a group whose package is
missing says what to install (never vanishes), the transport options checked in the library
(:mod:`rig.calls.run.options`), and ``rig profiles render`` writing what the campaign's own chain
makes (:func:`rig.campaign.call.render_call_audio`)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from typer.testing import CliRunner

from rig.calls.run.options import OptionConflict, TransportOptions, transport_call_options
from rig.cli import app
from rig.cli.common import close_options
from rig.cli.mount import load, missing_package_message
from rig.errors import ConfigError

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"


def _flat(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


@pytest.mark.parametrize("args,unknown,suggested", [
    (["demo", "--bogus"], "--bogus", None),
    (["demo", "--ot"], "--ot", "(Possible options: --out)"),
    (["--bogus"], "--bogus", None),
    (["campaign", "run", "--answerz", "x"], "--answerz",
     "(Possible options: --answer-id, --answers)"),
    (["stats", "paired", "x.csv", "--baselin", "b"], "--baselin",
     "(Possible options: --baseline)"),
])
def test_an_unknown_option_suggests_only_close_matches(args, unknown, suggested):
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2
    out = _flat(res.output)
    assert f"No such option: {unknown}" in out
    if suggested is None:
        assert "Possible options" not in out
    else:
        assert suggested in out


def test_close_options_compare_names_without_their_dashes():
    assert close_options("--bogus", ["--out", "--repeats", "--progress"]) == []
    assert close_options("--ot", ["--out", "--repeats"]) == ["--out"]
    assert close_options("--progres", ["--progress", "--no-progress"])[0] == "--progress"
    assert close_options("--x", None) == []


def _rig(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


def test_a_group_whose_package_is_missing_is_listed_and_names_what_to_install():
    block = "import sys; sys.modules['scipy'] = None; from rig.cli import app; "
    res = _rig(block + "app(['stats', '--help'], prog_name='rig')")
    assert res.returncode == 2, res.stderr
    err = " ".join(res.stderr.split())
    assert "error: rig stats needs scipy, a dependency of rig that is not installed: " \
           "pip install 'scipy" in err
    assert "Traceback" not in res.stderr
    res = _rig(block + "app(['gate', 'a', '--baseline', 'b'], prog_name='rig')")
    assert res.returncode == 2 and "rig gate needs scipy" in " ".join(res.stderr.split())
    listing = _rig(block + "app(['--help'], prog_name='rig')")
    assert listing.returncode == 0, listing.stderr
    assert "stats" in listing.stdout and "not available: rig stats needs scipy" in _flat(
        listing.stdout)
    assert "campaign" in listing.stdout  # the rest of rig still works


def test_the_missing_package_message_names_the_extra_that_brings_it():
    assert missing_package_message("rig monitor", "duckdb.experimental", "monitor") == (
        "rig monitor needs the 'monitor' extra (duckdb is not installed): "
        "pip install -e '.[monitor]'")
    # fastapi is in two extras: the group's own is named
    assert "needs the 'calls' extra" in missing_package_message("rig interviewer", "fastapi",
                                                                "calls")
    assert "needs the 'monitor' extra" in missing_package_message("rig monitor", "fastapi",
                                                                  "monitor")
    assert "needs the 'pipeline' extra (llama_cpp" in missing_package_message(
        "rig scorer", "llama_cpp", "pipeline")
    assert missing_package_message("rig x", "no_such_thing") == (
        "rig x needs the Python package 'no_such_thing', which is not installed")


def test_an_import_error_inside_rig_is_not_taken_for_a_missing_package():
    with pytest.raises(ModuleNotFoundError):
        load("rig.cli.no_such_module", "app")
    group, missing = load("rig.cli.stats", "stats_app")
    assert missing is None and group is not None


def test_transport_options_give_the_transport_caller_its_arguments(monkeypatch):
    assert transport_call_options(TransportOptions()) == {"interviewer_url": None}
    got = transport_call_options(
        TransportOptions("webrtc", interviewer_url="http://127.0.0.1:9",
                         results_token_env="TOK"), environ={"TOK": "secret"})
    assert got == {"interviewer_url": "http://127.0.0.1:9", "results_token_env": "TOK"}
    env = {"TWILIO_ACCOUNT_SID": "AC1", "TWILIO_AUTH_TOKEN": "t"}
    got = transport_call_options(TransportOptions(
        "twilio", twilio_to="+15550100000", twilio_from="+15550100001",
        stream_url="wss://rig.example.org/media"), environ=env)
    assert got == {"interviewer_url": None, "twilio_to": "+15550100000",
                   "twilio_from": "+15550100001", "stream_url": "wss://rig.example.org/media",
                   "agent_host": "0.0.0.0", "agent_port": 8770}


@pytest.mark.parametrize("opts,env,message", [
    (TransportOptions("pots"), {},
     "--transport: one of sim, webrtc, twilio, sip, pipecat (got 'pots')"),
    (TransportOptions("sim", agent_port=1), {},
     "--agent-port needs --transport twilio; --transport sim does not use it"),
    (TransportOptions("sip", interviewer_url="http://x"), {},
     "--interviewer-url: a SIP interviewer is a sip:user@host:port URI (got 'http://x')"),
    (TransportOptions("twilio", twilio_to="+1"), {"TWILIO_ACCOUNT_SID": "AC"},
     "--twilio-to places each call through a Twilio account: TWILIO_AUTH_TOKEN is not set"),
    (TransportOptions("twilio", twilio_to="+1", twilio_from="+2",
                      stream_url="wss://user:pw@10.0.0.1/m"),
     {"TWILIO_ACCOUNT_SID": "AC", "TWILIO_AUTH_TOKEN": "t"},
     "--stream-url: 10.0.0.1 is not a public address; Twilio cannot reach it "
     "(got 'wss://***@10.0.0.1/m')"),
    (TransportOptions("webrtc", interviewer_url="http://x", results_token_env="NOPE"), {},
     "--results-token-env: the environment variable NOPE is not set"),
])
def test_transport_options_that_do_not_go_together_raise_config_errors(opts, env, message):
    with pytest.raises(ConfigError) as info:
        transport_call_options(opts, environ=env)
    assert str(info.value).startswith(message)
    assert "pw" not in str(info.value)


def test_an_option_conflict_is_a_config_error_naming_the_option():
    err = OptionConflict("--twilio-from", "needs --twilio-to")
    assert isinstance(err, ConfigError) and err.path == "--twilio-from"
    assert str(err) == "--twilio-from needs --twilio-to"


def _recorded_set(tmp_path: Path) -> Path:
    s = tmp_path / "set"
    (s / "speakers").mkdir(parents=True)
    shutil.copy(DATA / "cmu_arctic_us_aew_a0003.wav", s / "speakers" / "q01_strong.wav")
    (s / "baseline.yaml").write_text(
        "profile_id: baseline\nvoice: {engine: recorded, voice_id: speakers}\n"
        "accent_label: US English (recorded speaker A)\nresponse_delay_s: 0.3\n")
    (s / "lossy.yaml").write_text(
        "profile_id: lossy\nchannel:\n  steps:\n    - {kind: g711}\n"
        "    - {kind: packet_loss, loss_pct: 10.0, concealment: silence}\n")
    return s


def test_profiles_render_writes_what_the_campaign_chain_makes(tmp_path):
    from rig.answers import load_bank
    from rig.campaign.call import render_call_audio
    from rig.pipeline import Telephony
    from rig.profiles import load_profiles

    s = _recorded_set(tmp_path)
    answers = ROOT / "answer_bank" / "core"
    out = tmp_path / "x.wav"
    res = CliRunner().invoke(app, ["profiles", "render", "lossy", "q01_strong", "--profiles",
                                   str(s), "--answers", str(answers), "--seed", "3", "--line",
                                   "--out", str(out)])
    assert res.exit_code == 0, res.output
    text = _flat(res.output)
    assert f"wrote {out}:" in text and "8000 Hz" in text and "voice recorded:speakers" in text
    assert "channel: " in text and "packets concealed" in text
    profiles = load_profiles(s)
    p = profiles.get("lossy")
    answer = next(a for _, a in load_bank(answers).answers() if a.answer_id == "q01_strong")
    made = render_call_audio(answer, p, 3, resolve_path=lambda rel: profiles.resolve_path(p, rel),
                             telephony=Telephony())
    written, rate = sf.read(str(out), dtype="float32")
    assert rate == made.audio.sample_rate_hz == 8000
    np.testing.assert_allclose(written, made.audio.samples, atol=1.5 / 32768)
    assert made.channel_report.packets_lost > 0
    assert f"{made.channel_report.packets_missing}/{made.channel_report.packets} packets" in text


def test_the_cli_keeps_pipecats_info_lines_off_stderr(capsys, monkeypatch):
    from loguru import logger

    from rig.console import quiet_pipecat_logs

    monkeypatch.setenv("LOGURU_LEVEL", "unset")  # LOGURU_LEVEL is restored after the test
    monkeypatch.delenv("LOGURU_LEVEL")
    monkeypatch.delenv("RIG_LOG_LEVEL", raising=False)
    quiet_pipecat_logs()  # what `rig`'s callback does before any command
    logger.info("ᓚᘏᗢ Pipecat banner")
    logger.warning("a warning still shows")
    err = capsys.readouterr().err
    assert "banner" not in err and "a warning still shows" in err
    monkeypatch.setenv("RIG_LOG_LEVEL", "DEBUG")
    quiet_pipecat_logs()
    logger.debug("debug on request")
    assert "debug on request" in capsys.readouterr().err
    quiet_pipecat_logs("WARNING")


def test_processes_the_cli_starts_print_no_pipecat_banner(monkeypatch):
    """A local worker or Ray actor imports pipecat afresh: the level reaches it through
    LOGURU_LEVEL (loguru's default handler), so its banner stays off the console."""
    import os
    import subprocess
    import sys

    from rig.console import quiet_pipecat_logs

    monkeypatch.setenv("LOGURU_LEVEL", "unset")  # restored after the test
    monkeypatch.delenv("LOGURU_LEVEL")
    monkeypatch.delenv("RIG_LOG_LEVEL", raising=False)
    quiet_pipecat_logs()
    assert os.environ["LOGURU_LEVEL"] == "WARNING"
    child = subprocess.run(
        [sys.executable, "-c", "from loguru import logger; logger.info('banner'); "
         "logger.warning('a warning')"], capture_output=True, text=True, timeout=60)
    assert "banner" not in child.stderr and "a warning" in child.stderr, child.stderr
    monkeypatch.setenv("RIG_LOG_LEVEL", "DEBUG")  # a later level reaches later children
    quiet_pipecat_logs()
    assert os.environ["LOGURU_LEVEL"] == "DEBUG"
    quiet_pipecat_logs("WARNING")


def test_a_loguru_level_the_user_set_is_kept(monkeypatch):
    import os

    from rig import console

    monkeypatch.setenv("LOGURU_LEVEL", "ERROR")
    monkeypatch.setattr(console, "_loguru_level_set", [None])
    console.quiet_pipecat_logs("WARNING")
    assert os.environ["LOGURU_LEVEL"] == "ERROR"
    console.quiet_pipecat_logs("WARNING")
