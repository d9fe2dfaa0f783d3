"""Stage attribution (rig.campaign.attribution) on fakes: the per-call columns (turn-text grade,
its reuse of the oracle when nothing was lost, its failures), the per-profile split (terms sum
to the delta; intervals recomputed here independently), and the summary carrying it. The real
stages have their own integration test (test_attribution_integration.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from test_call_row_unit import fake_render, inputs, stages  # noqa: F401 - fixture

from rig.campaign.attribution import (
    attributable,
    paired_terms,
    profile_attribution,
    rounded_parts,
    split_text,
)
from rig.campaign.call import finish_call, run_call, run_call_front
from rig.campaign.summary import campaign_summary
from rig.scorer.fake import FakeScorer
from rig.stages import Stages
from rig.vad import TurnResult

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]


class CountingScorer(FakeScorer):
    """A FakeScorer recording each text it grades; ``garbage_for`` replies unparseable text
    for transcripts that contain it."""

    def __init__(self, garbage_for: str | None = None) -> None:
        super().__init__()
        self.graded: list[str] = []
        self.garbage_for = garbage_for
        self.temperature = 0.5  # no memo: every grading reaches _complete

    def _complete(self, system, user, grammar, seed, *, head="", deadline=None):
        text = user.rsplit('"""', 2)[-2].strip()
        self.graded.append(text)
        if self.garbage_for is not None and self.garbage_for in text:
            return "not json"
        return super()._complete(system, user, grammar, seed, head=head, deadline=deadline)


def _turn_at(share: float):
    """A VAD fake closing the turn after ``share`` of the audio."""
    return lambda a, p: TurnResult(0.1, a.duration_s * share, "silence_timeout", ())


# -- per call ------------------------------------------------------------------------------------


def test_a_truncated_call_grades_the_words_before_turn_close(inputs) -> None:  # noqa: F811
    scorer = CountingScorer()
    row = run_call(stages=stages(scorer=scorer, detect_turn=_turn_at(0.3)), **inputs)
    assert row["truncated"] and row["status"] == "ok"
    front = run_call_front(stages=stages(detect_turn=_turn_at(0.3)), **inputs)
    assert front.turn_text and front.turn_text in scorer.graded
    assert "um" not in front.turn_text.split()  # fillers are not the script's words
    assert row["turn_text_parse_status"] == "ok"
    assert row["score_turn_text"] == FakeScorer().score(inputs["question"], front.turn_text,
                                                        0).score
    assert row["loss_turn_detection"] == row["score_turn_text"] - row["oracle_score"]
    assert row["loss_asr"] == row["score"] - row["score_turn_text"]
    assert row["loss_turn_detection"] + row["loss_asr"] == pytest.approx(
        row["score_minus_oracle"], abs=1e-12)
    assert row["loss_turn_detection"] < 0  # the fake grades by length: truncation costs


def test_no_word_lost_reuses_the_oracle_and_grades_nothing_more(inputs) -> None:  # noqa: F811
    scorer = CountingScorer()
    row = run_call(stages=stages(scorer=scorer, detect_turn=_turn_at(1.0)), **inputs)
    assert not row["truncated"] and row["words_lost"] == 0
    assert scorer.graded == ["I led the night shift"]  # the transcript only
    assert row["score_turn_text"] == row["oracle_score"]
    assert row["turn_text_parse_status"] == row["oracle_parse_status"] == "ok"
    assert row["loss_turn_detection"] == 0.0
    assert row["loss_asr"] == row["score_minus_oracle"]


def test_a_turn_text_parse_failure_is_null_with_its_status(inputs) -> None:  # noqa: F811
    front = run_call_front(stages=stages(detect_turn=_turn_at(0.3)), **inputs)
    scorer = CountingScorer(garbage_for=front.turn_text)
    row = finish_call(front, stages(scorer=scorer))
    assert row["status"] == "ok" and row["score"] is not None
    assert row["score_turn_text"] is None and row["turn_text_parse_status"] == "invalid_json"
    assert row["loss_turn_detection"] is None and row["loss_asr"] is None


def test_a_turn_text_scorer_grades_it_when_given(inputs) -> None:  # noqa: F811
    own = CountingScorer()
    front = run_call_front(stages=stages(detect_turn=_turn_at(0.3)), **inputs)
    row = finish_call(front, stages(turn_text_scorer=own))
    assert own.graded == [front.turn_text] and row["score_turn_text"] is not None


