"""Lint of docker/ (the image cannot be built on these machines): the Dockerfile's
instructions and habits (a pinned base, no apt caches, a non-root user, exec-form entry
point), and the compose file's services, whose commands must parse with rig's own CLI."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import typer
import yaml

from rig.cli import app

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
INSTRUCTIONS = {"FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT",
                "VOLUME", "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK",
                "SHELL"}


def dockerfile_instructions(path: Path) -> list[tuple[str, str]]:
    """(instruction, arguments) with continuation lines joined and comments dropped."""
    out, buf = [], ""
    for line in path.read_text().splitlines():
        if not buf and (not line.strip() or line.lstrip().startswith("#")):
            continue
        buf += line.rstrip("\\").strip() + " "
        if not line.rstrip().endswith("\\"):
            word, _, rest = buf.strip().partition(" ")
            out.append((word, rest))
            buf = ""
    assert not buf, "a continuation line runs off the end of the Dockerfile"
    return out


def test_dockerfile_instructions_and_habits():
    ins = dockerfile_instructions(ROOT / "docker" / "Dockerfile")
    names = [i for i, _ in ins]
    assert set(names) <= INSTRUCTIONS, set(names) - INSTRUCTIONS
    assert names[0] == "FROM"
    base = ins[0][1]
    assert ":" in base and not base.endswith(":latest"), "pin the base image's tag"
    runs = " ".join(a for i, a in ins if i == "RUN")
    assert "apt-get install -y --no-install-recommends" in runs
    assert "rm -rf /var/lib/apt/lists/*" in runs
    assert "baresip-core" in runs and "espeak-ng" in runs
    assert "'.[all,calls]'" in runs
    user = [a for i, a in ins if i == "USER"]
    assert user and user[-1] not in ("root", "0"), "run as a non-root user"
    entry = [a for i, a in ins if i == "ENTRYPOINT"]
    assert entry and entry[-1].startswith("["), "exec-form ENTRYPOINT"
    for word in shlex.split(" ".join(a for i, a in ins if i == "COPY")):
        assert not word.startswith("--chown=root")


def parse_cli(args: list[str]) -> None:
    """Parse ``rig ARGS`` with rig's CLI without running it (raises typer's click
    ``UsageError``: typer vendors its own click, so the classes are matched by name)."""
    cmd = typer.main.get_command(app)
    rest = list(args)
    name = "rig"
    while hasattr(cmd, "commands"):  # a group: resolve the subcommand
        name, cmd, rest = cmd.resolve_command(type(cmd).context_class(cmd), rest)
    cmd.make_context(name, rest)


def test_compose_services_run_commands_rig_accepts():
    compose = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"interviewer", "caller"}
    assert services["interviewer"]["build"]["dockerfile"] == "docker/Dockerfile"
    assert (ROOT / services["interviewer"]["build"]["context"].replace("..", ".")).is_dir()
    assert services["caller"]["depends_on"]["interviewer"]["condition"] == "service_healthy"
    for svc in services.values():
        parse_cli([str(a) for a in svc["command"]])
    caller = services["caller"]["command"]
    assert caller[caller.index("--interviewer-url") + 1] == "http://interviewer:8765"
    with pytest.raises(Exception, match="No such option"):
        parse_cli(["campaign", "run", "--no-such-option"])
    with pytest.raises(Exception, match="Missing parameter: transport"):
        parse_cli(["interviewer", "serve", "--pipeline", "x.yaml"])
