"""Sample size for the paired design: the published example and statsmodels' power solvers."""

from __future__ import annotations

import math

import pytest
from statsmodels.stats.power import NormalIndPower, TTestPower

from rig.stats import paired_sample_size

pytestmark = pytest.mark.unit


def test_published_worked_example() -> None:
    res = paired_sample_size(6, 3, alpha=0.05, power=0.8, profiles=6, repeats=3)
    assert round(res.n_exact, 1) == 31.4
    assert res.n_answers == 32
    assert res.calls_per_run == 224
    assert res.calls_total == 672


def test_t_refinement_matches_statsmodels() -> None:
    res = paired_sample_size(6, 3)
    ref = TTestPower().solve_power(effect_size=0.5, alpha=0.05, power=0.8,
                                   alternative="two-sided")
    assert res.n_exact_t == pytest.approx(ref, rel=1e-6)
    assert res.n_answers_t == math.ceil(ref) == 34
    assert res.n_answers_t >= res.n_answers


@pytest.mark.parametrize(("sd", "delta", "alpha", "power"), [
    (6, 3, 0.05, 0.8), (10, 2, 0.05, 0.9), (4, 4, 0.01, 0.8), (15, 5, 0.1, 0.95),
    (8, -3, 0.05, 0.8), (3, 0.5, 0.05, 0.8),
])
def test_normal_formula_matches_statsmodels_one_sample_normal_power(sd, delta, alpha,
                                                                    power) -> None:
    res = paired_sample_size(sd, delta, alpha, power)
    ref = NormalIndPower().solve_power(effect_size=abs(delta) / sd, alpha=alpha, power=power,
                                       ratio=0, alternative="two-sided")
    assert res.n_exact == pytest.approx(ref, rel=1e-4)  # statsmodels adds the far tail
    t_ref = TTestPower().solve_power(effect_size=abs(delta) / sd, alpha=alpha, power=power,
                                     alternative="two-sided")
    assert res.n_exact_t == pytest.approx(t_ref, rel=1e-5)


def test_tiny_effect_floor_is_two_answers() -> None:
    res = paired_sample_size(1, 10)
    assert res.n_exact < 1 and res.n_answers == 2 and res.n_answers_t >= 2


def test_calls_need_the_number_of_profiles() -> None:
    res = paired_sample_size(6, 3)
    assert res.calls_per_run is None and res.calls_total is None
    assert paired_sample_size(6, 3, profiles=0).calls_per_run == 32


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"sd_delta": 0, "delta": 3}, "sd must be > 0"),
    ({"sd_delta": -1, "delta": 3}, "sd must be > 0"),
    ({"sd_delta": 6, "delta": 0}, "delta must not be 0"),
    ({"sd_delta": 6, "delta": 3, "alpha": 0}, "alpha"),
    ({"sd_delta": 6, "delta": 3, "power": 1}, "power"),
    ({"sd_delta": 6, "delta": 3, "profiles": -1}, "profiles"),
    ({"sd_delta": 6, "delta": 3, "repeats": 0}, "repeats"),
    ({"sd_delta": float("nan"), "delta": 3}, "finite"),
])
def test_bad_inputs_raise_value_error_naming_the_parameter(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        paired_sample_size(**kwargs)


def test_to_dict() -> None:
    d = paired_sample_size(6, 3, profiles=6, repeats=3).to_dict()
    assert d["n_answers"] == 32 and d["calls_total"] == 672
