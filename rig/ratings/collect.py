"""``rig ratings collect``: a local page where people grade a sample of a folder's calls.

FastAPI on uvicorn (the ``monitor`` extra), bound to 127.0.0.1 only, with the recording
kit's guards (:mod:`rig.voices.record`): every ``/api`` request carries the page's
``X-Rig-Token`` (random per server), every request a ``Host`` of 127.0.0.1 or localhost, and
bodies are limited (:class:`rig.webguard.BodyLimit`).

The rater types their id, then grades the sample (:mod:`rig.ratings.sample`) one call at a
time: the audio as the interviewer heard it (:mod:`rig.ratings.clips`), the question, and per
rubric criterion its description, its points and the credit levels with their anchors
(:data:`rig.scorer.levels.LEVEL_ANCHORS`, the judge's own scale). The page is **blind**: an
item is named by its position in the sample only, never by call id, profile, pipeline
version or judge score, and the audio is served by position.

Routes (all but ``/`` need the token):

``GET /``
    The page (:mod:`rig.ratings.collect_page`).
``GET /api/next?rater=ID``
    ``{rater, progress, item}``: ``item`` is null when nothing is left for this rater, else
    ``{position, question, criteria: [{id, description, points}], levels: [anchor, ...]}``.
``GET /api/audio/{position}``
    The item's clip as a WAV file.
``POST /api/ratings`` (JSON)
    ``{rater, position, levels: {criterion_id: 0..4}, could_not_hear}``: appended to
    ``ratings.jsonl`` in the format ``rig ratings import`` writes (one atomic replace, under a
    lock), with ``levels``, ``points`` = maximum x level / 4 per criterion, their sum as the
    score, the question's rubric version and hash, the time (UTC, ISO 8601) and ``source``
    ``collect``. With ``could_not_hear`` the levels may be left out (the rating then has no
    score and is counted, not used). 409 when this rater already rated that call, 422 for a
    level out of range or a criterion missing or unknown, 404 for a position outside the
    sample.
"""

# No ``from __future__ import annotations``: FastAPI reads endpoint annotations at run time.
import datetime as _dt
import re
import secrets
import threading
from pathlib import Path

from rig.errors import ConfigError
from rig.ratings.clips import clip_wav, ratable_clips
from rig.ratings.importer import DuplicateRating, append_ratings
from rig.ratings.model import Rating, read_ratings
from rig.ratings.sample import RatingSample, load_or_draw, next_item, progress
from rig.ratings.units import Ratable, load_ratable
from rig.scorer.levels import LEVEL_ANCHORS, N_LEVELS

LOOPBACK_HOSTS = ("127.0.0.1", "localhost")
MAX_BODY_BYTES = 65536
RATER_ID = re.compile(r"[A-Za-z0-9_.@-]{1,64}")


def open_sample(folder: Path, *, per_stratum: int, double_share: float, seed: int
                ) -> tuple[Ratable, RatingSample]:
    """The folder's units and its sample (drawn now, or read from ``ratings_sample.json``).

    Raises:
        ConfigError: not a campaign or replay folder, no call with audio to rate, or a stored
            sample that does not fit (:func:`rig.ratings.sample.load_or_draw`).
    """
    units = load_ratable(folder)
    clips = ratable_clips(units)
    if not clips:
        raise ConfigError(folder, "FOLDER", f"no {units.kind} call with audio to rate (calls "
                          "need status ok and their audio: run the campaign without "
                          "--no-audio)")
    calls = [(c.unit_id, c.stratum, c.question_id) for c in clips.values()]
    sample = load_or_draw(folder, calls, per_stratum=per_stratum, double_share=double_share,
                          seed=seed, stratified_by="profile_id" if units.kind == "campaign"
                          else "question_id")
    return units, sample


def level_rating(units: Ratable, unit_id: str, rater: str, levels: dict[str, int] | None,
                 could_not_hear: bool, rated_at: str) -> Rating:
    """The :class:`Rating` of ``levels`` (criterion id -> 0..N_LEVELS-1) for ``unit_id``.

    Raises:
        ValueError: a criterion missing or unknown, or a level outside 0..N_LEVELS-1 (the
            message names the criterion and value); no levels without ``could_not_hear``.
    """
    unit = units.calls[unit_id]
    q = units.questions[unit.question_id]
    points = score = None
    if levels is not None or not could_not_hear:
        levels = levels or {}
        want = [c.id for c in q.rubric]
        extra, missing = sorted(set(levels) - set(want)), [c for c in want if c not in levels]
        if extra or missing:
            raise ValueError(f"levels do not match question {q.question_id}'s rubric: "
                             + "; ".join(x for x in (extra and f"unknown {extra}",
                                                     missing and f"missing {missing}") if x))
        for cid, lv in levels.items():
            if not isinstance(lv, int) or isinstance(lv, bool) or not 0 <= lv < N_LEVELS:
                raise ValueError(f"levels.{cid}: {lv!r} is not a level 0-{N_LEVELS - 1}")
        points = {c.id: c.points * levels[c.id] / (N_LEVELS - 1) for c in q.rubric}
        score = sum(points.values())
    return Rating(rater_id=rater, unit_kind="call", unit_id=unit_id, answer_id=unit.answer_id,
                  question_id=q.question_id, rubric_version=q.rubric_version,
                  rubric_hash=q.rubric_hash, score=score, points=points, levels=levels,
                  could_not_hear=could_not_hear, rated_at=rated_at, source="collect")


