"""Running a sweep: each variant's calls, re-running only the stages downstream of its change.

For each variant (:mod:`rig.sweep.plan`) every call the campaign made is made again, with the
same question, answer, profile, repeat and seed, under the variant's pipeline (its own
``pipeline_version``, so its own call ids). What is re-run depends on ``rerun_from``:

* ``channel`` / ``turn``: the whole front half of the call
  (:func:`rig.campaign.call.run_call_front`) with the render read from the render cache
  (the campaign's renders: the same ``audio_cache_dir``, default
  :func:`rig.synth.cache.default_cache_dir`, so no speech is synthesised again), then
  scoring.
* ``asr``: the front half with the turn detector replaced by the campaign row's turn
  (``turn_speech_start_s``, ``turn_close_s``, ``turn_closed_by``): the line is rebuilt from the
  cached render (cheap, deterministic) and only ASR, WER and similarity run, then scoring.
* ``score``: the campaign row's front half as it is (transcript included); scoring only.

A campaign call that failed is re-run whole. The oracle grade of each script is the
campaign's (``oracle.jsonl``) unless the variant changes the scorer, when the scripts are
graded again by the variant's scorer. Stage times (``t_*_s``) of a reused stage are the
campaign's: they are the cost of that pipeline, not of the sweep.

Each variant logs to ``OUT/variants/<variant_id>/calls.jsonl``; running the sweep again skips
the calls logged ``ok`` there (resumable like a campaign). Calls run one after another in this
process (the models are loaded once and kept, :func:`rig.runtime.build_stages`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rig.answers import load_bank
from rig.campaign.call import call_id, finish_call, run_call_front
from rig.campaign.executors import ProfilePaths
from rig.campaign.front import FrontResult
from rig.campaign.store import CallLog
from rig.errors import ConfigError
from rig.jsonfile import read_json
from rig.paths import make_out_dir, remove_partials
from rig.pipeline import PipelineConfig
from rig.profiles import load_profiles
from rig.scorer.base import ScoreResult
from rig.stages import Stages
from rig.sweep.plan import Variant
from rig.vad import TurnResult

#: Columns ``finish_call`` writes (or a scorer-side column added later: prefixes), dropped
#: from a campaign row before it is scored again.
_SCORING_PREFIXES = ("score", "scorer_", "loss_", "turn_text_", "decision", "t_scorer_s",
                     "status", "error", "traceback", "parse_status")


@dataclass(frozen=True)
class Campaign:
    """A finished campaign as a sweep reads it (``campaign.json`` and ``calls.parquet``).

    Attributes:
        folder: the campaign's output folder; meta: ``campaign.json``.
        pipeline: the campaign's pipeline; version: its ``pipeline_version`` as recorded.
        rows: ``calls.parquet`` as a DataFrame (one row per planned call).
        baseline: the baseline profile id of the profile set.
    """
    folder: Path
    meta: dict
    pipeline: PipelineConfig
    version: str
    rows: pd.DataFrame
    baseline: str
    bank: object
    profiles: object


def _input_path(folder: Path, recorded: str, field: str) -> Path:
    p = Path(recorded)
    for cand in (p, folder / p, folder.parent / p):
        if cand.exists():
            return cand
    raise ConfigError(folder / "campaign.json", field, "no such file or folder (run the sweep "
                      "from where the campaign was run)", recorded, True)


def load_campaign(folder: Path) -> Campaign:
    """Read a campaign folder.

    Raises:
        ConfigError: no ``campaign.json`` or ``calls.parquet``, an input it names is missing,
            or its ``pipeline`` no longer validates (names the file and field)."""
    folder = Path(folder)
    meta_path = folder / "campaign.json"
    if not folder.is_dir():
        raise ConfigError(folder, "CAMPAIGN_DIR", "no such folder (give a campaign's --out "
                          "folder)")
    if not meta_path.is_file() or not (folder / "calls.parquet").is_file():
        raise ConfigError(folder, "CAMPAIGN_DIR", "not a finished campaign folder (needs "
                          "campaign.json and calls.parquet: run `rig campaign run` first)")
    meta = read_json(meta_path)
    if meta.get("transport", "sim") != "sim":
        raise ConfigError(meta_path, "transport", "a sweep re-runs simulated calls only",
                          meta.get("transport"))
    try:
        pipeline = PipelineConfig.model_validate(meta["pipeline"])
    except Exception as exc:  # pydantic's message names the field
        raise ConfigError(meta_path, "pipeline", f"does not validate: {exc}") from None
    bank = load_bank(_input_path(folder, meta["answers_path"], "answers_path"))
    profiles = load_profiles(_input_path(folder, meta["profiles_path"], "profiles_path"))
    rows = pd.read_parquet(folder / "calls.parquet")
    return Campaign(folder, meta, pipeline, meta["pipeline_version"], rows,
                    profiles.baseline.profile_id, bank, profiles)


@dataclass(frozen=True)
class _ReusedTurn:
    """A turn detector that returns the campaign's turn (an ASR-only variant)."""
    turn: TurnResult

    def __call__(self, audio, params) -> TurnResult:
        return self.turn


