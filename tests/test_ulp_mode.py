"""The ulp mode (tests/ulp_mode.py) moves what it says it moves: a few percent of
NumPy's transcendental results by one ulp, the same for the same arguments, exact
and non-finite results kept."""

import math

import numpy as np
import pytest
from ulp_mode import PerturbedUfunc


def test_a_few_percent_of_results_move_one_ulp():
    exp = PerturbedUfunc(np.exp.ufunc if isinstance(np.exp, PerturbedUfunc)
                         else np.exp)
    x = np.linspace(-30.0, 30.0, 100_000)
    moved = exp(x)
    plain = exp.ufunc(x)
    differ = moved != plain
    assert 0.01 < differ.mean() < 0.06
    ulps = np.abs(moved.view(np.int64) - plain.view(np.int64))
    assert ulps.max() == 1
    np.testing.assert_array_equal(exp(x), moved)  # (a function of the arguments)
    assert exp(x[12345]) == moved[12345]
    out = np.empty_like(x)
    exp(x, out=out)
    np.testing.assert_array_equal(out, moved)


@pytest.mark.parametrize("argument", [0.0, np.inf, -np.inf, np.nan])
def test_exact_and_special_results_stay(argument):
    power = PerturbedUfunc(np.power.ufunc if isinstance(np.power, PerturbedUfunc)
                           else np.power)
    assert power(np.full(1000, 3.0), 2.0).tolist() == [9.0] * 1000
    exp = PerturbedUfunc(np.exp.ufunc if isinstance(np.exp, PerturbedUfunc)
                         else np.exp)
    value = exp(np.full(10, argument))
    expected = math.exp(argument) if not math.isnan(argument) else math.nan
    np.testing.assert_array_equal(value, np.full(10, expected))
