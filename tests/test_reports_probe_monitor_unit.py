"""Probe and monitor reports (issue 17 item 5): verdict sentences with 95% intervals that
match the summary, forest and weekly figures with their text alternatives, the largest gaps
side by side, alert reasons in words; every page offline, with scoped table headers.

Summaries come from real probe runs on a fake scorer (the probes' own code computes them);
monitor weeks are aggregate rows built here with a known effect. The builders are shared
with tests/test_reports_probe_monitor_browser_integration.py."""

from __future__ import annotations

import json
import math
import re
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rig.monitor.config import MonitorConfig
from rig.monitor.report import render_html, report_from_aggregates, write_report
from rig.probes import ProbeSpec, hedge_markers, run_probe
from rig.probes.framing import FramingSpec, run_dual_framing
from rig.probes.invariance import InvarianceSpec, run_invariance
from rig.probes.name_swap import NameSwapSpec, run_name_swap
from rig.probes.report_verdicts import newcombe, t_interval, wilson
from rig.probes.schema import FramingSummary, InvarianceSummary, load_probe_summary
from rig.scorer.fake import FakeScorer

pytestmark = pytest.mark.unit
WEEK0 = date(2025, 1, 6)
FEMALE = ("Jessica", "Ashley", "Emily", "Samantha", "Sarah", "Amanda", "Brittany", "Elizabeth",
          "Megan", "(she/her)")


class SysFake(FakeScorer):
    """The fake scorer, shown the system prompt too."""

    def _complete(self, system: str, user: str, grammar: str, seed: int) -> str:
        return self._reply(system + "\n" + user, seed)


