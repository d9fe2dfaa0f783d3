"""The caller agent: joins a real call as the candidate and plays pre-rendered answers.

``brain`` (its decisions: a state machine with no I/O), ``utterances`` (what an interviewer's
turn asks, from its words), ``question_match`` (which bank question was asked, by text
similarity), ``loop`` (its real-time loop over a transport link: VAD, ASR, playout).
"""
