"""The console's line for a measured noise floor (rig.cli.summary_lines.noise_floor_line):
points on the 0-100 scale, the pairs it rests on, and a caution when few pairs differed
(issue 33: a newcomer who followed the advice saw the floor nowhere on screen)."""

from __future__ import annotations

import math

import pytest

from rig.campaign.schema import NoiseFloorSummary
from rig.cli.summary_lines import noise_floor_line

pytestmark = pytest.mark.unit


def _nf(n_pairs: int, identical: int) -> NoiseFloorSummary:
    sd = 0.3635
    return NoiseFloorSummary(profile_id="baseline", measured=True, reason=None, n_answers=5,
                             n_repeat_pairs=n_pairs, n_identical_repeat_pairs=identical,
                             repeat_sd=sd, sd_repeat_diff=sd * math.sqrt(2), df_within=5,
                             flip_rate=0.0, n_flips=0, not_computable={})


def test_a_measured_floor_is_said_in_points_with_its_pairs():
    line = noise_floor_line(_nf(5, 4))
    assert line.startswith("noise floor (baseline): one call's score moves by SD 0.36 points "
                           "(0-100 scale) between repeats (a difference of two repeats: SD "
                           "0.51), from 5 repeat pairs of 5 answers, 4 identical; decisions "
                           "flipped in 0 of 5"), line
    assert "only 1 pair(s) differed, so this is a rough figure" in line


def test_no_caution_when_enough_pairs_differed():
    assert "rough" not in noise_floor_line(_nf(10, 2))
