"""rig voices import: the three corpus layouts, prompt sharing, bad layouts, what is written.

Tiny corpora built in tmp dirs (tests/corpus_layouts.py; noise audio: layout only)."""

from __future__ import annotations

import json

import pytest
import soundfile as sf
from corpus_layouts import TEXTS, make_cmu_arctic, make_l2_arctic, make_vctk
from typer.testing import CliRunner

from rig.errors import RigError
from rig.voices.corpus import normalise_prompt, scan_corpus, shared_prompts
from rig.voices.corpus_import import import_corpus

pytestmark = pytest.mark.unit


def test_normalise_prompt_drops_case_and_punctuation_keeps_apostrophes():
    assert normalise_prompt("Please call Stella.") == "please call stella"
    assert normalise_prompt("God bless 'em,  I hope\nI'll go") == "god bless 'em i hope i'll go"
    assert normalise_prompt("I\u2019ll") == "i'll"


@pytest.mark.parametrize("version", ["0.92", "0.80"])
def test_vctk_layout_speakers_accents_and_utterances(tmp_path, version):
    root = make_vctk(tmp_path / "vctk", version=version)
    found = scan_corpus("vctk", root)
    assert [s.speaker_id for s in found] == ["p901", "p902"]
    assert [s.accent_description for s in found] == ["English", "Scottish"]
    assert "REGION 'Southern England'" in found[0].label_source
    assert "REGION 'Edinburgh'" in found[1].label_source  # the (comment) is dropped
    assert sorted(found[1].utterances) == [f"p902_{i:03d}" for i in range(1, 7)]
    ext = ".flac" if version == "0.92" else ".wav"
    assert found[0].utterances["p901_001"].audio_path.suffix == ext
    assert found[0].utterances["p901_001"].text == TEXTS["a0001"]


def test_vctk_prompts_are_shared_by_text_not_by_id(tmp_path):
    found = scan_corpus("vctk", make_vctk(tmp_path / "vctk"))
    prompts = shared_prompts("vctk", found)
    assert [p.answer_id for p in prompts] == ["vctk_001", "vctk_002", "vctk_003"]
    # p902 read the shared texts as its 004-006; its own 001-003 are left out
    assert [p.by_speaker["p902"].utt_id for p in prompts] == ["p902_004", "p902_005",
                                                              "p902_006"]
    assert [p.script for p in prompts] == [TEXTS[k] for k in ("a0001", "a0002", "a0003")]
    # speaker order decides the ids and the prompt order; max_prompts keeps the first ones
    rev = shared_prompts("vctk", list(reversed(found)), max_prompts=2)
    assert [p.answer_id for p in rev] == ["vctk_004", "vctk_005"]


def test_l2_arctic_layout_l1_from_the_corpus_table_and_prompts_by_id(tmp_path):
    found = scan_corpus("l2-arctic", make_l2_arctic(tmp_path / "l2"))
    assert [s.speaker_id for s in found] == ["ABA", "ASI"]  # suitcase_corpus is no speaker
    assert [s.accent_description for s in found] == ["L1 Arabic", "L1 Hindi"]
    assert found[0].language_background == "first language Arabic (L2-ARCTIC)"
    prompts = shared_prompts("l2-arctic", found)
    assert [p.answer_id for p in prompts] == ["l2_arctic_a0001", "l2_arctic_a0002",
                                              "l2_arctic_a0003"]


def test_arctic_prompt_whose_transcripts_differ_is_not_shared(tmp_path):
    root = make_cmu_arctic(tmp_path / "cmu")
    done = root / "cmu_us_ts2_arctic" / "etc" / "txt.done.data"
    done.write_text(done.read_text().replace(TEXTS["a0002"], "Something else entirely."))
    found = scan_corpus("cmu-arctic", root)
    assert [s.speaker_id for s in found] == ["ts1", "ts2"]
    assert [s.accent_description for s in found] == ["", ""]  # no label in rig's table
    assert [p.answer_id for p in shared_prompts("cmu-arctic", found)] == [
        "cmu_arctic_a0001", "cmu_arctic_a0003"]
    # a single speaker folder is a corpus too
    one = scan_corpus("cmu-arctic", root / "cmu_us_ts1_arctic")
    assert [s.speaker_id for s in one] == ["ts1"]


def test_speakers_selected_in_the_order_given_and_unknown_ones_named(tmp_path):
    root = make_vctk(tmp_path / "vctk")
    assert [s.speaker_id for s in scan_corpus("vctk", root, ("p902", "p901"))] == [
        "p902", "p901"]
    with pytest.raises(RigError, match=r"--speakers: .*\['p999'\].*it has \['p901', 'p902'\]"):
        scan_corpus("vctk", root, ("p901", "p999"))


@pytest.mark.parametrize("layout, expected", [
    ("vctk", r"expected .*/txt/<speaker>/<speaker>_001\.txt and .*wav48_silence_trimmed/"
             r"<speaker>/<speaker>_001_mic1\.flac \(VCTK 0\.92\) or .*/wav48/"),
    ("l2-arctic", r"expected .*/<SPEAKER>/wav/arctic_a0001\.wav and .*/<SPEAKER>/transcript/"),
    ("cmu-arctic", r"expected .*/cmu_us_<speaker>_arctic/wav/arctic_a0001\.wav and .*/etc/"
                   r"txt\.done\.data"),
])
def test_bad_layout_names_the_paths_expected(tmp_path, layout, expected):
    (tmp_path / "c" / "txt").mkdir(parents=True)  # txt/ but no audio folder
    (tmp_path / "c" / "notes").mkdir()
    with pytest.raises(RigError, match=r"not a .* corpus layout: " + expected):
        scan_corpus(layout, tmp_path / "c")
    with pytest.raises(RigError, match="corpus folder not found"):
        scan_corpus(layout, tmp_path / "missing")
    with pytest.raises(RigError, match="unknown layout 'timit'"):
        scan_corpus("timit", tmp_path / "c")


