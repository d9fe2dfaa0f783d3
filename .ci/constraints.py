"""Write ``constraints.txt``: every package a full install resolves to, pinned (``name==version``).

CI and the README's two set-up commands install with ``pip install -c constraints.txt``, so a
fresh machine gets the versions the test suite last passed on, not whatever was released since
(stop 43's CI resolved PyAV 18.1.1, whose wheels dropped the AMR-NB encoder, and failed on a
suite that had passed here on 18.1.0). ``pyproject.toml`` keeps its ranges for library users.

Refresh (then run the whole suite on the new versions before committing)::

    pip install --dry-run --ignore-installed --report /tmp/resolve.json \\
        -e '.[all,piper,similarity,test,coqui]'
    python .ci/constraints.py /tmp/resolve.json > constraints.txt

The report is pip's installation report (``--report``, format version 1).
"""

from __future__ import annotations

import json
import re
import sys

HEADER = """\
# Every package of a full install (extras all, piper, similarity, test, coqui), pinned: the
# versions the test suite last passed on. Used by .ci/run and the README's set-up commands
# (pip install -c constraints.txt ...). Written by .ci/constraints.py from pip's resolve
# report on Python {python} ({platform}); regenerate with the commands in its docstring.
"""


def _canonical(name: str) -> str:
    """The distribution name as PEP 503 normalises it."""
    return re.sub(r"[-_.]+", "-", name).lower()


def main(report_path: str) -> None:
    with open(report_path, encoding="utf-8") as f:
        report = json.load(f)
    env = report.get("environment", {})
    # a local version label (torch's "+cpu" from a CPU wheel index) is dropped: "==2.13.0"
    # matches 2.13.0+cpu where that index is configured, and PyPI's 2.13.0 elsewhere (PEP 440)
    pins = sorted((_canonical(it["metadata"]["name"]), it["metadata"]["version"].split("+")[0])
                  for it in report["install"] if _canonical(it["metadata"]["name"]) != "rig")
    sys.stdout.write(HEADER.format(python=env.get("python_full_version", "?"),
                                   platform=env.get("platform_machine", "?")))
    sys.stdout.writelines(f"{name}=={version}\n" for name, version in pins)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python .ci/constraints.py REPORT.json > constraints.txt")
    main(sys.argv[1])
