"""``rig voices record``: a local page that records a speaker reading the answer bank.

FastAPI on uvicorn (the ``monitor`` extra), bound to 127.0.0.1 only. The page
(:mod:`rig.voices.record_page`) shows the consent text, asks the speaker to describe their
accent and language background in their own words (optional) and names the device (the
browser's label, editable), then shows each answer's script with its pause cues and records
from the browser's microphone (getUserMedia + an AudioWorklet: mono float samples, sent as
16-bit PCM). Nothing is inferred from the voice; ``speaker.json`` holds what the speaker wrote.

Routes:

``GET /``
    The page.
``GET /api/session``
    ``{speaker_id, consent_text, speaker (speaker.json or null), min_sample_rate_hz,
    max_take_s, answers: [{answer_id, question_id, question, segments, recorded}]}``;
    ``segments`` is the script as ``[["words", text] | ["pause", pause_s] | ["filler",
    word]]``; ``recorded`` is ``{file, duration_s, sample_rate_hz}`` or null (the progress
    across sessions: what is in the folder now).
``POST /api/speaker`` (JSON)
    ``{consent_text, agreed: true, accent_description, language_background, device, notes,
    sample_rate_hz}``: writes ``speaker.json`` (:func:`rig.voices.speaker.write_speaker`,
    ``source="recorded"``) with the consent text shown (it must equal the server's, else 409)
    and the date (UTC, ISO 8601). A second post updates the description and keeps the consent
    given first.
``PUT /api/recordings/{answer_id}?sample_rate_hz=N`` (body: mono 16-bit little-endian PCM)
    Writes ``<answer_id>.wav`` atomically (:func:`rig.paths.atomic_write`; a re-take
    replaces the file) and answers its ``duration_s``, ``peak_dbfs`` and
    ``clipped_fraction``. 409 before ``speaker.json`` exists (consent first), 404 for an
    answer not in the bank, 422 for a rate outside 16000-96000 Hz, an odd byte count, a take
    under 0.5 s or over ``max_take_s``, or a silent take; 413 over the body limit
    (:class:`rig.webguard.BodyLimit`).
``GET /api/recordings/{answer_id}``
    The answer's WAV (404 when none), for play-back.

Every ``/api`` request must carry the page's ``X-Rig-Token`` header (a random token per
server, in the page), and every request a ``Host`` of 127.0.0.1 or localhost: another web
page the speaker has open cannot post to or read from this server (no CORS is allowed, so a
cross-site request cannot set the header; DNS rebinding fails the host check).
"""

# No ``from __future__ import annotations``: FastAPI reads endpoint annotations at run time.
import datetime as _dt
import secrets
from pathlib import Path

import numpy as np

from rig.answers import load_bank
from rig.errors import ConfigError
from rig.script import Filler, Pause, Words, parse_script
from rig.voices.speaker import Consent, SpeakerInfo, read_speaker, write_speaker

#: The consent text shown before the first recording (``--consent-file`` replaces it).
CONSENT_TEXT = (
    "I agree to read the scripts on this page aloud and to have my voice recorded. The "
    "recordings, and what I write below about my accent, my languages and my device, are "
    "saved as files on this computer by the team running this page. They will be used to "
    "test how automated phone interviews handle different voices, and people working on "
    "those tests may listen to them. Nothing about me will be inferred from my voice: only "
    "what I write myself describes me. I can stop at any time, and I can ask the team to "
    "delete my recordings.")

MIN_RATE_HZ, MAX_RATE_HZ = 16000, 96000
MIN_TAKE_S, MAX_TAKE_S = 0.5, 180.0
#: A take whose peak is below this is refused as silent (dBFS, 1.0 = full scale).
SILENT_PEAK_DBFS = -60.0
#: The request body limit: the longest take at the highest rate, 16-bit, plus a margin.
MAX_BODY_BYTES = int(MAX_RATE_HZ * MAX_TAKE_S * 2) + 65536
LOOPBACK_HOSTS = ("127.0.0.1", "localhost")


def script_segments(script: str) -> list[list]:
    """The script as the page shows it: ``[["words", text], ["pause", pause_s],
    ["filler", word], ...]`` in order (:func:`rig.script.parse_script`)."""
    out: list[list] = []
    for seg in parse_script(script):
        if isinstance(seg, Words):
            out.append(["words", seg.text])
        elif isinstance(seg, Pause):
            out.append(["pause", seg.pause_s])
        elif isinstance(seg, Filler):
            out.append(["filler", seg.word])
    return out


