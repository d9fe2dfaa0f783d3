"""Groups of a call row's columns (declared in :class:`rig.campaign.row.CallRow`, in these
orders): the transport columns, the score-source columns and the fault columns."""

from __future__ import annotations

#: The transport columns of every row. ``transport`` is ``sim`` on a simulated call
#: (:mod:`rig.campaign.call`) and ``webrtc``, ``twilio`` or ``sip`` on a real one
#: (:mod:`rig.calls.run.caller`); the others are what the real transport measured, and null on a
#: simulated call, so both kinds of campaign write the same columns.
#: ``transport_packets_sent``/``_received``/``_lost`` count what ``transport_packet_unit``
#: names: ``rtp`` (RTP packets: WebRTC, SIP) or ``media_message`` (Twilio Media Streams
#: ``media`` messages; those from the interviewer's side carry chunks of any length, not one
#: 20 ms packet each). ``transport_underruns`` counts 20 ms ticks at which the caller agent's
#: playout ran dry inside one of the interviewer's talkspurts (audio resumed within 250 ms): a
#: sender that sends nothing while silent (pipecat's websocket output to Twilio) and one that
#: sends silence (WebRTC, SIP) count alike. Two delays, each on one side's clock:
#: ``response_delay_measured_s`` is the caller agent's own, from the end of the question as
#: the agent heard it (its VAD) to the first frame of its first answer, which is what the
#: profile's ``response_delay_s`` sets (at least the agent's 300 ms end-of-speech timer;
#: negative by the offset achieved on a barge-in); ``interviewer_gap_s`` is the
#: interviewer's, from the end of its last prompt before the graded turn (the question, or its
#: last repeat request) leaving it to the start of speech its VAD detected in that turn, so it
#: adds the transport's latency both ways and the VADs' onset estimates. Both are null on a
#: simulated call (no caller agent: the render puts exactly ``response_delay_s`` of silence
#: before the answer).
TRANSPORT_COLUMNS: tuple[str, ...] = (
    "transport", "transport_codec", "transport_packet_unit", "transport_packets_sent",
    "transport_packets_received", "transport_packets_lost", "transport_jitter_ms",
    "transport_call_duration_s", "transport_underruns", "transport_hung_up_by",
    "repeat_requests", "repeat_requests_heard", "time_to_first_answer_s",
    "response_delay_measured_s", "interviewer_gap_s", "interviewer_status", "recording_path")

#: Where the score came from and what the bot said, asked and heard
#: (:mod:`rig.calls.bots.score_sources`, :mod:`rig.calls.bots.interview_map`). ``score_source``
#: (:data:`rig.calls.bots.record.ScoreSource`): ``interviewer`` (the bot's own result; on a
#: simulated row the reference pipeline's scorer whenever the row has a score), ``extractor``,
#: ``rig_grade_bot_transcript``, ``rig_grade_rig_asr`` (the rig's ASR of the bot's input,
#: in-process) or ``rig_grade_sent_audio`` (the rig's ASR of the audio it sent; over a network:
#: not what the bot took in); null on a call that failed before a source was chosen.
#: ``interviewer_said``: the bot's turns' text joined with `` | `` (its TTS text in-process,
#: else what the caller agent's ASR heard); ``interviewer_heard``: the bot's own transcript of
#: the answer, when it exposes one; ``question_asked``: the bot's question as the agent heard
#: it; ``question_match_similarity``: its similarity to the bank's question (0-1);
#: ``interviewer_heard_speech``: whether the bot raised a user-speech event during the answer
#: (null: unknown; False: "the interviewer did not hear the answer", a failed call, never
#: scored; :mod:`rig.calls.bots.heard`); ``interviewer_heard_context``: the user messages the
#: bot's LLM context took in the answer's turn (in-process; null when it exposes none). All
#: but ``score_source`` are null on a simulated call.
SCORE_SOURCE_COLUMNS: tuple[str, ...] = (
    "score_source", "interviewer_said", "interviewer_heard", "question_asked",
    "question_match_similarity", "interviewer_heard_speech", "interviewer_heard_context")

#: The faults of a call and what was done with them (:mod:`rig.campaign.faults`;
#: ``docs/calls.md``). ``faults``: the kinds found, ``,``-joined in the order of
#: :data:`rig.campaign.faults.FAULT_KINDS` (``vad_missed``, ``media_outage``,
#: ``repetition_loop``, ``empty_reference``), null when none; ``fault_excluded``: the call was
#: kept out of the scorer and out of every mean under the pipeline's ``faults:`` policy (null
#: on rows logged before the column: the summary then applies the default policy to the
#: suspect reasons); ``wer_errors``/``wer_reference_words`` and
#: ``wer_spoken_errors``/``wer_spoken_reference_words``: the substitutions + deletions +
#: insertions and the normalised reference's words behind ``wer`` and ``wer_spoken`` (pooled
#: WER sums them); ``outage_s``: seconds of audio the line did not carry (frames absent, a
#: profile's ``channel.outage``), ``outage_start_s`` where that began on the render's clock;
#: ``asr_timestamps_clamped``: ASR segments whose end lay past the audio and was clamped to it.
FAULT_COLUMNS: tuple[str, ...] = (
    "faults", "fault_excluded", "wer_errors", "wer_reference_words", "wer_spoken_errors",
    "wer_spoken_reference_words", "outage_s", "outage_start_s", "asr_timestamps_clamped")
