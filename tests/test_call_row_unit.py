"""The typed call row (rig.campaign.row) and the two halves of a call (run_call_front,
finish_call): round trips through dict, JSON and Parquet, rows of older logs, clear errors on
rows that cannot be placed, ROW_TYPES derived from CallRow, the devices copied from the
stages, and run_call == finish_call(run_call_front(...)) across a pickle. Fakes replace the
render, line, VAD, ASR and scorer (the real stages have their own integration tests)."""

from __future__ import annotations

import dataclasses
import json
import pickle
import typing
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rig.answers import load_bank
from rig.asr.whisper import Transcript
from rig.audio import Audio
from rig.campaign.call import finish_call, run_call, run_call_front
from rig.campaign.front import FrontResult
from rig.campaign.row import (
    COLUMNS,
    ROW_TYPES,
    RUNTIME_COLUMNS,
    TRANSPORT_COLUMNS,
    CallRow,
    comparable,
    normalized_row,
)
from rig.campaign.store import CallLog, write_parquet
from rig.errors import RigError
from rig.pipeline import load_pipeline
from rig.profiles import load_profiles
from rig.scorer.fake import FakeScorer
from rig.stages import Stages
from rig.synth.base import RenderedAnswer, WordTiming
from rig.vad import TurnResult

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
SR = 8000


def fake_render(script, profile, seed, *, answer_id="", resolve_path=None, cache_dir=None):
    from rig.script import reference_text

    words, t = [WordTiming("um", 0.1, 0.3, True)], 0.4
    for w in reference_text(script).split():
        words.append(WordTiming(w, t, t + 0.25))
        t += 0.3
    return RenderedAnswer(audio=Audio(np.zeros(int((t + 1) * SR), np.float32), SR),
                          words=tuple(words), speech_start_s=0.1, speech_end_s=t,
                          snr_db_measured=np.float64(21.5), engine="fake", voice_id="x",
                          render_key="k", engine_version="fake 1", rate=1.0,
                          wpm_measured=150.0, pauses_total_s=0.0)


class _BrokenScorer(FakeScorer):
    def score(self, question, transcript, seed):
        raise RuntimeError("judge fell over")


def stages(**kw) -> Stages:
    base = dict(scorer=FakeScorer(), render=fake_render, caller_channel=lambda a, c, s: a,
                telephony=lambda a, sr, codec: a,
                detect_turn=lambda a, p: TurnResult(0.1, a.duration_s * 0.6,
                                                    "silence_timeout", ()),
                transcribe=lambda a, o: Transcript("I led the night shift", np.float32(-0.25),
                                                   0.01, a.duration_s),
                content_similarity=lambda ref, hyp: 0.5)
    base.update(kw)
    return Stages(**base)


@pytest.fixture(scope="module")
def inputs() -> dict:
    bank = load_bank(ROOT / "answer_bank" / "core")
    question, answer = bank.answers()[0]
    profile = load_profiles(ROOT / "profiles" / "demo").baseline
    oracle = FakeScorer().score(question, answer.clean_text, 0)
    return dict(question=question, answer=answer, profile=profile, repeat=0, seed=0,
                pipeline=load_pipeline(ROOT / "pipelines" / "reference.yaml"),
                pipeline_version="v1", campaign_id="c", oracle=oracle)


@pytest.fixture(scope="module")
def row(inputs) -> dict:
    return run_call(stages=stages(asr_device="cpu", scorer_device="cuda"), **inputs)


def test_row_types_are_derived_from_callrow() -> None:
    kinds = {str: "string", float: "float64", int: "int64", bool: "bool"}
    hints = typing.get_type_hints(CallRow)
    derived = {f.name: kinds[next(a for a in typing.get_args(hints[f.name])
                                  if a is not type(None))]
               for f in dataclasses.fields(CallRow)}
    assert derived == ROW_TYPES and tuple(ROW_TYPES) == COLUMNS
    assert list(ROW_TYPES) == list(derived)  # the order too: calls.parquet's column order
    assert set(TRANSPORT_COLUMNS) <= set(COLUMNS)
    assert ROW_TYPES["asr_device"] == ROW_TYPES["scorer_device"] == "string"
    assert ROW_TYPES["truncated"] == "bool" and ROW_TYPES["repeat"] == "int64"


