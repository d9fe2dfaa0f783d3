"""Every YAML and JSON file rig reads goes through the strict readers (a key named twice is an
error naming the file and the key); the few raw parses left are listed with their reason."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from test_gate_unit import crafted, write_campaign
from typer.testing import CliRunner

from rig.cli import app
from rig.errors import ConfigError
from rig.gate import load_campaign
from rig.jsonfile import read_json

pytestmark = pytest.mark.unit

RIG = Path(__file__).resolve().parents[1] / "rig"

#: (file, the stripped source line) -> why a raw parse is right there
ALLOWED = {
    ("config.py", "return json.loads(text, object_pairs_hook=_no_duplicates)"):
        "the strict JSON reader itself",
    ("config.py", "return yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass"):
        "the strict YAML reader itself",
    ("sweep/plan.py", "v = yaml.safe_load(text)"):
        "one --vary value parsed as a scalar; a mapping is kept as the text given",
    ("scorer/openai_compat.py", "return json.loads(payload)"):
        "an HTTP response envelope; the model's reply inside is parsed by scorer/prompt.py "
        "with loads_strict",
    ("calls/interviewer/results.py", "row = json.loads(r.read())"):
        "rig's own results endpoint (written by ResultStore, json.dumps of a dict)",
    ("calls/transports/twilio/stream.py", "msg = json.loads(text)"):
        "a Twilio media-stream protocol message, not a file",
    ("calls/transports/webrtc.py", "self.messages.append((t, json.loads(message)))"):
        "an RTVI protocol message on the data channel, not a file",
    ("calls/interviewer/routes.py", "body = json.loads(await request.body())"):
        "a WebRTC SDP offer from the browser page rig serves",
    ("models.py", "rec = json.loads(marker.read_text())"):
        "rig's own verification marker; any doubt re-verifies the model",
    ("models.py", "if json.loads(marker.read_text()) == record:"):
        "rig's own verification marker; any doubt re-verifies the model",
    ("synth/cache.py", 'info = json.loads(meta.read_text(encoding="utf-8"))'):
        "rig's own render cache; a damaged entry is rendered again",
    ("synth/piper.py",
     'config = json.loads(voice_pkg.config_path().read_text(encoding="utf-8"))'):
        "a voice package's own config (third party, not the user's)",
    ("synth/coqui.py", 'raw = json.loads(config.read_text(encoding="utf-8"))'):
        "a TTS model's own config (third party, not the user's)",
    ("synth/kokoro.py",
     'vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))["vocab"]'):
        "a TTS model's own vocabulary (third party, not the user's)",
    ("voices/shipped.py", "doc = json.loads(text)"):
        "rig's packaged rig/data/voices.json, written by rig voices validate",
}


#: Parsers that keep the last of a key named twice (or read YAML/JSON some other raw way):
#: module -> function names; and methods of any object with these names.
_RAW_FUNCS = {"json": {"load", "loads"}, "yaml": {"load", "safe_load", "full_load",
                                                  "unsafe_load", "load_all", "safe_load_all"},
              "pandas": {"read_json"}, "orjson": {"loads"}, "ujson": {"load", "loads"},
              "simplejson": {"load", "loads"}, "ruamel.yaml": {"load"}}
_RAW_METHODS = {"model_validate_json", "validate_json"}  # pydantic's parser keeps the last


def _raw_calls(tree: ast.AST) -> list[int]:
    """Line numbers of the calls in ``tree`` that parse YAML or JSON without the strict
    readers: ``json.loads(...)``, ``yaml.safe_load(...)``, ``pd.read_json(...)`` under any
    import alias, a name imported from those modules (``from json import loads as l``), and
    pydantic's ``.model_validate_json``/``.validate_json``."""
    modules: dict[str, str] = {}  # local name -> module
    funcs: set[str] = set()  # local names bound to a raw parser
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in _RAW_FUNCS or a.name.split(".")[0] in ("json", "yaml", "pandas"):
                    modules[a.asname or a.name.split(".")[0]] = a.name
        elif isinstance(node, ast.ImportFrom) and node.module in _RAW_FUNCS:
            funcs |= {a.asname or a.name for a in node.names
                      if a.name in _RAW_FUNCS[node.module]}
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        named = isinstance(f, ast.Name) and f.id in funcs
        method = isinstance(f, ast.Attribute) and f.attr in _RAW_METHODS
        of_module = (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                     and f.attr in _RAW_FUNCS.get(modules.get(f.value.id, ""), set()))
        if named or method or of_module:
            lines.append(node.lineno)
    return lines


