"""Every reliability figure of issue 19 in one run (docs/reliability.md; the README quotes them).

Prints, in this order:
  1. kills survived and calls lost or duplicated: a 200-call campaign killed with SIGKILL at
     random moments and resumed after each (``benchmarks/reliability_kill.py``,
     ``kill_figures()``);
  2. bad inputs tried and named: the corpus of ``tests/data/bad/`` given to the CLI
     (``benchmarks/reliability_bad.py``, ``bad_input_figures()``);
  3. property-test examples run: ``tests/test_properties_*.py`` (hypothesis, the derandomized
     ``ci`` profile of ``tests/props.py``) in a subprocess, examples counted per property;
  4. requests under load accepted, stored and lost, with the throughput: ``rig monitor serve``
     and the results webhook (``rig interviewer results``) on loopback, N POSTs from 20
     concurrent clients, plus the 413/401/log checks of ``tests/test_services_load_integration.py``;
  5. faults counted: one call of each fault kind (``rig.campaign.faults``: vad_missed,
     media_outage, repetition_loop, empty_reference) among clean calls, through the summary:
     each kind counted, the excluded calls scored nowhere (issue 30).

A part whose code is not in this tree says so in one line and the others still run; a part
that fails prints its error and the script exits 1 at the end. Throughput is this machine's:
compare ratios, not requests per second, across machines.

    python benchmarks/reliability.py [--quick] [--only kills,bad,props,load,faults] [--json FILE]

``--quick``: 4 kills instead of 20, 25 examples per property instead of 200, 200 POSTs per
service instead of 2,000 (a few minutes on a laptop instead of tens).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import inspect
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
BENCH = Path(__file__).resolve().parent
PARTS = ("kills", "bad", "props", "load", "faults")


class NotInTree(Exception):
    """A part's code is not in this tree (another change brings it)."""


def _module(path: Path, what: str):
    if not path.is_file():
        raise NotInTree(f"{what}: not available in this tree ({path.relative_to(ROOT)} "
                        "missing)")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    sys.modules[path.stem] = mod  # a dataclass in the module looks itself up there
    spec.loader.exec_module(mod)
    return mod


def _call(fn, **wanted):
    """``fn`` with those of ``wanted`` its signature takes."""
    params = inspect.signature(fn).parameters
    return fn(**{k: v for k, v in wanted.items() if k in params})


def kills(quick: bool) -> tuple[dict, str]:
    mod = _module(BENCH / "reliability_kill.py", "kill figures")
    if not hasattr(mod, "kill_figures"):
        raise NotInTree("kill figures: not available in this tree (no kill_figures())")
    fig = _call(mod.kill_figures, n_kills=4 if quick else 20)
    if hasattr(mod, "line"):
        text = mod.line(fig)
    else:
        text = (f"{fig.get('kills')} kills, {fig.get('kills_survived')} survived; "
                f"{fig.get('calls_lost')} calls lost, {fig.get('calls_duplicated')} duplicated")
    return fig, text


def bad(quick: bool) -> tuple[dict, str]:
    mod = _module(BENCH / "reliability_bad.py", "bad-input figures")
    if not hasattr(mod, "bad_input_figures"):
        raise NotInTree("bad-input figures: not available in this tree "
                        "(no bad_input_figures())")
    fig = mod.bad_input_figures()
    text = (f"{fig['tried']} bad inputs tried, {fig['named_errors']} named errors, "
            + (f"{fig['accepted']} accepted as documented, " if "accepted" in fig else "")
            + f"{fig['tracebacks']} tracebacks, {fig['rows_lost']} rows lost")
    for line in fig.get("unexpected") or []:
        text += f"\n    unexpected: {line}"
    return fig, text


def props(quick: bool) -> tuple[dict, str]:
    files = sorted(TESTS.glob("test_properties_*.py"))
    if not files:
        raise NotInTree("property tests: not available in this tree")
    with tempfile.TemporaryDirectory(prefix="rig-props-") as tmp:
        counts = Path(tmp) / "counts.json"
        env = {**os.environ, "RIG_PROPS_COUNTS": str(counts),
               "RIG_PROPS_MAX_EXAMPLES": "25" if quick else "200"}
        t0 = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                              *map(str, files)], cwd=ROOT, env=env, capture_output=True,
                             text=True)
        wall_s = time.perf_counter() - t0
        per = json.loads(counts.read_text()) if counts.is_file() else {}
    tail = (run.stdout.strip().splitlines() or [""])[-1]
    fig = {"examples": sum(per.values()), "properties": len(per), "per_property": per,
           "pytest": tail, "exit": run.returncode, "wall_s": wall_s,
           "max_examples": int(env["RIG_PROPS_MAX_EXAMPLES"])}
    text = (f"{fig['examples']} property-test examples run over {fig['properties']} properties "
            f"({len(files)} files, at most {fig['max_examples']} per property and parameter, "
            f"derandomized): pytest {tail}")
    if run.returncode:
        text += "\n" + run.stdout[-3000:]
    return fig, text


