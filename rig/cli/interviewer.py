"""``rig interviewer``: the reference interviewer as a service over real transports.

    rig interviewer serve --transport twilio-ws --pipeline pipelines/reference.yaml \\
        --answers answer_bank/core --port 8765 --results reports/interviewer

Thin layer over :mod:`rig.calls.interviewer.service`; exit 2 on bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rig.cli.common import RigTyper, console, fail
from rig.errors import RigError
from rig.paths import DEFAULTS

interviewer_app = RigTyper(no_args_is_help=True,
                           help="The reference interviewer as a service (real calls).")

SERVE_TRANSPORTS = ("webrtc", "twilio-ws", "sip", "all")


@interviewer_app.command("serve")
def serve(
    transport: Annotated[str, typer.Option(
        help="webrtc (POST /api/offer), twilio-ws (WS /twilio/media, POST /twilio/voice), "
             "sip (SIP/UDP with RTP PCMU), or all (webrtc and twilio-ws on one port)")],
    pipeline: Annotated[Path, typer.Option(help="pipelines/<name>.yaml")],
    answers: Annotated[Path, typer.Option(help="the question set (answer bank folder)")
                       ] = DEFAULTS.answer_bank / "core",
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port (SIP: UDP)")] = 8765,
    results: Annotated[Path, typer.Option(help="folder of results.jsonl (by call id)")
                       ] = Path("reports/interviewer"),
    voice: Annotated[str, typer.Option(help="TTS engine:voice_id")] = "hibari:heart",
    repair_below_logprob: Annotated[float, typer.Option(
        help="ask to repeat when the ASR avg log-probability is below this")] = -1.2,
    max_repeat_requests: Annotated[int, typer.Option(min=0)] = 1,
    public_url: Annotated[str | None, typer.Option(
        help="https:// base URL Twilio reaches this service at (TwiML, signatures)")] = None,
    results_token_env: Annotated[str | None, typer.Option(
        help="enable POST /results with the bearer token in this environment variable")
                                 ] = None,
    ice_host: Annotated[str | None, typer.Option(
        help="WebRTC: gather ICE candidates on this address only (127.0.0.1 for loopback)")
                        ] = None,
) -> None:
    """Serve the reference interviewer: it asks the questions with TTS, listens with the
    pipeline's VAD and endpointing, transcribes, asks to repeat on low ASR confidence, scores,
    and writes results keyed by the call id."""
    if transport not in SERVE_TRANSPORTS:
        fail(f"--transport: one of {', '.join(SERVE_TRANSPORTS)} (got {transport!r})")
    try:  # the settings that can be checked cheaply, before any model loads
        from rig.calls.interviewer.service import check_public_url

        if public_url is not None:
            check_public_url(public_url)
        if ice_host:
            _check_address("--ice-host", ice_host)
        if results.exists() and not results.is_dir():
            raise RigError(f"--results: {results} is a file, not a folder")
    except RigError as exc:
        fail(exc)
    try:
        from rig.answers import load_bank
        from rig.calls.interviewer.results import ResultStore
        from rig.calls.interviewer.service import (
            InterviewerService,
            quiet_logs,
            restrict_ice_to,
        )
        from rig.calls.interviewer.session import InterviewerSettings, check_voice
        from rig.models import ensure_model
        from rig.pipeline import load_pipeline
        from rig.scorer.factory import build_scorer

        quiet_logs()
        pipe = load_pipeline(pipeline)
        bank = load_bank(answers)
        check_voice(voice)
        ensure_model(pipe.asr.model)
        if pipe.scorer.backend == "llamacpp":
            ensure_model(pipe.scorer.model)
        if ice_host:
            restrict_ice_to(ice_host)
        service = InterviewerService(
            pipe, bank, build_scorer(pipe.scorer), ResultStore(results / "results.jsonl"),
            InterviewerSettings(voice=voice, repair_below_logprob=repair_below_logprob,
                                max_repeat_requests=max_repeat_requests),
            public_url=public_url, results_token_env=results_token_env)
        media = {"webrtc": ("webrtc",), "twilio-ws": ("twilio",), "sip": ()}.get(
            transport, ("twilio", "webrtc"))
        app = service.app(media)
    except (RigError, ImportError, OSError) as exc:
        fail(exc)
    http = _listen(app, host, port)
    thread = http
    if transport == "sip":  # SIP on UDP; results and health on HTTP, same port number
        from rig.calls.transports.sip import SipInterviewerThread

        _check_udp_port(host, http.port, port)
        thread = SipInterviewerThread(service, host=host, port=http.port)
    if thread is not http:
        http.start()
    try:
        thread.start()
    except RuntimeError as exc:
        if thread is not http:
            http.stop()
        fail(f"--port {port}: {exc}")
    console.print(f"interviewer ({service.version}) serving {transport} at {thread.url}; "
                  f"results in {results / 'results.jsonl'}"
                  + (f", webhook results in {results / 'webhook.jsonl'}"
                     if results_token_env else "") + "; Ctrl-C to stop", markup=False)
    try:
        thread.join()
    except KeyboardInterrupt:
        thread.stop()
        if thread is not http:
            http.stop()


def _check_address(option: str, value: str) -> None:
    import ipaddress

    try:
        ipaddress.ip_address(value)
    except ValueError:
        raise RigError(f"{option}: an IP address, e.g. 127.0.0.1 (got {value!r})") from None


def _listen(app, host: str, port: int):
    """A :class:`~rig.calls.interviewer.service.ServiceThread` bound to ``host:port`` (TCP); exit 2
    naming the option and the port when it cannot be bound (in use, no such address)."""
    from rig.calls.interviewer.service import ServiceThread

    try:
        return ServiceThread(app, host=host, port=port)
    except OSError as exc:
        fail(f"--port {port}: cannot listen on {host}:{port} (TCP, HTTP): "
              f"{exc.strerror or exc}")


def _check_udp_port(host: str, port: int, asked: int) -> None:
    """Exit 2 naming ``--port`` when the SIP user agent's UDP port cannot be bound."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.bind((host, port))
        except OSError as exc:
            fail(f"--port {asked}: cannot listen on {host}:{port} (UDP, SIP): "
                  f"{exc.strerror or exc}")


