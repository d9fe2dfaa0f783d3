"""The reference interviewer as a service, and the results interviewers return.

``session`` (one call's interview: asks, listens, transcribes, scores; its TTS voice and
pipecat processor), ``service`` (FastAPI + uvicorn), ``routes`` (its call endpoints per
transport), ``webhook`` (``POST /results`` for an external interviewer), ``results`` (the
records, the store keyed by call id, the HTTP poll), ``score_import`` (external scores from a
CSV, Parquet or JSONL file).
"""
