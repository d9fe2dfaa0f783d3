"""The codec registry (rig.channel.codecs.CODECS): every codec named anywhere is an entry, an
unknown name is refused with the names there are, and a new entry is the only change needed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from pydantic import ValidationError

from rig.audio import Audio
from rig.channel import apply_caller_channel, frames, telephony_path
from rig.channel.codecs import (
    CARRIERS,
    CODECS,
    Codec,
    codec_names,
    codec_step_kinds,
    decode,
    encode,
    get_codec,
    step_codec,
)
from rig.channel.steps import G711, ChannelStep
from rig.errors import ConfigError
from rig.pipeline import PipelineConfig, Telephony, load_pipeline
from rig.profiles import Channel

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]


def tone(freq_hz: float, duration_s: float, rate_hz: int, amp: float = 0.4) -> Audio:
    t = np.arange(int(duration_s * rate_hz)) / rate_hz
    return Audio((amp * np.sin(2 * np.pi * freq_hz * t)).astype(np.float32), rate_hz)


# --- every name listed anywhere resolves in the registry ----------------------------------

def test_entries_are_keyed_by_their_name_and_carried_by_known_carriers() -> None:
    for name, c in CODECS.items():
        assert c.name == name and c.description and set(c.carried_by) <= set(CARRIERS)
        if c.step_kind is not None:
            assert c.packet_encode is not None and c.packet_decode is not None
        assert (c.encode_pcm16 is None) == (c.decode_pcm16 is None) == (c.silence_code is None)


def test_codec_step_kinds_are_steps_of_the_schema_and_resolve() -> None:
    union = ChannelStep.__origin__  # Annotated[Union[...], Field(discriminator="kind")]
    kinds = {m.model_fields["kind"].default: m for m in union.__args__}
    for kind in codec_step_kinds():
        step = kinds[kind]()  # every codec step has defaults
        assert step_codec(step).step_kind == kind
    assert set(codec_step_kinds()) == {"g711", "amr_nb", "opus"}


def test_defaults_pipelines_and_profiles_name_registry_codecs() -> None:
    assert Telephony().codec in CODECS and G711().law in CODECS
    for path in sorted((ROOT / "pipelines").glob("*.yaml")):
        assert load_pipeline(path).telephony.codec in codec_names("line"), path
    seen = set()
    for path in sorted((ROOT / "profiles").rglob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("channel"), dict):
            continue
        for step in Channel.model_validate(data["channel"]).steps:
            if step.kind in codec_step_kinds():
                seen.add(step_codec(step).name)
    assert seen and seen <= set(CODECS)


def test_transports_and_monitor_name_registry_codecs() -> None:
    from rig.calls.transports.sip.rtp import CODEC as SIP_CODEC
    from rig.calls.transports.twilio.stream import CODEC as TWILIO_CODEC
    from rig.monitor.recording import _FILE_CODECS
    from rig.monitor.signals import _G711_LUT

    assert "sip" in SIP_CODEC.carried_by and SIP_CODEC.wire_name == "PCMU/8000"
    assert "twilio" in TWILIO_CODEC.carried_by
    assert codec_names("webrtc") == ["opus"]
    assert set(_FILE_CODECS.values()) <= set(CODECS)
    assert list(_G711_LUT) == codec_names(step_kind="g711") == ["mulaw", "alaw"]


def test_docs_list_every_registry_codec() -> None:
    text = (ROOT / "docs" / "profiles.md").read_text(encoding="utf-8")
    table = text[text.index("### Codecs"):]
    for name in CODECS:
        assert f"| `{name}` |" in table, f"docs/profiles.md: codec {name!r} is not in the table"


# --- an unknown codec gets the clear error -------------------------------------------------

def test_unknown_codec_is_refused_with_the_names_there_are() -> None:
    with pytest.raises(ValueError, match=r"unknown codec 'g729'; use one of \['mulaw', 'alaw'"):
        get_codec("g729")
    with pytest.raises(ValueError, match=r"unknown codec 'opus'; use one of \['mulaw', 'alaw', "
                                         r"'none'\]"):
        telephony_path(tone(300.0, 0.1, 16000), 8000, "opus")
    with pytest.raises(ValueError, match="codec must be one of"):
        encode(tone(300.0, 0.1, 8000), "none")


def test_unknown_codec_in_a_pipeline_names_file_field_and_value(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("name: p\ntelephony: {codec: g729}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_pipeline(path)
    msg = str(err.value)
    assert "p.yaml" in msg and "telephony.codec" in msg and "'g729'" in msg
    assert "['mulaw', 'alaw', 'none']" in msg


def test_unknown_law_in_a_profile_lists_the_laws() -> None:
    with pytest.raises(ValidationError, match=r"unknown codec 'opus'; use one of \['mulaw', "
                                              r"'alaw'\]"):
        Channel.model_validate({"steps": [{"kind": "g711", "law": "opus"}]})


# --- adding an entry is the only change needed ----------------------------------------------

def _pcm8_encode(pcm: np.ndarray) -> np.ndarray:
    return ((np.asarray(pcm, np.int16).astype(np.int32) >> 8) + 128).astype(np.uint8)


def _pcm8_decode(codes: np.ndarray | bytes) -> np.ndarray:
    c = np.frombuffer(bytes(codes), np.uint8) if isinstance(codes, bytes) else np.asarray(codes)
    return ((c.astype(np.int32) - 128) << 8).astype(np.int16)


@pytest.fixture
def pcm8(monkeypatch: pytest.MonkeyPatch) -> Codec:
    """A new sample-wise codec (8-bit linear PCM), registered for the test only."""
    mulaw = CODECS["mulaw"]
    codec = Codec("pcm8", 8000, "8-bit linear PCM (a test codec)", ("line", "channel"), "g711",
                  _pcm8_encode, _pcm8_decode, 0x80, mulaw.packet_encode, mulaw.packet_decode)
    monkeypatch.setitem(CODECS, "pcm8", codec)
    return codec


def test_a_new_entry_runs_on_the_line_the_channel_and_the_config(pcm8: Codec) -> None:
    x = tone(700.0, 1.0, 8000)
    expected = _pcm8_decode(_pcm8_encode(x.to_pcm16())).astype(np.float32) / 32768.0
    line = telephony_path(x, 8000, "pcm8")
    np.testing.assert_allclose(line.samples, expected, atol=1e-7)
    np.testing.assert_array_equal(decode(encode(x, "pcm8"), "pcm8").samples, line.samples)
    assert PipelineConfig(name="p", telephony={"codec": "pcm8"}).telephony.codec == "pcm8"

    ch = Channel.model_validate({"steps": [{"kind": "g711", "law": "pcm8"}]})
    np.testing.assert_array_equal(apply_caller_channel(x, ch, 0).samples, line.samples)
    lossy = Channel.model_validate({"steps": [
        {"kind": "g711", "law": "pcm8"}, {"kind": "packet_loss", "loss_pct": 10}]})
    assert apply_caller_channel(x, lossy, 3).samples.shape == x.samples.shape
    assert frames(encode(tone(700.0, 0.01, 8000), "pcm8"), codec="pcm8")[-1][-1] == 0x80
    with pytest.raises(ValidationError, match="needs an amr_nb or opus step"):
        Channel.model_validate({"steps": [{"kind": "g711", "law": "pcm8"}, {
            "kind": "packet_loss", "loss_pct": 1, "concealment": "codec"}]})