@interviewer_app.command("results")
def results_serve(
    token_env: Annotated[str, typer.Option(
        help="NAME of the environment variable holding the bearer token")],
    out: Annotated[Path, typer.Option(help="folder of results.jsonl")] = Path(
        "reports/external"),
    host: Annotated[str, typer.Option()] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535)] = 8766,
    max_body_mb: Annotated[float, typer.Option(
        min=0.001, help="largest POST body, MB; a larger one gets 413 before it is read")
    ] = 16.0,
) -> None:
    """Receive an external interviewer's scores: POST /results with a bearer token, JSON
    {"call_id", "score", "transcript", "decision"} (or a list); stored by call id."""
    try:
        from fastapi import FastAPI

        from rig.calls.interviewer.results import ResultStore
        from rig.calls.interviewer.service import quiet_logs, results_router

        if out.exists() and not out.is_dir():
            raise RigError(f"--out: {out} is a file, not a folder")
        quiet_logs()
        app = FastAPI(title="rig results webhook")
        app.include_router(results_router(ResultStore(out / "results.jsonl"), token_env,
                                          max_body_mb))
    except (RigError, ImportError, OSError) as exc:
        fail(exc)
    thread = _listen(app, host, port)
    thread.start()
    console.print(f"results webhook at {thread.url}/results; writing {out / 'results.jsonl'}",
                  markup=False)
    try:
        thread.join()
    except KeyboardInterrupt:
        thread.stop()


@interviewer_app.command("import-scores")
def import_scores_command(
    campaign: Annotated[Path, typer.Argument(help="a campaign folder (calls.parquet)")],
    scores: Annotated[Path, typer.Argument(
        help="CSV or Parquet with call_id and score columns, a JSONL of such records, or a "
             "results.jsonl written by the webhook or the reference interviewer")],
) -> None:
    """Join an external interviewer's scores onto a campaign's calls by call id and write
    external_scores.parquet (every call, external_score null where none came back); the calls
    with no returned score are listed, never dropped. A results.jsonl written by rig is a
    time-ordered log (the last record per call id wins); in any other file a call id
    returned twice with different scores or decisions is an error, and an empty score next
    to a real one for the same call is ignored (the real one is taken)."""
    import pandas as pd

    from rig.calls.interviewer.score_import import import_scores, match_scores

    calls_path = campaign / "calls.parquet"
    try:
        if not calls_path.is_file():
            raise RigError(f"{calls_path}: not found (run the campaign first)")
        returned = import_scores(scores)
        calls = pd.read_parquet(calls_path)
    except RigError as exc:
        fail(exc)
    except (ValueError, OSError) as exc:
        fail(f"{calls_path}: cannot read: {exc}")
    if "transport" not in calls.columns:  # written by an older rig: simulated calls
        calls["transport"] = "sim"
    try:
        got, missing, unknown = match_scores(calls["call_id"].tolist(), returned,
                                             source=scores)
    except RigError as exc:
        fail(exc)
    keep = [c for c in ("call_id", "answer_id", "question_id", "tier", "profile_id", "repeat",
                        "score", "transport") if c in calls.columns]
    out = calls[keep].rename(columns={"score": "rig_score"}).copy()
    out["external_score"] = [got[c].score if c in got else None for c in out["call_id"]]
    out["external_transcript"] = [got[c].transcript if c in got else None
                                  for c in out["call_id"]]
    out["external_decision"] = [got[c].decision if c in got else None for c in out["call_id"]]
    out["returned"] = out["call_id"].isin(list(got))
    path = campaign / "external_scores.parquet"
    out.to_parquet(path, index=False)
    console.print(f"wrote {path}: {len(got)} of {len(out)} calls scored; "
                  f"{len(missing)} with no returned score; {len(unknown)} unknown call ids",
                  markup=False)
    for c in missing:
        console.print(f"  no score: {c}", markup=False)
    for c in unknown[:10]:
        console.print(f"  unknown call id: {c}", markup=False)
    if len(unknown) > 10:
        console.print(f"  ... and {len(unknown) - 10} more unknown call ids", markup=False)
