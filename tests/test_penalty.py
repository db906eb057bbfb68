"""The penalty toward the start (``alpha``) against scikit-learn's L2 penalty and
the plain-NumPy transcription of KW01 Figure 5 (tests/test_reference.py), which
pulls theta toward 0 by eta alpha theta before each step (EG± as HKW's doubled
EG, each weight raised to the power 1 - eta alpha)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import SGDClassifier, SGDRegressor
from test_reference import (
    ADDITIVE,
    ETA,
    P,
    U,
    as_layout,
    assert_oracle,
    encode,
    figure5,
    learn_in_calls,
    make_inputs,
    regression_targets,
)
from test_updates import oracle

from sklearn_ga import PSI, GAClassifier, GARegressor

# The pull scales theta toward 0: the start of every additive psi but burg's.
PULLED = [psi for psi in ADDITIVE if PSI[psi].start == 0.0]

SGD = {"learning_rate": "constant", "shuffle": False, "penalty": "l2"}


# eta alpha of 0.01, 0.9 (the decay reaches SGD's 1e-9 floor within a call) and 3
# (the weights are brought to 0 before every step, as SGD's).
@pytest.mark.parametrize("alpha", [0.1, 9.0, 30.0])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_gradient_descent_penalty_is_sgd_regressors_l2(sparse, alpha):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 6))
    X[rng.uniform(size=X.shape) < 0.5 * sparse] = 0.0
    y = X @ rng.normal(size=6) + 0.5
    # (SGD damps the intercept's step on sparse input.)
    ga = GARegressor(eta=0.1, alpha=alpha, fit_intercept=not sparse)
    sgd = SGDRegressor(eta0=0.1, alpha=alpha, fit_intercept=not sparse, **SGD)
    for rows in np.split(np.arange(200), [1, 50, 120]):
        ga.partial_fit(as_layout(X[rows], sparse), y[rows])
        sgd.partial_fit(as_layout(X[rows], sparse), y[rows])
        np.testing.assert_allclose(ga.coef_, sgd.coef_, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(ga.intercept_, sgd.intercept_, rtol=1e-10)
    epochs = {"max_iter": 4, "tol": None}
    np.testing.assert_allclose(
        GARegressor(eta=0.05, alpha=alpha, shuffle=False, **epochs).fit(X, y).coef_,
        SGDRegressor(eta0=0.05, alpha=alpha, **SGD, **epochs).fit(X, y).coef_,
        rtol=1e-10, atol=1e-14)


def test_gradient_descent_penalty_is_sgd_classifiers_l2():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 5))
    y = (X @ rng.normal(size=5) + rng.normal(size=150) > 0).astype(int)
    ga = GAClassifier(eta=0.05, alpha=0.3).partial_fit(X, y, classes=[0, 1])
    sgd = SGDClassifier(loss="log_loss", eta0=0.05, alpha=0.3, **SGD).partial_fit(
        X, y, classes=[0, 1])
    np.testing.assert_allclose(ga.coef_, sgd.coef_, rtol=1e-10)
    np.testing.assert_allclose(ga.intercept_, sgd.intercept_, rtol=1e-10)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("psi", PULLED)
def test_penalty_follows_figure5(psi, k, sparse):
    rng = np.random.default_rng(2)
    X = make_inputs(rng, 70, 7, sparse)
    Y = regression_targets("tanh", rng, 70, k)
    weights = rng.uniform(0, 2, size=70)
    model = GARegressor(psi=psi, phi="tanh", eta=ETA, U=U, p=P, alpha=2.0)
    # Three calls: the decay is multiplied out at the end of each.
    learn_in_calls(model, X, Y, weights, sparse)
    assert_oracle(model, figure5(psi, "tanh", X, Y, weights, alpha=2.0))


@pytest.mark.parametrize("psi", PULLED)
def test_penalty_classifier_follows_figure5(psi):
    rng = np.random.default_rng(3)
    X = make_inputs(rng, 60, 6, True)
    labels = rng.integers(0, 3, size=60)
    model = GAClassifier(psi=psi, phi="softmax", eta=ETA, U=U, p=P, alpha=1.0)
    model.partial_fit(sp.csr_matrix(X), labels, classes=[0, 1, 2])
    assert_oracle(model, figure5(psi, "softmax", X, encode(labels, [0, 1, 2],
                                                            "softmax"), alpha=1.0))


def test_penalty_pulls_toward_the_start():
    """Without data the weights of a long fit go back to their start: zeros for
    gradient descent, the uniform weights of EG (however coef_init set them)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 4))
    zero = np.zeros(50)
    start = np.array([0.7, 0.1, 0.1, 0.1])
    for psi, target in (("identity", np.zeros(4)), ("softmax", np.full(4, 0.25))):
        model = GARegressor(psi=psi, eta=0.1, alpha=1.0, max_iter=20, tol=None,
                            fit_intercept=False)
        model.fit(X, zero, sample_weight=np.full(50, 1e-300), coef_init=start)
        np.testing.assert_allclose(model.coef_, target, atol=1e-12)


