"""``python -m rig.cli``: the ``rig`` command."""

from rig.cli import main

main()
