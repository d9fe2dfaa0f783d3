"""The bad-input corpus walked through the real CLI (issue 19 item 2).

Every file of ``tests/data/bad/`` listed in ``tests/data/bad/cases.yaml`` is given to the
command its ``setup`` names, as a user would give it, in a fresh temporary folder. A refused
input must exit 2 with one line on stderr naming the file and holding the case's ``expect``
text (``FILE: FIELD: problem``), with no traceback and nothing written that was not there
before (no campaign folder, no row in the monitoring database). An accepted input (a kind rig
converts or normalises: 24-bit WAV, curly quotes...) must load; a scorer reply must parse to
its ``expect`` status with no score.

``python benchmarks/reliability_bad.py`` prints ``N bad inputs tried, N named errors, N
accepted as documented, 0 tracebacks, 0 rows lost``; :func:`bad_input_figures` returns the
same figures for ``benchmarks/reliability.py``.

The CLI runs in this process (typer's ``CliRunner``: the real ``rig`` app, argument parsing
and error handling; one import instead of one per case); ``--subprocess`` runs each case as
``python -m rig.cli`` instead (slower, the whole process boundary).
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "bad"
GOOD_WAV = CORPUS / "audio" / "good.wav"
GOOD_META = {"call_id": "c1", "timestamp": "2025-01-07T10:00:00Z", "employer": "acme",
             "job_family": "retail", "score": 71.5, "decision": "advance"}


@dataclass
class Outcome:
    """What one case did: exit code, stderr, the exception that escaped (a traceback), and
    the problems found against the case's expectation (empty: as expected)."""
    case: dict
    rc: int | None = None
    stderr: str = ""
    traceback: str | None = None
    problems: list[str] = field(default_factory=list)
    rows_lost: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def load_cases() -> tuple[dict[str, str], list[dict]]:
    """(setups: name -> command template, cases) from ``cases.yaml``."""
    doc = yaml.safe_load((CORPUS / "cases.yaml").read_text(encoding="utf-8"))
    return doc["setups"], doc["cases"]


def _prepare(case: dict, tmp: Path) -> dict[str, str]:
    """Lay out ``tmp`` for the case's setup; the placeholders of its command."""
    src = CORPUS / case["file"]
    setup = case["setup"]
    if case.get("generate") == "big_yaml":  # 50 MB: made here, never committed
        src = tmp / Path(case["file"]).name
        with src.open("w", encoding="utf-8") as fh:
            line = "# " + "x" * 1021 + "\n"
            for _ in range(50 * 1024):
                fh.write(line)
            fh.write((CORPUS / "bank" / "good_question.yaml").read_text(encoding="utf-8"))
    if case.get("generate") == "big_json":  # 50 MB: made here, never committed
        src = tmp / Path(case["file"]).name
        with src.open("w", encoding="utf-8") as fh:
            fh.write(json.dumps(GOOD_META)[:-1] + ', "notes": "')
            for _ in range(50 * 1024):
                fh.write("x" * 1024)
            fh.write('"}')
    subs = {"file": str(src), "tmp": str(tmp), "root": str(ROOT), "args": ""}
    if setup in ("profile", "noise"):
        s = tmp / "set"
        s.mkdir()
        shutil.copy(ROOT / "profiles" / "core" / "baseline.yaml", s / "baseline.yaml")
        if setup == "profile" and src.is_dir():  # a profile and the files it names
            shutil.copytree(src, s, dirs_exist_ok=True)
        elif setup == "profile":
            shutil.copy(src, s / src.name)
        else:
            (s / "noisy.yaml").write_text(
                "profile_id: noisy\ndescription: a noise recording.\n"
                f"noise: {{kind: file, path: {json.dumps(str(src))}, snr_db: 10}}\n",
                encoding="utf-8")
    elif setup in ("sidecar", "recording", "manifest"):
        d = tmp / "in"
        d.mkdir()
        if setup != "manifest":  # a good call beside the bad one: it must still be stored
            shutil.copy(GOOD_WAV, d / "zz_good.wav")
            (d / "zz_good.json").write_text(json.dumps(dict(GOOD_META, call_id="good")),
                                            encoding="utf-8")
        if setup == "sidecar":
            shutil.copy(src, d / src.name)
            shutil.copy(GOOD_WAV, d / (src.stem + ".wav"))
        elif setup == "recording":
            shutil.copy(src, d / src.name)
            (d / (src.stem + ".json")).write_text(json.dumps(GOOD_META), encoding="utf-8")
        else:
            shutil.copy(src, d / ("manifest" + src.suffix))
            shutil.copy(GOOD_WAV, d / "good.wav")
    return subs