def _turn_of(row: dict) -> TurnResult:
    return TurnResult(row.get("turn_speech_start_s"), float(row["turn_close_s"]),
                      row.get("turn_closed_by") or "silence_timeout", ())


def _clean(v: object) -> object:
    if isinstance(v, float) and v != v:
        return None
    return v.item() if hasattr(v, "item") else v


def _identity(pipeline: PipelineConfig, version: str, cid: str, campaign_id: str) -> dict:
    return {"call_id": cid, "pipeline_version": version, "campaign_id": campaign_id,
            "asr_model": pipeline.asr.model, "scorer_model": pipeline.scorer.model,
            "temperature": pipeline.scorer.temperature,
            "silence_timeout_ms": pipeline.endpointing.silence_timeout_ms}


class _Oracle:
    """The oracle grade of a call: the campaign's, or the variant's scorer's (persisted)."""

    def __init__(self, camp: Campaign, variant: Variant, stages: Stages, folder: Path) -> None:
        from rig.campaign.runner import OracleCache

        self.camp, self.variant = camp, variant
        self.cache = (OracleCache(folder / "oracle.jsonl", stages.scorer, variant.version)
                      if variant.regrade_oracle else None)

    def get(self, question, answer, seed: int, row: dict) -> ScoreResult:
        if self.cache is not None:
            return self.cache.get(question, answer, seed)
        score = row.get("oracle_score")
        return ScoreResult(score, row.get("oracle_parse_status") or "error", "", None, None,
                           0.0, self.camp.pipeline.scorer.temperature, seed)


def _turn_text(row: dict, answer, profile, stages: Stages, resolve_path) -> str | None:
    """The script's words (no fillers) spoken before the campaign's turn closed, from the
    cached render (no synthesis: the campaign rendered it); None when no word was lost (the
    attribution then reuses the oracle grade, as :func:`rig.campaign.call.run_call_front`)."""
    if not row.get("words_lost") or row.get("turn_close_s") is None:
        return None
    rendered = stages.render(answer.script, profile, int(row["seed"]),
                             answer_id=answer.answer_id, resolve_path=resolve_path,
                             cache_dir=stages.audio_cache_dir)
    close = float(row["turn_close_s"])
    return " ".join(w.word for w in rendered.words
                    if not w.is_filler and w.start_s < close)


def _front_from_row(row: dict, question, oracle: ScoreResult, identity: dict,
                    pipeline: PipelineConfig, turn_text: str | None) -> FrontResult:
    front = {k: v for k, v in row.items() if not k.startswith(_SCORING_PREFIXES)}
    front.update(identity)
    from rig.campaign.call import decision_for

    front.update({"status": "ok", "error": None, "parse_status": "not_scored", "score": None,
                  "decision": None, "oracle_score": oracle.score,
                  "oracle_parse_status": oracle.parse_status,
                  "oracle_decision": decision_for(oracle.score, question.cutoff)})
    t = {k: row.get(f"t_{k}_s") for k in ("synth", "channel", "vad", "asr")}
    from rig.asr.transcript import scorer_text

    text = row.get("transcript")
    return FrontResult(row=front, question=question, transcript=text,
                       seed=int(row["seed"]), oracle_score=oracle.score,
                       timings_s={k: v for k, v in t.items() if v is not None},
                       turn_text=turn_text,
                       scorer_text=(None if text is None
                                    else scorer_text(text, pipeline.transcript.fillers)))


