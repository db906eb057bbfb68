"""average: coef_ and intercept_ are the mean of the weights psi(Theta_t) and of
the intercepts b_t after each averaged trial, while theta_, the learning and
cumulative_loss_ stay those of the plain algorithm. References: the plain model
read after each of m one-row calls, and scikit-learn's averaged SGD."""

import copy as copy_module
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.linear_model import SGDRegressor
from test_reference import ETA, P, U, as_layout, make_inputs, regression_targets

from sklearn_ga import PSI, GAClassifier, GARegressor

PARAMS = {"eta": ETA, "U": U, "p": P}


def trace(model, X, Y, sparse, **fit):
    """coef_ and intercept_ of ``model`` after each of its one-row calls on X."""
    coefs, intercepts = [], []
    for t in range(X.shape[0]):
        model.partial_fit(as_layout(X[t:t + 1], sparse), Y[t:t + 1], **fit)
        coefs.append(np.array(model.coef_))
        intercepts.append(np.array(model.intercept_))
    return np.array(coefs), np.array(intercepts)


# 150 trials of 7 features: recomputed rows restart their sums of scales on the way.
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("psi", PSI)
def test_average_is_the_mean_of_the_plain_models(psi, k, sparse):
    rng = np.random.default_rng(0)
    X = make_inputs(rng, 150, 7, sparse)
    Y = regression_targets("tanh", rng, 150, k)
    Y = Y[:, 0] if k == 1 else Y
    coefs, intercepts = trace(GARegressor(psi=psi, phi="tanh", **PARAMS), X, Y, sparse)
    plain = GARegressor(psi=psi, phi="tanh", **PARAMS)
    model = GARegressor(psi=psi, phi="tanh", average=True, **PARAMS)
    for rows in np.split(np.arange(150), [1, 70]):  # (the sums go on across calls)
        model.partial_fit(as_layout(X[rows], sparse), Y[rows])
        plain.partial_fit(as_layout(X[rows], sparse), Y[rows])
    np.testing.assert_allclose(model.coef_, coefs.mean(axis=0), rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(model.intercept_, intercepts.mean(axis=0), rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_array_equal(model.theta_, plain.theta_)
    assert model.cumulative_loss_ == plain.cumulative_loss_
    A = as_layout(X, sparse) @ np.reshape(model.coef_, (k, 7)).T + model.intercept_
    np.testing.assert_allclose(np.reshape(model.predict(as_layout(X, sparse)), A.shape),
                               np.tanh(A), rtol=1e-12)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("psi", ["identity", "eg_pm", "pnorm"])
def test_average_classifier_and_a_start(psi, sparse):
    """average=10: the mean from the 10th trial on; before it, the plain model."""
    rng = np.random.default_rng(1)
    X = make_inputs(rng, 60, 6, sparse)
    labels = rng.integers(0, 3, size=60)
    params = {"psi": psi, "phi": "softmax", **PARAMS}
    coefs, intercepts = trace(GAClassifier(**params), X, labels, sparse,
                              classes=[0, 1, 2])
    model = GAClassifier(average=10, **params)
    model.partial_fit(as_layout(X[:9], sparse), labels[:9], classes=[0, 1, 2])
    np.testing.assert_allclose(model.coef_, coefs[8], rtol=1e-12, atol=1e-15)
    model.partial_fit(as_layout(X[9:], sparse), labels[9:])
    np.testing.assert_allclose(model.coef_, coefs[9:].mean(axis=0), rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(model.intercept_, intercepts[9:].mean(axis=0),
                               rtol=1e-9, atol=1e-12)


# 150: after every trial of the calls (their coef_ is the plain one, as SGD's), in
# the second epoch of the fit.
@pytest.mark.parametrize("average", [True, 25, 150])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_average_is_sgd_regressors(average, sparse):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 5))
    X[rng.uniform(size=X.shape) < 0.5 * sparse] = 0.0
    y = X @ rng.normal(size=5) + 0.3
    params = {"average": average, "fit_intercept": not sparse}
    sgd = {"penalty": None, "learning_rate": "constant", "shuffle": False}
    ga = GARegressor(eta=0.02, **params)
    reference = SGDRegressor(eta0=0.02, **sgd, **params)
    for rows in np.split(np.arange(120), [1, 40]):
        ga.partial_fit(as_layout(X[rows], sparse), y[rows])
        reference.partial_fit(as_layout(X[rows], sparse), y[rows])
        np.testing.assert_allclose(ga.coef_, reference.coef_, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(ga.intercept_, reference.intercept_, rtol=1e-10)
    epochs = {"max_iter": 3, "tol": None}
    np.testing.assert_allclose(
        GARegressor(eta=0.02, shuffle=False, **epochs, **params).fit(X, y).coef_,
        SGDRegressor(eta0=0.02, **sgd, **epochs, **params).fit(X, y).coef_,
        rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("U", [1.0, 3.0])
def test_averaged_weights_stay_in_their_sets(U, sparse):
    """A mean of points of a convex set: each row of EG± inside its l1 ball of
    radius U, each row of EG and of the geodesic simplex on the simplex."""
    rng = np.random.default_rng(3)
    X = make_inputs(rng, 400, 6, sparse)
    # (Outside the ball: the plain weights press on it.)
    Y = np.column_stack([5.0 * X[:, 0] - 4.0 * X[:, 1], -6.0 * X[:, 2] + X[:, 3]])
    params = {"eta": 0.5, "average": True, "max_iter": 3, "tol": None}
    pm = GARegressor(psi="eg_pm", U=U, **params).fit(as_layout(X, sparse), Y)
    plain = GARegressor(psi="eg_pm", U=U, **{**params, "average": False})
    plain.fit(as_layout(X, sparse), Y)
    assert np.all(np.abs(plain.coef_).sum(axis=1) > 0.9 * U)
    assert np.all(np.abs(pm.coef_).sum(axis=1) <= U * (1.0 + 1e-12))
    assert not np.allclose(pm.coef_, plain.coef_)
    for psi in ("softmax", "simplex"):
        eg = GARegressor(psi=psi, **params).fit(as_layout(X, sparse), Y)
        assert np.all(eg.coef_ >= 0)
        np.testing.assert_allclose(eg.coef_.sum(axis=1), 1.0, rtol=0, atol=1e-12)


def _sparse_inputs(rng, m, n):
    X = rng.standard_normal((m, n)) * (rng.random((m, n)) < 0.25)
    X[0] = 0.0  # an empty row
    return X


# Shuffled epochs, a start in the second one, then a partial_fit.
@pytest.mark.parametrize("average", [True, 150])
@pytest.mark.parametrize("psi", PSI)
def test_averaged_csr_equals_dense(psi, average):
    rng = np.random.default_rng(6)
    X = _sparse_inputs(rng, 120, 30)
    labels = rng.integers(0, 3, size=120)
    eta = 0.005 if psi in ("exp", "burg") else 0.05
    params = {"psi": psi, "eta": eta, "U": 3.0, "p": 3.0, "max_iter": 3, "tol": None,
              "random_state": 0, "average": average}
    for make, y in ((GARegressor, np.tanh(X[:, 1] - X[:, 2])),
                    (GAClassifier, labels)):
        dense = make(**params).fit(X, y)
        sparse = make(**params).fit(sp.csr_matrix(X), y)
        dense.partial_fit(X[:50], y[:50])
        sparse.partial_fit(sp.csr_matrix(X[:50]), y[:50])
        for name in ("coef_", "intercept_", "theta_"):
            np.testing.assert_allclose(getattr(sparse, name), getattr(dense, name),
                                       rtol=1e-9, atol=1e-12, err_msg=name)
        assert sparse.cumulative_loss_ == pytest.approx(dense.cumulative_loss_,
                                                        rel=1e-9)


def test_average_goes_on_across_rebuilt_loops_and_pickles():
    """set_params between calls builds the loop again; a pickle continues the loop:
    the mean still covers every trial."""
    rng = np.random.default_rng(4)
    X = make_inputs(rng, 90, 5, True)
    y = regression_targets("identity", rng, 90, 1)[:, 0]
    plain = GARegressor(psi="eg_pm", U=U, eta=0.05)
    coefs, _ = trace(plain, X[:30], y[:30], True)
    plain.set_params(eta=0.02)
    later, _ = trace(plain, X[30:], y[30:], True)
    model = GARegressor(psi="eg_pm", U=U, eta=0.05, average=True)
    model.partial_fit(sp.csr_matrix(X[:30]), y[:30])
    model = pickle.loads(pickle.dumps(model.set_params(eta=0.02)))
    model.partial_fit(sp.csr_matrix(X[30:60]), y[30:60])
    model = pickle.loads(pickle.dumps(model))
    model.partial_fit(sp.csr_matrix(X[60:]), y[60:])
    np.testing.assert_allclose(model.coef_, np.r_[coefs, later].mean(axis=0),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_failed_call_leaves_the_averages(sparse):
    """A call that diverges leaves coef_ and intercept_ as they were (the sums are
    restored with the loop), for a CSR batch of few columns too (journaled)."""
    rng = np.random.default_rng(5)
    X = make_inputs(rng, 40, 300, sparse)
    y = regression_targets("identity", rng, 40, 1)[:, 0]
    model = GARegressor(psi="softmax", eta=0.05, average=True)
    model.partial_fit(as_layout(X, sparse), y)
    before = np.array(model.coef_), np.array(model.intercept_)
    bad = np.zeros((3, 300))
    bad[:, :2] = 1e200
    with pytest.raises(ValueError, match="diverged"):
        model.partial_fit(as_layout(bad, sparse), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(model.coef_, before[0])
    np.testing.assert_array_equal(model.intercept_, before[1])
    model.partial_fit(as_layout(X, sparse), y)  # (and the loop goes on)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("psi", ["identity", "eg_pm", "softmax"])
def test_average_with_rates_that_vary_by_trial(psi, sparse):
    """learning_rate="invscaling": each trial steps at its own rate, and the mean
    still covers psi(Theta_t) after every trial (against the one-row calls, whose
    schedule goes on across calls, and SGD's for psi = identity)."""
    rng = np.random.default_rng(7)
    X = make_inputs(rng, 90, 5, sparse)
    y = regression_targets("identity", rng, 90, 1)[:, 0]
    # (No intercept on CSR: SGD damps a sparse intercept's steps.)
    params = {"psi": psi, "eta": 0.2, "U": U, "learning_rate": "invscaling",
              "power_t": 0.5, "fit_intercept": not sparse}
    coefs, intercepts = trace(GARegressor(**params), X, y, sparse)
    model = GARegressor(average=True, **params)
    model.partial_fit(as_layout(X[:40], sparse), y[:40])
    model.partial_fit(as_layout(X[40:], sparse), y[40:])
    np.testing.assert_allclose(model.coef_, coefs.mean(axis=0), rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(model.intercept_, intercepts.mean(axis=0), rtol=1e-9,
                               atol=1e-12)
    assert not np.allclose(coefs[0], coefs[-1])  # (the rates did move the weights)
    if psi == "identity":
        sgd = SGDRegressor(penalty=None, learning_rate="invscaling", eta0=0.2,
                           power_t=0.5, average=True, shuffle=False,
                           fit_intercept=not sparse)
        sgd.partial_fit(as_layout(X[:40], sparse), y[:40])
        sgd.partial_fit(as_layout(X[40:], sparse), y[40:])
        np.testing.assert_allclose(model.coef_, sgd.coef_, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(model.intercept_, sgd.intercept_, rtol=1e-10)


@pytest.mark.parametrize("copy", ["pickle", "deepcopy", "copy of a fitted clone"])
@pytest.mark.parametrize("psi, p", [("pnorm", 2.0), ("pnorm", 3.0), ("identity", 2.0)])
def test_a_copy_keeps_the_averages_of_a_psi_run_as_another(psi, p, copy):
    """pnorm at p = 2 runs gradient descent's loop (Parameterization.same_as): a
    copy's loop must carry its averages all the same, and continue bit for bit."""
    rng = np.random.default_rng(8)
    X = make_inputs(rng, 80, 6, True)
    y = regression_targets("identity", rng, 80, 1)[:, 0]
    model = GARegressor(psi=psi, p=p, eta=0.05, average=True).partial_fit(X[:40],
                                                                       y[:40])
    if copy == "pickle":
        twin = pickle.loads(pickle.dumps(model))
    elif copy == "deepcopy":
        twin = copy_module.deepcopy(model)
    else:
        twin = clone(model).partial_fit(X[:40], y[:40])
        twin = copy_module.deepcopy(twin)
    np.testing.assert_array_equal(twin.coef_, model.coef_)
    assert not np.array_equal(twin.coef_, twin.theta_)  # (the averages, not theta)
    model.partial_fit(X[40:], y[40:])
    twin.partial_fit(X[40:], y[40:])
    np.testing.assert_array_equal(twin.coef_, model.coef_)
    np.testing.assert_array_equal(twin.intercept_, model.intercept_)
    np.testing.assert_array_equal(twin.theta_, model.theta_)
