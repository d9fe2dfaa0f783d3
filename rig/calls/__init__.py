"""Real calls: the caller agent, the reference interviewer as a service, and transports.

Modules: ``media`` (20 ms 8 kHz frames, playout buffer, RFC 3550 jitter, transport facts),
``agent`` (the caller agent), ``interviewer`` (the reference interviewer's session and its
pipecat processor), ``service`` (FastAPI + uvicorn endpoints per transport), ``results``
(results by call id, webhook, CSV/Parquet import), ``campaign`` (a campaign call over a real
transport, row-compatible with the simulated one), ``transports/`` (``twilio``, ``webrtc``,
``sip``). Everything here needs the ``calls`` extra: ``pip install 'rig[calls]'``.
"""