def take_stats(pcm: np.ndarray, sample_rate_hz: int) -> dict:
    """``duration_s``, ``peak_dbfs`` (None for all zeros) and ``clipped_fraction`` (samples at
    full scale, int16 -32768 or 32767) of int16 samples, shape ``(n,)``."""
    peak = int(np.max(np.abs(pcm.astype(np.int32)))) if len(pcm) else 0
    clipped = int(np.count_nonzero((pcm == 32767) | (pcm == -32768)))
    return {"duration_s": round(len(pcm) / sample_rate_hz, 3),
            "peak_dbfs": round(20 * np.log10(peak / 32768), 2) if peak else None,
            "clipped_fraction": clipped / len(pcm) if len(pcm) else 0.0}


def recorded_file(folder: Path, answer_id: str) -> Path | None:
    """The answer's recording in ``folder`` (``.wav``, else ``.flac``), or None."""
    from rig.synth.recorded import EXTENSIONS

    for ext in EXTENSIONS:
        p = folder / f"{answer_id}{ext}"
        if p.is_file():
            return p
    return None


def _file_info(path: Path | None) -> dict | None:
    if path is None:
        return None
    import soundfile as sf

    try:
        info = sf.info(str(path))
    except Exception as exc:  # libsndfile's own error: show it, do not fail the listing
        return {"file": path.name, "error": str(exc)}
    return {"file": path.name, "duration_s": round(info.duration, 3),
            "sample_rate_hz": info.samplerate}


def check_out_folder(out: Path) -> str:
    """The speaker id (the folder's name) of ``--out``.

    Raises:
        ConfigError: the name is not ``[A-Za-z0-9_.-]+`` or the path is a file."""
    import re

    if out.exists() and not out.is_dir():
        raise ConfigError(out, "--out", "is a file; give a folder voices/<speaker_id>")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", out.name) or out.name in (".", ".."):
        raise ConfigError(out, "--out", "the folder's name is the speaker id and must be "
                          "letters, digits, '_', '.' or '-'", out.name)
    return out.name


