"""Adapters for the team's own interviewer bot (a pipecat bot, in-process or over WebRTC).

``app`` (loading ``pipecat:PATH.py:FACTORY``), ``record`` (what the bot did on a call:
``BotRecord``), ``turn`` (an in-process bot's own view of the graded turn), ``rtvi`` (its RTVI
data-channel messages), ``fastclock`` (a faster-than-real-time loop for in-process calls),
``score_sources`` (where a call's score comes from), ``interview_map`` (its whole interview
mapped to answers).
"""
