"""learning_rate="invscaling" (eta_t = eta / t^power_t, t counted over every trial
since the model was reset) against scikit-learn's SGD and the plain-NumPy
transcription of KW01 Figure 5 with the schedule (tests/test_reference.py)."""

import numpy as np
import pytest
from sklearn.linear_model import SGDClassifier, SGDRegressor
from test_reference import (
    ADDITIVE,
    ETA,
    P,
    U,
    as_layout,
    assert_oracle,
    figure5,
    learn_in_calls,
    make_inputs,
    regression_targets,
)

from sklearn_ga import PSI, GAClassifier, GARegressor
from sklearn_ga.theory import input_bound, transfer_bound

SGD = {"learning_rate": "invscaling", "shuffle": False}


def test_power_t_defaults_are_sgds():
    assert GARegressor().power_t == SGDRegressor().power_t == 0.25
    assert GAClassifier().power_t == SGDClassifier().power_t == 0.5
    assert GARegressor().learning_rate == GAClassifier().learning_rate == "constant"


@pytest.mark.parametrize("alpha", [0.0, 0.5])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_invscaling_is_sgd_regressors(sparse, alpha):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 6))
    X[rng.uniform(size=X.shape) < 0.5 * sparse] = 0.0
    y = X @ rng.normal(size=6) + 0.5
    params = {"alpha": alpha, "fit_intercept": not sparse, "power_t": 0.3}
    ga = GARegressor(eta=0.1, learning_rate="invscaling", **params)
    sgd = SGDRegressor(eta0=0.1, penalty="l2" if alpha else None, **SGD, **params)
    for rows in np.split(np.arange(200), [1, 50, 120]):
        ga.partial_fit(as_layout(X[rows], sparse), y[rows])
        sgd.partial_fit(as_layout(X[rows], sparse), y[rows])
        np.testing.assert_allclose(ga.coef_, sgd.coef_, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(ga.intercept_, sgd.intercept_, rtol=1e-10)
    epochs = {"max_iter": 4, "tol": None}
    np.testing.assert_allclose(
        GARegressor(eta=0.05, learning_rate="invscaling", shuffle=False, **epochs,
                    **params).fit(X, y).coef_,
        SGDRegressor(eta0=0.05, penalty="l2" if alpha else None, **SGD, **epochs,
                     **params).fit(X, y).coef_,
        rtol=1e-10, atol=1e-14)


def test_invscaling_is_sgd_classifiers():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 5))
    y = (X @ rng.normal(size=5) + rng.normal(size=150) > 0).astype(int)
    ga = GAClassifier(eta=0.5, learning_rate="invscaling")
    sgd = SGDClassifier(loss="log_loss", eta0=0.5, penalty=None, **SGD)
    for rows in np.split(np.arange(150), [70]):
        ga.partial_fit(X[rows], y[rows], classes=[0, 1])
        sgd.partial_fit(X[rows], y[rows], classes=[0, 1])
    np.testing.assert_allclose(ga.coef_, sgd.coef_, rtol=1e-10)
    np.testing.assert_allclose(ga.intercept_, sgd.intercept_, rtol=1e-10)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("psi", ADDITIVE)
def test_invscaling_follows_figure5(psi, k, sparse):
    rng = np.random.default_rng(2)
    X = make_inputs(rng, 70, 7, sparse)
    Y = regression_targets("tanh", rng, 70, k)
    weights = rng.uniform(0, 2, size=70)
    alpha = 0.5 if PSI[psi].start == 0.0 else 0.0  # (the pull is toward theta = 0)
    model = GARegressor(psi=psi, phi="tanh", eta=4 * ETA, U=U, p=P, alpha=alpha,
                        learning_rate="invscaling", power_t=0.7)
    # The schedule counts the trials of every call.
    learn_in_calls(model, X, Y, weights, sparse)
    assert_oracle(model, figure5(psi, "tanh", X, Y, weights, eta=4 * ETA, alpha=alpha,
                                 power_t=0.7))


@pytest.mark.parametrize("psi", ["identity", "eg_pm"])
def test_theory_rate_is_the_one_scaled(psi):
    """The schedule scales eta="theory"'s rate as it follows the rows: at trial t,
    Theorem 3's 1 / (2 c b) for the rows seen up to t, divided by t^power_t."""
    rng = np.random.default_rng(3)
    X = make_inputs(rng, 80, 5, False) * np.linspace(0.5, 2.0, 80)[:, None]
    Y = regression_targets("logistic", rng, 80, 1)
    settings = {"psi": psi, "phi": "logistic", "U": U, "intercept_eta": "eta"}
    model = GARegressor(learning_rate="invscaling", **settings).partial_fit(X, Y[:, 0])
    constant = GARegressor(**settings).partial_fit(X, Y[:, 0])
    assert (model.eta_, model.n_eta_changes_) == (constant.eta_,
                                                  constant.n_eta_changes_)
    assert model.n_eta_changes_ > 3  # (the rate followed the rows)
    start = None
    for t in range(X.shape[0]):
        b = input_bound(X[:t + 1], psi, U=U, fit_intercept=True)
        weights, intercept, _ = figure5(
            psi, "logistic", X[t:t + 1], Y[t:t + 1], scale=U,
            eta=1 / (2 * transfer_bound("logistic") * b), power_t=0.25, seen=t,
            start=start)
        start = weights, intercept
    np.testing.assert_allclose(model.coef_, weights[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.intercept_, intercept, rtol=1e-9, atol=1e-12)


def test_fit_epochs_continue_the_schedule():
    """fit's epochs are trials t = 1, ..., max_iter * n_samples of one schedule."""
    rng = np.random.default_rng(4)
    X = make_inputs(rng, 40, 4, False)
    Y = regression_targets("identity", rng, 40, 1)
    model = GARegressor(eta=0.1, learning_rate="invscaling", power_t=0.5,
                        max_iter=3, tol=None, shuffle=False).fit(X, Y[:, 0])
    X3, Y3 = np.tile(X, (3, 1)), np.tile(Y, (3, 1))
    weights, intercept, total = figure5("identity", "identity", X3, Y3, eta=0.1,
                                        power_t=0.5)
    np.testing.assert_allclose(model.coef_, weights[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.cumulative_loss_, total, rtol=1e-9)
    assert model.t_ == 120


def test_set_learning_rate_between_partial_fit_calls():
    """Switched on later, the schedule starts at the trials already seen."""
    rng = np.random.default_rng(5)
    X = make_inputs(rng, 60, 4, False)
    Y = regression_targets("identity", rng, 60, 1)
    model = GARegressor(psi="softmax", eta=0.1).partial_fit(X[:20], Y[:20, 0])
    start = (np.array(model.coef_), np.array(model.intercept_))
    model.set_params(learning_rate="invscaling").partial_fit(X[20:], Y[20:, 0])
    weights, intercept, _ = figure5("softmax", "identity", X[20:], Y[20:], eta=0.1,
                                    power_t=0.25, seen=20, start=start)
    np.testing.assert_allclose(model.coef_, weights[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.intercept_, intercept, rtol=1e-9, atol=1e-12)
