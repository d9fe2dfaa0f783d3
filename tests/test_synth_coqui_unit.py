"""The coqui engine's checks without coqui-tts: the voice fields, the files a profile names
(missing model, config, speaker recording; XTTS without a speaker; a remote file), the
install hint, and profile hashes that do not move for profiles without the new fields."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rig.errors import ConfigError, EngineUnavailable
from rig.profiles import Voice, load_profiles
from rig.synth import coqui
from rig.synth.coqui import resolve_files
from rig.synth.engines import engine_for_voice, get_engine

pytestmark = pytest.mark.unit

BASELINE = """profile_id: baseline
voice: {engine: hibari, voice_id: heart}
accent_label: "US English (synthetic, hibari 'heart')"
"""


def model_dir(folder: Path, model: str = "vits", **extra: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.pth").write_bytes(b"not read by these tests")
    (folder / "config.json").write_text(json.dumps({"model": model, **extra}), encoding="utf-8")
    if model == "xtts":
        (folder / "vocab.json").write_text("{}", encoding="utf-8")
    return folder


def profile_set(root: Path, voice: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "baseline.yaml").write_text(BASELINE, encoding="utf-8")
    (root / "cloned.yaml").write_text(
        f"profile_id: cloned\nvoice: {voice}\naccent_label: \"cloned voice (synthetic, "
        "coqui)\"\n", encoding="utf-8")
    return root


def test_voice_fields() -> None:
    v = Voice(engine="coqui", voice_id="alice-xtts", model_path="models/xtts",
              speaker_wav="voices/alice/ref.wav")
    assert v.config_path is None
    with pytest.raises(ValueError, match="model_path is required"):
        Voice(engine="coqui", voice_id="alice")
    with pytest.raises(ValueError, match="speaker_wav is a setting of engine coqui"):
        Voice(engine="hibari", voice_id="heart", speaker_wav="a.wav")
    with pytest.raises(ValueError, match="model_path"):
        Voice(engine="coqui", voice_id="x", model_path="")


def test_a_set_loads_with_paths_relative_to_the_profile(tmp_path) -> None:
    model_dir(tmp_path / "set" / "models" / "xtts", "xtts")
    (tmp_path / "set" / "alice.wav").write_bytes(b"RIFF")
    s = load_profiles(profile_set(tmp_path / "set", "{engine: coqui, voice_id: alice, "
                                  "model_path: models/xtts, speaker_wav: alice.wav}"))
    p = s.get("cloned")
    assert p.dimensions_changed(s.baseline) == ["voice"]
    files = resolve_files(s.resolve_path(p, p.voice.model_path), None,
                          s.resolve_path(p, p.voice.speaker_wav))
    assert files.checkpoint == tmp_path / "set" / "models" / "xtts" / "model.pth"
    assert files.config == tmp_path / "set" / "models" / "xtts" / "config.json"
    assert files.model == "xtts" and files.speaker_wav == tmp_path / "set" / "alice.wav"


@pytest.mark.parametrize(("voice", "field", "problem"), [
    ("{engine: coqui, voice_id: a, model_path: models/none}", "voice.model_path",
     "Coqui model not found"),
    ("{engine: coqui, voice_id: a, model_path: models/xtts}", "voice.speaker_wav",
     "give speaker_wav"),
    ("{engine: coqui, voice_id: a, model_path: models/xtts, speaker_wav: gone.wav}",
     "voice.speaker_wav", "speaker recording not found"),
    ("{engine: coqui, voice_id: a, model_path: models/vits, speaker_wav: gone.wav}",
     "voice.speaker_wav", "does not clone voices"),
    ("{engine: coqui, voice_id: a, model_path: models/vits, config_path: nope.json}",
     "voice.config_path", "config.json not found"),
    ("{engine: coqui, voice_id: a, model_path: models/remote}", "voice.model_path",
     "names a remote file"),
    ("{engine: coqui, voice_id: a, model_path: models}", "voice.model_path",
     "no Coqui checkpoint in the folder"),
    ("{engine: coqui, voice_id: a, model_path: models/taco}", "voice.model_path",
     "not models that need a separate vocoder"),
])
def test_bad_files_name_file_field_and_value(tmp_path, voice, field, problem) -> None:
    root = tmp_path / "set"
    model_dir(root / "models" / "xtts", "xtts")
    model_dir(root / "models" / "vits")
    model_dir(root / "models" / "taco", "tacotron2")
    model_dir(root / "models" / "remote", "vits",
              model_args={"speakers_file": "https://example.org/speakers.pth"})
    profile_set(root, voice)
    with pytest.raises(ConfigError) as err:
        load_profiles(root)
    assert err.value.field == field and problem in err.value.problem
    assert err.value.path == str(root / "cloned.yaml")
    assert str(err.value).startswith(f"{root / 'cloned.yaml'}: {field}: ")


def test_config_beside_a_checkpoint_file(tmp_path) -> None:
    folder = model_dir(tmp_path / "m")
    (folder / "model.pth").rename(folder / "model_file.pth")
    files = resolve_files(folder / "model_file.pth", None, None)
    assert files.config == folder / "config.json" and files.model == "vits"
    assert resolve_files(folder, None, None).checkpoint == folder / "model_file.pth"
    (folder / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"not a Coqui config\.json"):
        resolve_files(folder, None, None, where="p.yaml")
    (folder / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ConfigError, match="has a 'model' field"):
        resolve_files(folder, None, None, where="p.yaml")


def test_missing_coqui_tts_says_how_to_install(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "torchaudio", None)  # import torchaudio -> ImportError
    monkeypatch.setitem(sys.modules, "TTS", None)
    coqui._load.cache_clear()
    coqui._engine.cache_clear()
    folder = model_dir(tmp_path / "m")
    with pytest.raises(EngineUnavailable, match=r"pip install -e '\.\[coqui\]'"):
        engine_for_voice(Voice(engine="coqui", voice_id="v", model_path=str(folder)))


def test_get_engine_points_coqui_to_the_voice_block() -> None:
    with pytest.raises(ValueError, match="engine_for_voice"):
        get_engine("coqui", "any")


def test_the_main_run_leaves_coqui_tests_out_and_the_coqui_step_runs_them(tmp_path) -> None:
    import shutil
    import subprocess

    root = Path(__file__).resolve().parents[1]
    shutil.copy(root / "tests" / "conftest.py", tmp_path / "conftest.py")
    shutil.copy(root / "tests" / "xdist_plan.py", tmp_path / "xdist_plan.py")  # it imports it
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    unit: u\n    integration: i\n"
                                         "    coqui: c\n", encoding="utf-8")
    (tmp_path / "test_a.py").write_text(
        "import pytest\npytestmark = [pytest.mark.integration, pytest.mark.coqui]\n\n"
        "def test_coqui():\n    pass\n", encoding="utf-8")
    (tmp_path / "test_b.py").write_text(
        "import pytest\npytestmark = pytest.mark.unit\n\ndef test_other():\n    pass\n",
        encoding="utf-8")

    def run(*args: str) -> str:
        res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                              *args, str(tmp_path)], cwd=tmp_path, capture_output=True,
                             text=True, timeout=120, env={"PATH": "/usr/bin:/bin",
                                                          "HOME": str(tmp_path),
                                                          "RIG_STRICT": "1"})
        return res.stdout + res.stderr

    assert "1 passed, 1 deselected" in run()  # the main run: test_b only
    assert "2 deselected" in run("-m", "integration")  # an integration run leaves it out too
    out = run("-rA", "-m", "coqui")  # the coqui step
    assert "1 passed, 1 deselected" in out and "PASSED test_a.py::test_coqui" in out


def test_profiles_check_engines_names_the_missing_extra(tmp_path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from rig.cli import app

    monkeypatch.setitem(sys.modules, "torchaudio", None)
    monkeypatch.setitem(sys.modules, "TTS", None)
    coqui._load.cache_clear()
    coqui._engine.cache_clear()
    model_dir(tmp_path / "set" / "models" / "vits")
    root = profile_set(tmp_path / "set", "{engine: coqui, voice_id: a, model_path: models/vits}")
    ok = CliRunner().invoke(app, ["profiles", "check", str(root)])
    assert ok.exit_code == 0, ok.output
    res = CliRunner().invoke(app, ["profiles", "check", "--engines", str(root)])
    assert res.exit_code == 2, res.output
    assert "cloned.yaml: voice: the coqui engine is not installed" in " ".join(res.output.split())
    assert "pip install -e '.[coqui]'" in res.output
