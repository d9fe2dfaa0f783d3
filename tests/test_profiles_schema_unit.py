"""Profile schema: typed fields, the one-dimension rule over every dimension, labels, hashes,
and the ``rig profiles`` commands (list, check) on good and bad sets."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rig.cli import app
from rig.errors import ConfigError
from rig.profiles import (
    DIMENSIONS,
    Channel,
    Disfluency,
    Interruption,
    Noise,
    Pace,
    Profile,
    Voice,
    load_profiles,
)

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "profiles" / "core"
DEMO = ROOT / "profiles" / "demo"

# profile content hashes of profiles/demo before the breadth work (commit ffbf44f): a profile
# that uses none of the newer fields keeps its hash, so its calls keep their ids
DEMO_HASHES = {"baseline": "8caca148e7bc", "long_pauses": "c1e7ecd1aac4",
               "noise_10db": "29616c492d01", "short_pauses": "62fffac0b4a5",
               "slow": "2f153c970574", "voice_kokoro_gb": "253b42b9a790"}


def write_set(folder: Path, **files: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "baseline.yaml").write_text("profile_id: baseline\n")
    for name, text in files.items():
        (folder / f"{name}.yaml").write_text(textwrap.dedent(text))
    return folder


def test_demo_set_keeps_its_hashes() -> None:
    s = load_profiles(DEMO)
    assert {p.profile_id: p.content_hash for p in s.profiles} == DEMO_HASHES


def test_core_set_is_baseline_plus_one_dimension_variants() -> None:
    s = load_profiles(CORE)
    changed = {p.profile_id: p.dimensions_changed(s.baseline) for p in s.profiles}
    assert changed.pop("baseline") == []
    assert len(changed) >= 10 and all(len(d) == 1 for d in changed.values())
    wanted = {"slow": "pace", "fast": "pace", "long_pauses": "pauses",
              "long_response_delay": "response_delay", "fillers": "disfluency",
              "babble_10db": "noise", "street_5db": "noise", "mobile_amr_nb_loss3": "channel",
              "webrtc_opus": "channel"}
    for pid, dim in wanted.items():
        assert changed[pid] == [dim], pid
    accents = [p for p in s.profiles if changed.get(p.profile_id) == ["voice"]]
    assert len(accents) >= 2 and all("synthetic" in p.accent_label for p in accents)
    assert s.baseline.channel.is_clean and s.baseline.noise.kind == "none"
    hashes = [p.content_hash for p in s.profiles]
    assert len(set(hashes)) == len(hashes)


def test_content_hash_covers_every_field_that_shapes_audio() -> None:
    base = Profile(profile_id="a")
    variants = [
        {"voice": Voice(engine="espeak-ng", voice_id="en-gb")}, {"accent_label": "x synthetic"},
        {"pace": Pace(wpm=150)}, {"pace": Pace(rate=1.1)},
        {"disfluency": Disfluency(repetitions_per_100_words=2)},
        {"disfluency": Disfluency(fillers_per_100_words=2)},
        {"interruption": Interruption(barge_in_offset_s=0.5)},
        {"noise": Noise(kind="babble", snr_db=10)},
        {"noise": Noise(kind="babble", snr_db=10, talkers=8)},
        {"noise": Noise(kind="babble", snr_db=10, voices=("hibari:heart",))},
        {"channel": Channel.model_validate({"steps": [{"kind": "g711"}]})},
        {"channel": Channel.model_validate({"steps": [{"kind": "g711", "law": "alaw"}]})},
        {"response_delay_s": 1.0},
    ]
    hashes = {Profile(profile_id="a", **v).content_hash for v in variants}
    assert len(hashes) == len(variants) and base.content_hash not in hashes
    assert Profile(profile_id="b", description="other").content_hash == base.content_hash


def test_every_dimension_counts_in_the_one_dimension_rule(tmp_path: Path) -> None:
    s = write_set(tmp_path, barge="profile_id: barge\ninterruption: {barge_in_offset_s: 0.4}\n",
                  reps="profile_id: reps\ndisfluency: {repetitions_per_100_words: 3}\n",
                  line="""\
                      profile_id: line
                      channel:
                        steps: [{kind: amr_nb}, {kind: packet_loss, loss_pct: 2}]
                      """)
    got = load_profiles(s)
    assert got.get("barge").dimensions_changed(got.baseline) == ["interruption"]
    assert got.get("reps").dimensions_changed(got.baseline) == ["disfluency"]
    assert got.get("line").dimensions_changed(got.baseline) == ["channel"]
    assert set(DIMENSIONS) >= {"interruption", "channel", "disfluency"}
    (s / "two.yaml").write_text("profile_id: two\nresponse_delay_s: 2\n"
                                "interruption: {barge_in_offset_s: 0.4}\n")
    with pytest.raises(ConfigError, match="2 dimensions"):
        load_profiles(s)


def test_a_wpm_pace_replaces_the_baselines_rate(tmp_path: Path) -> None:
    s = write_set(tmp_path, slow="profile_id: slow\npace: {wpm: 120}\n")
    (s / "baseline.yaml").write_text("profile_id: baseline\npace: {rate: 1.0}\n")
    p = load_profiles(s).get("slow")
    assert p.pace == Pace(wpm=120) and p.pace.rate is None
    (s / "slow.yaml").write_text("profile_id: slow\npace: {rate: 0.8, wpm: 120}\n")
    with pytest.raises(ConfigError, match="not both"):
        load_profiles(s)


@pytest.mark.parametrize("text,field,value", [
    ("profile_id: x\npace: {wpm: 500}\n", "pace.wpm", "500"),
    ("profile_id: x\nnoise: {kind: babble, snr_db: 10, talkers: 40}\n", "noise.talkers", "40"),
    ("profile_id: x\nnoise: {kind: traffic, snr_db: 10}\n", "noise.kind", "traffic"),
    ("profile_id: x\ninterruption: {barge_in_offset_s: -1}\n",
     "interruption.barge_in_offset_s", "-1"),
    ("profile_id: x\ndisfluency: {repetitions_per_100_words: 50}\n",
     "disfluency.repetitions_per_100_words", "50"),
    ("profile_id: x\nchannel: {steps: [{kind: amr_nb, bitrate_bps: 9000}]}\n",
     "channel.steps[0].amr_nb", "9000"),
    ("profile_id: x\nchannel: {steps: [{kind: opus, bitrate_bps: 100}]}\n",
     "channel.steps[0].opus.bitrate_bps", "100"),
    ("profile_id: x\nchannel: {steps: [{kind: packet_loss, loss_pct: 80}]}\n",
     "channel.steps[0].packet_loss.loss_pct", "80"),
    ("profile_id: x\nvoice: {engine: mbrola, voice_id: 'en 1'}\naccent_label: y synthetic\n",
     "voice", "en 1"),
    ("profile_id: x\nlanguage: xx\n", "language", "xx"),
])
def test_bad_fields_name_file_field_and_value(tmp_path: Path, text, field, value) -> None:
    s = write_set(tmp_path, x=text)
    with pytest.raises(ConfigError) as e:
        load_profiles(s)
    msg = str(e.value)
    assert str(s / "x.yaml") in msg and field in msg and value in msg, msg


@pytest.mark.parametrize("label", ["US English, female voice (synthetic)",
                                   "young speaker (synthetic)", "Hispanic (synthetic)"])
def test_accent_labels_never_name_a_demographic(label: str) -> None:
    with pytest.raises(ValueError, match="never a demographic"):
        Profile(profile_id="x", accent_label=label)


def test_a_new_voice_needs_its_own_synthetic_or_recorded_label(tmp_path: Path) -> None:
    s = write_set(tmp_path, gb="profile_id: gb\nvoice: {engine: espeak-ng, voice_id: en-gb}\n")
    with pytest.raises(ConfigError, match="label is the baseline's"):
        load_profiles(s)
    (s / "gb.yaml").write_text("profile_id: gb\nvoice: {engine: espeak-ng, voice_id: en-gb}\n"
                               "accent_label: British English\n")
    with pytest.raises(ConfigError, match="synthetic"):
        load_profiles(s)
    (s / "speakers").mkdir()
    (s / "gb.yaml").write_text("profile_id: gb\nvoice: {engine: recorded, voice_id: speakers}\n"
                               "accent_label: British English (synthetic)\n")
    with pytest.raises(ConfigError, match="recorded"):
        load_profiles(s)
    (s / "gb.yaml").write_text("profile_id: gb\nvoice: {engine: recorded, voice_id: speakers}\n"
                               "accent_label: British English (recorded speaker A)\n")
    assert load_profiles(s).get("gb").voice.engine == "recorded"


def test_named_files_must_exist(tmp_path: Path) -> None:
    s = write_set(tmp_path, n="profile_id: n\nnoise: {kind: file, snr_db: 5, path: none.wav}\n")
    with pytest.raises(ConfigError) as e:
        load_profiles(s)
    assert "noise.path" in str(e.value) and "none.wav" in str(e.value)
    (s / "n.yaml").write_text("profile_id: n\nvoice: {engine: recorded, voice_id: nobody}\n"
                              "accent_label: recorded speaker\n")
    with pytest.raises(ConfigError, match=r"voice\.voice_id"):
        load_profiles(s)


def test_record_flattens_the_profile_for_a_row() -> None:
    p = Profile(profile_id="x", pace=Pace(wpm=130),
                noise=Noise(kind="babble", snr_db=10.0),
                interruption=Interruption(barge_in_offset_s=0.3))
    row = p.record()
    assert row["pace_wpm_target"] == 130 and row["pace_rate"] is None
    assert row["snr_db_target"] == 10.0 and row["noise_kind"] == "babble"
    assert row["barge_in_offset_s"] == 0.3
    assert json.loads(row["profile_json"])["noise"]["talkers"] == 6
    assert p.setting("interruption").startswith("barge-in 0.3 s")


# --- the commands ------------------------------------------------------------------------------

runner = CliRunner()


def test_profiles_list_shows_each_change_and_its_setting() -> None:
    res = runner.invoke(app, ["profiles", "list", str(CORE)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    for text in ("mobile_amr_nb_loss3", "gilbert-elliott 3%", "120 wpm", "babble of 6",
                 "(baseline)", "response_delay"):
        assert text in res.output, text


def test_profiles_check_passes_good_sets() -> None:
    for folder in (CORE, DEMO):
        res = runner.invoke(app, ["profiles", "check", str(folder)], env={"COLUMNS": "200"})
        assert res.exit_code == 0, res.output
        assert "profiles OK" in res.output


def test_profiles_check_exits_2_naming_file_field_and_value(tmp_path: Path) -> None:
    s = write_set(tmp_path, bad="profile_id: bad\npace: {rate: 9}\n")
    res = runner.invoke(app, ["profiles", "check", str(s)], env={"COLUMNS": "300"})
    assert res.exit_code == 2
    flat = " ".join(res.output.split())
    assert "bad.yaml" in flat and "pace.rate" in flat and "9" in flat
    (s / "bad.yaml").write_text("profile_id: bad\npace: {rate: 0.8}\nresponse_delay_s: 2\n")
    res = runner.invoke(app, ["profiles", "check", str(s)], env={"COLUMNS": "300"})
    assert res.exit_code == 2 and "changes" in res.output


def test_profiles_check_notes_record_only_dimensions(tmp_path: Path) -> None:
    s = write_set(tmp_path, barge="profile_id: barge\ninterruption: {barge_in_offset_s: 0.4}\n")
    res = runner.invoke(app, ["profiles", "check", str(s)], env={"COLUMNS": "300"})
    assert res.exit_code == 0 and "changes nothing offline" in res.output


def test_profiles_that_cannot_render_are_refused_at_load(tmp_path: Path) -> None:
    s = write_set(tmp_path, fast="profile_id: fast\npace: {rate: 1.6}\n")
    with pytest.raises(ConfigError) as e:
        load_profiles(s)
    assert "pace.rate" in str(e.value) and "1.6" in str(e.value) and "fast.yaml" in str(e.value)
    (s / "fast.yaml").unlink()
    (s / "speakers").mkdir()
    (s / "rec.yaml").write_text("profile_id: rec\nvoice: {engine: recorded, voice_id: speakers}\n"
                                "accent_label: recorded speaker A\npace: {rate: 0.8}\n"
                                "changes: [voice, pace]\n")
    with pytest.raises(ConfigError) as e:
        load_profiles(s)
    assert "rec.yaml" in str(e.value) and "pace" in str(e.value) and "as spoken" in str(e.value)
