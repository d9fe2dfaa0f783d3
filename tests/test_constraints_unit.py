"""constraints.txt (.ci/constraints.py): the versions the test suite last passed on, used by CI
and the README's set-up commands. It must pin every requirement pyproject.toml declares, each
inside pyproject's own range, and name each package once."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([a-z0-9-]+)==([0-9][0-9A-Za-z.]*)$")


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for i, line in enumerate((ROOT / "constraints.txt").read_text().splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        m = PIN.match(line)
        assert m, f"constraints.txt line {i}: {line!r} is not name==version (PEP 503 name)"
        assert m.group(1) not in pins, f"constraints.txt line {i}: {m.group(1)} pinned twice"
        pins[m.group(1)] = m.group(2)
    return pins


def _requirements() -> list[tuple[str, Requirement]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    out = [("dependencies", Requirement(r)) for r in project["dependencies"]]
    for extra, reqs in project["optional-dependencies"].items():
        out += [(extra, Requirement(r)) for r in reqs]
    return out


def test_every_line_pins_one_package_once() -> None:
    pins = _pins()
    assert len(pins) > 100 and "rig" not in pins


def test_every_declared_requirement_is_pinned_inside_its_range() -> None:
    pins = _pins()
    env = {"python_version": f"{sys.version_info.major}.{sys.version_info.minor}"}
    checked = 0
    for where, req in _requirements():
        name = canonicalize_name(req.name)
        if name == "rig" or (req.marker and not req.marker.evaluate(env)):
            continue
        assert name in pins, f"pyproject.toml [{where}] {req}: not in constraints.txt"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"pyproject.toml [{where}] {req}: constraints.txt pins {name}=={pins[name]}")
        checked += 1
    assert checked > 40


def test_the_pyav_pin_keeps_the_amr_nb_encoder() -> None:
    """PyAV's wheels from 18.1.1 on have no libopencore_amrnb (rig.channel.transport)."""
    from packaging.version import Version

    assert Version(_pins()["av"]) < Version("18.1.1")


def test_ci_and_both_readme_commands_install_with_the_constraints() -> None:
    readme = (ROOT / "README.md").read_text()
    installs = [ln for ln in readme.splitlines()
                if ln.lstrip().startswith("apt-get") and "pip install" in ln]
    assert len(installs) == 2, installs
    assert all("pip install -c constraints.txt -e" in ln for ln in installs), installs
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.count("pip install -q -c constraints.txt -e") == 2
