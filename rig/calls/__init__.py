"""Real calls: the caller agent, the reference interviewer, the team's own bot, and transports.

Subpackages (their faces import nothing, so importing one part loads no pipecat or aiortc):

* ``agent/``: the caller agent, who plays the candidate on a call: ``brain`` (its decisions, a
  state machine with no I/O), ``utterances`` (what an interviewer's turn asks),
  ``question_match`` (which bank question it was), ``loop`` (the real-time loop over a link);
* ``interviewer/``: the reference interviewer as a service: ``session`` (one call's session,
  its TTS voice and pipecat processor), ``service`` (FastAPI + uvicorn; ``routes``: its call
  endpoints per transport; ``webhook``: ``POST /results``), ``results`` (result records, the
  store keyed by call id, the HTTP poll; ``score_import``: external scores from a file);
* ``bots/``: adapters for the team's own pipecat bot: ``app`` (``pipecat:PATH.py:FACTORY``),
  ``record`` (what the bot did: ``BotRecord``), ``turn``, ``rtvi``, ``fastclock``,
  ``score_sources`` (where a call's score comes from), ``interview_map``;
* ``run/``: a campaign call over a real transport, row-compatible with the simulated one:
  ``caller`` (``TransportCaller``) with ``place``, ``score``, ``stages``, ``call_row`` (its
  transport columns and recording) and ``options`` (the CLI's transport options);
* ``transports/``: ``twilio``, ``webrtc``, ``sip``, ``pipecat_inproc``.

Shared by both ends: ``media`` (20 ms 8 kHz frames, the playout buffer, RFC 3550 jitter,
transport facts) and ``locks`` (the models K concurrent calls share, ``--concurrency K``).

Everything here needs the ``calls`` extra: ``pip install -e '.[calls]'``.
"""