def test_run_call_returns_every_column_typed(row) -> None:
    assert list(row) == list(COLUMNS)
    assert row["status"] == "ok", row.get("error")
    py = {"string": str, "float64": float, "int64": int, "bool": bool}
    for k, v in row.items():
        assert v is None or type(v) is py[ROW_TYPES[k]], (k, v, type(v))
    # numpy scalars from the stages become Python numbers
    assert row["asr_avg_logprob"] == -0.25 and row["snr_db_measured"] == 21.5
    assert row["fillers_spoken"] == 1 and row["repetitions_spoken"] == 0
    assert row["voice_version"] == "fake 1" and row["pace_wpm_measured"] == 150.0
    assert row["asr_device"] == "cpu" and row["scorer_device"] == "cuda"
    assert row["transport"] == "sim"


def test_devices_are_null_when_the_stages_do_not_say(inputs) -> None:
    r = run_call(stages=stages(), **inputs)
    assert r["asr_device"] is None and r["scorer_device"] is None


def test_round_trip_through_dict_json_and_the_log(row, tmp_path: Path) -> None:
    assert CallRow.from_dict(row).to_dict() == row
    assert CallRow.from_dict(json.loads(json.dumps(row))).to_dict() == row
    log = CallLog(tmp_path / "calls.jsonl")
    log.append(row)
    again = CallLog(tmp_path / "calls.jsonl").rows()
    assert [normalized_row(r) for r in again] == [row]


def test_parquet_schema_of_a_row(row, tmp_path: Path) -> None:
    failed = {"call_id": "f", "status": "error", "error": "render: boom", "transport": "sim"}
    path = write_parquet([row, normalized_row(failed)], tmp_path / "calls.parquet",
                         types=ROW_TYPES)
    schema = pq.read_schema(path)
    arrow = {"string": pa.large_string(), "float64": pa.float64(), "int64": pa.int64(),
             "bool": pa.bool_()}
    assert schema.names == list(COLUMNS)
    assert {n: schema.field(n).type for n in schema.names} == {
        n: arrow[k] for n, k in ROW_TYPES.items()}
    back = pq.read_table(path).to_pylist()
    assert CallRow.from_dict(back[0]).to_dict() == row


def test_a_row_of_an_older_log_reads_with_nulls() -> None:
    old = {"call_id": "abc", "campaign_id": "c", "status": "ok", "score": 70,
           "truncated": False, "repeat": 0}
    r = CallRow.from_dict(old)
    assert r.transport == "sim"  # logged before transport columns: a simulated call
    assert r.asr_device is None and r.t_asr_s is None and r.recording_path is None
    assert r.score == 70.0 and type(r.score) is float
    assert set(r.to_dict()) == set(COLUMNS)
    assert CallRow.from_dict({**old, "transport": "webrtc"}).transport == "webrtc"


def test_a_row_that_cannot_be_placed_is_a_clear_error() -> None:
    with pytest.raises(RigError, match=r"'abc'.*unknown column.*'scroe'"):
        CallRow.from_dict({"call_id": "abc", "scroe": 70.0})
    with pytest.raises(RigError, match=r"'abc'.*column 'repeat' is int, got 2.5"):
        CallRow.from_dict({"call_id": "abc", "repeat": 2.5})
    with pytest.raises(RigError, match=r"column 'score' is float, got '70'"):
        CallRow(call_id="abc", score="70")  # type: ignore[arg-type]
    with pytest.raises(RigError, match=r"column 'words_lost' is int, got True"):
        CallRow(call_id="abc", words_lost=True)  # type: ignore[arg-type]
    with pytest.raises(RigError, match=r"column 'truncated' is bool, got 1"):
        CallRow(call_id="abc", truncated=1)  # type: ignore[arg-type]


