"""path_measure_, sum_t D(w_t, w_{t+1}) with D = dist^2 / 2 (KMWW eq. 8), summed by
the compiled loop at O(1) a trial, against a replay in NumPy: one-row partial_fit
calls, each step's distance from the points before and after it (theta_ and
intercept_ in Euclidean space, coef_ on the sphere or the simplex with
sklearn_ga.theory.distance, the intercepts a coordinate of their own). A call over
all the rows (the fused dense passes, CSR rows output by output or outputs
innermost) must sum the same steps, and so must its pickle, its epochs and its
failed calls."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_ga import PSI, GAClassifier, GARegressor
from sklearn_ga.theory import distance

GEODESIC = {"sphere", "simplex"}


def data(rng, m=40, n=6, k=1, density=0.5):
    X = rng.normal(size=(m, n)) * (rng.random((m, n)) < density)
    w = rng.normal(size=(n, k))
    Y = np.tanh(X @ w) + 0.1 * rng.normal(size=(m, k))
    return X, (Y.ravel() if k == 1 else Y)


def point(model):
    """The model's point: (weights on the manifold, or theta; intercepts)."""
    rows = model.coef_ if model.psi in GEODESIC else model.theta_
    return np.atleast_2d(np.array(rows, dtype=float)), np.array(model.intercept_)


def step_measure(before, after, psi, U):
    """D(w_t, w_{t+1}): half the squared distance of the rows in their geometry plus
    the intercepts' squared step."""
    geometry = psi if psi in GEODESIC else "euclidean"
    rows = distance(after[0], before[0], geometry=geometry, U=U)
    return 0.5 * (rows**2 + np.sum((after[1] - before[1]) ** 2))


def start_point(psi, k, n, U):
    if psi == "sphere":
        rows = np.full((k, n), U / np.sqrt(n))
    elif psi == "simplex":
        rows = np.full((k, n), 1.0 / n)
    else:
        rows = np.full((k, n), PSI[psi].start)
    return rows, np.zeros(k)


def replayed(make, X, y, **fit_params):
    """The model after one-row calls over X, and the summed D of their steps."""
    model, total = make(), 0.0
    before = None
    for t in range(X.shape[0]):
        model.partial_fit(X[t:t + 1], y[t:t + 1], **fit_params)
        if before is None:
            k = np.atleast_2d(model.theta_).shape[0]
            before = start_point(model.psi, k, X.shape[1], model.U_)
        after = point(model)
        total += step_measure(before, after, model.psi, model.U_)
        before = after
    return model, total


REGRESSORS = [
    {"psi": "identity"},
    {"psi": "identity", "update": "implicit"},
    {"psi": "identity", "phi": "logistic", "Y": 0.9},
    {"psi": "eg_pm", "U": 3.0},
    {"psi": "softmax", "U": 2.0},
    {"psi": "exp"},
    {"psi": "pnorm", "p": 3.0},
    {"psi": "burg"},
    {"psi": "sphere", "U": 2.0},
    {"psi": "simplex"},
    {"psi": "exp", "update": "natural"},
    {"psi": "softmax", "U": 2.0, "update": "natural"},
    {"psi": "eg_pm", "U": 3.0, "update": "natural"},
]


def case_id(params):
    return "-".join(str(v) for v in params.values())


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("params", REGRESSORS, ids=case_id)
def test_regressor_path_is_the_replayed_sum_of_its_steps(params, k):
    rng = np.random.default_rng(1)
    X, y = data(rng, k=k)
    y = y if params.get("phi") != "logistic" else (y > 0).astype(float)

    def make():
        return GARegressor(eta=0.1, **params)

    for layout in (np.asarray, sp.csr_matrix):
        model, total = replayed(make, layout(X), y)
        assert total > 0
        np.testing.assert_allclose(model.path_measure_, total, rtol=1e-9)
        # One call over all the rows (fused dense passes, CSR runs): the same sum.
        batch = make().partial_fit(layout(X), y)
        np.testing.assert_allclose(batch.path_measure_, total, rtol=1e-9)