@pytest.mark.parametrize(("update", "psi", "phi", "loss"), [
    ("implicit", "identity", "identity", "matching"),
    ("implicit", "pnorm", "tanh", "matching"),
    ("implicit", "eg_pm", "logistic", "matching"),
    ("implicit", "softmax", "softmax", "matching"),
    ("natural", "softmax", "identity", "matching"),
    ("natural", "exp", "tanh", "matching"),
    ("natural", "eg_pm", "logistic", "matching"),
    ("natural", "softmax", "tanh", "square"),
])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_penalty_comes_before_the_update_rules_step(update, psi, phi, loss, sparse):
    """With the implicit (KW01 eq. 22) and natural (KMWW eq. 5) rules, the pull
    comes first and the rule's step is taken from the pulled parameters."""
    rng = np.random.default_rng(7)
    k = 3 if phi == "softmax" else 1
    X = make_inputs(rng, 40, 5, sparse)
    Y = regression_targets(phi, rng, 40, k)
    model = GARegressor(psi=psi, phi=phi, eta=ETA, U=U, p=P, alpha=3.0,
                        update=update, loss=loss)
    model.partial_fit(as_layout(X, sparse), Y[:, 0] if k == 1 else Y)
    weights, intercept, total, _ = oracle(psi, phi, X, Y, update=update, loss=loss,
                                          alpha=3.0)
    assert_oracle(model, (weights, intercept, total))


@pytest.mark.parametrize(("params", "message"), [
    ({"psi": "sphere", "eta": 0.1}, "geodesics"),
    ({"psi": "simplex", "eta": 0.1}, "geodesics"),
    ({"psi": "burg", "eta": 0.1}, "not the start"),
    ({"alpha": -1.0}, "alpha"),
])
def test_penalty_refusals(params, message):
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(10, 3)), rng.normal(size=10)
    with pytest.raises(ValueError, match=message):
        GARegressor(**{"alpha": 0.5, **params}).fit(X, y)


def test_set_alpha_between_partial_fit_calls():
    """set_params(alpha=...) applies from the next call on."""
    rng = np.random.default_rng(6)
    X, y = rng.normal(size=(60, 4)), rng.normal(size=60)
    model = GARegressor(psi="eg_pm", eta=0.1, U=U).partial_fit(X[:30], y[:30])
    plain = (np.array(model.coef_), np.array(model.intercept_))
    model.set_params(alpha=0.5).partial_fit(X[30:], y[30:])
    weights, intercept, _ = figure5("eg_pm", "identity", X[30:], y[30:, None],
                                    eta=0.1, alpha=0.5, start=plain)
    np.testing.assert_allclose(model.coef_, weights[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.intercept_, intercept, rtol=1e-9)
