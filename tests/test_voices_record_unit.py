"""``rig voices record``'s server routes (FastAPI TestClient) and helpers; the page itself runs
in tests/test_voices_record_browser_integration.py."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "answer_bank" / "mini"
TOKEN = "t" * 32


@pytest.fixture
def client(tmp_path):
    from fastapi.testclient import TestClient

    from rig.voices.record import create_app

    out = tmp_path / "voices" / "spk_1"
    app = create_app(BANK, out, token=TOKEN)
    c = TestClient(app, base_url="http://127.0.0.1:8780", headers={"X-Rig-Token": TOKEN})
    c.out = out
    return c


def _speaker(client, **kw):
    consent = client.get("/api/session").json()["consent_text"]
    body = {"consent_text": consent, "agreed": True, "accent_description": "  Glaswegian  ",
            "language_background": "English, Gaelic at school", "device": "USB headset",
            "sample_rate_hz": 48000, **kw}
    return client.post("/api/speaker", json=body)


def _tone(rate_hz: int = 48000, seconds: float = 1.0, peak: float = 0.5) -> bytes:
    t = np.arange(int(rate_hz * seconds)) / rate_hz
    return np.round(peak * 32767 * np.sin(2 * np.pi * 220 * t)).astype("<i2").tobytes()


def test_page_and_session_list_the_bank(client):
    from rig.answers import load_bank

    page = client.get("/")
    assert page.status_code == 200 and TOKEN in page.text and "spk_1" in page.text
    s = client.get("/api/session").json()
    ids = [a.answer_id for _, a in load_bank(BANK).answers()]
    assert [a["answer_id"] for a in s["answers"]] == ids
    assert s["speaker"] is None and s["speaker_id"] == "spk_1"
    assert all(a["recorded"] is None for a in s["answers"])
    kinds = {k for a in s["answers"] for k, _ in a["segments"]}
    assert "words" in kinds and "pause" in kinds  # the mini bank has [pause ...] cues


def test_guards_refuse_other_hosts_and_missing_token(client):
    assert client.get("/api/session", headers={"X-Rig-Token": "wrong"}).status_code == 403
    assert client.get("/", headers={"Host": "evil.example:8780"}).status_code == 403
    from fastapi.testclient import TestClient

    bare = TestClient(client.app, base_url="http://localhost:8780")
    assert bare.get("/api/session").status_code == 403
    assert bare.get("/").status_code == 200  # the page itself carries the token


def test_speaker_needs_consent_and_keeps_the_first(client):
    from rig.voices.record import CONSENT_TEXT
    from rig.voices.speaker import read_speaker

    assert client.put("/api/recordings/q01_strong?sample_rate_hz=48000",
                      content=_tone()).status_code == 409  # no consent yet
    assert _speaker(client, agreed=False).status_code == 422
    assert _speaker(client, consent_text="something else").status_code == 409
    assert not (client.out / "speaker.json").exists()
    r = _speaker(client)
    assert r.status_code == 200
    sp = read_speaker(client.out)
    assert (sp.source, sp.speaker_id, sp.consent.text) == ("recorded", "spk_1", CONSENT_TEXT)
    assert sp.accent_description == "Glaswegian" and sp.device == "USB headset"
    assert sp.sample_rate_hz == 48000
    date = sp.consent.date
    assert _speaker(client, accent_description="West of Scotland").status_code == 200
    again = read_speaker(client.out)
    assert again.consent.date == date and again.accent_description == "West of Scotland"
    assert client.get("/api/session").json()["speaker"]["device"] == "USB headset"


def test_recording_is_written_and_listed(client):
    import soundfile as sf

    _speaker(client)
    r = client.put("/api/recordings/q01_strong?sample_rate_hz=44100",
                   content=_tone(44100, 1.5, 0.5))
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["duration_s"] == pytest.approx(1.5) and got["clipped_fraction"] == 0.0
    assert got["peak_dbfs"] == pytest.approx(20 * np.log10(0.5), abs=0.01)
    path = client.out / "q01_strong.wav"
    info = sf.info(str(path))
    assert (info.channels, info.samplerate, info.subtype) == (1, 44100, "PCM_16")
    data, _ = sf.read(str(path), dtype="int16")
    assert data.tobytes() == _tone(44100, 1.5, 0.5)
    listed = {a["answer_id"]: a["recorded"] for a in client.get("/api/session").json()["answers"]}
    assert listed["q01_strong"] == {"file": "q01_strong.wav", "duration_s": 1.5,
                                    "sample_rate_hz": 44100}
    assert client.get("/api/recordings/q01_strong").content == path.read_bytes()
    assert client.get("/api/recordings/q03_strong").status_code == 404
    from rig.voices.speaker import read_speaker

    assert read_speaker(client.out).sample_rate_hz == 44100  # the lowest rate of the takes
    # a re-take replaces the file; no temporary file is left
    assert client.put("/api/recordings/q01_strong?sample_rate_hz=48000",
                      content=_tone(48000, 2.0)).status_code == 200
    assert sf.info(str(path)).duration == pytest.approx(2.0)
    assert sorted(p.name for p in client.out.iterdir()) == ["q01_strong.wav", "speaker.json"]


@pytest.mark.parametrize(("url", "body", "status", "words"), [
    ("/api/recordings/nope?sample_rate_hz=48000", _tone(), 404, "not in the bank"),
    ("/api/recordings/q01_strong?sample_rate_hz=8000", _tone(8000), 422, "16000-96000"),
    ("/api/recordings/q01_strong?sample_rate_hz=48000", _tone() + b"\0", 422, "even"),
    ("/api/recordings/q01_strong?sample_rate_hz=48000", _tone(48000, 0.2), 422, "0.5-180"),
    ("/api/recordings/q01_strong?sample_rate_hz=48000", bytes(96000), 422, "silent"),
])
def test_bad_takes_are_refused(client, url, body, status, words):
    _speaker(client)
    r = client.put(url, content=body)
    assert r.status_code == status and words in r.json()["detail"], r.text
    assert not (client.out / "q01_strong.wav").exists()


def test_body_over_the_limit_is_413(client, monkeypatch):
    from fastapi.testclient import TestClient

    import rig.voices.record as rec

    monkeypatch.setattr(rec, "MAX_BODY_BYTES", 1000)
    small = TestClient(rec.create_app(BANK, client.out, token=TOKEN),
                       base_url="http://127.0.0.1", headers={"X-Rig-Token": TOKEN})
    _speaker(small)
    assert small.put("/api/recordings/q01_strong?sample_rate_hz=48000",
                     content=_tone()).status_code == 413


def test_out_folder_name_is_the_speaker_id(tmp_path):
    from rig.errors import ConfigError
    from rig.voices.record import check_out_folder, script_segments

    assert check_out_folder(tmp_path / "p225") == "p225"
    with pytest.raises(ConfigError, match="speaker id"):
        check_out_folder(tmp_path / "bad name")
    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
        check_out_folder(tmp_path / "f")
    assert script_segments("So [um] I waited. [pause 1.2s] Then") == [
        ["words", "So"], ["filler", "um"], ["words", "I waited."], ["pause", 1.2],
        ["words", "Then"]]


def test_cli_refuses_bad_input(tmp_path):
    from typer.testing import CliRunner

    from rig.cli import app

    r = CliRunner().invoke(app, ["voices", "record", "--out", str(tmp_path / "a b"),
                                 "--answers", str(BANK)])
    assert r.exit_code == 2 and "speaker id" in r.output
    empty = tmp_path / "consent.txt"
    empty.write_text("  \n")
    r = CliRunner().invoke(app, ["voices", "record", "--out", str(tmp_path / "s1"),
                                 "--answers", str(BANK), "--consent-file", str(empty)])
    assert r.exit_code == 2 and "empty" in r.output
    r = CliRunner().invoke(app, ["voices", "record", "--out", str(tmp_path / "s1"),
                                 "--answers", str(tmp_path / "nobank")])
    assert r.exit_code == 2 and "nobank" in r.output


def test_page_has_no_external_resource():
    from rig.voices.record_page import page_html

    page = page_html(TOKEN, "spk")
    assert "http://" not in page and "https://" not in page
    assert json.dumps(TOKEN) in page


def test_serve_refuses_a_taken_port(tmp_path):
    import socket

    from rig.errors import RigError
    from rig.voices.record import serve

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(RigError, match=f"port {s.getsockname()[1]} on 127.0.0.1"):
            serve(BANK, tmp_path / "spk", s.getsockname()[1])
