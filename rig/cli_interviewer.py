"""``rig interviewer``: the reference interviewer as a service over real transports.

    rig interviewer serve --transport twilio-ws --pipeline pipelines/reference.yaml \\
        --answers answer_bank/core --port 8765 --results reports/interviewer

Thin layer over :mod:`rig.calls.service`; exit 2 on bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from rig.errors import RigError
from rig.paths import DEFAULTS

interviewer_app = typer.Typer(no_args_is_help=True,
                              help="The reference interviewer as a service (real calls).")
console = Console(stderr=True)

SERVE_TRANSPORTS = ("webrtc", "twilio-ws", "sip", "all")


def _fail(msg: str) -> None:
    console.print(Text("error: ", style="red") + Text(msg), highlight=False)
    raise typer.Exit(2)


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
        _fail(f"--transport: one of {', '.join(SERVE_TRANSPORTS)} (got {transport!r})")
    try:
        from rig.answers import load_bank
        from rig.calls.interviewer import InterviewerSettings
        from rig.calls.results import ResultStore
        from rig.calls.service import (
            InterviewerService,
            ServiceThread,
            quiet_logs,
            restrict_ice_to,
        )
        from rig.campaign.runner import default_scorer
        from rig.models import ensure_model
        from rig.pipeline import load_pipeline

        quiet_logs()
        pipe = load_pipeline(pipeline)
        bank = load_bank(answers)
        ensure_model(pipe.asr.model)
        if pipe.scorer.backend == "llamacpp":
            ensure_model(pipe.scorer.model)
        if ice_host:
            restrict_ice_to(ice_host)
        service = InterviewerService(
            pipe, bank, default_scorer(pipe), ResultStore(results / "results.jsonl"),
            InterviewerSettings(voice=voice, repair_below_logprob=repair_below_logprob,
                                max_repeat_requests=max_repeat_requests),
            public_url=public_url, results_token_env=results_token_env)
        media = {"webrtc": ("webrtc",), "twilio-ws": ("twilio",), "sip": ()}.get(
            transport, ("twilio", "webrtc"))
        http = ServiceThread(service.app(media), host=host, port=port)
        thread = http
        if transport == "sip":  # SIP on UDP; results and health on HTTP, same port number
            from rig.calls.transports.sip import SipInterviewerThread

            thread = SipInterviewerThread(service, host=host, port=http.port)
    except (RigError, ImportError, OSError) as exc:
        _fail(str(exc))
    if thread is not http:
        http.start()
    thread.start()
    console.print(f"interviewer ({service.version}) serving {transport} at {thread.url}; "
                  f"results in {results / 'results.jsonl'}; Ctrl-C to stop", markup=False)
    try:
        thread.join()
    except KeyboardInterrupt:
        thread.stop()
        if thread is not http:
            http.stop()


@interviewer_app.command("results")
def results_serve(
    token_env: Annotated[str, typer.Option(
        help="NAME of the environment variable holding the bearer token")],
    out: Annotated[Path, typer.Option(help="folder of results.jsonl")] = Path(
        "reports/external"),
    host: Annotated[str, typer.Option()] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535)] = 8766,
) -> None:
    """Receive an external interviewer's scores: POST /results with a bearer token, JSON
    {"call_id", "score", "transcript", "decision"} (or a list); stored by call id."""
    try:
        from fastapi import FastAPI

        from rig.calls.results import ResultStore
        from rig.calls.service import ServiceThread, quiet_logs, results_router

        quiet_logs()
        app = FastAPI(title="rig results webhook")
        app.include_router(results_router(ResultStore(out / "results.jsonl"), token_env))
        thread = ServiceThread(app, host=host, port=port)
    except (RigError, ImportError, OSError) as exc:
        _fail(str(exc))
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
        help="CSV or Parquet with call_id and score columns, or a results.jsonl")],
) -> None:
    """Join an external interviewer's scores onto a campaign's calls by call id and write
    external_scores.parquet (every call, external_score null where none came back); the calls
    with no returned score are listed, never dropped."""
    import json

    import pandas as pd

    from rig.calls.results import ExternalScore, import_scores, match_scores

    calls_path = campaign / "calls.parquet"
    try:
        if not calls_path.is_file():
            raise RigError(f"{calls_path}: not found (run the campaign first)")
        if scores.suffix == ".jsonl":
            returned = [ExternalScore.model_validate(json.loads(line))
                        for line in scores.read_text().splitlines() if line.strip()]
        else:
            returned = import_scores(scores)
    except (RigError, ValueError) as exc:
        _fail(str(exc))
    calls = pd.read_parquet(calls_path)
    if "transport" not in calls.columns:  # written by an older rig: simulated calls
        calls["transport"] = "sim"
    try:
        got, missing, unknown = match_scores(calls["call_id"].tolist(), returned)
    except RigError as exc:
        _fail(f"{scores}: {exc}")
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