def load(quick: bool) -> tuple[dict, str]:
    mod = _module(TESTS / "test_services_load_integration.py", "load test")
    n = 200 if quick else 2000
    figs, lines = [], []
    for runner in (mod.monitor_load, mod.results_load):
        # uvicorn's access log (n lines, secrets redacted: the runner checks it) off the console
        with (tempfile.TemporaryDirectory(prefix="rig-load-") as tmp,
              contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO())):
            f = runner(Path(tmp), n_posts=n)
        figs.append(f)
        lines.append(
            f"{f['service']}: {f['posted']} POSTs from {f['clients']} clients, "
            f"{f['accepted']} accepted, {f['stored']} stored, {f['lost']} lost "
            f"({f['per_s']:.0f} requests/s on this machine); wrong token "
            f"{_codes(f['wrong_token'])}; 10 GB Content-Length {f['huge_content_length']}; "
            f"endless chunked body {f['chunked_over_limit']}; secrets in logs "
            f"{f['secrets_in_logs']}")
    return {"services": figs}, "\n".join(lines)


def faults(quick: bool) -> tuple[dict, str]:
    """One call of each fault kind among clean ones (the attribution tests' rows), each kind
    as its own columns say it: counted per kind, and the excluded ones in no score."""
    try:
        from rig.campaign.faults import FAULT_KINDS
    except ImportError as exc:
        raise NotInTree("fault counts: not available in this tree") from exc
    from rig.campaign.summary import campaign_summary

    sys.path.insert(0, str(ROOT / "tests"))  # not `tests.`: ppi-python installs a `tests`
    from test_attribution_unit import attributed_rows

    rows = attributed_rows()
    rows["wer_errors"], rows["wer_reference_words"] = 1, 10
    marks = {"vad_missed": {"turn_suspect_reason": "no_speech_detected: never confirmed"},
             "media_outage": {"turn_closed_by": "media_outage"},
             "repetition_loop": {"asr_suspect_reason": "repetition_loop: 'the' x9"},
             "empty_reference": {"wer_reference_words": 0}}
    at = rows.index[rows["profile_id"] == "long_pauses"]
    for i, kind in enumerate(FAULT_KINDS):
        for col, v in marks[kind].items():
            rows.loc[at[i], col] = v
    s = campaign_summary(rows, campaign_id="faults", pipeline_version="v", n_boot=50)
    p = s.profiles["long_pauses"]
    kept = [*rows.loc[at[len(FAULT_KINDS):], "score"], rows.loc[at[1], "score"]]
    leaked = abs(p.score_mean - sum(kept) / len(kept)) > 1e-9
    fig = {"kinds": len(FAULT_KINDS), "counted": p.faults, "excluded": p.n_excluded,
           "excluded_scored": int(leaked), "exit": int(leaked or p.n_excluded != 3)}
    each = ", ".join(f"{k} {n}" for k, n in p.faults.items())
    text = (f"{fig['kinds']} fault kinds, each counted ({each}); {p.n_excluded} calls kept "
            "out of the scorer and the means by the default policy (media_outage graded as heard), "
            f"{fig['excluded_scored']} of them in a mean")
    return fig, text


def _codes(counts: dict) -> str:
    return ", ".join(f"{n} x {code}" for code, n in sorted(counts.items(), key=str))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small runs (minutes, not tens)")
    ap.add_argument("--only", default=",".join(PARTS),
                    help=f"comma-separated parts to run, of {','.join(PARTS)}")
    ap.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = ap.parse_args(argv)
    only = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = sorted(set(only) - set(PARTS))
    if unknown:
        ap.error(f"--only: unknown part {unknown[0]!r}; use {','.join(PARTS)}")
    titles = {"kills": "Kills", "bad": "Bad inputs", "props": "Property tests",
              "load": "Services under load", "faults": "Faults"}
    out, failed = {}, False
    for part in PARTS:
        if part not in only:
            continue
        t0 = time.perf_counter()
        try:
            fig, text = globals()[part](args.quick)
        except NotInTree as exc:
            out[part] = {"available": False, "reason": str(exc)}
            print(f"{titles[part]}: {exc}", flush=True)
            continue
        except Exception as exc:  # one part's failure must not hide the others' figures
            failed = True
            out[part] = {"error": f"{type(exc).__name__}: {exc}"}
            print(f"{titles[part]}: FAILED: {type(exc).__name__}: {exc}", flush=True)
            continue
        fig["part_wall_s"] = round(time.perf_counter() - t0, 1)
        out[part] = fig
        failed |= bool(fig.get("exit"))
        print(f"{titles[part]}: {text}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