def test_a_failed_front_is_not_scored(inputs) -> None:  # noqa: F811
    def broken(a, o):
        raise RuntimeError("asr down")

    row = run_call(stages=stages(transcribe=broken), **inputs)
    assert row["status"] == "error"
    assert row["turn_text_parse_status"] == "not_scored" and row["score_turn_text"] is None


def test_fillers_drop_changes_what_the_scorer_reads_not_the_transcript(inputs) -> None:  # noqa: F811
    from rig.asr.whisper import Transcript

    pipe = inputs["pipeline"].model_copy(update={"transcript": inputs["pipeline"].transcript
                                                 .model_copy(update={"fillers": "drop"})})
    said = Transcript("Um, I led the, uh, night shift", -0.2, 0.01, 1.0)
    scorer = CountingScorer()
    st = stages(scorer=scorer, transcribe=lambda a, o: said, detect_turn=_turn_at(1.0))
    row = run_call(stages=st, **{**inputs, "pipeline": pipe})
    assert scorer.graded == ["I led the, night shift"]
    assert row["transcript"] == said.text
    keep = run_call(stages=stages(transcribe=lambda a, o: said), **inputs)
    assert keep["wer"] == row["wer"]  # WER is on the transcript as heard


# -- per profile ---------------------------------------------------------------------------------