def _run_cli(argv: list[str], subprocess_mode: bool, stdout: bool = False
             ) -> tuple[int, str, str | None]:
    """(exit code, stderr (or stdout), traceback text or None)."""
    if subprocess_mode:
        p = subprocess.run([sys.executable, "-m", "rig.cli", *argv], cwd=ROOT,
                           capture_output=True, text=True, timeout=300)
        tb = p.stderr if "Traceback (most recent call last)" in p.stderr else None
        return p.returncode, p.stdout if stdout else p.stderr, tb
    import traceback

    from typer.testing import CliRunner

    from rig.cli import app

    res = CliRunner().invoke(app, argv, catch_exceptions=True)
    tb = None
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        tb = "".join(traceback.format_exception(res.exception))
    return res.exit_code, res.stdout if stdout else res.stderr, tb


def _db_call_ids(db: Path) -> list[str]:
    if not db.is_file():
        return []
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        if "calls" not in {t[0] for t in con.execute("show tables").fetchall()}:
            return []
        return sorted(r[0] for r in con.execute("select call_id from calls").fetchall())
    finally:
        con.close()


def _python_case(case: dict, out: Outcome) -> None:
    """The cases that are no CLI input: scorer replies, and inputs rig accepts."""
    src = CORPUS / case["file"]
    setup = case["setup"]
    try:
        if setup == "scorer_reply":
            from rig.answers import load_bank
            from rig.scorer.prompt import parse_reply

            q = load_bank(CORPUS / "bank" / "good_question.yaml").questions[0]
            parsed = parse_reply(src.read_text(encoding="utf-8"), q)
            if parsed.status != case["expect"]:
                out.problems.append(f"status {parsed.status!r}, expected {case['expect']!r}")
            if parsed.status != "ok" and parsed.score is not None:
                out.problems.append(f"a failed parse carries a score {parsed.score}")
        elif setup == "rating_reply":  # the probes' 1-5 rating (rig.probes.prompts)
            from rig.probes.prompts import parse_rating

            rating = parse_rating(src.read_text(encoding="utf-8"))
            if rating.status != case["expect"]:
                out.problems.append(f"status {rating.status!r}, expected {case['expect']!r}")
            if rating.status != "ok" and rating.value is not None:
                out.problems.append("a failed parse carries a value")
        elif setup == "accept_audio":
            import numpy as np

            from rig.audio import read_wav

            a = read_wav(src, 8000)
            if not (np.isfinite(a.samples).all() and 1.0 < a.duration_s < 1.2
                    and 0.1 < float(np.max(np.abs(a.samples))) <= 1.0):
                out.problems.append(f"accepted but garbled: {a.duration_s:.3f} s")
        elif setup == "accept_stats":
            rc, stdout, tb = _run_cli(["stats", "paired", str(src), "--json"], False, True)
            if tb:
                out.traceback = tb
            if rc != 0:
                out.problems.append(f"exit {rc}")
            else:
                json.loads(stdout)  # valid JSON: NaN is refused by print_json
                if case["expect"] not in stdout:
                    out.problems.append(f"stdout lacks {case['expect']!r}")
        elif setup == "accept_bank":
            from rig.answers import load_bank

            bank = load_bank(src)
            text = " ".join(a.script + a.clean_text for _, a in bank.answers())
            for ch in case["expect"]:  # characters the normalised scripts must not hold
                if ch in text:
                    out.problems.append(f"{ch!r} kept in a script")
        else:
            out.problems.append(f"unknown setup {setup!r}")
    except Exception as exc:  # a refusal of an accepted input, or a crash
        import traceback

        out.traceback = "".join(traceback.format_exception(exc))
        out.problems.append(f"raised {type(exc).__name__}: {exc}")