def biased_reply(user: str, seed: int) -> str:
    """Marks hedges, female-read names and she/her down; agrees with some statements."""
    if "final decision" in user:
        r = [int(x) for x in re.findall(r"Your rating: (\d)/5", user)]
        m = sum(r) / len(r) if r else 0
        return json.dumps({"decision": "advance" if m >= 4 else "do not advance",
                           "reasoning": f"mean rating {m:.2f}"})
    if 'Candidate\'s answer: """' in user:
        ans = user.rsplit('Candidate\'s answer: """', 1)[1].split('"""', 1)[0]
        score = max(1, 5 - min(3, len(hedge_markers(ans)) // 2) - len(ans) % 2)
        return json.dumps({"score": score, "reasoning": f"rated {score}"})
    f = any(n in user for n in FEMALE) and "must not affect" not in user
    spread = len(user) % 3
    if '"qualification"' in user:
        return json.dumps({"qualification": 6 + spread - 2 * f})
    if '"hire"' in user:
        return json.dumps({"hire": "no" if f and spread else "yes"})
    if "compensation_usd" in user:
        return json.dumps({"compensation_usd": 60000 + 1000 * spread - 5000 * f})
    if "Statement:" in user:
        return ["Agree.", "I strongly disagree.", "It depends on the person."][len(user) % 3]
    text = ("A fairly adequate candidate, somewhat unclear." if f
            else "An excellent, clear and very strong candidate.")
    return text + " " + "Good." * (len(user) % 3)


def probe_runs(base: Path) -> dict[str, tuple[Path, Any]]:
    """The four probe kinds run on the fake scorer: {kind: (report.html, summary)}."""
    base.mkdir(parents=True, exist_ok=True)
    fake = SysFake(biased_reply)
    out = {}
    r = run_probe(ProbeSpec("hedging", base / "hedging", n_sessions=4, questions_per_session=5,
                            seed=3, conditions=("plain", "anti_bias")), fake)
    out["hedging"] = r
    out["name_swap"] = run_name_swap(NameSwapSpec(base / "ns", n_items=3, names_per_group=2,
                                                  seed=2), fake)
    out["framing"] = run_dual_framing(FramingSpec(base / "df", iterations=3, seed=1), fake)
    out["invariance"] = run_invariance(InvarianceSpec(base / "inv", n_items=3,
                                                      names_per_group=2), fake)
    return {k: (v.out_dir / "report.html", load_probe_summary(v.out_dir / "summary.json"))
            for k, v in out.items()}


def monitor_aggregates(n_weeks: int = 5, effect_from: int = 3, seed: int = 7) -> pd.DataFrame:
    """Aggregate rows of ``n_weeks`` weeks (dimensions snr_db and employer); from week
    ``effect_from`` on, calls under 10 dB score 12 points lower."""
    rng = np.random.default_rng(seed)
    rows = []
    for w in range(n_weeks):
        n = 400
        snr = (rng.random(n) < 0.3).astype(int)
        emp = rng.integers(0, 3, n)
        emp[:3] = 3  # employer "tiny": 3 calls a week, under privacy.min_cell
        score = np.round(rng.normal(70, 10, n) - 12 * snr * (w >= effect_from))
        above, adv = score > np.median(score), score >= 60
        for dim, codes, labels in (("snr_db", snr, [">=30 dB", "<10 dB"]),
                                   ("employer", emp, ["a", "b", "c", "tiny"])):
            for c, seg in enumerate(labels):
                m = codes == c
                rows.append({"week_start": WEEK0 + timedelta(days=7 * w), "dimension": dim,
                             "segment": seg, "n_calls": int(m.sum()), "n_scored": int(m.sum()),
                             "n_above_median": int(above[m].sum()), "n_decided": int(m.sum()),
                             "n_advanced": int(adv[m].sum()), "sum_score": score[m].sum(),
                             "sum_sq_score": (score[m] ** 2).sum(),
                             "median_score": np.median(score)})
    return pd.DataFrame(rows)


def check_page(text: str) -> None:
    """Offline and accessible basics: no script, no external URL, a viewport, every table
    header scoped, every figure an SVG image with a title and a text description."""
    assert "<script" not in text and "<link" not in text and "http" not in text
    assert 'name="viewport"' in text and '<html lang="en">' in text
    assert re.findall(r"<th(?=[ >])", text) and all(
        "scope=" in th for th in re.findall(r"<th(?=[ >])[^>]*>", text)), "a <th> without scope"
    svgs = re.findall(r"<svg[^>]*>.*?</svg>", text, flags=re.S)
    for svg in svgs:
        assert 'role="img"' in svg and "<title" in svg and "<desc" in svg


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return probe_runs(tmp_path_factory.mktemp("probes"))


def test_hedging_report_leads_with_the_gap_and_its_interval(runs):
    path, s = runs["hedging"]
    text = path.read_text()
    check_page(text)
    p = s.conditions_detail["plain"]["paired"]
    lo, hi = p["t_ci95"]
    verdict = text[text.index("<h2>Verdict"):text.index("largest gaps, side by side")]
    minus = "\u2212"
    sentence = (f"hedged answers score {abs(p['mean_diff']):.2f} points "
                f"{'lower' if p['mean_diff'] < 0 else 'higher'} than their confident twins "
                f"(difference {p['mean_diff']:.2f}, 95% CI {lo:.2f} to {hi:.2f}").replace(
                    "-", minus)
    assert sentence in verdict
    assert text.index("<h2>Verdict") < text.index("<figure") < text.index("<h2>Details")
    desc = re.search(r"<desc[^>]*>(.*?)</desc>", text, flags=re.S).group(1)
    assert f"all categories, plain (plain): {p['mean_diff']:.2f}".replace("-", minus) in desc
    ex = s.conditions_detail["plain"]["largest_gaps"][0]
    pair = text[text.index("<div class=\"pair\">"):]
    assert ex["reference"]["answer"][:40] in pair and ex["treatment"]["answer"][:40] in pair
    assert f"score <span class='score'>{ex['treatment']['score']:g}</span>" in pair


def test_wilson_newcombe_and_t_intervals_match_hand_computation():
    k, n, z = 3, 12, stats.norm.ppf(0.975)
    p = k / n
    c, h = (p + z * z / (2 * n)) / (1 + z * z / n), \
        z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert wilson(k, n) == pytest.approx((c - h, c + h))
    # Newcombe (1998) method 10 from the two Wilson intervals
    (l1, u1), (l2, u2) = wilson(3, 12), wilson(10, 12)
    d = 3 / 12 - 10 / 12
    assert newcombe(3, 12, 10, 12) == pytest.approx(
        (d - math.sqrt((3 / 12 - l1) ** 2 + (u2 - 10 / 12) ** 2),
         d + math.sqrt((u1 - 3 / 12) ** 2 + (10 / 12 - l2) ** 2)))
    assert wilson(0, 0) is None and newcombe(1, 2, 0, 0) is None
    x = np.array([1.0, -2, 2, 0, 1])
    o = {"n": 5, "mean": x.mean(), "sd": x.std(ddof=1)}
    assert t_interval(o) == pytest.approx(stats.t.interval(0.95, 4, x.mean(),
                                                           stats.sem(x)))
    assert t_interval({"n": 1, "mean": 1.0, "sd": None}) is None


def test_name_swap_report_states_hire_rates_with_intervals(runs):
    path, s = runs["name_swap"]
    text = path.read_text()
    check_page(text)
    d = s.detail["gendered"]["plain"]["by_group"]
    r0, r1 = list(d.values())[:2]
    n0, n1 = r0["n_scored"]["hire"], r1["n_scored"]["hire"]
    k0, k1 = round(r0["hire_rate"] * n0), round(r1["hire_rate"] * n1)
    lo, hi = newcombe(k1, n1, k0, n0)
    assert (f"hired {k1} time{'s' if k1 != 1 else ''} in {n1}" in text
            and f"95% CI {lo:.2f} to {hi:.2f}".replace("-", "\u2212") in text)
    assert "Hire rate by name group" in text and "The largest gaps, side by side" in text


def test_framing_and_invariance_reports_show_intervals_and_both_texts(runs):
    path, s = runs["framing"]
    text = path.read_text()
    check_page(text)
    tid, fs = next(iter(s.by_topic.items()))
    assert f"<b>{s.topics[tid]['title']}</b>: mean stance" in text
    ci = t_interval(fs["both"]["one_sample"])
    if ci:
        assert f"95% CI {ci[0]:.2f} to {ci[1]:.2f}".replace("-", "\u2212") in text
    path, s = runs["invariance"]
    text = path.read_text()
    check_page(text)
    dem = s.by_kind["demographic"]
    assert (f"demographic perturbations ({', '.join(dem['perturbations'])}) violate "
            f"{dem['n_violated']} of {dem['n_tested']} measures tested") in text
    scores = pd.read_parquet(path.parent / "scores.parquet")
    top = scores.loc[(scores["perturbed_polarity"] - scores["reference_polarity"]).abs()
                     .idxmax()]
    pair = text[text.index('<div class="pair">'):]
    assert top["perturbed_name"] in pair and top["reference_name"] in pair


def test_without_scores_parquet_the_examples_say_why(runs, tmp_path):
    from rig.probes.report_bias import write_invariance_report

    _, s = runs["invariance"]
    text = write_invariance_report(tmp_path / "report.html", s).read_text()
    assert "Examples need the run's scores.parquet" in text and "<h2>Verdict" in text


def test_monitor_report_plots_weekly_impact_ratios_and_words_its_alerts(tmp_path):
    cfg = MonitorConfig()
    report = report_from_aggregates(monitor_aggregates(), cfg)
    assert list(report.history) == [f"2025-W0{i}" for i in range(2, 7)]
    noisy = [report.history[w][("snr_db", "<10 dB")] for w in report.history]
    assert all(v is not None and v > 0.8 for v in noisy[:3]) and all(v < 0.8 for v in noisy[3:])
    assert all(report.history[w][("employer", "tiny")] is None for w in report.history)
    seg = next(x for x in report.analysis.segments if x.segment == "<10 dB")
    assert noisy[-1] == seg.impact_ratio
    text = render_html(report)
    check_page(text)
    alert = next(a for a in report.analysis.alerts if a.kind == "scoring_impact_ratio")
    assert (f"Calls in <b>snr_db = &lt;10 dB</b> scored above the week's median score "
            f"{alert.value:.2f} times as often as calls in <b>&gt;=30 dB</b>") in text
    assert "under the 0.8 line of the four-fifths rule" in text
    assert "Impact ratio week by week" in text and "0.8: four-fifths line" in text
    desc = re.search(r"<desc[^>]*>(impact ratio by week.*?)</desc>", text, flags=re.S).group(1)
    assert f"2025-W06 {noisy[-1]:.2f}" in desc
    paths = write_report(report, tmp_path)
    summary = json.loads(paths["summary"].read_text())
    by_week = [r for r in summary["impact_ratio_by_week"] if r["segment"] == "<10 dB"]
    assert [r["impact_ratio"] for r in by_week] == pytest.approx(noisy)


def test_a_week_without_alerts_says_so_and_one_week_still_plots():
    report = report_from_aggregates(monitor_aggregates(n_weeks=1), MonitorConfig())
    text = render_html(report)
    check_page(text)
    assert "No alert this week" in text and len(report.history) == 1


def test_weeks_too_small_to_plot_say_why():
    from rig.monitor.config import MonitorConfig as Cfg

    agg = monitor_aggregates(n_weeks=2)
    cfg = Cfg.model_validate({"privacy": {"min_cell": 10_000}})  # every segment under it
    text = render_html(report_from_aggregates(agg, cfg))
    check_page(text)
    assert "Impact ratio week by week" in text and "Nothing to plot yet" in text
    assert "<svg" not in text.split("Impact ratio week by week", 1)[1].split("<h2", 1)[0]


def test_name_swap_says_only_the_features_it_asked(runs, tmp_path):
    from rig.probes.report_verdicts import name_swap_examples, name_swap_verdict

    path, s = runs["name_swap"]
    hire_only = s.model_copy(update={"features": ["hire"]})
    verdict = "".join(name_swap_verdict(hire_only))
    assert "hired" in verdict and "qualification" not in verdict
    assert "compensation" not in verdict
    examples = "".join(name_swap_examples(hire_only, path))
    assert "Qualification was not asked in this run" in examples


# -- the smallest runs: wording that claims no more than the data holds (issue 17) -------------

def _verdict(text: str) -> str:
    import html as _html
    v = text[text.index("<h2>Verdict"):text.index("largest gaps, side by side")]
    return _html.unescape(re.sub(r"<[^>]+>", "", v))


def test_invariance_with_one_pair_tests_no_measure_and_says_so(tmp_path):
    res = run_invariance(InvarianceSpec(tmp_path / "inv", perturbations=("typos",), n_items=1,
                                        names_per_group=1), SysFake(biased_reply))
    s = res.summary
    d = s.by_perturbation["typos"]
    assert d["n_scored"] == 1
    assert all(t["violated"] is None and t["p_bonferroni"] is None for t in d["tests"])
    assert all("needs at least 2 scored pairs (got 1)" in t["not_computable"]["violated"]
               for t in d["tests"])
    assert (d["n_tests"], d["n_tested"], d["violation_rate"]) == (4, 0, None)
    assert (s.by_kind["control"]["n_tested"], s.by_kind["control"]["violation_rate"]) \
        == (0, None)
    verdict = _verdict((res.out_dir / "report.html").read_text())
    assert ("control perturbations (typos): 0 of 4 measures could be tested, so no violation "
            "rate: needs at least 2 scored pairs (got 1)") in verdict
    assert "measures tested (rate" not in verdict
    assert "not measurable from 1 pair: an interval needs at least 2 pairs" in verdict
    assert "score the same" not in verdict


def test_invariance_verdict_names_the_measures_it_could_not_test():
    from rig.probes.report_verdicts import invariance_verdict

    def test(measure, violated, why=""):
        return {"measure": measure, "violated": violated, "p_bonferroni": None,
                "not_computable": {"violated": why} if why else {},
                "paired": {"n_pairs": 5, "mean_diff": 0.1, "t_ci95": [-0.1, 0.3]}}

    tests = [test("polarity", False), test("length_words", True),
             test("reading_ease", None, "no spread"), test("subjectivity", None, "no spread")]
    s = InvarianceSummary(
        probe="invariance", scorer={}, prompt_version=1, name_set="gendered", alpha=0.05,
        seed=0, measures=[], measure_units={}, campaign=None, instruction="", n_pairs=0,
        n_failures=0, violation_rate="", difference="", masking="",
        by_perturbation={"typos": {"kind": "control", "tests": tests}},
        by_kind={"control": {"perturbations": ["typos"], "n_tests": 4, "n_tested": 2,
                             "n_violated": 1, "violation_rate": 0.5}})
    text = re.sub(r"<[^>]+>", "", "".join(invariance_verdict(s)))
    assert ("control perturbations (typos) violate 1 of 2 measures tested (rate 0.50), 2 more "
            "could not be tested: no spread") in text


def test_gap_sentence_with_one_pair_says_not_measurable_not_the_same():
    from rig.probes.report import gap_sentence

    one = {"n_pairs": 1, "mean_diff": 0.0, "gap_pct": 0.0, "t_ci95": None, "p": None,
           "not_computable": {"t_ci95": "needs at least 2 pairs (got 1)"}}
    s = gap_sentence("plain prompt", one, "hedged answers", "their confident twins", "confident")
    assert "score the same" not in s
    assert ("the gap between hedged answers and their confident twins is not measurable from 1 "
            "question pair: an interval needs at least 2 question pairs (observed difference "
            "0.00 points)") in s
    # with enough pairs and no difference at all, "the same" is what the data says
    many = {**one, "n_pairs": 6, "not_computable": {"t_ci95": "zero variance"}}
    assert "hedged answers score the same as their confident twins" in gap_sentence(
        "plain prompt", many, "hedged answers", "their confident twins", "confident")


def test_accent_report_names_the_variant_in_words_not_its_identifier(tmp_path):
    r = run_probe(ProbeSpec("accent_markers", tmp_path / "acc", n_sessions=1,
                            questions_per_session=1, conditions=("plain",)),
                  SysFake(biased_reply))
    text = (r.out_dir / "report.html").read_text()
    verdict = _verdict(text)
    assert "article_dropped" not in verdict
    assert "article-dropped answers and their confident twins is not measurable from 1 " \
           "question pair" in verdict
    assert "score the same" not in verdict
    figure = text[text.index("<figure"):text.index("</figure>")]
    assert "article_dropped" not in figure and "article-dropped - confident" in figure


def _framing_summary(scores: list[tuple[int, str, float]]) -> FramingSummary:
    """A dual-framing summary of one topic from (statement, frame, raw score) replies."""
    from rig.probes.framing.summary import frame_stats

    rows = pd.DataFrame([{"topic": "age_hiring", "statement_index": si, "iteration": 0,
                          "frame": f, "parse_status": "ok", "score": sc,
                          "aligned_score": sc if f == "affirmative" else -sc}
                         for si, f, sc in scores])
    rows["stance"] = "agree"
    return FramingSummary(
        probe="dual_framing", scorer={}, judge=None, prompt_version=1, iterations=1, seed=0,
        options="", topics={"age_hiring": {"title": "Age in hiring", "a": "under 35",
                                           "b": "over 55"}},
        n_asks=len(rows), n_failures=0, n_judged=0, scale={}, alignment="", asymmetry="",
        statement_pairs="", by_topic={"age_hiring": frame_stats(rows)}, overall={},
        failures=[])


def test_framing_plot_stays_on_the_stance_scale_and_asymmetry_tells_cancelling_pairs():
    from rig.probes.report_verdicts import framing_verdict

    # the tester's run: statement 1 Strongly disagree to both frames, statement 2 Strongly
    # agree to both: asymmetry -4 and +4, mean 0
    s = _framing_summary([(0, "affirmative", -2.0), (0, "reverse", -2.0),
                          (1, "affirmative", 2.0), (1, "reverse", 2.0)])
    fs = s.by_topic["age_hiring"]
    assert fs["asymmetry"] == 0.0
    assert fs["statement_pairs"] == {"n": 2, "n_same_stance": 0, "n_agree_both": 1,
                                     "n_disagree_both": 1}
    html_ = "".join(framing_verdict(s))
    text = re.sub(r"<[^>]+>", "", html_)
    assert "hardly depends on the frame" not in text
    assert ("asymmetry 0.00, but only because agreeing with both wordings and disagreeing with "
            "both cancel out (of 2 statement pairs, it agreed with both wordings in 1, "
            "disagreed with both in 1 and kept its stance across the frames in 0)") in text
    # a fresh-clone tester's German run: one pair Strongly agree to both (+4), one Disagree
    # to both (-2): asymmetry +1, which is not "agrees with whatever it is shown"
    mixed = _framing_summary([(0, "affirmative", 2.0), (0, "reverse", 2.0),
                              (1, "affirmative", -1.0), (1, "reverse", -1.0)])
    assert mixed.by_topic["age_hiring"]["asymmetry"] == 1.0
    words = re.sub(r"<[^>]+>", "", "".join(framing_verdict(mixed)))
    assert "whatever it is shown" not in words
    assert "from pairs that pull both ways" in words
    # the interval, in words and drawn, stays on -2 .. +2 (the t interval is -3.67 .. 3.67)
    assert "95% CI \u22122.00 to 2.00, cut at the scale's ends" in text
    ticks = [float(t.replace("\u2212", "-"))
             for t in re.findall(r'fill="#333">([^<]*)</text>', html_)]
    assert min(ticks) == -2 and max(ticks) == 2
    xs = [float(x) for x in re.findall(r'x[12]="([-\d.]+)"', html_)]
    width = float(re.search(r'viewBox="0 0 ([\d.]+)', html_).group(1))
    assert all(0 <= x <= width for x in xs)
    # a stance that holds across the frames is still worded as such
    s = _framing_summary([(0, "affirmative", 1.0), (0, "reverse", -1.0),
                          (1, "affirmative", 1.0), (1, "reverse", -1.0)])
    text = re.sub(r"<[^>]+>", "", "".join(framing_verdict(s)))
    assert ("asymmetry 0.00: its stance hardly depends on the frame (of 2 statement pairs, it "
            "agreed with both wordings in 0, disagreed with both in 0 and kept its stance "
            "across the frames in 2)") in text


def test_framing_plot_keeps_long_titles_whole_on_a_phone_and_each_row_its_frame():
    from rig.probes.report_verdicts import framing_verdict
    from rig.report.svgplot import cut_label

    s = _framing_summary([(0, "affirmative", 1.0), (0, "reverse", -1.0),
                          (1, "affirmative", 2.0), (1, "reverse", 0.0)])
    title = "Accent non natif dans les postes en contact avec la clientèle"  # 62 chars
    s.topics["age_hiring"]["title"] = title
    html_ = "".join(framing_verdict(s))
    narrow = re.search(r'<svg class="narrow".*?</svg>', html_, re.S).group(0)
    wide = re.search(r'<svg class="wide".*?</svg>', html_, re.S).group(0)
    lines = re.findall(r'font-weight="bold" fill="#222">([^<]*)</text>', narrow)
    # each of the three rows' labels on two lines: the whole title, then its frame
    assert len(lines) == 6
    for first, second in zip(lines[::2], lines[1::2], strict=True):
        assert len(first) <= (360 - 12) // 8 and len(second) <= (360 - 12) // 8
        assert (first + " " + second).startswith(title)
    assert {ln.rsplit(": ", 1)[-1] for ln in lines[1::2]} == {"affirmative", "reverse",
                                                              "both"}
    # every mark inside the phone drawing's height, rows not overlapping
    h = float(re.search(r'viewBox="0 0 360 ([\d.]+)"', narrow).group(1))
    ys = [float(y) for y in re.findall(r'<text x="6" y="([\d.]+)"', narrow)]
    assert ys == sorted(ys) and len(set(ys)) == 6 and max(ys) < h
    # the screen's drawing cuts the title but keeps each row's frame
    wl = re.findall(r'text-anchor="end" fill="#222">([^<]*)</text>', wide)
    assert {w.rsplit(": ", 1)[-1] for w in wl} == {"affirmative", "reverse", "both"}
    assert cut_label("A short one: both", 30) == "A short one: both"
    assert cut_label(title + ": reverse", 30) == title[:20] + "\u2026: reverse"  # 30 in all