def test_numbers_are_normalised() -> None:
    r = CallRow(call_id="x", repeat=np.int64(2), words_total=3.0, score=np.float32(0.5),
                wer=float("nan"), truncated=np.bool_(True), cutoff=60)  # type: ignore[arg-type]
    assert (r.repeat, r.words_total, r.score, r.wer, r.truncated, r.cutoff) == (
        2, 3, 0.5, None, True, 60.0)
    assert [type(v) for v in (r.repeat, r.words_total, r.score, r.truncated, r.cutoff)] == [
        int, int, float, bool, float]


def test_run_call_is_its_two_halves_across_a_pickle(inputs, row) -> None:
    st = stages(asr_device="cpu", scorer_device="cuda")
    front = run_call_front(stages=st, **inputs)
    assert isinstance(front, FrontResult) and not front.failed
    assert front.transcript == "I led the night shift" and "score" in front.row
    assert front.row["parse_status"] == "not_scored" and "t_scorer_s" not in front.row
    moved = pickle.loads(pickle.dumps(front))
    assert comparable(finish_call(moved, st)) == comparable(row)
    assert comparable(run_call(stages=st, **inputs)) == comparable(row)


def test_a_failed_front_is_finished_unscored(inputs) -> None:
    def render(*a, **k):
        raise RuntimeError("no voice")

    scorer = FakeScorer()
    front = run_call_front(stages=stages(render=render, scorer=scorer), **inputs)
    assert front.failed and front.transcript is None
    r = finish_call(front, stages(scorer=_BrokenScorer()))  # never reaches the scorer
    assert r["status"] == "error" and r["error"] == "render: RuntimeError: no voice"
    assert r["score"] is None and r["parse_status"] == "not_scored"
    assert r["t_synth_s"] is None and r["t_scorer_s"] is None


def test_a_scorer_failure_is_recorded(inputs) -> None:
    r = run_call(stages=stages(scorer=_BrokenScorer()), **inputs)
    assert r["status"] == "error" and r["error"] == "scorer: RuntimeError: judge fell over"
    assert r["transcript"] == "I led the night shift" and r["wer"] is not None
    assert r["t_asr_s"] is not None and r["t_scorer_s"] is None and "judge fell" in r["traceback"]


def test_comparable_leaves_out_only_runtime_columns(row) -> None:
    c = comparable(row)
    assert set(row) - set(c) == RUNTIME_COLUMNS
    assert set(COLUMNS) >= RUNTIME_COLUMNS
    assert {k for k in RUNTIME_COLUMNS if k.startswith("t_")} == {
        k for k in COLUMNS if k.startswith("t_") and k.endswith("_s")}


def test_rendered_answer_takes_only_typed_words() -> None:
    from types import SimpleNamespace

    audio = Audio(np.zeros(8, np.float32), SR)
    kw = dict(audio=audio, speech_start_s=0.0, speech_end_s=0.0, snr_db_measured=None,
              engine="e", voice_id="v", render_key="k", engine_version="1", rate=None,
              wpm_measured=None, pauses_total_s=0.0)
    with pytest.raises(TypeError, match="WordTiming"):
        RenderedAnswer(words=(SimpleNamespace(word="a", start_s=0, end_s=1, is_filler=False),),
                       **kw)
    with pytest.raises(TypeError):  # a render states its facts: no defaults
        RenderedAnswer(words=(), **{k: v for k, v in kw.items() if k != "engine_version"})
    assert RenderedAnswer(words=(WordTiming("a", 0, 1),), **kw).count("word") == 1


def test_docs_list_every_column() -> None:
    text = (ROOT / "docs" / "calls.md").read_text(encoding="utf-8")
    missing = [c for c in COLUMNS if f"`{c}`" not in text]
    assert not missing, f"docs/calls.md does not describe {missing}"
