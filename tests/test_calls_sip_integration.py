"""SIP interop: the caller agent's user agent calls Debian's baresip (a real, independent SIP
stack) on 127.0.0.1. baresip auto-answers with PCMU, plays a spoken question from a file
(``aufile``) and records what it receives (``sndfile``); the agent hears the question (VAD +
ASR), answers after its response delay, and baresip hangs up at the end of its file. The far
side's recording, transcribed like the simulated path's line audio, must be within 0.05 WER
of the simulated path for the same answer and profile.

Needs ``baresip-core`` (README set-up command 2 installs it). About 25 s.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from rig.answers import load_bank
from rig.asr.wer import wer
from rig.asr.whisper import AsrOptions, transcribe
from rig.audio import Audio, read_wav
from rig.calls.agent.brain import AgentAnswer
from rig.calls.agent.loop import AgentSettings, run_agent
from rig.calls.interviewer.session import tts
from rig.calls.transports.sip import SipLink
from rig.channel import telephony_path
from rig.profiles import load_profiles
from rig.synth import render_answer
from rig.vad import TurnParams, detect_turn

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def baresip(tmp_path):
    """baresip on 127.0.0.1, auto-answering PCMU, playing a question, recording the caller."""
    if shutil.which("baresip") is None:
        pytest.fail("baresip is not installed: apt-get install baresip-core (README set-up "
                    "command 2)")
    q = load_bank(ROOT / "tests" / "data" / "calls_bank").questions[0]
    pcm = np.frombuffer(tts("hibari:heart", q.question), np.int16)
    # the question, then silence long enough for the answer: baresip hangs up at the end
    sf.write(tmp_path / "q.wav", np.concatenate([np.zeros(4000, np.int16), pcm,
                                                 np.zeros(8000 * 16, np.int16)]), 8000,
             subtype="PCM_16")
    (tmp_path / "rec").mkdir()
    port = free_udp_port()
    (tmp_path / "config").write_text("\n".join([
        "poll_method epoll", f"sip_listen 127.0.0.1:{port}",
        f"audio_source aufile,{tmp_path / 'q.wav'}", f"audio_alert aufile,{tmp_path / 'q.wav'}",
        "audio_srate 8000", "audio_channels 1", "module_path /usr/lib/baresip/modules",
        "module g711.so", "module aufile.so", "module sndfile.so", "module_app account.so",
        f"snd_path {tmp_path / 'rec'}", "net_interface 127.0.0.1", ""]))
    (tmp_path / "accounts").write_text(
        f"<sip:interviewer@127.0.0.1:{port}>;regint=0;answermode=auto;audio_codecs=PCMU\n")
    log = open(tmp_path / "baresip.log", "w")  # noqa: SIM115 - closed in the teardown
    proc = subprocess.Popen(["baresip", "-f", str(tmp_path), "-t", "90"], stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    t_end = time.monotonic() + 15
    while "baresip is ready" not in (tmp_path / "baresip.log").read_text():
        assert proc.poll() is None and time.monotonic() < t_end, \
            (tmp_path / "baresip.log").read_text()
        time.sleep(0.1)
    yield f"sip:interviewer@127.0.0.1:{port}", tmp_path
    proc.terminate()
    proc.wait(timeout=10)
    log.close()


def test_agent_calls_baresip_and_the_far_side_hears_the_answer(baresip):
    uri, folder = baresip
    bank = load_bank(ROOT / "tests" / "data" / "calls_bank")
    q, a = bank.answers()[0]
    prof = load_profiles(ROOT / "profiles" / "demo").baseline
    r = render_answer(a.script, prof, 0, answer_id=a.answer_id)
    n = round(prof.response_delay_s * r.audio.sample_rate_hz)
    answer = AgentAnswer(q.question_id, Audio(r.audio.samples[n:].copy(),
                                              r.audio.sample_rate_hz), prof.response_delay_s)

    async def call():
        link = SipLink(uri, {"call_id": "sip-interop"})
        await link.connect()
        try:
            res = await run_agent(link, [answer], AgentSettings(time_limit_s=40))
            return res, await link.stats()
        finally:
            await link.hangup()

    res, stats = asyncio.run(call())
    assert stats["codec"] == "PCMU/8000" and stats["packets_lost"] == 0
    assert stats["packets_received"] > 500  # baresip's RTP, 20 ms each
    assert len(res.plays) == 1 and res.hung_up_by == "interviewer"
    assert wer(q.question, res.heard[0][1]).wer <= 0.1  # the agent understood the question
    (dec,) = sorted((folder / "rec").glob("dump-*-dec.wav"))  # what baresip received
    far = read_wav(dec, 8000)
    params = TurnParams()
    opts = AsrOptions()
    # the far side's turn, cut as the interviewer's endpointing would cut it
    far_text = transcribe(far.head(detect_turn(far, params).turn_close_s), opts).text
    sim_line = telephony_path(r.audio)
    sim_text = transcribe(sim_line.head(detect_turn(sim_line, params).turn_close_s), opts).text
    w_far, w_sim = wer(a.clean_text, far_text).wer, wer(a.clean_text, sim_text).wer
    print(f"sip/baresip: wer {w_far:.3f} vs sim {w_sim:.3f}; {far_text!r}")
    assert abs(w_far - w_sim) <= 0.05