def _campaign_calls(camp: Campaign, variant: Variant):
    """Per campaign row, in order: (row, question, answer, profile, the variant's call id)."""
    from rig.campaign.delivery import varied_profile

    questions = {q.question_id: q for q in camp.bank.questions}
    answers = {a.answer_id: a for _, a in camp.bank.answers()}
    profiles = {p.profile_id: p for p in camp.profiles.profiles}
    for rec in camp.rows.to_dict("records"):
        row = {k: _clean(v) for k, v in rec.items()}
        q, a = questions[row["question_id"]], answers[row["answer_id"]]
        # the campaign's delivery variation (rig.campaign.delivery): the render it cached
        p = varied_profile(profiles[row["profile_id"]], a.answer_id, int(row["repeat"]),
                           float(camp.meta.get("delivery_sd_pct") or 0.0))
        yield row, q, a, p, call_id(q, a, p, int(row["repeat"]), int(row["seed"]),
                                    variant.version)


def logged_calls(camp: Campaign, variant: Variant, folder: Path) -> int:
    """How many of ``variant``'s calls are logged ``ok`` in ``folder`` (what a resumed sweep
    will not make again)."""
    if not (folder / "calls.jsonl").is_file():
        return 0
    log = CallLog(folder / "calls.jsonl")
    return sum((log.get(cid) or {}).get("status") == "ok"
               for *_, cid in _campaign_calls(camp, variant))


def sweep_call(stages: Stages, variant: Variant, payload: tuple) -> dict:
    """One call of ``variant`` remade from the campaign's ``row`` (``payload``: row, question
    scored, answer, profile, call id, oracle grade, profile paths, campaign id): the row to
    log. Never raises on a failing call (its row says which stage)."""
    row, q, a, p, cid, orc, paths, campaign_id = payload
    repeat, seed = int(row["repeat"]), int(row["seed"])
    ident = _identity(variant.pipeline, variant.version, cid, campaign_id)
    stage = variant.rerun_from if row.get("status") == "ok" else "channel"
    if stage == "score":
        front = _front_from_row(row, q, orc, ident, variant.pipeline,
                                _turn_text(row, a, p, stages, paths))
    else:
        use = stages
        if stage == "asr":
            use = dataclasses.replace(stages, detect_turn=_ReusedTurn(_turn_of(row)))
        front = run_call_front(
            question=q, answer=a, profile=p, repeat=repeat, seed=seed,
            pipeline=variant.pipeline, pipeline_version=variant.version,
            campaign_id=campaign_id, stages=use, oracle=orc, resolve_path=paths)
        if stage == "asr" and row.get("t_vad_s") is not None:
            front.timings_s["vad"] = row["t_vad_s"]
    return finish_call(front, stages)


def sweep_worker(stages_for: Callable[[PipelineConfig], Stages],
                 variant: Variant) -> Callable[[tuple], dict]:
    """A sweep worker (:mod:`rig.jobs`): builds ``variant``'s stages once, then runs
    ``("oracle", question, answer, seed, key)`` (an ``oracle.jsonl`` row) and ``("call",
    *payload)`` (:func:`sweep_call`) items."""
    from rig.campaign.executors.worker import oracle_row

    stages = stages_for(variant.pipeline)

    def run(item: tuple) -> dict:
        if item[0] == "oracle":
            _, q, a, seed, key = item
            return oracle_row(stages.scorer, key, q, a, seed, variant.version)
        return sweep_call(stages, variant, item[1:])

    return run


