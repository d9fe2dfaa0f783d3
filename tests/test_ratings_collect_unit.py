"""`rig ratings collect`: the stratified sample, the queue of several raters with double
ratings, the level-to-points rating, and the app's routes (guards, blindness, resuming) on a
folder with synthetic audio (the browser and a real campaign: the integration test)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from rig.errors import ConfigError
from rig.ratings.model import read_ratings
from rig.ratings.sample import SAMPLE_FILE, draw_sample, load_or_draw, next_item, progress

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[1]
Q01 = ["situation", "constructive_approach", "outcome", "reflection"]


def calls(n_profiles=3, n_questions=2, per_q=5):
    return [(f"p{p}q{q}c{i}", f"p{p}", f"q{q}") for p in range(n_profiles)
            for q in range(n_questions) for i in range(per_q)]


def test_equal_allocation_spread_over_questions_and_reproducible():
    s = draw_sample(calls(), per_stratum=4, double_share=0.25, seed=3, stratified_by="p")
    assert Counter(it.stratum for it in s.items) == {"p0": 4, "p1": 4, "p2": 4}
    for p in ("p0", "p1", "p2"):  # two per question: the question rank comes first
        qs = Counter(it.unit_id.split("q")[1][0] for it in s.items if it.stratum == p)
        assert qs == {"0": 2, "1": 2}
    assert sum(it.double for it in s.items) == 3  # round(0.25 x 12)
    assert len({it.unit_id for it in s.items}) == 12
    again = draw_sample(list(reversed(calls())), per_stratum=4, double_share=0.25, seed=3,
                        stratified_by="p")
    assert again == s
    other = draw_sample(calls(), per_stratum=4, double_share=0.25, seed=4, stratified_by="p")
    assert [it.unit_id for it in other.items] != [it.unit_id for it in s.items]
    # the showing order mixes strata (not all of one profile first)
    first = [it.stratum for it in s.items[:4]]
    assert len(set(first)) > 1


def test_small_stratum_gives_all_and_bad_arguments_raise():
    c = calls(n_profiles=1, n_questions=1, per_q=2)
    s = draw_sample(c, per_stratum=10, double_share=0.0, seed=0, stratified_by="p")
    assert len(s.items) == 2 and not any(it.double for it in s.items)
    with pytest.raises(ValueError, match="per_stratum"):
        draw_sample(c, per_stratum=0, double_share=0, seed=0, stratified_by="p")
    with pytest.raises(ValueError, match="double_share"):
        draw_sample(c, per_stratum=1, double_share=1.5, seed=0, stratified_by="p")
    with pytest.raises(ValueError, match="twice"):
        draw_sample(c + c[:1], per_stratum=1, double_share=0, seed=0, stratified_by="p")


def test_queue_of_two_raters_with_double_items():
    s = draw_sample(calls(1, 1, 6), per_stratum=6, double_share=0.5, seed=1,
                    stratified_by="p")
    rated: dict[str, set[str]] = {}
    order = {"ann": [], "bob": []}
    # ann rates everything she is given, then bob
    for rater in ("ann", "bob"):
        while (i := next_item(s, rated, rater)) is not None:
            uid = s.items[i].unit_id
            assert rater not in rated.get(uid, set())
            rated.setdefault(uid, set()).add(rater)
            order[rater].append(uid)
    assert len(order["ann"]) == 6  # every item needs her first
    assert sorted(order["bob"]) == sorted(it.unit_id for it in s.items if it.double)
    assert all(len(rated[it.unit_id]) == s.needed(it) for it in s.items)
    p = progress(s, rated, "bob")
    assert p == {"n_items": 6, "n_ratings_needed": 9, "n_ratings_done": 9,
                 "n_rated_by_rater": 3, "n_left_for_rater": 0}
    assert next_item(s, rated, "cy") is None  # nothing left for a third rater


def test_stored_sample_is_reused_and_other_arguments_refused(tmp_path):
    c = calls(2, 1, 3)
    s = load_or_draw(tmp_path, c, per_stratum=2, double_share=0.5, seed=0, stratified_by="p")
    assert (tmp_path / SAMPLE_FILE).is_file()
    assert load_or_draw(tmp_path, c, per_stratum=2, double_share=0.5, seed=0,
                        stratified_by="p") == s
    with pytest.raises(ConfigError, match="per_stratum"):
        load_or_draw(tmp_path, c, per_stratum=3, double_share=0.5, seed=0, stratified_by="p")
    with pytest.raises(ConfigError, match="does not hold"):
        load_or_draw(tmp_path, c[:1], per_stratum=2, double_share=0.5, seed=0,
                     stratified_by="p")


# --- the app on a folder with synthetic audio -----------------------------------------------

def campaign(tmp_path: Path) -> Path:
    import soundfile as sf

    out = tmp_path / "camp"
    (out / "audio").mkdir(parents=True)
    (out / "campaign.json").write_text(json.dumps(
        {"campaign_id": "c", "answers_path": str(ROOT / "answer_bank" / "mini")}))
    spec = [("q01_strong", "q01_conflict", "baseline"), ("q01_weak", "q01_conflict", "noisy"),
            ("q03_strong", "q03_hard_bug", "baseline"), ("q03_weak", "q03_hard_bug", "noisy")]
    rows = [{"call_id": f"c{i}", "answer_id": a, "question_id": q, "profile_id": p,
             "status": "ok", "score": 50.0} for i, (a, q, p) in enumerate(spec)]
    rows.append({"call_id": "c9", "answer_id": "q01_strong", "question_id": "q01_conflict",
                 "profile_id": "noisy", "status": "error", "score": None})
    (out / "calls.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    t = np.arange(16000) / 8000
    for r in rows:
        sf.write(str(out / "audio" / f"{r['call_id']}.line.flac"),
                 0.3 * np.sin(2 * np.pi * 300 * t), 8000, subtype="PCM_16")
        (out / "audio" / f"{r['call_id']}.json").write_text(json.dumps({"turn_close_s": 1.5}))
    return out


@pytest.fixture
def client(tmp_path):
    from fastapi.testclient import TestClient

    from rig.ratings.collect import create_app

    out = campaign(tmp_path)
    app = create_app(out, per_stratum=2, double_share=0.5, seed=0, token="tok",
                     allowed_hosts=("testserver",))
    return TestClient(app), out


def test_guards_blindness_and_a_rating(client):
    import io

    import soundfile as sf

    c, out = client
    assert c.get("/api/next", params={"rater": "ann"}).status_code == 403  # no token
    H = {"X-Rig-Token": "tok"}
    page = c.get("/").text
    assert 'data-token="tok"' in page and "<script>" in page
    r = c.get("/api/next", params={"rater": "ann"}, headers=H).json()
    item = r["item"]
    text = json.dumps(r)
    for secret in ("baseline", "noisy", "c0", "c1", "c2", "c3", "score", "q01_strong",
                   "pipeline"):
        assert secret not in text, secret  # blind to profile, call, answer and judge
    assert r["progress"]["n_items"] == 4 and r["progress"]["n_ratings_needed"] == 6
    assert len(item["levels"]) == 5 and item["levels"][4].startswith("4 = fully met")
    wav = c.get(f"/api/audio/{item['position']}", headers=H)
    x, sr = sf.read(io.BytesIO(wav.content))
    assert sr == 8000 and len(x) == 12000  # cut at the turn close, 1.5 s
    crit = [k["id"] for k in item["criteria"]]
    levels = dict.fromkeys(crit, 2)
    bad = c.post("/api/ratings", headers=H, json={"rater": "ann", "position": item["position"],
                                                  "levels": {**levels, crit[0]: 7}})
    assert bad.status_code == 422 and "is not a level" in bad.json()["detail"]
    missing = c.post("/api/ratings", headers=H, json={"rater": "ann",
                                                      "position": item["position"],
                                                      "levels": {crit[0]: 1}})
    assert missing.status_code == 422 and "missing" in missing.json()["detail"]
    ok = c.post("/api/ratings", headers=H, json={"rater": "ann", "position": item["position"],
                                                 "levels": levels})
    assert ok.status_code == 200 and ok.json()["score"] == pytest.approx(50.0)
    again = c.post("/api/ratings", headers=H, json={"rater": "ann",
                                                    "position": item["position"],
                                                    "levels": levels})
    assert again.status_code == 409
    (rating,) = read_ratings(out)
    assert rating.unit_kind == "call" and rating.source == "collect"
    assert rating.levels == levels and rating.rubric_version == 1
    assert rating.points[crit[0]] == pytest.approx(
        {k["id"]: k["points"] for k in item["criteria"]}[crit[0]] / 2)
    assert rating.rated_at and rating.rated_at.endswith("+00:00")
    nxt = c.get("/api/next", params={"rater": "ann"}, headers=H).json()
    assert nxt["item"]["position"] != item["position"]  # resumes past what is rated


def test_could_not_hear_without_levels_then_second_rater_and_done(client):
    c, out = client
    H = {"X-Rig-Token": "tok"}
    for rater in ("ann", "bob"):
        while (item := c.get("/api/next", params={"rater": rater}, headers=H).json()["item"]):
            body = {"rater": rater, "position": item["position"], "could_not_hear": True}
            assert c.post("/api/ratings", headers=H, json=body).status_code == 200
    rs = read_ratings(out)
    assert Counter(r.rater_id for r in rs) == {"ann": 4, "bob": 2}
    assert all(r.could_not_hear and r.score is None for r in rs)
    assert "c9" not in {r.unit_id for r in rs}  # a failed call is not sampled
    from rig.ratings.sample import RatingSample

    s = RatingSample.model_validate_json((out / SAMPLE_FILE).read_text())
    doubles = {it.unit_id for it in s.items if it.double}
    assert {r.unit_id for r in rs if r.rater_id == "bob"} == doubles
    assert c.get("/api/audio/99", headers=H).status_code == 404
    assert c.get("/api/next", params={"rater": "a b"}, headers=H).status_code == 422


def test_a_score_is_required_unless_could_not_hear():
    from pydantic import ValidationError

    from rig.ratings.model import Rating

    with pytest.raises(ValidationError, match="score is missing"):
        Rating(rater_id="a", unit_kind="call", unit_id="c", question_id="q", rubric_version=1,
               rubric_hash="h", score=None, source="collect")
