"""``python -m rig.scorer.serve ARGS``: ``python -m llama_cpp.server ARGS`` (extra ``server``)
with the AMX guard of :mod:`rig.scorer.amx`, so a server on an AMX CPU does not segfault in
its first completion. Arguments are ``llama_cpp.server``'s own, passed through unchanged."""

from __future__ import annotations

import runpy

from rig.scorer.amx import patch_for_process


def main() -> None:
    """Apply the guard, then run ``llama_cpp.server`` as ``__main__`` (it reads ``sys.argv``).

    Raises:
        ImportError: the ``server`` extra (llama-cpp-python[server]) is not installed.
    """
    patch_for_process()
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
