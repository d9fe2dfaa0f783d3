"""Real calls: the caller agent, the reference interviewer as a service, and transports.

Modules:

* ``media``: 20 ms 8 kHz frames, the playout buffer, RFC 3550 jitter, transport facts;
* ``brain``: the caller agent's decisions (a state machine with no I/O);
* ``agent``: the caller agent's real-time loop over a transport link;
* ``interviewer``: the reference interviewer's session, its TTS voice and its pipecat
  processor;
* ``service``: the interviewer as a FastAPI + uvicorn service (``routes``: its call
  endpoints per transport; ``webhook``: ``POST /results``);
* ``results``: the interviewer's result records, the store keyed by call id, the HTTP poll of
  an interviewer's results (``score_import``: the CSV/Parquet/JSONL import of external
  scores);
* ``campaign``: a campaign call over a real transport, row-compatible with the simulated one
  (``row``: its transport columns and recording); K of them at once from K threads
  (``--concurrency K``), ``locks`` serialising the models they share;
* ``transports/``: ``twilio``, ``webrtc``, ``sip``.

Everything here needs the ``calls`` extra: ``pip install -e '.[calls]'``.
"""