def _raw_parses() -> set[tuple[str, str]]:
    """(file under rig/, stripped line) of every call of a raw YAML or JSON parser, found
    by walking each module's syntax tree (:func:`_raw_calls`), so no alias or line break
    hides one."""
    found = set()
    for f in sorted(RIG.rglob("*.py")):
        text = f.read_text(encoding="utf-8")
        src = text.splitlines()
        for n in _raw_calls(ast.parse(text, filename=str(f))):
            found.add((f.relative_to(RIG).as_posix(), src[n - 1].strip()))
    return found


@pytest.mark.parametrize("code", [
    "import json as j\nj.loads(t)", "from json import loads as l\nl(t)",
    "import yaml\nyaml.safe_load(t)", "import pandas as pd\npd.read_json(p)",
    "M.model_validate_json(t)", "import json\njson.load(\n  f)"])
def test_the_walk_finds_a_raw_parse_under_any_alias(code: str) -> None:
    assert _raw_calls(ast.parse(code))


def test_the_walk_passes_the_strict_readers() -> None:
    code = ("from rig.jsonfile import read_json\nfrom rig.config import loads_strict\n"
            "import json\nread_json(p); loads_strict(t); json.dumps(x)")
    assert _raw_calls(ast.parse(code)) == []


def test_every_raw_yaml_or_json_parse_is_listed_with_a_reason() -> None:
    found = _raw_parses()
    new = sorted(found - set(ALLOWED))
    assert not new, ("parse user or earlier-run YAML/JSON with rig.config.read_yaml / "
                     f"read_json / loads_json (strict: a key named twice is an error), or "
                     f"list the line in ALLOWED with its reason: {new}")
    gone = sorted(set(ALLOWED) - found)
    assert not gone, f"ALLOWED lists lines no longer in rig/: drop them: {gone}"
    assert all(reason.strip() for reason in ALLOWED.values())


def test_read_json_refuses_a_duplicate_key_naming_file_and_key(tmp_path: Path) -> None:
    p = tmp_path / "meta.json"
    p.write_text('{"a": {"seed": 1, "seed": 2}}')
    with pytest.raises(ConfigError, match=r"meta\.json: seed: duplicate key 'seed'") as e:
        read_json(p)
    assert "1" in str(e.value) and "2" in str(e.value)
    p.write_text('{"a": ')
    with pytest.raises(ConfigError, match=r"meta\.json: not valid JSON: .*line 1"):
        read_json(p)
    with pytest.raises(ConfigError, match="file not found"):
        read_json(tmp_path / "none.json")


@pytest.mark.parametrize(("name", "text", "key"), [
    ("pipeline.yaml", "scorer:\n  model: a\n  model: b\n", "model"),
    ("pipeline.json", '{"scorer": {"model": "a", "model": "b"}}', "model"),
])
def test_gate_refuses_a_pipeline_file_with_a_duplicate_key(tmp_path: Path, name: str,
                                                          text: str, key: str) -> None:
    cand = write_campaign(tmp_path / "cand", crafted())
    base = write_campaign(tmp_path / "base", crafted())
    (cand / name).write_text(text)
    with pytest.raises(ConfigError, match=rf"{re.escape(name)}: .*duplicate key '{key}'"):
        load_campaign(cand)
    res = CliRunner().invoke(app, ["gate", str(cand), "--baseline", str(base)])
    said = " ".join(res.output.split())
    assert res.exit_code == 2, said
    assert name in said and f"duplicate key '{key}'" in said


def test_an_earlier_runs_json_naming_a_key_twice_is_refused_by_name(tmp_path: Path) -> None:
    """summary.json through its typed reader, and campaign.json in rig campaign summarize."""
    from rig.campaign.summary_file import load_summary_header

    s = tmp_path / "summary.json"
    s.write_text('{"pipeline_version": "v1", "pipeline_version": "v2"}')
    with pytest.raises(ConfigError, match=r"summary\.json: pipeline_version: duplicate key"):
        load_summary_header(s)
    out = tmp_path / "c"
    out.mkdir()
    (out / "campaign.json").write_text('{"campaign_id": "a", "campaign_id": "b"}')
    res = CliRunner().invoke(app, ["campaign", "summarize", str(out)])
    said = " ".join(res.stderr.split())
    assert res.exit_code == 2 and "campaign.json: campaign_id: duplicate key" in said, said
