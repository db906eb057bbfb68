"""The geodesic psi (KMWW Examples 2 and 3) over long runs: the sphere's weights
keep their norm, the simplex's stay on the simplex, and theta stays in floating
point's range while it learns, dense and CSR; their single steps are checked
against the oracle in tests/test_updates.py.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_ga import PSI, GARegressor
from sklearn_ga._codes import Status
from sklearn_ga._configuration import Configuration


def _geodesic_run(psi, sparse, m=100_000, n=6, seed=8):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * (rng.random((m, n)) < (0.5 if sparse else 1))
    target = np.abs(rng.normal(size=n))
    target /= target.sum() if psi == "simplex" else np.linalg.norm(target)
    y = X @ target + 0.1 * rng.standard_normal(m)
    config = Configuration.build("GARegressor", psi=psi, eta=0.05,
                                 fit_intercept=False)
    theta, intercept = config.initial_parameters((1, n)), np.zeros(1)
    loop = config.trial_loop(theta, intercept, 0.05, 1.0)
    Y = np.ascontiguousarray(y[:, None])
    order = np.arange(m, dtype=np.intp)
    if sparse:
        C = sp.csr_matrix(X)
        status, _, total = loop.run_csr(C.data, C.indices, C.indptr, C.shape[1], Y,
                                        np.empty(0), order)
    else:
        status, _, total = loop.run_dense(X, Y, np.empty(0), order)
    assert status == Status.OK
    return loop.weights()[0], target, total / m


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_sphere_keeps_unit_norm(sparse):
    weights, target, mean_loss = _geodesic_run("sphere", sparse)
    assert abs(np.linalg.norm(weights) - 1.0) < 1e-12
    assert np.abs(weights - target).max() < 0.05  # it did learn the direction
    assert mean_loss < 0.1


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_simplex_keeps_weights_on_the_simplex(sparse):
    weights, target, mean_loss = _geodesic_run("simplex", sparse)
    assert abs(weights.sum() - 1.0) < 1e-12
    assert weights.min() >= 0.0
    assert np.abs(weights - target).max() < 0.05
    assert mean_loss < 0.1


@pytest.mark.parametrize("psi", ["sphere", "simplex"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_geodesic_theta_stays_in_range_over_long_runs(psi, sparse):
    # theta matters up to a positive factor, and the steps scale it: here by about
    # 1e17 per pass (simplex), which overflowed after 18 passes and was reported as
    # a divergence while the weights were stable. It is rescaled by powers of 2.
    rng = np.random.default_rng(6)
    X = rng.uniform(0, 1, (500, 5))
    y = X @ np.array([0.6, 0.3, 0.1, 0.0, 0.0]) + 3.0
    model = GARegressor(psi=psi, eta=0.1, fit_intercept=False)
    data = sp.csr_matrix(X) if sparse else X
    coef = []
    for _ in range(60):
        coef.append(model.partial_fit(data, y).coef_.copy())
    assert 2.0**-300 < np.abs(model.theta_).max() < 2.0**300
    np.testing.assert_allclose(coef[-1], coef[-2], atol=1e-6)  # stable weights
    weights = PSI[psi].weights(model.theta_, model.U_, 2.0)[0]
    np.testing.assert_allclose(model.coef_, weights, rtol=1e-12, atol=1e-15)