def attributed_rows(n_answers: int = 8, repeats: int = 2, seed: int = 3) -> pd.DataFrame:
    """Rows with the attribution columns: the profile truncates (a turn-detection loss of
    ~30 points), ASR costs a few points under both, the oracle varies between repeats."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_answers):
        tier = ("weak", "borderline", "strong")[i % 3]
        ref = {"weak": 30.0, "borderline": 60.0, "strong": 85.0}[tier]
        for pid, cut in (("baseline", 0.0), ("long_pauses", 30.0)):
            for r in range(repeats):
                oracle = ref + rng.normal(0, 2)
                stt = oracle - cut * rng.uniform(0.5, 1.5) if cut else oracle
                score = stt - rng.uniform(0, 5)
                out.append({
                    "call_id": f"c{i}{pid}{r}", "answer_id": f"a{i}",
                    "question_id": f"q{i // 3}", "tier": tier, "cutoff": 50.0,
                    "reference_score": ref, "oracle_score": oracle, "profile_id": pid,
                    "repeat": r, "seed": r, "status": "ok", "parse_status": "ok",
                    "score": score, "temperature": 0.0, "transcript": f"t{i}{pid}{r}",
                    "score_minus_oracle": score - oracle, "score_turn_text": stt,
                    "turn_text_parse_status": "ok", "loss_turn_detection": stt - oracle,
                    "loss_asr": score - stt, "truncated": bool(cut)})
    return pd.DataFrame(out)


def test_the_terms_sum_to_the_delta_pair_by_pair_and_in_the_mean() -> None:
    rows = attributed_rows()
    terms = paired_terms(rows, "baseline", "long_pauses")
    assert len(terms) == 8
    np.testing.assert_allclose(terms["turn_detection"] + terms["asr"] + terms["rest"],
                               terms["delta"], atol=1e-12)
    a = profile_attribution(rows, "baseline", "long_pauses", n_boot=500, seed=7)
    assert a["turn_detection"] + a["asr"] + a["rest"] == pytest.approx(a["mean_delta"],
                                                                       abs=1e-9)
    assert a["turn_detection"] < -20 and a["n_pairs"] == 8 and a["n_calls_left_out"] == 0
    # the rest is the oracle grades' paired difference (repeats averaged)
    mean = rows.groupby(["profile_id", "answer_id"])["oracle_score"].mean()
    rest = (mean["long_pauses"] - mean["baseline"]).mean()
    assert a["rest"] == pytest.approx(rest, abs=1e-9)


def test_the_intervals_recomputed_independently() -> None:
    rows = attributed_rows()
    a = profile_attribution(rows, "baseline", "long_pauses", n_boot=400, seed=11)
    per = rows.groupby(["profile_id", "answer_id"])[["loss_turn_detection"]].mean()
    x = (per.loc["long_pauses"] - per.loc["baseline"])["loss_turn_detection"].sort_index()
    x = x.to_numpy()
    idx = np.random.default_rng(11).integers(0, len(x), (400, len(x)))
    lo, hi = np.percentile(x[idx].mean(axis=1), [2.5, 97.5])
    assert a["turn_detection_ci95"] == pytest.approx((lo, hi), abs=1e-9)
    half = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x))
    assert a["turn_detection_t_ci95"] == pytest.approx((x.mean() - half, x.mean() + half),
                                                       abs=1e-9)


def test_the_summary_carries_the_split_and_its_delta_is_the_profiles() -> None:
    rows = attributed_rows()
    s = campaign_summary(rows, campaign_id="c", pipeline_version="v1", n_boot=300, seed=2)
    lp, base = s.profiles["long_pauses"], s.profiles["baseline"]
    assert base.attribution is None and "attribution" not in s.to_dict()["profiles"][
        "baseline"]
    a = lp.attribution
    assert a is not None and a.mean_delta == pytest.approx(lp.mean_delta, abs=1e-9)
    assert a.mean_delta_ci95 == pytest.approx(lp.ci95, abs=1e-9)  # the same resamples
    assert a.mean_delta_t_ci95 == pytest.approx(lp.t_ci95, abs=1e-9)
    assert lp.loss_turn_detection_mean == pytest.approx(
        rows[rows.profile_id == "long_pauses"]["loss_turn_detection"].mean())
    text = split_text(s.to_dict()["profiles"]["long_pauses"]["attribution"])
    assert text.startswith(f"{lp.mean_delta:+.0f} = ") and "turn detection" in text


def test_calls_without_a_turn_text_grade_are_left_out_and_said() -> None:
    rows = attributed_rows()
    bad = rows.index[(rows.profile_id == "long_pauses") & (rows.answer_id == "a0")]
    rows.loc[bad, ["score_turn_text", "loss_turn_detection", "loss_asr"]] = np.nan
    rows.loc[bad, "turn_text_parse_status"] = "invalid_json"
    assert len(attributable(rows)) == len(rows) - 2
    a = profile_attribution(rows, "baseline", "long_pauses", n_boot=100, seed=0,
                            n_pairs_delta=8)
    assert a["n_pairs"] == 7 and a["n_calls_left_out"] == 2
    assert any("1 of the profile's 8 pairs" in n for n in a["notes"])


def test_rows_before_the_columns_give_no_attribution() -> None:
    rows = attributed_rows().drop(columns=["score_turn_text", "turn_text_parse_status",
                                           "loss_turn_detection", "loss_asr"])
    s = campaign_summary(rows, campaign_id="c", pipeline_version="v1", n_boot=50)
    assert s.profiles["long_pauses"].attribution is None
    a = profile_attribution(rows, "baseline", "long_pauses", n_boot=50, seed=0)
    assert a["n_pairs"] == 0 and a["mean_delta"] is None and "mean_delta" in a[
        "not_computable"]


def test_split_text_reads_like_the_issue() -> None:
    a = {"mean_delta": -45.2, "turn_detection": -44.4, "asr": -0.9, "rest": 0.1}
    assert split_text(a) == "-45 = -44 turn detection, -1 ASR, 0 rest"
    assert split_text(None) is None and split_text({"mean_delta": None}) is None


def test_split_text_parts_add_up_to_the_total_shown() -> None:
    # the CI campaign's line read "-82 = -88 turn detection, +5 ASR, 0 rest" (sum -83)
    a = {"mean_delta": -82.2, "turn_detection": -87.6, "asr": 5.4, "rest": 0.0}
    assert split_text(a) == "-82 = -87 turn detection, +5 ASR, 0 rest"
    assert split_text(a, digits=1) == "-82.2 = -87.6 turn detection, +5.4 ASR, 0.0 rest"
    rng = np.random.default_rng(0)
    for _ in range(2000):
        td, asr, rest = rng.normal(0, 30, 3).round(int(rng.integers(1, 4)))
        for digits in (0, 1):
            total = td + asr + rest
            parts = rounded_parts(total, [td, asr, rest], digits)
            assert round(sum(parts), digits) == round(round(total, digits), digits)
            # each part moves by less than one step from its exact value
            exact = (td, asr, rest)
            assert all(abs(p - v) < 10 ** -digits for p, v in zip(parts, exact, strict=True))
    # a split over fewer pairs than the profile's delta says so (an oracle grading timed out)
    assert split_text({**a, "n_pairs": 4}, n_pairs=5) == (
        "-82 = -87 turn detection, +5 ASR, 0 rest (over 4 of 5 pairs: the others lack a grade)")
    assert split_text({**a, "n_pairs": 5}, n_pairs=5) == split_text(a)
    # parts that do not add up to the total: rounded one by one, nothing invented
    assert rounded_parts(10.0, [1.4, 2.4], 0) == [1.0, 2.0]


def test_stages_default_has_no_turn_text_scorer() -> None:
    assert {f.name: f.default for f in dataclasses.fields(Stages)}["turn_text_scorer"] is None
