"""Ray nodes started with the real CLI on this machine, for the multi-node test and benchmark.

Each node is ``ray start --block`` in a session of its own (``start_new_session``): its raylet,
agents and the workers its raylet starts (which each get a process group of their own) keep
that session, so :meth:`Node.kill` SIGKILLs one node, the way a machine is lost, and leaves the
others running (``ray stop`` stops every node on the machine). The nodes share a ``--temp-dir``
of their own, so nothing is read from or left in ``/tmp/ray``.

Ray gives a node started with ``--node-ip-address 127.0.0.1`` this machine's address instead
(``resolve_ip_for_localhost``); the head is joined at ``127.0.0.1:PORT`` all the same.
Linux only (sessions are read from ``/proc``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

TESTS = Path(__file__).resolve().parent
RAY_CLI = str(Path(sys.executable).with_name("ray"))
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_env() -> dict[str, str]:
    """The environment of the nodes and of a driver that joins them: no token auth (a token
    left in ~/.ray would switch it on for a head, not for the nodes and drivers that join),
    tests/ on the workers' PYTHONPATH (they import the fakes). Ray's own health checks and
    timeouts (a lost node is noticed by its actors' callers within a second or two)."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    path = [str(TESTS), *filter(None, [env.get("PYTHONPATH")])]
    env.update(RAY_AUTH_MODE="disabled", PYTHONPATH=os.pathsep.join(path))
    return env


def session_pids(sid: int) -> list[int]:
    """Live (not zombie) processes of session ``sid``."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            pids.append(int(d.name))
    return pids


def raylet_pids() -> set[int]:
    """Every raylet on this machine (``pgrep -f raylet``, zombies left out)."""
    out = subprocess.run(["pgrep", "-f", "raylet/raylet"], capture_output=True, text=True)
    return {p for p in map(int, out.stdout.split()) if _alive(p)}


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@dataclass
class Node:
    name: str
    proc: subprocess.Popen
    log: Path

    def pids(self) -> list[int]:
        """This node's live processes (its ``ray start``, raylet, agents, workers)."""
        return session_pids(self.proc.pid)

    def workers(self) -> list[int]:
        """Its rig actors' processes (process title ``ray::Worker...``)."""
        out = []
        for p in self.pids():
            try:
                cmd = Path(f"/proc/{p}/cmdline").read_bytes()
            except OSError:
                continue
            if cmd.startswith(b"ray::Worker"):
                out.append(p)
        return out

    def wait_started(self, timeout: float = 90) -> None:
        """Until ``ray start`` says the node runs. Raises RuntimeError (with its output)
        when it exits first or takes longer than ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log.read_text(errors="replace") if self.log.is_file() else ""
            if "Ray runtime started" in text:
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"ray start ({self.name}) exited {self.proc.returncode}:"
                                   f"\n{text[-3000:]}")
            time.sleep(0.2)
        raise RuntimeError(f"ray start ({self.name}) not started in {timeout} s")

    def kill(self) -> None:
        """SIGKILL every process of this node (a lost machine), and reap ``ray start``."""
        for _ in range(3):  # a process may fork while the first pass kills
            for p in self.pids():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p, signal.SIGKILL)
            time.sleep(0.1)
        self.proc.wait(timeout=30)


class LocalCluster:
    """A head and any number of nodes on this machine; :meth:`close` kills them all."""

    def __init__(self, object_store_bytes: int = 100_000_000) -> None:
        self.temp_dir = Path(tempfile.mkdtemp(prefix="rig-ray-"))  # short: Unix socket paths
        self.env = node_env()
        self.port = free_port()
        self.store = object_store_bytes
        self.nodes: list[Node] = []

    def driver_env(self) -> dict[str, str]:
        """The ``RAY_*`` variables a driver that joins this cluster needs (set them before
        ``ray.init``)."""
        return {k: v for k, v in self.env.items() if k.startswith("RAY_")}

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _start(self, name: str, args: list[str], num_cpus: int) -> Node:
        log = self.temp_dir / f"{name}.log"
        with open(log, "w") as f:
            proc = subprocess.Popen(
                [RAY_CLI, "start", "--block", "--num-cpus", str(num_cpus),
                 "--resources", json.dumps({f"rig_{name}": 1}),
                 "--object-store-memory", str(self.store), "--disable-usage-stats",
                 "--dashboard-agent-listen-port", str(free_port()), *args],
                env=self.env, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True)
        node = Node(name, proc, log)
        self.nodes.append(node)
        node.wait_started()
        return node

    def start_head(self, num_cpus: int = 1) -> Node:
        """``ray start --head --port P`` (no dashboard, this cluster's temp dir)."""
        return self._start("head", ["--head", "--port", str(self.port),
                                    "--node-ip-address", "127.0.0.1",
                                    "--include-dashboard", "false",
                                    "--dashboard-port", str(free_port()),
                                    "--temp-dir", str(self.temp_dir)], num_cpus)

    def add_node(self, num_cpus: int = 1) -> Node:
        """``ray start --address 127.0.0.1:P``: a node joined to the head."""
        return self._start(f"node{len(self.nodes)}", ["--address", self.address,
                                                       "--node-ip-address", "127.0.0.1"],
                           num_cpus)

    def close(self) -> None:
        """Kill every node (the head last) and remove the temp dir."""
        for node in reversed(self.nodes):
            if node.proc.poll() is None or node.pids():
                node.kill()
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