def create_app(answers: Path, out: Path, consent_text: str = CONSENT_TEXT,
               token: str | None = None, allowed_hosts: tuple[str, ...] = LOOPBACK_HOSTS):
    """The recording app for the bank at ``answers``, writing into ``out``
    (``voices/<speaker_id>``).

    Raises:
        ConfigError: the bank does not load, or ``out``'s name is not a speaker id.
    """
    import soundfile as sf
    from fastapi import FastAPI, HTTPException, Request
    from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
    from pydantic import BaseModel, ConfigDict, Field

    from rig.paths import atomic_write
    from rig.voices.record_page import page_html
    from rig.webguard import BodyLimit, read_body

    speaker_id = check_out_folder(out)
    bank = load_bank(answers)
    by_id = {a.answer_id: (q, a) for q, a in bank.answers()}
    token = token or secrets.token_urlsafe(24)

    class SpeakerBody(BaseModel):
        model_config = ConfigDict(extra="forbid")
        consent_text: str
        agreed: bool
        accent_description: str = Field("", max_length=4000)
        language_background: str = Field("", max_length=4000)
        device: str = Field("", max_length=500)
        notes: str = Field("", max_length=4000)
        sample_rate_hz: int | None = Field(None, ge=MIN_RATE_HZ, le=MAX_RATE_HZ)

    app = FastAPI(title="rig voices record", docs_url=None, redoc_url=None, openapi_url=None)
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

    def speaker() -> SpeakerInfo | None:
        return read_speaker(out) if (out / "speaker.json").is_file() else None

    @app.get("/", response_class=HTMLResponse)
    def page() -> str:
        return page_html(token, speaker_id)

    @app.get("/api/session")
    def session() -> dict:
        sp = speaker()
        return {"speaker_id": speaker_id, "consent_text": consent_text,
                "speaker": sp.model_dump() if sp else None, "min_sample_rate_hz": MIN_RATE_HZ,
                "max_take_s": MAX_TAKE_S,
                "answers": [{"answer_id": a.answer_id, "question_id": q.question_id,
                             "question": q.question, "segments": script_segments(a.script),
                             "recorded": _file_info(recorded_file(out, a.answer_id))}
                            for q, a in bank.answers()]}

    @app.post("/api/speaker")
    def post_speaker(body: SpeakerBody) -> dict:
        if not body.agreed:
            raise HTTPException(422, "consent not given: nothing is recorded without it")
        if body.consent_text != consent_text:
            raise HTTPException(409, "the consent text differs from the one this server shows:"
                                " reload the page")
        old = speaker()
        consent = old.consent if old and old.consent else Consent(
            text=consent_text,
            date=_dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat())
        info = SpeakerInfo(speaker_id=speaker_id, source="recorded", consent=consent,
                           accent_description=body.accent_description.strip(),
                           language_background=body.language_background.strip(),
                           device=body.device.strip(), notes=body.notes.strip(),
                           sample_rate_hz=old.sample_rate_hz if old and old.sample_rate_hz
                           else body.sample_rate_hz)
        write_speaker(out, info)
        return info.model_dump()

    @app.put("/api/recordings/{answer_id}")
    async def put_recording(answer_id: str, sample_rate_hz: int, request: Request) -> dict:
        sp = speaker()
        if sp is None or sp.consent is None:
            raise HTTPException(409, "no consent recorded yet: fill in the first page")
        if answer_id not in by_id:
            raise HTTPException(404, f"answer {answer_id!r} is not in the bank {answers}")
        if not MIN_RATE_HZ <= sample_rate_hz <= MAX_RATE_HZ:
            raise HTTPException(422, f"sample_rate_hz {sample_rate_hz}: takes are recorded at "
                                f"{MIN_RATE_HZ}-{MAX_RATE_HZ} Hz")
        body = await read_body(request, MAX_BODY_BYTES)
        if len(body) % 2:
            raise HTTPException(422, f"{len(body)} bytes: 16-bit PCM has an even byte count")
        pcm = np.frombuffer(body, dtype="<i2")
        stats = take_stats(pcm, sample_rate_hz)
        if not MIN_TAKE_S <= stats["duration_s"] <= MAX_TAKE_S:
            raise HTTPException(422, f"take of {stats['duration_s']:g} s: a take lasts "
                                f"{MIN_TAKE_S:g}-{MAX_TAKE_S:g} s")
        if stats["peak_dbfs"] is None or stats["peak_dbfs"] < SILENT_PEAK_DBFS:
            raise HTTPException(422, f"the take is silent (peak {stats['peak_dbfs']} dBFS): "
                                "check that the microphone is on and not muted")
        path = out / f"{answer_id}.wav"
        atomic_write(path, lambda tmp: sf.write(str(tmp), pcm, sample_rate_hz, format="WAV",
                                                subtype="PCM_16"))
        (out / f"{answer_id}.flac").unlink(missing_ok=True)  # one take per answer
        if sp.sample_rate_hz is None or sample_rate_hz < sp.sample_rate_hz:
            write_speaker(out, sp.model_copy(update={"sample_rate_hz": sample_rate_hz}))
        return {"answer_id": answer_id, "file": path.name, "sample_rate_hz": sample_rate_hz,
                **stats}

    @app.get("/api/recordings/{answer_id}")
    def get_recording(answer_id: str):
        path = recorded_file(out, answer_id) if answer_id in by_id else None
        if path is None:
            raise HTTPException(404, f"no recording of {answer_id!r} yet")
        return FileResponse(path, headers={"Cache-Control": "no-store"})

    return app


def serve(answers: Path, out: Path, port: int, consent_text: str = CONSENT_TEXT,
          on_ready=None) -> None:
    """Serve the recording page on http://127.0.0.1:``port`` until interrupted (Ctrl-C).
    ``on_ready(url)`` is called once the server listens.

    Raises:
        ConfigError: from :func:`create_app`.
        RigError: the port is taken.
        EngineUnavailable: FastAPI/uvicorn are not installed.
    """
    out.mkdir(parents=True, exist_ok=True)
    app = create_app(answers, out, consent_text)

    from rig.webguard import serve_loopback

    serve_loopback(app, port, on_ready, "rig voices record")
