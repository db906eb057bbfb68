"""The C primitives' exponential and logarithm hold their claimed accuracy.

ga_exp and ga_log (sklearn_ga/_src/ga_exp_log.h) are branch-free so that the loops
calling them vectorize, and claim about 2 ulp. They are checked here against
extended precision (np.longdouble, 64-bit significands on x86-64) over their whole
range, through the module's test hook _exp_log.
"""

import numpy as np
import pytest
from sklearn_ga._kernel import _exp_log

# "About 2 ulp": the largest error seen over these points is 2.1 ulp.
CLAIMED_ULP = 2.25
EXTENDED = np.finfo(np.longdouble).nmant >= 63


def ulp_errors(values, reference):
    """|values - reference| in units of the float64 spacing at the reference."""
    spacing = np.spacing(np.abs(reference.astype(np.float64)))
    return np.abs(values.astype(np.longdouble) - reference) / spacing


pytestmark = pytest.mark.skipif(not EXTENDED, reason="needs an 80-bit long double")


def test_exp_within_claimed_ulp():
    rng = np.random.default_rng(0)
    x = np.concatenate([
        rng.uniform(-745.0, 709.7, 200_000),
        rng.uniform(-1.0, 1.0, 100_000),
        rng.uniform(-1e-8, 1e-8, 10_000),
        np.arange(-745, 710, dtype=float) * np.log(2) / np.log(2),
        [0.0, -0.0, 1.0, -1.0, np.log(2.0), 709.78, -708.39],
    ])
    reference = np.exp(x.astype(np.longdouble))
    assert np.max(ulp_errors(_exp_log(x, False), reference)) <= CLAIMED_ULP


def test_log_within_claimed_ulp():
    rng = np.random.default_rng(1)
    x = np.concatenate([
        np.exp(rng.uniform(-708.0, 709.0, 200_000)),
        rng.uniform(0.5, 2.0, 100_000),
        1.0 + rng.uniform(-1e-6, 1e-6, 10_000),
        [np.finfo(float).tiny, np.finfo(float).max, 1.0, 2.0, 0.5, np.sqrt(0.5)],
    ])
    reference = np.log(x.astype(np.longdouble))
    # Near x = 1 the result is near 0: measure there against the spacing of ln x.
    assert np.max(ulp_errors(_exp_log(x, True), reference)) <= CLAIMED_ULP


def test_exp_log_edges():
    x = np.array([np.nan, np.inf, -np.inf, 710.0, -746.0, 1e308, -1e308])
    with np.errstate(over="ignore"):
        expected = np.exp(x)
    np.testing.assert_array_equal(_exp_log(x, False), expected)
    positive = np.array([np.nan, np.inf])
    np.testing.assert_array_equal(_exp_log(positive, True), np.log(positive))