def _on_workers(camp: Campaign, variant: Variant, folder: Path, stages_for, executor,
                on_call, on_row) -> tuple[list[dict], int]:
    """:func:`run_variant` on the executor's workers: the oracle gradings a regrading variant
    needs, then the calls; the driver logs each result as it comes (the only writer)."""
    from rig.campaign.oracle import oracle_done, oracle_key
    from rig.jobs import Item, JobSetup, run_items

    log = CallLog(folder / "calls.jsonl")
    setup = JobSetup(sweep_worker, (stages_for, variant))
    campaign_id = f"{camp.meta.get('campaign_id', camp.folder.name)}:{variant.variant_id}"
    calls = []
    for row, q, a, p, cid in _campaign_calls(camp, variant):
        calls.append((row, q.scored_rubric(variant.pipeline.scorer.style_criteria), a, p, cid))
    if variant.regrade_oracle:
        olog = CallLog(folder / "oracle.jsonl")
        todo = {}
        for row, q, a, _p, cid in calls:
            key = oracle_key(q, a, int(row["seed"]), variant.version)
            done = log.get(cid)
            if not (done and done["status"] == "ok") and not oracle_done(olog.get(key)):
                todo[key] = Item(key, ("oracle", q, a, int(row["seed"]), key), q.question_id)
        run_items(list(todo.values()), setup, executor, lambda _k, r: olog.append(r))
    oracle = _Oracle(camp, variant, Stages(scorer=None), folder)  # type: ignore[arg-type]
    items = []
    for row, q, a, p, cid in calls:
        done = log.get(cid)
        if done is not None and done["status"] == "ok":
            continue
        paths = ProfilePaths(camp.profiles.sources[p.profile_id].parent)
        orc = oracle.get(q, a, int(row["seed"]), row)
        items.append(Item(cid, ("call", row, q, a, p, cid, orc, paths, campaign_id),
                          q.question_id))
    new: dict[str, dict] = {}

    def keep(cid: str, r: dict) -> None:
        log.append(r)
        new[cid] = r
        if on_call:
            on_call(r)
        if on_row:
            on_row()

    run_items(items, setup, executor, keep)
    return [new.get(cid) or log.get(cid) for *_, cid in calls], len(new)


def run_variant(camp: Campaign, variant: Variant, folder: Path, stages: Stages | None, *,
                on_call: Callable[[dict], None] | None = None,
                on_row: Callable[[], None] | None = None,
                stages_for: Callable[[PipelineConfig], Stages] | None = None,
                executor: object | None = None) -> tuple[list[dict], int]:
    """Make (or resume) ``variant``'s calls and return (its rows in the campaign's order, the
    number of calls made now). ``on_call(row)`` and ``on_row()`` (a progress bar's step)
    after each call made now. Never raises on a failing call (its row says which stage).

    ``executor`` (:class:`rig.campaign.executors.ExecutorSpec`; None or serial: this process
    with ``stages``): on local or Ray workers each builds ``stages_for(variant.pipeline)``
    once (``stages_for`` must pickle: :class:`rig.sweep.core.StagesFor`); the rows and
    ``calls.jsonl`` are the same whatever ran the calls (the log in completion order)."""
    make_out_dir(folder)
    remove_partials(folder)  # a killed sweep's temporary files
    if executor is not None and not executor.in_driver():  # type: ignore[attr-defined]
        return _on_workers(camp, variant, folder, stages_for, executor, on_call, on_row)
    assert stages is not None
    log = CallLog(folder / "calls.jsonl")
    oracle = _Oracle(camp, variant, stages, folder)
    campaign_id = f"{camp.meta.get('campaign_id', camp.folder.name)}:{variant.variant_id}"
    out, n_run = [], 0
    for row, q, a, p, cid in _campaign_calls(camp, variant):
        seed = int(row["seed"])
        # the rubric the variant's scorer grades (scorer.style_criteria); the call id is q's
        q = q.scored_rubric(variant.pipeline.scorer.style_criteria)
        paths = ProfilePaths(camp.profiles.sources[p.profile_id].parent)
        done = log.get(cid)
        if done is not None and done["status"] == "ok":
            out.append(done)
            continue
        orc = oracle.get(q, a, seed, row)
        new = sweep_call(stages, variant, (row, q, a, p, cid, orc, paths, campaign_id))
        log.append(new)
        n_run += 1
        if on_call:
            on_call(new)
        out.append(new)
        if on_row:
            on_row()
    return out, n_run