@pytest.mark.parametrize("phi", ["logistic", "softmax"])
@pytest.mark.parametrize("psi", ["identity", "eg_pm", "sphere"])
def test_classifier_path_is_the_replayed_sum_of_its_steps(psi, phi):
    """Three classes: k = 3 outputs, learnt apart (one-vs-rest logistic: a CSR call
    runs them output by output) or coupled (softmax)."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 5)) * (rng.random((60, 5)) < 0.6)
    labels = np.argmax(X @ rng.normal(size=(5, 3)), axis=1)

    def make():
        return GAClassifier(psi=psi, phi=phi, eta=0.2, U=2.0)

    for layout in (np.asarray, sp.csr_matrix):
        model, total = replayed(make, layout(X), labels, classes=[0, 1, 2])
        np.testing.assert_allclose(model.path_measure_, total, rtol=1e-9)
        batch = make().partial_fit(layout(X), labels, classes=[0, 1, 2])
        np.testing.assert_allclose(batch.path_measure_, total, rtol=1e-9)


def test_csr_outputs_innermost_sum_the_same_steps_as_dense_rows():
    """psi = identity with k outputs on a CSR batch of many entries per column holds
    theta outputs innermost (its own trial loop): its steps are the dense rows'."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 8)) * (rng.random((400, 8)) < 0.7)
    labels = np.argmax(X @ rng.normal(size=(8, 4)), axis=1)
    for phi in ("softmax", "logistic"):
        dense = GAClassifier(phi=phi, eta=0.05, max_iter=3, tol=None,
                             random_state=0).fit(X, labels)
        csr = GAClassifier(phi=phi, eta=0.05, max_iter=3, tol=None,
                           random_state=0).fit(sp.csr_matrix(X), labels)
        assert dense.path_measure_ > 0
        np.testing.assert_allclose(csr.path_measure_, dense.path_measure_, rtol=1e-9)


def test_path_accumulates_over_calls_epochs_and_pickles_and_fit_resets_it():
    rng = np.random.default_rng(4)
    X, y = data(rng, m=60)
    epochs = GARegressor(eta=0.05, max_iter=4, tol=None, shuffle=False).fit(X, y)
    calls = GARegressor(eta=0.05)
    for _ in range(4):
        calls.partial_fit(X, y)
    np.testing.assert_allclose(epochs.path_measure_, calls.path_measure_, rtol=1e-12)
    copy = pickle.loads(pickle.dumps(calls))
    assert copy.path_measure_ == calls.path_measure_
    copy.partial_fit(X, y)
    calls.partial_fit(X, y)
    assert copy.path_measure_ == calls.path_measure_ > epochs.path_measure_
    fresh = GARegressor(eta=0.05, random_state=0).fit(X, y).path_measure_
    assert calls.set_params(random_state=0).fit(X, y).path_measure_ == fresh


def test_a_failed_call_leaves_the_path_as_it_was():
    rng = np.random.default_rng(5)
    X, y = data(rng)
    model = GARegressor(eta=0.1).partial_fit(X, y)
    path = model.path_measure_
    bad = X.copy()
    bad[7, 2] = np.nan
    with pytest.raises(ValueError):
        model.partial_fit(bad, y)
    assert model.path_measure_ == path
    with pytest.raises(ValueError, match="diverged"):
        model.set_params(eta=1e6).partial_fit(X * 1e3, y)
    assert model.path_measure_ == path


def test_a_penalty_leaves_the_path_unmeasured():
    """The pull of alpha > 0 moves Theta besides the rule's step: NaN, not a number
    that leaves it out."""
    rng = np.random.default_rng(6)
    X, y = data(rng)
    assert np.isnan(GARegressor(eta=0.1, alpha=0.01).fit(X, y).path_measure_)