def create_app(folder: Path, *, per_stratum: int = 20, double_share: float = 0.2,
               seed: int = 0, token: str | None = None,
               allowed_hosts: tuple[str, ...] = LOOPBACK_HOSTS):
    """The rating app for the campaign or replay ``folder``.

    Raises:
        ConfigError: from :func:`open_sample`.
    """
    from fastapi import FastAPI, HTTPException, Request
    from fastapi.responses import HTMLResponse, JSONResponse, Response
    from pydantic import BaseModel, ConfigDict, Field

    from rig.ratings.collect_page import page_html
    from rig.webguard import BodyLimit

    folder = Path(folder)
    units, sample = open_sample(folder, per_stratum=per_stratum, double_share=double_share,
                                seed=seed)
    clips = ratable_clips(units)
    token = token or secrets.token_urlsafe(24)
    lock = threading.Lock()

    class RatingBody(BaseModel):
        model_config = ConfigDict(extra="forbid")
        rater: str = Field(min_length=1, max_length=64)
        position: int
        levels: dict[str, int] | None = None
        could_not_hear: bool = False

    app = FastAPI(title="rig ratings collect", docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.add_middleware(BodyLimit, max_bytes=MAX_BODY_BYTES)

    @app.middleware("http")
    async def guard(request: Request, call_next):
        host = (request.headers.get("host") or "").rsplit(":", 1)[0].strip("[]")
        if host not in allowed_hosts:
            return JSONResponse({"detail": f"host {host!r} refused: open the page on "
                                 "http://127.0.0.1"}, status_code=403)
        if request.url.path.startswith("/api/") and \
                not secrets.compare_digest(request.headers.get("x-rig-token", ""), token):
            return JSONResponse({"detail": "missing or wrong X-Rig-Token: reload the page"},
                                status_code=403)
        return await call_next(request)

    def rated() -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for r in read_ratings(folder):
            if r.unit_kind == "call":
                out.setdefault(r.unit_id, set()).add(r.rater_id)
        return out

    def check_rater(rater: str) -> str:
        if not RATER_ID.fullmatch(rater):
            raise HTTPException(422, f"rater id {rater!r}: letters, digits, '_', '.', '@' or "
                                "'-', at most 64")
        return rater

    def item_at(position: int):
        if not 1 <= position <= len(sample.items):
            raise HTTPException(404, f"position {position} is outside the sample (1-"
                                f"{len(sample.items)})")
        return sample.items[position - 1]

    @app.get("/", response_class=HTMLResponse)
    def page() -> str:
        return page_html(token)

    @app.get("/api/next")
    def next_for(rater: str) -> dict:
        rater = check_rater(rater)
        done = rated()
        i = next_item(sample, done, rater)
        item = None
        if i is not None:
            q = units.questions[units.calls[sample.items[i].unit_id].question_id]
            item = {"position": i + 1, "question": q.question,
                    "criteria": [{"id": c.id, "description": c.description,
                                  "points": c.points} for c in q.rubric],
                    "levels": list(LEVEL_ANCHORS)}
        return {"rater": rater, "progress": progress(sample, done, rater), "item": item}

    @app.get("/api/audio/{position}")
    def audio(position: int):
        item = item_at(position)
        try:
            data = clip_wav(clips[item.unit_id])
        except (OSError, ValueError) as exc:
            raise HTTPException(500, f"the clip at position {position} cannot be read: "
                                f"{exc}") from None
        return Response(data, media_type="audio/wav", headers={"Cache-Control": "no-store"})

    @app.post("/api/ratings")
    def post_rating(body: RatingBody) -> dict:
        rater = check_rater(body.rater)
        item = item_at(body.position)
        now = _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()
        try:
            r = level_rating(units, item.unit_id, rater, body.levels, body.could_not_hear,
                             now)
        except ValueError as exc:
            raise HTTPException(422, str(exc)) from None
        with lock:
            try:
                append_ratings(folder, [r])
            except DuplicateRating:
                raise HTTPException(409, f"rater {rater!r} already rated the call at position "
                                    f"{body.position}") from None
        return {"saved": True, "position": body.position, "score": r.score}

    return app


def serve(folder: Path, port: int, *, per_stratum: int = 20, double_share: float = 0.2,
          seed: int = 0, on_ready=None) -> None:
    """Serve the rating page on http://127.0.0.1:``port`` until interrupted (Ctrl-C).
    ``on_ready(url, sample)`` is called once the server listens.

    Raises:
        ConfigError: from :func:`create_app`.
        RigError: the port is taken.
        EngineUnavailable: FastAPI/uvicorn are not installed.
    """
    app = create_app(folder, per_stratum=per_stratum, double_share=double_share, seed=seed)

    from rig.webguard import serve_loopback

    serve_loopback(app, port, on_ready, "rig ratings collect")
