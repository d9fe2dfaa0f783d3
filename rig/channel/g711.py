"""G.711 companding (ITU-T G.711), numpy, bit-exact with CPython's ``audioop``.

G.711 follows ITU-T Recommendation G.711 (11/88), "Pulse code modulation (PCM) of voice
frequencies", in the bit-exact form of the Sun Microsystems public-domain reference
``g711.c`` (the code CPython's ``audioop.lin2ulaw``/``lin2alaw`` use): mu-law works on the
14 most significant bits of a 16-bit sample with a bias of 33 and inverts all bits of the code;
A-law works on the 13 most significant bits and inverts the even bits (XOR 0x55). The encoders
and decoders below are vectorised numpy versions of those routines and agree with ``audioop``
for every int16 input and every code (see ``tests/test_channel_unit.py``). The laws are entries of
the codec registry (:data:`rig.channel.codecs.CODECS`), which also holds their silence codes
and the float-audio :func:`rig.channel.codecs.encode` and :func:`~rig.channel.codecs.decode`.
"""

from __future__ import annotations

import numpy as np

#: Line rate of narrowband telephony (G.711), Hz.
LINE_RATE_HZ = 8000
#: Frame length of telephony media streams (RTP ptime, Twilio media messages), ms.
FRAME_MS = 20

# --- G.711 (ITU-T G.711; Sun g711.c) -------------------------------------------------------
# Segment end points: the largest magnitude each of the 8 segments holds.
_SEG_UEND = np.array([0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF], np.int32)
_SEG_AEND = np.array([0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF], np.int32)
_ULAW_BIAS = 0x84  # 132 on the 16-bit scale, 33 on the 14-bit scale
_QUANT_MASK = 0x0F
_SEG_MASK = 0x70
_SEG_SHIFT = 4
_SIGN_BIT = 0x80


def _as_int16(pcm: np.ndarray) -> np.ndarray:
    pcm = np.asarray(pcm)
    if pcm.dtype != np.int16:
        raise TypeError(f"G.711 encoders take int16 PCM, got {pcm.dtype}; convert float audio "
                        "with rig.audio.float_to_pcm16 first")
    return pcm


def as_codes(codes: np.ndarray | bytes) -> np.ndarray:
    """G.711 codes as a uint8 array (bytes are viewed, not copied).

    Raises:
        TypeError: an array that is not uint8.
    """
    if isinstance(codes, bytes | bytearray | memoryview):
        return np.frombuffer(bytes(codes), dtype=np.uint8)
    codes = np.asarray(codes)
    if codes.dtype != np.uint8:
        raise TypeError(f"G.711 decoders take uint8 codes (or bytes), got {codes.dtype}")
    return codes


def mulaw_encode(pcm: np.ndarray) -> np.ndarray:
    """16-bit linear PCM to G.711 mu-law codes (ITU-T G.711; Sun ``g711.c`` ``linear2ulaw``).

    Args:
        pcm: int16, any shape.

    Returns:
        uint8 codes, same shape. Full scale at both ends saturates (0x80 for +32767, 0x00 for
        -32768), never wraps.

    Raises:
        TypeError: ``pcm`` is not int16.
    """
    x = _as_int16(pcm).astype(np.int32) >> 2  # the 14 most significant bits
    negative = x < 0
    mag = np.minimum(np.where(negative, -x, x), 32635) + (_ULAW_BIAS >> 2)
    seg = np.searchsorted(_SEG_UEND, mag, side="left")  # first segment with mag <= end
    mask = np.where(negative, 0x7F, 0xFF)
    code = (np.minimum(seg, 7) << 4) | ((mag >> (np.minimum(seg, 7) + 1)) & _QUANT_MASK)
    code = np.where(seg >= 8, 0x7F, code)  # out of range: the largest magnitude
    return (code ^ mask).astype(np.uint8)


def mulaw_decode(codes: np.ndarray | bytes) -> np.ndarray:
    """G.711 mu-law codes to 16-bit linear PCM (Sun ``g711.c`` ``ulaw2linear``).

    Args:
        codes: uint8 array (any shape) or bytes.

    Returns:
        int16, same shape (range -32124 ... 32124).
    """
    return _ULAW_TABLE[as_codes(codes)]


def alaw_encode(pcm: np.ndarray) -> np.ndarray:
    """16-bit linear PCM to G.711 A-law codes (ITU-T G.711; Sun ``g711.c`` ``linear2alaw``).

    Args:
        pcm: int16, any shape.

    Returns:
        uint8 codes (even bits inverted), same shape. Full scale saturates (0xAA for +32767,
        0x2A for -32768), never wraps.

    Raises:
        TypeError: ``pcm`` is not int16.
    """
    x = _as_int16(pcm).astype(np.int32) >> 3  # the 13 most significant bits
    negative = x < 0
    mag = np.where(negative, -x - 1, x)
    seg = np.searchsorted(_SEG_AEND, mag, side="left")
    segc = np.minimum(seg, 7)
    quant = np.where(segc < 2, mag >> 1, mag >> np.maximum(segc, 1)) & _QUANT_MASK
    code = np.where(seg >= 8, 0x7F, (segc << _SEG_SHIFT) | quant)
    mask = np.where(negative, 0x55, 0xD5)
    return (code ^ mask).astype(np.uint8)


def alaw_decode(codes: np.ndarray | bytes) -> np.ndarray:
    """G.711 A-law codes to 16-bit linear PCM (Sun ``g711.c`` ``alaw2linear``).

    Args:
        codes: uint8 array (any shape) or bytes.

    Returns:
        int16, same shape (range -32256 ... 32256).
    """
    return _ALAW_TABLE[as_codes(codes)]


def _ulaw_table() -> np.ndarray:
    u = ~np.arange(256, dtype=np.int32) & 0xFF
    t = (((u & _QUANT_MASK) << 3) + _ULAW_BIAS) << ((u & _SEG_MASK) >> _SEG_SHIFT)
    return np.where(u & _SIGN_BIT, _ULAW_BIAS - t, t - _ULAW_BIAS).astype(np.int16)


def _alaw_table() -> np.ndarray:
    a = np.arange(256, dtype=np.int32) ^ 0x55
    t = (a & _QUANT_MASK) << 4
    seg = (a & _SEG_MASK) >> _SEG_SHIFT
    t = np.where(seg == 0, t + 8, (t + 0x108) << np.maximum(seg - 1, 0))
    return np.where(a & _SIGN_BIT, t, -t).astype(np.int16)


_ULAW_TABLE = _ulaw_table()
_ALAW_TABLE = _alaw_table()
