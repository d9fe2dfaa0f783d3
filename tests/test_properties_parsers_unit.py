"""Property tests (hypothesis, ``ci`` profile of ``tests/props.py``) for what reads untrusted
text: the scorer's reply parser and the probes' Likert and decision parsers (any string -> a
score in range or a parse failure, never an exception), the YAML loaders (any mapping or any
bytes -> :class:`~rig.errors.ConfigError` or a valid object) and the monitor's call-metadata
parser (any record -> ConfigError or a valid :class:`~rig.monitor.meta.CallMeta`)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from props import CI, counted

from rig.answers import load_bank
from rig.config import load_model, read_yaml
from rig.errors import ConfigError
from rig.gate.policy import GatePolicy, load_policy
from rig.monitor.config import MonitorConfig, load_config
from rig.monitor.meta import CallMeta, parse_meta
from rig.pipeline import PipelineConfig, load_pipeline
from rig.probes.prompts import parse_decision, parse_rating
from rig.scorer.prompt import parse_reply

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
QUESTION = load_bank(ROOT / "answer_bank" / "core").questions[0]
CRITERIA = [c.id for c in QUESTION.rubric]

# --- values of any JSON/YAML shape ---------------------------------------------------------
leaves = (st.none() | st.booleans() | st.integers(-10**20, 10**20)
          | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=30)
          | st.sampled_from(["no", "on", "yes", "off", "1e3", "0x1F", "12:30", "", " ", "nan",
                             "2025-01-01", "2025-01-01T12:00:00", "true", "null", "~", "-1"]))


def values(keys: list[str]):
    return st.recursive(
        leaves, lambda inner: st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(keys) | st.text(max_size=12), inner, max_size=5),
        max_leaves=12)


def model_keys(model) -> list[str]:
    keys = list(model.model_fields)
    for f in model.model_fields.values():
        sub = getattr(f.annotation, "model_fields", None)
        if sub:
            keys += list(sub)
    return keys


# --- scorer and probe replies --------------------------------------------------------------
def _reply_texts():
    numbers = (st.integers(-1000, 1000) | st.floats() | st.text(max_size=6) | st.none()
               | st.booleans() | st.sampled_from(["4", " 3 ", "²", "٣", "1e1", "Infinity"]))
    points = st.dictionaries(st.sampled_from(CRITERIA) | st.text(max_size=8), numbers,
                             max_size=len(CRITERIA) + 1)
    objs = st.fixed_dictionaries({}, optional={
        "points": points | numbers, "reason": st.text(max_size=20) | numbers,
        "score": numbers, "reasoning": st.text(max_size=20) | numbers,
        "decision": st.sampled_from(["advance", "Do-Not_advance", "advance with reservations",
                                     "ADVANCE", "maybe"]) | numbers})
    as_json = objs.map(lambda o: json.dumps(o, allow_nan=True))
    cut = st.tuples(as_json, st.integers(0, 200)).map(lambda t: t[0][: t[1]])  # truncated
    fenced = as_json.map(lambda s: f"Sure!\n```json\n{s}\n```\nThanks")
    return st.text() | as_json | cut | fenced | st.sampled_from(
        ['{"points": {"a": Infinity}}', '{"score": NaN, "reasoning": "x"}',
         "{" * 3000 + "}" * 3000, '{"a":' * 5000 + "1" + "}" * 5000,
         '{"score": "4", "reasoning": "ok"}', '{"score": "²", "reasoning": "ok"}',
         *(json.dumps({"points": {c: v for c in CRITERIA}}) for v in (1e400, -1e400))])


replies = _reply_texts()


@CI
@given(raw=replies)
@counted
def test_scorer_reply_gives_a_score_in_range_or_a_parse_failure(raw):
    r = parse_reply(raw, QUESTION)
    if r.status == "ok":
        assert r.score is not None and 0.0 <= r.score <= 100.0 and math.isfinite(r.score)
        assert set(r.points) == set(CRITERIA)
    else:
        assert r.score is None and r.status in ("invalid_json", "missing_field", "out_of_range")


@CI
@given(raw=replies | st.builds(lambda c: json.dumps({"points": {c: 1e400}}),
                               st.sampled_from(CRITERIA)))
@counted
def test_likert_and_decision_parsers_never_raise(raw):
    rating = parse_rating(raw)
    if rating.status == "ok":
        assert rating.value.score in (1, 2, 3, 4, 5)
    else:
        assert rating.value is None
    decision = parse_decision(raw)
    assert (decision.status == "ok") == (decision.value is not None)


def _logprob_content():
    digits = st.sampled_from(["0", "1", "2", "3", "4", " 3", "7", "x", ""])
    lp = st.floats() | st.integers(-10**6, 10**6) | st.none() | st.text(max_size=3)
    alt = st.fixed_dictionaries({}, optional={"token": digits | st.text(max_size=4),
                                              "logprob": lp}) | leaves
    tok = st.fixed_dictionaries({}, optional={
        "token": digits | st.sampled_from([f'"{c}":' for c in CRITERIA] + ['{"', ", ", "}"])
        | st.text(max_size=6) | leaves,
        "logprob": lp, "top_logprobs": st.lists(alt, max_size=6) | leaves}) | leaves
    return st.lists(tok, max_size=3 * len(CRITERIA) + 4)


@CI
@given(content=_logprob_content())
@counted
def test_levels_from_any_logprobs_give_a_score_in_range_or_a_failure(content):
    from rig.scorer.levels import score_levels
    from rig.scorer.openai_levels import levels_from_logprobs

    reply = levels_from_logprobs(content, CRITERIA)
    result = score_levels(QUESTION, reply.distributions)
    if result.status == "ok":
        assert result.score is not None and 0.0 <= result.score <= 100.0
    else:
        assert result.score is None


# --- YAML loaders --------------------------------------------------------------------------
LOADERS = {"pipeline": (PipelineConfig, load_pipeline),
           "monitor": (MonitorConfig, load_config),
           "gate policy": (GatePolicy, load_policy)}


@pytest.mark.parametrize("name", sorted(LOADERS))
@CI
@given(data=st.data())
@counted
def test_yaml_loaders_give_a_config_error_or_a_valid_object(name, data, tmp_path_factory):
    model, load = LOADERS[name]
    mapping = data.draw(st.dictionaries(st.sampled_from(model_keys(model)) | st.text(max_size=8),
                                        values(model_keys(model)), max_size=6))
    try:
        obj = load_model("x.yaml", model, mapping)
    except ConfigError as exc:
        assert str(exc).startswith("x.yaml")
    else:
        assert isinstance(obj, model)
    path = tmp_path_factory.mktemp("yaml") / "config.yaml"
    path.write_text(yaml.safe_dump(mapping, allow_unicode=True), encoding="utf-8")
    try:
        assert isinstance(load(path), model)
    except ConfigError as exc:
        assert str(exc).startswith(str(path))


# one real file of each kind, with one value anywhere in it replaced by any value: the
# validators deep inside a model run, not only the top-level ones
VALID = {"pipeline": ROOT / "pipelines" / "reference.yaml",
         "question": ROOT / "answer_bank" / "core" / "q01_conflict.yaml",
         "profile": ROOT / "profiles" / "core" / "baseline.yaml"}


def _paths(obj, here=()):
    yield here
    items = obj.items() if isinstance(obj, dict) else (
        enumerate(obj) if isinstance(obj, list) else ())
    for k, v in items:
        yield from _paths(v, (*here, k))


def _replace(obj, path, value):
    if not path:
        return value
    out = dict(obj) if isinstance(obj, dict) else list(obj)
    out[path[0]] = _replace(obj[path[0]], path[1:], value)
    return out


def _load_kind(kind: str, folder: Path, data) -> object:
    from rig.answers import AnswerBank
    from rig.profiles.loader import load_profiles

    name = "baseline.yaml" if kind == "profile" else "file.yaml"
    path = folder / name
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    if kind == "pipeline":
        out = load_pipeline(path)
        assert isinstance(out, PipelineConfig)
    elif kind == "question":
        out = load_bank(path)
        assert isinstance(out, AnswerBank) and len(out.questions) == 1
    else:
        out = load_profiles(folder)
    return out


@pytest.mark.parametrize("kind", sorted(VALID))
@CI
@given(data=st.data())
@counted
def test_a_valid_file_with_any_value_replaced_loads_or_names_the_file(kind, data,
                                                                      tmp_path_factory):
    base = yaml.safe_load(VALID[kind].read_text(encoding="utf-8"))
    path = data.draw(st.sampled_from(list(_paths(base))[1:]))
    value = data.draw(values(["id", "text", "points", "name", "kind", "db", "x"]))
    folder = tmp_path_factory.mktemp(kind)
    try:
        _load_kind(kind, folder, _replace(base, path, value))
    except ConfigError as exc:
        assert str(exc).startswith(str(folder)), str(exc)


@CI
@given(raw=st.binary(max_size=300) | st.text(max_size=300).map(str.encode)
       | st.sampled_from([b"a: 1\na: 2\n", b"\ta: 1\n", b"a: [1,\n", b"\xff\xfe", b"- x\n",
                          b"a: &x [*x]\n", b"!!python/object:os.system 'true'\n"]))
@counted
def test_read_yaml_on_any_bytes_gives_a_config_error_or_data(raw, tmp_path_factory):
    path = tmp_path_factory.mktemp("yaml") / "any.yaml"
    path.write_bytes(raw)
    try:
        read_yaml(path)
    except ConfigError as exc:
        assert str(exc).startswith(str(path))
    for model, load in LOADERS.values():
        try:
            assert isinstance(load(path), model)
        except ConfigError as exc:
            assert str(exc).startswith(str(path))


# --- monitor call metadata -----------------------------------------------------------------
META_KEYS = list(CallMeta.model_fields)
timestamps = st.datetimes().map(lambda d: d.isoformat()) | st.sampled_from(
    ["2025-01-13T09:00:00Z", "2025-01-13 09:00", "13/01/2025", "", "2025-13-45T99:00:00"])


@CI
@given(record=st.fixed_dictionaries({}, optional={
    "call_id": st.text(max_size=20) | leaves, "timestamp": timestamps | leaves,
    "employer": st.text(max_size=10) | leaves, "job_family": st.text(max_size=10) | leaves,
    "score": leaves, "decision": leaves | st.sampled_from(["advance", "No", "1", "pass"]),
    "layout": leaves | st.sampled_from(["MONO", "candidate_left", " "]),
    "repeat_requests": leaves, "language": leaves, "audio": leaves,
    "phone": st.text(max_size=10)}) | values(META_KEYS))
@counted
def test_sidecar_parser_gives_a_config_error_or_valid_metadata(record):
    try:
        meta = parse_meta(record, "call.json")
    except ConfigError as exc:
        assert str(exc).startswith("call.json")
        return
    assert meta.timestamp.utcoffset() is not None
    assert meta.score is None or math.isfinite(meta.score)
    assert meta.decision in (None, "advance", "reject")
    assert "phone" not in meta.model_dump()
    meta.content_sha256()
