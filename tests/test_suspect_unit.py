"""rig.asr.checks on hand-built transcripts and turns (the rules' logic; the real ASR and VAD
are in tests/test_suspect_integration.py), and the per-profile rates in summary.json."""

from __future__ import annotations

import pandas as pd
import pytest

from rig.answers import load_bank
from rig.asr.checks import asr_suspect, longest_repeat, suspect_columns, turn_suspect
from rig.asr.whisper import AsrSegment, Transcript
from rig.campaign.summary import _flag_rate
from rig.scorer.base import TranscriptTooLong
from rig.scorer.fake import FakeScorer
from rig.vad import TurnResult

pytestmark = pytest.mark.unit


def tr(*segs: AsrSegment, lp: float | None = -0.3) -> Transcript:
    text = " ".join(s.text for s in segs)
    return Transcript(text, lp if segs else None, max((s.no_speech_prob for s in segs),
                                                       default=None),
                      max((s.end_s for s in segs), default=0.0), segs)


def seg(text: str, a: float = 0.5, b: float = 2.5, nsp: float = 0.05,
        cr: float | None = 1.4) -> AsrSegment:
    return AsrSegment(a, b, text, -0.3, nsp, cr)


SPEECH = ((0.4, 2.6),)


def test_a_clean_transcript_on_speech_passes() -> None:
    assert asr_suspect(tr(seg("I led the migration to Postgres.")), SPEECH, 3.0) == (False, None)


def test_asr_not_run_is_not_checked() -> None:
    assert asr_suspect(None, SPEECH, 3.0) == (None, None)


def test_text_where_the_vad_found_no_speech_is_flagged() -> None:
    flag, why = asr_suspect(tr(seg("Thank you.")), (), 3.0)
    assert flag and why.startswith("text_without_speech")


def test_a_segment_outside_every_speech_segment_is_flagged() -> None:
    flag, why = asr_suspect(tr(seg("Yes.", 0.5, 1.5), seg("Thanks for watching.", 5.0, 6.0)),
                            ((0.4, 1.6),), 7.0)
    assert flag and "text_without_speech" in why and "5.00" in why


def test_empty_text_on_silence_passes() -> None:
    assert asr_suspect(tr(), (), 3.0) == (False, None)


def test_a_high_no_speech_prob_with_text_is_flagged() -> None:
    flag, why = asr_suspect(tr(seg("you", nsp=0.8)), SPEECH, 3.0)
    assert flag and why.startswith("no_speech: no_speech_prob 0.80")


def test_a_repetition_loop_is_flagged_while_confidence_stays_high() -> None:
    loop = "I think that " + "we should go to the " * 6 + "end"
    flag, why = asr_suspect(tr(seg(loop), lp=-0.1), SPEECH, 3.0)
    assert flag and "repetition_loop: 'we should go to the' x6 (avg_logprob -0.10)" in why


def test_whispers_compression_ratio_flags_a_loop_the_ngrams_miss() -> None:
    flag, why = asr_suspect(tr(seg("one two three", cr=3.1)), SPEECH, 3.0)
    assert flag and "compression ratio 3.10 > 2.4" in why


@pytest.mark.parametrize("text, phrase, k", [
    ("", "", 0), ("yes", "yes", 1), ("no, no, no", "no", 3),
    ("so so. The thing is the thing is the thing is", "the thing is", 3),
    ("I’m here I'm here I’M HERE I'm here", "i'm here", 4)])
def test_longest_repeat(text: str, phrase: str, k: int) -> None:
    assert longest_repeat(text) == (phrase, k)


def test_natural_emphasis_is_not_a_loop() -> None:
    assert asr_suspect(tr(seg("No, no, no, that was not my team.")), SPEECH, 3.0)[0] is False


def test_timestamps_past_the_end_of_the_audio_are_flagged() -> None:
    flag, why = asr_suspect(tr(seg("Yes I did.", 0.5, 5.2)), ((0.4, 5.0),), 3.0)
    assert flag and why == "timestamps_past_end: a segment ends at 5.20 s, audio 3.00 s"
    # a predicted end timestamp a little past the end is Whisper's normal overshoot
    assert asr_suspect(tr(seg("Yes I did.", 0.5, 4.1)), ((0.4, 4.0),), 3.0) == (False, None)


def test_several_failures_are_all_named() -> None:
    _, why = asr_suspect(tr(seg("go " * 10, 0.5, 9.0, nsp=0.9)), (), 3.0)
    assert [r.split(":")[0] for r in why.split("; ")] == [
        "text_without_speech", "no_speech", "repetition_loop", "timestamps_past_end"]


def test_a_normal_turn_passes() -> None:
    assert turn_suspect(0.5, 3.4, "silence_timeout", ((0.5, 2.6),), 0.5, 200) == (False, None)


def test_a_turn_without_detected_speech_on_an_answer_is_flagged() -> None:
    flag, why = turn_suspect(None, 3.0, "no_speech", (), 0.5, 200)
    assert flag and why.startswith("no_speech_detected")


