"""sklearn_ga.dask: parameter mixing on a LocalCluster, against partial_fit in
turn and a plain-NumPy transcription of the scheme; the mix in each psi's
domain; the inequalities the theory page states; the same bits on any cluster."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import softmax

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from sklearn_ga import PSI, GAClassifier, GARegressor, GARegressorCV  # noqa: E402
from sklearn_ga.dask import ParameterMixing, mix  # noqa: E402

CHUNK = 500


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                  processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            yield client


def _stream(m=2000, n=8, seed=0, outputs=1):
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, 1.0], size=(m, n))
    W = rng.uniform(-0.3, 0.3, size=(outputs, n))
    y = X @ W.T + 0.05 * rng.standard_normal((m, outputs))
    return X, y[:, 0] if outputs == 1 else y


def _dask(X, y):
    return da.from_array(X, chunks=(CHUNK, -1)), da.from_array(y, chunks=CHUNK)


def _shares(X, y, learners):
    """The learners' shares of the partitions as ParameterMixing cuts them."""
    parts = [(X[i:i + CHUNK], y[i:i + CHUNK]) for i in range(0, len(X), CHUNK)]
    return [[parts[i] for i in share] for share in
            np.array_split(np.arange(len(parts)), learners)]


def _same(a, b):
    """The same parameters, bit for bit; the same weights (the mix computes
    them from theta_ with the registry's NumPy formula, the loop in C)."""
    assert np.array_equal(a.theta_, b.theta_)
    assert np.array_equal(a.intercept_, b.intercept_)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-13, atol=1e-300)


MODELS = {
    "gd": dict(eta=0.01),
    "eg_pm": dict(psi="eg_pm", U=3.0, eta=0.05),
    "softmax": dict(psi="softmax", eta=0.05),
    "exp": dict(psi="exp", eta=0.01),
    "pnorm": dict(psi="pnorm", p=4.0, eta=0.01),
    "sphere": dict(psi="sphere", U=2.0, eta=0.01),
    "simplex": dict(psi="simplex", eta=0.01),
    "burg": dict(psi="burg", eta=0.001),
}


@pytest.mark.parametrize("name", MODELS)
def test_one_learner_is_partial_fit_in_turn(client, name):
    # One learner's pass is partial_fit over the partitions in turn, bit for
    # bit; its mix is itself.
    X, y = _stream()
    y = np.abs(y) + 0.1 if name in ("exp", "burg") else y
    estimator = GARegressor(**MODELS[name])
    mixed = ParameterMixing(estimator, max_iter=1, n_learners=1,
                            tol=None).fit(*_dask(X, y))
    sequential = GARegressor(**MODELS[name])
    for X_part, y_part in _shares(X, y, 1)[0]:
        sequential.partial_fit(X_part, y_part)
    if PSI[sequential.psi].geodesic:
        # The mix puts a geodesic psi's Theta, its point up to a positive
        # factor, on the unit sphere: the same point.
        unit = sequential.theta_ / np.linalg.norm(sequential.theta_)
        np.testing.assert_allclose(mixed.estimator_.theta_, unit, rtol=1e-14)
        np.testing.assert_allclose(mixed.estimator_.coef_, sequential.coef_,
                                   rtol=1e-13)
    else:
        _same(mixed.estimator_, sequential)
    assert mixed.estimator_.t_ == sequential.t_ == len(X)
    assert mixed.cumulative_loss_ == sequential.cumulative_loss_


def _learner(params, theta, intercept, X, y):
    """A GARegressor started from (theta, intercept): fitted on a row, its
    parameters then assigned (the public way to set a model's state)."""
    model = GARegressor(**params).partial_fit(X[:1], y[:1])
    model.theta_, model.intercept_ = theta, intercept
    return model


@pytest.mark.parametrize("space", ["parameters", "weights"])
@pytest.mark.parametrize("name", ["gd", "eg_pm", "softmax"])
def test_against_a_numpy_transcription(client, name, space):
    # Each pass: every share learned by partial_fit from the mix, then the mean
    # of their Theta (or of their weights, mapped back by psi^-1) weighted by
    # their rows, in NumPy alone.
    X, y = _stream(m=3000)
    params = MODELS[name]
    entry, U = PSI[params.get("psi", "identity")], params.get("U", 1.0)
    theta = np.full((1, X.shape[1]), entry.start)
    intercept = np.zeros(1)
    for _ in range(3):
        points, intercepts, rows = [], [], []
        for share in _shares(X, y, 2):
            model = _learner(params, theta, intercept, X, y)
            for X_part, y_part in share:
                model.partial_fit(X_part, y_part)
            points.append(entry.weights(model.theta_, U, 2.0)
                          if space == "weights" else model.theta_)
            intercepts.append(model.intercept_)
            rows.append(sum(len(part[1]) for part in share))
        shares = np.array(rows, dtype=float) / np.sum(rows)
        mean = np.einsum("g,gkn->kn", shares, np.array(points))
        theta = entry.inverse(mean, U, 2.0) if space == "weights" else mean
        intercept = shares @ np.array(intercepts)
    mixed = ParameterMixing(GARegressor(**params), max_iter=3, tol=None,
                            mixing=space).fit(*_dask(X, y))
    np.testing.assert_allclose(mixed.estimator_.theta_, theta, rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(mixed.estimator_.intercept_, intercept, rtol=1e-9,
                               atol=1e-12)
    assert mixed.estimator_.t_ == 3 * len(X) and mixed.n_learners_ == 2
