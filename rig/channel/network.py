"""Which packets go missing: random loss, Gilbert-Elliott bursts, and a fixed jitter buffer.

Each function returns a boolean mask over the packets (True: the packet is missing at the
receiver) and draws only from the generator it is given, so a pattern is a pure function of
the step's settings and the seed (:func:`rig.channel.chain.step_rng`).
"""

from __future__ import annotations

import numpy as np

from rig.channel.steps import Jitter, PacketLoss


def loss_mask(n_packets: int, step: PacketLoss, rng: np.random.Generator) -> np.ndarray:
    """Packets lost by a ``packet_loss`` step (bool, shape ``(n_packets,)``).

    ``random``: independent losses with probability ``loss_pct / 100``. ``gilbert_elliott``:
    the chain starts in its stationary distribution; in each packet it first loses the packet
    with its state's loss probability, then moves (good -> bad with ``p``, bad -> good with
    ``r``; see :meth:`PacketLoss.transition_probabilities`).
    """
    if n_packets <= 0:
        return np.zeros(0, bool)
    if step.model == "random":
        return rng.random(n_packets) < step.loss_pct / 100.0
    p, r = step.transition_probabilities()
    pi_bad = p / (p + r) if p + r > 0 else 0.0
    g, b = step.good_loss_pct / 100.0, step.bad_loss_pct / 100.0
    u_state, u_loss = rng.random(n_packets), rng.random(n_packets)
    lost = np.zeros(n_packets, bool)
    bad = bool(rng.random() < pi_bad)
    for k in range(n_packets):
        lost[k] = u_loss[k] < (b if bad else g)
        bad = (u_state[k] >= r) if bad else (u_state[k] < p)
    return lost


def late_mask(n_packets: int, step: Jitter, rng: np.random.Generator) -> np.ndarray:
    """Packets that miss their playout slot in a fixed jitter buffer (bool, ``(n_packets,)``).

    Extra delays are exponential with mean ``jitter_ms``; a packet later than ``buffer_ms``
    is dropped (strictly later: a packet arriving exactly on time plays).
    """
    if n_packets <= 0:
        return np.zeros(0, bool)
    if step.jitter_ms == 0:
        return np.zeros(n_packets, bool)
    return rng.exponential(step.jitter_ms, n_packets) > step.buffer_ms


def expected_missing_pct(step: PacketLoss | Jitter) -> float:
    """The long-run share of packets a step removes, in percent (what it claims)."""
    if isinstance(step, PacketLoss):
        return step.loss_pct
    if step.jitter_ms == 0:
        return 0.0
    return 100.0 * float(np.exp(-step.buffer_ms / step.jitter_ms))