def test_no_speech_detected_on_an_answer_without_speech_is_fine() -> None:
    assert turn_suspect(None, 3.0, "no_speech", (), None, 200) == (False, None)


def test_a_turn_that_closed_before_the_answer_began_is_flagged() -> None:
    flag, why = turn_suspect(0.1, 1.0, "silence_timeout", ((0.1, 0.2),), 1.5, 200)
    assert flag and why == "closed_before_speech: closed at 1.00 s, speech began at 1.50 s"


def test_speech_shorter_than_twice_the_start_window_is_flagged() -> None:
    flag, why = turn_suspect(0.5, 1.6, "silence_timeout", ((0.5, 0.8),), 0.5, 200)
    assert flag and why == "short_speech: 0.30 s of speech < 2 x start window (200 ms)"


def test_suspect_columns_are_the_four_row_columns() -> None:
    turn = TurnResult(None, 3.0, "no_speech", ())
    cols = suspect_columns(tr(seg("Thank you.")), turn, 3.0, 0.5, 200)
    assert cols["asr_suspect"] is True and cols["turn_suspect"] is True
    assert set(cols) == {"asr_suspect", "asr_suspect_reason", "turn_suspect",
                         "turn_suspect_reason"}


def test_profile_rates_count_only_checked_calls() -> None:
    g = pd.DataFrame({"asr_suspect": [True, False, None, False],
                      "turn_suspect": [None, None, None, None]})
    assert _flag_rate(g, "asr_suspect") == pytest.approx(1 / 3)
    assert _flag_rate(g, "turn_suspect") is None
    assert _flag_rate(g.drop(columns="asr_suspect"), "asr_suspect") is None


class _Backend(FakeScorer):
    def _complete(self, system, user, grammar, seed, *, head="", deadline=None):
        if len(user) > 5000:
            raise TranscriptTooLong("over the judge's context of 64 tokens (n_ctx); not scored")
        return super()._complete(system, user, grammar, seed, head=head, deadline=deadline)


def test_too_long_is_a_status_never_a_score_or_an_error() -> None:
    q, a = next(iter(load_bank("answer_bank/mini").answers()))
    s = _Backend()
    assert s.score(q, a.clean_text, 0).parse_status == "ok"
    res = s.score(q, "word " * 3000, 0)
    assert (res.parse_status, res.score, res.error) == (
        "too_long", None, "over the judge's context of 64 tokens (n_ctx); not scored")
    done = s.complete("sys", "x" * 6000, grammar="", parse=lambda r: None, seed=0)
    assert done.parse_status == "too_long" and done.value is None


def test_summary_rates_reach_summary_json_and_the_cli_line(tmp_path, capsys) -> None:
    from test_attribution_unit import attributed_rows

    from rig.campaign.summary import campaign_summary
    from rig.cli.campaign import _print_summary

    rows = attributed_rows()
    lp = rows["profile_id"] == "long_pauses"
    rows["asr_suspect"] = False
    rows["turn_suspect"] = lp & (rows.index % 2 == 0)
    s = campaign_summary(rows, campaign_id="c", pipeline_version="v1", n_boot=50)
    prof = s.profiles["long_pauses"]
    ok = rows[lp & (rows["status"] == "ok")]
    assert prof.turn_suspect_rate == pytest.approx(ok["turn_suspect"].mean())
    assert prof.asr_suspect_rate == 0.0
    assert s.profiles["baseline"].turn_suspect_rate == 0.0
    _print_summary(s, tmp_path)
    out = capsys.readouterr().out
    assert "long_pauses: suspect ASR on 0.000, suspect turns on" in out
    assert "baseline: suspect" not in out
    old = campaign_summary(rows.drop(columns=["asr_suspect", "turn_suspect"]), campaign_id="c",
                           pipeline_version="v1", n_boot=50).to_dict()
    assert old["profiles"]["long_pauses"]["asr_suspect_rate"] is None  # rows before 1.3


@pytest.mark.parametrize("status, body", [
    (400, '{"error": {"message": "This model\'s maximum context length is 8192 tokens.", '
          '"code": "context_length_exceeded"}}'),
    (400, '{"error": {"code": 400, "message": "the request exceeds the available context '
          'size, try increasing it", "type": "exceed_context_size_error"}}')])
def test_an_endpoint_refusing_a_long_prompt_is_too_long(status: int, body: str) -> None:
    from test_probes_openai_unit import Endpoint

    from rig.scorer.openai_compat import OpenAICompatScorer

    q, _ = next(iter(load_bank("answer_bank/mini").answers()))
    ep = Endpoint()
    ep.script[1] = (status, body)
    try:
        res = OpenAICompatScorer(ep.base_url, "m", None).score(q, "word " * 9000, 0)
    finally:
        ep.close()
    assert (res.parse_status, res.score) == ("too_long", None) and "HTTP 400" in res.error
    assert len(ep.requests) == 1  # not retried
