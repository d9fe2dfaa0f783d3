"""Media on a real call: 20 ms frames of 8 kHz int16 PCM, a playout buffer, RFC 3550 jitter,
and the transport facts a call row records.

Both ends of every transport in :mod:`rig.calls` exchange audio as **frames of 160 samples of
int16 mono PCM at 8000 Hz (20 ms, 320 bytes)**: the narrowband telephony rate of G.711
(ITU-T G.711) and the packetisation of Twilio Media Streams and of RTP PCMU at the default
``ptime`` of 20 ms (RFC 3551, section 4.5.14). A transport converts frames to its wire format
(mu-law for Twilio and SIP, Opus for WebRTC) and back.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np

from rig.audio import Audio, float_to_pcm16, pcm16_to_float

#: Sample rate of call media at the agent and interviewer, Hz.
CALL_RATE_HZ = 8000
#: One media frame, ms / samples / bytes of int16 PCM.
FRAME_MS = 20
FRAME_SAMPLES = CALL_RATE_HZ * FRAME_MS // 1000
FRAME_BYTES = FRAME_SAMPLES * 2
SILENT_FRAME = bytes(FRAME_BYTES)


def audio_to_frames(audio: Audio) -> list[bytes]:
    """Resample ``audio`` to 8 kHz (soxr) and cut it into 20 ms int16 PCM frames (320 bytes
    each; the last one zero-padded)."""
    pcm = float_to_pcm16(audio.resample(CALL_RATE_HZ).samples).tobytes()
    pad = (-len(pcm)) % FRAME_BYTES
    pcm += bytes(pad)
    return [pcm[i:i + FRAME_BYTES] for i in range(0, len(pcm), FRAME_BYTES)]


def frames_to_audio(frames: list[bytes] | bytes) -> Audio:
    """Join int16 PCM frames at 8 kHz into float32 :class:`Audio`."""
    pcm = frames if isinstance(frames, bytes | bytearray) else b"".join(frames)
    return Audio(pcm16_to_float(np.frombuffer(bytes(pcm), np.int16)), CALL_RATE_HZ)


class PlayoutBuffer:
    """What the far end sent, read back one 20 ms frame per tick of the listener's clock.

    Transports deliver audio in bursts of any size (pipecat's output sends what its TTS made,
    WebRTC delivers 20 ms Opus frames resampled); :meth:`read_frame` takes the next 320 bytes
    and pads with silence when too little has arrived, so that the listener's timeline stays
    continuous and VAD sees real time. Every padded tick is counted in ``underruns``. Those
    inside a talkspurt are counted in ``talkspurt_underruns``: a run of padded ticks that ends
    with audio arriving within ``talkspurt_gap_s`` (the audio stalled and came back). A longer
    gap is the sender being silent, which senders show differently: pipecat's websocket output
    (Twilio Media Streams) sends nothing between utterances, so every tick of its silence is
    padded, while WebRTC and RTP senders send silence; only ``talkspurt_underruns`` means the
    same on every transport. Ticks before any audio has arrived are never in a talkspurt.

    A sender that stalls and then catches up leaves audio queued here, and a queue read at
    one frame per tick never shrinks: every later word would be heard that much late. So,
    like an adaptive jitter buffer, while more than ``max_delay_s`` is queued, silent frames
    (peak below ``SILENCE_PEAK`` on the int16 scale) are skipped (counted in
    ``skipped_frames``); speech is never dropped. ``max_buffer_s`` bounds the queue; older
    audio beyond it is dropped and counted.
    """

    SILENCE_PEAK = 100

    def __init__(self, max_buffer_s: float = 30.0, max_delay_s: float = 0.2,
                 talkspurt_gap_s: float = 0.25) -> None:
        self._buf = bytearray()
        self._max = int(max_buffer_s * CALL_RATE_HZ) * 2
        self._max_delay_bytes = int(max_delay_s * CALL_RATE_HZ) * 2
        self._gap_ticks = int(talkspurt_gap_s * 1000 / FRAME_MS)
        self._dry = 0  # padded ticks since the audio last ran out
        self.underruns = 0
        self.talkspurt_underruns = 0
        self.skipped_frames = 0
        self.dropped_bytes = 0
        self.received_bytes = 0

    def push(self, pcm: bytes) -> None:
        """Append int16 PCM at 8 kHz (any length, even)."""
        if pcm and self._dry:
            if self._dry <= self._gap_ticks:  # a stall inside a talkspurt
                self.talkspurt_underruns += self._dry
            self._dry = 0
        self._buf += pcm
        self.received_bytes += len(pcm)
        if len(self._buf) > self._max:
            cut = len(self._buf) - self._max
            cut -= cut % 2
            del self._buf[:cut]
            self.dropped_bytes += cut

    def read_frame(self) -> bytes:
        """The next 20 ms frame (320 bytes), silence-padded on underrun."""
        while (len(self._buf) > self._max_delay_bytes + FRAME_BYTES
               and np.abs(np.frombuffer(bytes(self._buf[:FRAME_BYTES]), np.int16)).max()
               < self.SILENCE_PEAK):
            del self._buf[:FRAME_BYTES]
            self.skipped_frames += 1
        if len(self._buf) >= FRAME_BYTES:
            out = bytes(self._buf[:FRAME_BYTES])
            del self._buf[:FRAME_BYTES]
            return out
        if self._buf:
            out = bytes(self._buf) + bytes(FRAME_BYTES - len(self._buf))
            self._buf.clear()
        else:
            out = SILENT_FRAME
        self.underruns += 1
        if self.received_bytes:
            self._dry += 1
        return out

    def clear(self) -> None:
        """Drop what is queued (a Media Streams ``clear``); the counts go on."""
        self._buf.clear()
        self._dry = 0

    @property
    def buffered_s(self) -> float:
        return len(self._buf) / 2 / CALL_RATE_HZ


class JitterMeter:
    """Interarrival jitter of a media stream, RFC 3550 section 6.4.1 (and appendix A.8).

    For packets i-1 and i with media times S (seconds of audio carried before the packet) and
    arrival times R (seconds, the receiver's clock), D = (R_i - R_{i-1}) - (S_i - S_{i-1}) and
    J += (|D| - J) / 16. Reported in milliseconds.

    A talkspurt restart (an arrival gap longer than ``talkspurt_gap_s`` beyond what the media
    explains, as when a sender stops sending during its own silence, which pipecat's websocket
    output does) resets the reference instead of counting the gap as jitter.
    """

    def __init__(self, talkspurt_gap_s: float = 0.25) -> None:
        self.jitter_s = 0.0
        self.packets = 0
        self._prev: tuple[float, float] | None = None
        self._gap = talkspurt_gap_s

    def add(self, media_s: float, arrival_s: float) -> None:
        """One packet: its media timestamp and arrival time, seconds."""
        self.packets += 1
        if self._prev is not None:
            d = (arrival_s - self._prev[1]) - (media_s - self._prev[0])
            if abs(d) <= self._gap:
                self.jitter_s += (abs(d) - self.jitter_s) / 16.0
        self._prev = (media_s, arrival_s)

    @property
    def jitter_ms(self) -> float:
        return self.jitter_s * 1000.0


@dataclass(frozen=True)
class TransportFacts:
    """What a transport measured on one call (one row's transport columns).

    Attributes:
        transport: ``sim``, ``twilio``, ``webrtc`` or ``sip``.
        codec: the codec negotiated on the wire (``PCMU/8000``, ``opus/48000``, ...).
        packets_sent, packets_received: media packets the caller sent and received, in the
            unit ``packet_unit`` names.
        packets_lost: packets the caller's receiver found missing (RTP sequence gaps, or the
            WebRTC stack's ``packetsLost``); 0 on a websocket (TCP delivers everything or
            fails).
        jitter_ms: interarrival jitter of the interviewer's audio at the caller, RFC 3550.
        call_duration_s: connect to hang-up, seconds.
        underruns: 20 ms ticks at which the caller's playout of the interviewer's audio ran
            dry inside a talkspurt (audio came back within 250 ms:
            :attr:`PlayoutBuffer.talkspurt_underruns`), the same measure on every transport
            (a sender's silence, which pipecat's websocket output to Twilio does not send and
            WebRTC and RTP senders do, is not an underrun).
        hung_up_by: ``caller`` (end of the question set), ``caller_time_limit`` or
            ``interviewer``.
        packet_unit: what the packet counts count: ``rtp`` (RTP packets, WebRTC and SIP: 20 ms
            each on SIP, the codec's frame on WebRTC) or ``media_message`` (Twilio Media
            Streams ``media`` messages: the caller sends one per 20 ms frame, the interviewer's
            side sends chunks of any length, so received messages are not 20 ms packets).
    """
    transport: str
    codec: str
    packets_sent: int
    packets_received: int
    packets_lost: int | None
    jitter_ms: float | None
    call_duration_s: float
    underruns: int
    hung_up_by: str
    packet_unit: str | None = None

    def to_row(self) -> dict:
        d = asdict(self)
        return {("transport" if k == "transport" else f"transport_{k}"): v for k, v in d.items()}


def now_s() -> float:
    """Wall-clock seconds since the epoch: the clock both ends stamp call events with (one
    host on loopback; NTP-synchronised hosts otherwise)."""
    return time.time()