def run_case(case: dict, setups: dict[str, str], subprocess_mode: bool = False) -> Outcome:
    """Give one case's file to rig and compare what happened with the case's expectation."""
    out = Outcome(case)
    if case["setup"] not in setups:
        _python_case(case, out)
        return out
    with tempfile.TemporaryDirectory(prefix="rig-bad-") as t:
        tmp = Path(t)
        subs = _prepare(case, tmp)
        argv = [a.format(**subs) for a in shlex.split(setups[case["setup"]])][1:]  # no "rig"
        if case["setup"] == "args":  # the file holds a command line's arguments
            argv = shlex.split((CORPUS / case["file"]).read_text(encoding="utf-8"))
        before = {p for p in tmp.rglob("*")}
        rc, err, tb = _run_cli(argv, subprocess_mode)
        out.rc, out.stderr, out.traceback = rc, err, tb
        if tb:
            out.problems.append("traceback")
        if rc != 2:
            out.problems.append(f"exit {rc}, expected 2")
        if case["expect"] not in err:
            out.problems.append(f"stderr lacks {case['expect']!r}")
        name = case.get("name") or (f"manifest{Path(case['file']).suffix}"
                                    if case["setup"] == "manifest" else Path(case["file"]).name)
        lines = [ln for ln in err.splitlines() if ln.strip() and "| INFO" not in ln]
        named = [ln for ln in lines if name in ln or Path(name).stem in ln]
        if not named:
            out.problems.append(f"no stderr line names {name}")
        if case["setup"] not in ("sidecar", "recording", "manifest") and len(lines) != 1:
            out.problems.append(f"{len(lines)} stderr lines, expected 1")
        new = {p for p in tmp.rglob("*")} - before
        written = sorted(str(p.relative_to(tmp)) for p in new
                         if p.name not in ("m.duckdb", "m.duckdb.wal"))
        if written:
            out.problems.append(f"wrote {written}")
        if case["setup"] in ("sidecar", "recording", "manifest"):
            ids = _db_call_ids(tmp / "m.duckdb")
            want = case.get("stored", [] if case["setup"] == "manifest" else ["good"])
            out.rows_lost = len(set(want) - set(ids))  # the good call beside it not stored
            if ids != want:
                out.problems.append(f"stored {ids}, expected {want}")
    return out


def walk(subprocess_mode: bool = False) -> list[Outcome]:
    setups, cases = load_cases()
    return [run_case(c, setups, subprocess_mode) for c in cases]


def bad_input_figures(subprocess_mode: bool = False) -> dict:
    """``{"tried", "named_errors", "accepted", "tracebacks", "rows_lost", "unexpected"}``
    over the corpus: ``named_errors`` counts refusals exactly as the case expects (scorer
    replies: the parse failure named), ``accepted`` the inputs rig converts as documented in
    docs/inputs.md, ``unexpected`` the case files whose outcome differs from the index."""
    outs = walk(subprocess_mode)
    accepted = [o for o in outs if o.case["setup"].startswith("accept_")]
    return {
        "tried": len(outs),
        "named_errors": sum(o.ok for o in outs if o not in accepted),
        "accepted": sum(o.ok for o in accepted),
        "tracebacks": sum(o.traceback is not None for o in outs),
        "rows_lost": sum(o.rows_lost for o in outs),
        "unexpected": [f"{o.case['file']}: {'; '.join(o.problems)}" for o in outs if not o.ok],
    }


def main() -> None:
    f = bad_input_figures("--subprocess" in sys.argv)
    for line in f["unexpected"]:
        print("unexpected:", line)
    print(f"{f['tried']} bad inputs tried, {f['named_errors']} named errors, {f['accepted']} "
          f"accepted as documented, {f['tracebacks']} tracebacks, {f['rows_lost']} rows lost")


if __name__ == "__main__":
    main()
