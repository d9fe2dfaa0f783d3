"""The verdict's sentences (rig.report.verdict) parse back to summary.json's figures, as
formatted; rows are fakes (tests/test_attribution_unit.py's), the summary is real."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from summaries import profile_like, real_summary, summary_like

from rig.campaign.attribution import split_text
from rig.campaign.schema import CampaignSummary, JudgeValidityNotMeasured, SweepNote
from rig.report.verdict import (
    percent,
    points,
    validity_sentence,
    verdict_interval,
    verdict_sentences,
)
from rig.stats.few_pairs import MIN_PAIRS, pairs_needed, too_few_pairs

pytestmark = pytest.mark.unit

NUM = r"[-+]?\d+\.\d"
SENTENCE = re.compile(
    rf"^(?P<pid>\S+): candidates score (?:(?P<mag>\d+\.\d) points (?P<dir>lower|higher) than"
    rf" under|the same as under) (?P<base>\S+)(?: \(0\.0 points\))?"
    rf"(?: \(95% CI (?P<lo>{NUM}) to (?P<hi>{NUM}), (?P<kind>t|bootstrap) interval\)"
    rf"| \(too few pairs \((?P<few>\d+)\) for an interval; (?:about (?P<need>\d+) are needed "
    rf"to see a 5-point change \(at this SD of the deltas, (?P<sd>\d+\.\d) points\)"
    rf"|at least (?P<least>\d+) are needed)\))?"
    rf"(?:; (?P<k>\d+) of (?P<n>\d+) decisions flip(?: \((?P<away>\d+) away from the "
    rf"reference decision(?:, (?P<qual>\d+) of them rejecting a qualified candidate)?, "
    rf"(?P<toward>\d+) toward it(?:, (?P<noref>\d+) without a reference grade)?\))?)?"
    rf"(?:; (?:answers cut off on (?P<trunc>\d+)% of calls|no answer cut off)"
    rf"(?:(?:, most of it [^:]+|, split): (?P<split>[^;]+))?)?"
    rf"; (?:(?P<side>within|beyond) the noise floor \(repeat noise alone reaches "
    rf"±(?P<lim>\d+\.\d) points\)|noise floor not measured \((?P<nf_why>[^)]*)\))"
    rf"(?:; ASR suspect on (?P<asr>\d+)% of calls)?(?:; turn suspect on (?P<turn>\d+)% of "
    rf"calls)?\.$")


def check(summary: CampaignSummary, sentence: str) -> dict:
    """Parse ``sentence`` and assert each figure equals the summary's, as formatted."""
    m = SENTENCE.match(sentence)
    assert m, sentence
    g, d = m.groupdict(), summary.profiles[m["pid"]]
    assert g["base"] == summary.baseline
    r = round(d.mean_delta, 1)
    if g["mag"] is None:
        assert r == 0
    else:
        assert g["mag"] == f"{abs(r):.1f}" and g["dir"] == ("lower" if r < 0 else "higher")
    ci, kind = verdict_interval(d)
    if too_few_pairs(d):  # the pairs needed instead of an unreadable interval
        need = pairs_needed(d.sd_delta)
        assert int(g["few"]) == d.n_pairs and g["lo"] is None
        assert (g["need"], g["least"]) == ((None, str(MIN_PAIRS)) if need is None
                                           else (str(need), None))
    elif ci:
        assert (g["lo"], g["hi"], g["kind"]) == (points(ci[0]), points(ci[1]), kind)
    else:
        assert g["lo"] is None
    if d.n_flips is not None:
        assert (int(g["k"]), int(g["n"])) == (d.n_flips, d.n_pairs)
    if g["away"] is not None:  # the flips by direction add up to the flips
        fd = d.flip_direction
        assert (int(g["away"]), int(g["toward"])) == (fd.n_away, fd.n_toward)
        assert fd.n_away + fd.n_toward + int(g["noref"] or 0) == d.n_flips
    if d.truncation_rate:
        assert g["trunc"] + "%" == percent(d.truncation_rate)
    if d.attribution:
        assert g["split"] == split_text(d.attribution, digits=1, n_pairs=d.n_pairs)
    if d.within_noise_floor is None:
        assert g["nf_why"]
        if summary.noise_floor is not None and summary.noise_floor.measured is False:
            assert g["nf_why"] == "see below"
    else:
        assert g["side"] == ("within" if d.within_noise_floor else "beyond")
        assert g["lim"] == f"{round(d.noise_floor_mean_delta_limit, 1):.1f}"
    for key, grp in (("asr_suspect_rate", "asr"), ("turn_suspect_rate", "turn")):
        if not getattr(d, key):  # none or zero: not named
            assert g[grp] is None
        else:
            assert g[grp] + "%" == percent(getattr(d, key))
    return g


@pytest.fixture(scope="module")
def summary() -> CampaignSummary:
    return real_summary()


def _with_lp(s: CampaignSummary, **fields) -> CampaignSummary:
    """``s`` with its long_pauses profile's ``fields`` replaced."""
    lp = profile_like(s.profiles["long_pauses"], **fields)
    return summary_like(s, profiles={**s.profiles, "long_pauses": lp})


def test_one_sentence_per_profile_then_validity_then_pipeline(summary) -> None:
    out = verdict_sentences(summary)
    assert len(out) == len(summary.profiles) - 1 + 2
    g = check(summary, out[0])
    assert g["pid"] == "long_pauses" and g["dir"] == "lower" and g["kind"] == "t"
    assert "most of it lost at turn detection" in out[0] and g["side"] == "beyond"
    assert out[-2].startswith("Judge validity: no verdict (Spearman ")
    assert out[-1] == "Pipeline version v1; 32 calls; the baseline profile is baseline."


