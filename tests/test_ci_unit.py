"""CI shows its skips: under ``RIG_STRICT=1`` (set by ``.ci/run``) the skip of an integration
test fails the run (tests/conftest.py), and ``.ci/run`` runs the README's test command."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]

INI = """[pytest]
markers =
    unit: pure logic
    integration: a real component
filterwarnings = error
"""
TESTS = {
    "test_engines.py": '''
import pytest
pytestmark = pytest.mark.integration

def test_missing_engine():
    pytest.skip("engine X is not installed")

def test_runs():
    pass

@pytest.mark.allowed_skip("MBROLA voices need Debian's non-free sources")
def test_exempt():
    pytest.skip("mbrola is not installed")

@pytest.mark.xfail(reason="known")
def test_expected_failure():
    raise AssertionError

@pytest.fixture
def thing():
    pytest.importorskip("rig_no_such_module_1", reason="needs the thing")

def test_fixture_skip(thing):
    pass
''',
    "test_extra.py": '''
import pytest
pytest.importorskip("rig_no_such_module_2", reason="needs the abc extra")
pytestmark = pytest.mark.integration

def test_never_collected():
    pass
''',
    "test_exempt_module.py": '''
import pytest
pytest.importorskip("rig_no_such_module_3", reason="needs non-free voices")
pytestmark = [pytest.mark.integration, pytest.mark.allowed_skip("non-free apt sources")]

def test_never_collected():
    pass
''',
    "test_logic.py": '''
import pytest
pytestmark = pytest.mark.unit

def test_unit_skip():
    pytest.skip("a unit test's skip stays a skip")
''',
}


def _run(folder: Path, strict: bool) -> tuple[int, str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "COLUMNS": "300"}
    if strict:
        env["RIG_STRICT"] = "1"
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfEs", "-p",
                          "no:cacheprovider", str(folder)], cwd=folder, env=env,
                         capture_output=True, text=True, timeout=120)
    return res.returncode, res.stdout + res.stderr


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("suite")
    shutil.copy(ROOT / "tests" / "conftest.py", folder / "conftest.py")
    shutil.copy(ROOT / "tests" / "xdist_plan.py", folder / "xdist_plan.py")  # it imports it
    (folder / "pytest.ini").write_text(INI)
    for name, text in TESTS.items():
        (folder / name).write_text(text)
    return folder


def test_without_rig_strict_skips_stay_skips(suite):
    rc, out = _run(suite, strict=False)
    assert rc == 0, out
    assert "1 passed, 6 skipped, 1 xfailed" in out
    assert "SKIPPED [1] test_engines.py:6: engine X is not installed" in out


def test_rig_strict_fails_integration_skips_and_keeps_the_exempt_ones(suite):
    rc, out = _run(suite, strict=True)
    assert rc == 1, out
    assert "2 failed, 1 passed, 3 skipped, 1 xfailed, 1 error" in out, out
    assert ("FAILED test_engines.py::test_missing_engine - RIG_STRICT=1: a real-component "
            "test skipped: engine X is not installed") in out
    assert "ERROR test_engines.py::test_fixture_skip - RIG_STRICT=1" in out  # in its set-up
    assert ("RIG_STRICT=1: the integration module test_extra.py skipped: needs the abc "
            "extra") in out
    assert "SKIPPED [1] test_engines.py:13: mbrola is not installed" in out
    assert "needs non-free voices" in out and "a unit test's skip stays a skip" in out
    assert "allowed_skip" in out  # the way out is named


def _readme_command_2() -> str:
    text = (ROOT / "README.md").read_text()
    block = text[text.index("2. Install and pass the tests:"):]
    return re.search(r"```\n\s*(.+?)\n\s*```", block, re.S).group(1).strip()


def _ci_command() -> str:
    """README command 2 as .ci/run runs it: its ``step NAME CMD`` lines after the marker (the
    command split at its ``&&`` only to time the parts), joined back with ``&&``."""
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    parts = []
    for line in lines[lines.index("# README command 2, split at its &&s only to time its "
                                  "parts (the same commands, in order):") + 1:]:
        if line.startswith(". .venv/bin/activate"):
            continue
        if not line.startswith("step "):
            break
        cmd = line.split(" ", 2)[2]
        if cmd.startswith("bash -c "):
            cmd = cmd[len("bash -c ") + 1:-1]  # the quoted command
        parts.append(cmd)
    return " && ".join(parts)


def test_ci_runs_the_readme_test_command_with_its_skips_shown_and_strict():
    def words(cmd: str) -> list[str]:  # .ci/run only quietens apt and pip install, and
        out: list[str] = []  # prints the slowest tests (--durations)
        for w in cmd.split():
            if not (w in ("-qq", ">/dev/null") or w.startswith("--durations=")
                    or (w == "-q" and out[-1:] == ["install"])):
                out.append(w)
        return out

    readme, ci = _readme_command_2(), _ci_command()
    assert words(readme) == words(ci), (readme, ci)
    assert readme.endswith("python -m pytest -q -rfEs -n 2 --dist loadfile -m unit && "
                           "python -m pytest -q -rfEs -n 2 --dist loadfile -m 'not unit'")
    assert "RIG_STRICT=1" in (ROOT / ".ci" / "run").read_text().split("# README command 2")[0]