def test_import_writes_speaker_folders_a_read_speech_bank_and_profiles(tmp_path):
    from rig.answers import ReadSpeechQuestion, load_bank
    from rig.profiles import load_profiles
    from rig.voices.speaker import read_speaker

    res = import_corpus("vctk", make_vctk(tmp_path / "vctk"), tmp_path / "voices",
                        sample_rate_hz=8000)
    assert [d.name for d in res.speaker_dirs] == ["vctk_p901", "vctk_p902"]
    for d, accent in zip(res.speaker_dirs, ["English", "Scottish"], strict=True):
        assert sorted(p.name for p in d.glob("*.wav")) == [f"vctk_00{i}.wav" for i in (1, 2, 3)]
        info = sf.info(d / "vctk_001.wav")
        assert (info.samplerate, info.channels, info.subtype) == (8000, 1, "PCM_16")
        sp = read_speaker(d)
        assert (sp.source, sp.corpus, sp.licence, sp.accent_description) == (
            "corpus", "vctk", "CC BY 4.0", accent)
        assert sp.corpus_speaker_id == d.name.removeprefix("vctk_")
        assert sp.consent is None and sp.sample_rate_hz == 8000
    bank = load_bank(res.bank_dir)
    assert bank.read_speech and isinstance(bank.questions[0], ReadSpeechQuestion)
    assert [a.answer_id for _, a in bank.answers()] == list(res.answer_ids)
    assert "CC BY 4.0" in bank.meta.description
    ps = load_profiles(res.profiles_dir)
    assert [p.profile_id for p in ps.profiles] == ["baseline", "vctk_p902"]
    assert ps.baseline.voice.voice_id == "../vctk_p901"
    assert ps.profiles[1].accent_label == ("recorded: VCTK speaker p902, accent as labelled by "
                                           "the corpus: Scottish")
    assert ps.profiles[1].dimensions_changed(ps.baseline) == ["voice"]
    # a second import into the same --out replaces the profile set
    import_corpus("vctk", tmp_path / "vctk", tmp_path / "voices", speakers=("p902",))
    assert sorted(p.name for p in res.profiles_dir.glob("*.yaml")) == ["baseline.yaml"]


@pytest.mark.parametrize("layout, make, licence", [
    ("l2-arctic", make_l2_arctic, "non-commercial (CC BY-NC 4.0)"),
    ("cmu-arctic", make_cmu_arctic, "CMU ARCTIC licence (permissive)"),
])
def test_import_records_each_corpus_licence(tmp_path, layout, make, licence):
    res = import_corpus(layout, make(tmp_path / "c"), tmp_path / "v")
    for d in res.speaker_dirs:
        assert json.loads((d / "speaker.json").read_text())["licence"] == licence
    assert len(res.answer_ids) == 3


def test_speakers_who_share_no_prompt_are_an_error(tmp_path):
    root = make_vctk(tmp_path / "vctk")
    for f in (root / "txt" / "p902").glob("*.txt"):
        f.write_text("A sentence only this speaker read.")
    with pytest.raises(RigError, match=r"share no transcribed prompt"):
        import_corpus("vctk", root, tmp_path / "v")


def test_out_that_is_a_file_or_a_broken_recording_is_an_error_naming_it(tmp_path):
    root = make_vctk(tmp_path / "vctk")
    (tmp_path / "file").write_text("x")
    with pytest.raises(RigError, match=r"--out .*file.*is an existing file"):
        import_corpus("vctk", root, tmp_path / "file")
    bad = root / "wav48_silence_trimmed" / "p902" / "p902_005_mic1.flac"
    bad.write_bytes(b"not audio at all")
    with pytest.raises(RigError, match=r"p902_005_mic1\.flac"):
        import_corpus("vctk", root, tmp_path / "v")


def test_cli_import_and_its_bad_layout_exit_2(tmp_path):
    from rig.cli import app

    root = make_l2_arctic(tmp_path / "l2")
    res = CliRunner().invoke(app, ["voices", "import", str(root), "--layout", "l2-arctic",
                                   "--speakers", "ASI,ABA", "--out", str(tmp_path / "v")])
    assert res.exit_code == 0, res.output
    assert "2 speakers x 3 shared prompts" in res.output
    assert "non-commercial" in res.output
    assert (tmp_path / "v" / "l2-arctic_ASI" / "l2_arctic_a0001.wav").is_file()
    assert "l2-arctic_ASI" in (tmp_path / "v" / "profiles" / "baseline.yaml").read_text()
    bad = CliRunner().invoke(app, ["voices", "import", str(root), "--layout", "vctk",
                                   "--out", str(tmp_path / "w")])
    assert bad.exit_code == 2
    assert "not a VCTK corpus layout: expected" in bad.output
    assert not (tmp_path / "w").exists()