def test_suspect_rates_and_within_the_noise_floor(summary) -> None:
    s = _with_lp(summary, asr_suspect_rate=0.125, turn_suspect_rate=0.5,
                 within_noise_floor=True)
    g = check(s, verdict_sentences(s)[0])
    assert (g["asr"], g["turn"], g["side"]) == ("12", "50", "within")


def test_a_delta_not_measurable_says_why(summary) -> None:
    s = _with_lp(summary, mean_delta=None, ci95=None, t_ci95=None, n_flips=None,
                 not_computable={"mean_delta": "no answer scored under both"})
    assert verdict_sentences(s)[0].startswith(
        "long_pauses: the delta is not measurable (no answer scored under both)")


def test_validity_sentences(summary) -> None:
    assert validity_sentence(summary_like(summary, judge_validity=None)) == (
        "Judge validity: not measured (no calls).")
    nm = JudgeValidityNotMeasured(verdict="not_measured", reason="no reference grades")
    assert validity_sentence(summary_like(summary, judge_validity=nm)) == (
        "Judge validity: not measured (no reference grades).")
    v = summary.judge_validity.model_copy(update={
        "n_answers": 12, "spearman": 0.812, "decision_agreement": 0.75, "verdict": "low"})
    assert validity_sentence(summary_like(summary, judge_validity=v)).startswith(
        "Judge validity: low (Spearman 0.81 and decision agreement 0.75 against the bank's "
        "reference grades over this campaign's 12 answers)")


def test_an_unmeasured_noise_floor_is_said_once(summary) -> None:
    nf = summary.noise_floor.model_copy(update={"measured": False,
                                                "reason": "no answer has two repeats"})
    profiles = {pid: profile_like(d, within_noise_floor=None,
                                  noise_floor_mean_delta_limit=None, not_computable={
                                      **d.not_computable,
                                      "within_noise_floor": "no answer has two repeats"})
                for pid, d in summary.profiles.items()}
    s = summary_like(summary, noise_floor=nf, profiles=profiles)
    out = verdict_sentences(s)
    check(s, out[0])
    assert out[1] == "Noise floor not measured: no answer has two repeats."


def test_a_gain_is_split_without_naming_a_loss(summary) -> None:
    s = _with_lp(summary, mean_delta=0.3, attribution={
        "mean_delta": 0.3, "turn_detection": 0.0, "asr": 0.3, "rest": 0.0})
    out = verdict_sentences(s)[0]
    check(s, out)
    assert "split: +0.3 = 0.0 turn detection, +0.3 ASR, 0.0 rest" in out and "lost" not in out


def test_a_loss_whose_interval_includes_0_is_split_without_a_culprit(summary) -> None:
    """The demo's noise_10db: -0.7 (95% CI -2.7 to +1.3) all at ASR said "most of it lost at
    ASR"; a delta that may be 0 gets its split, no stage named."""
    s = _with_lp(summary, mean_delta=-0.7, ci95=(-2.7, 1.3), t_ci95=(-2.7, 1.3), attribution={
        "mean_delta": -0.7, "turn_detection": 0.0, "asr": -0.7, "rest": 0.0})
    out = verdict_sentences(s)[0]
    check(s, out)
    assert "split: -0.7 = 0.0 turn detection, -0.7 ASR, 0.0 rest" in out and "lost" not in out
    s = _with_lp(s, ci95=(-2.7, -0.1), t_ci95=(-2.7, -0.1))
    assert "most of it lost at ASR" in verdict_sentences(s)[0]


def test_the_demo_sweep_is_said_with_its_report(summary) -> None:
    note = SweepNote(vary="endpointing.silence_timeout_ms=2000", profile_id="long_pauses",
                     verdict="long_pauses: a 2,000 ms timer closes the gap.",
                     report="sweep/report.html")
    base = real_summary().profiles["baseline"]
    s = summary_like(summary, profiles={"baseline": base}, sweep=note)
    assert verdict_sentences(s)[0] == (
        "Sweep: long_pauses: a 2,000 ms timer closes the gap (sweep of "
        "endpointing.silence_timeout_ms=2000: sweep/report.html).")
    s = summary_like(summary, profiles={"baseline": base})
    assert verdict_sentences(s)[0].startswith("Judge validity")  # no sweep line


_f = st.floats(-100, 100, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(m=_f, a=_f, b=_f, n=st.integers(1, 80), k=st.integers(0, 80),
       t=st.floats(0, 1), lim=st.floats(0, 30), within=st.none() | st.booleans(),
       asr=st.none() | st.floats(0, 1))
def test_any_profile_parses_back(m, a, b, n, k, t, lim, within, asr) -> None:
    d = profile_like(
        mean_delta=m, ci95=tuple(sorted([a, b])), t_ci95=(min(a, b) - 1, max(a, b) + 1),
        n_pairs=n, n_flips=min(k, n), truncation_rate=t, noise_floor_mean_delta_limit=lim,
        within_noise_floor=within, asr_suspect_rate=asr, turn_suspect_rate=None,
        sd_delta=None, attribution=None, synthesiser_limited=None, flip_direction=None,
        not_computable={} if within is not None else {"within_noise_floor": "no repeats"})
    s = summary_like(profiles={"baseline": real_summary().profiles["baseline"], "p": d})
    check(s, verdict_sentences(s)[0])
