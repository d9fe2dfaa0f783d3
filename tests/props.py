"""Hypothesis settings and example counting shared by ``tests/test_properties_*.py``.

``CI``: the ``ci`` profile (``max_examples`` 200 unless ``RIG_PROPS_MAX_EXAMPLES`` says
otherwise, no deadline: a shared CI machine's timing must not fail a run, ``derandomize``: the
same examples on every run, so a failure in CI is a failure on a laptop; no example database
written into the clone). ``counted`` wraps a property's body so that every example run is
counted; with ``RIG_PROPS_COUNTS=FILE`` the counts (test name -> examples) are written to FILE
as JSON when the process exits (``benchmarks/reliability.py`` reads them).
"""

from __future__ import annotations

import atexit
import functools
import json
import os
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, settings

MAX_EXAMPLES = int(os.environ.get("RIG_PROPS_MAX_EXAMPLES", "200"))

settings.register_profile(
    "ci", max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
    print_blob=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CI = settings(settings.get_profile("ci"))

#: examples run per property (``module::name``), this process
COUNTS: Counter = Counter()


def counted(fn):
    """Count each call of ``fn`` (one hypothesis example) in :data:`COUNTS`."""
    key = f"{fn.__module__}::{fn.__name__}"

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        COUNTS[key] += 1
        return fn(*args, **kwargs)
    return wrapper


def _dump() -> None:
    out = os.environ.get("RIG_PROPS_COUNTS")
    if out and COUNTS:
        Path(out).write_text(json.dumps(dict(sorted(COUNTS.items())), indent=1))


atexit.register(_dump)
