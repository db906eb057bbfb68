"""Where the mathematics coincides, GA is scikit-learn's SGD.

Conventions worked out here:

* ``GARegressor(psi="identity", phi="identity")`` is ``SGDRegressor(loss=
  "squared_error", penalty=None, learning_rate="constant", eta0=eta)``: the square
  loss (y - y_hat)^2 / 2 has gradient (y_hat - y) x, the update of KW01 eq. (20).
* ``GAClassifier(phi="logistic")`` is ``SGDClassifier(loss="log_loss", ...)``: SGD
  encodes the labels as -1/+1 and its log loss has derivative -y / (1 + e^{y a}) =
  sigma(a) - z with z = (1 + y) / 2 in {0, 1}, GA's target. With more classes both run
  one-vs-rest with independent updates.
* ``GAClassifier(phi="sign")`` is ``Perceptron(eta0=2 * eta)``: a GA mistake step has
  y_hat - y = -2y where the Perceptron's hinge at 0 has derivative -y; both count
  a = 0 as a mistake.
* Intercepts are learned by the same step as the weights on dense input. On sparse
  input scikit-learn's SGD damps the intercept step by 0.01 (its SPARSE_INTERCEPT_DECAY)
  and GA does not, so CSR input is compared without intercepts.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import Perceptron, SGDClassifier, SGDRegressor

from sklearn_ga import GAClassifier, GARegressor

ETA = 0.01
SGD = {"penalty": None, "learning_rate": "constant", "eta0": ETA, "shuffle": False}


def batches(rng, n_features, n_batches=4, size=50):
    return [rng.normal(size=(size, n_features)) for _ in range(n_batches)]


def assert_same_model(ga, sgd):
    np.testing.assert_allclose(np.atleast_2d(ga.coef_), np.atleast_2d(sgd.coef_),
                               rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(ga.intercept_, np.atleast_1d(sgd.intercept_),
                               rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_gradient_descent_is_sgd_regressor(sparse):
    rng = np.random.default_rng(0)
    w = rng.normal(size=6)
    fit_intercept = not sparse
    ga = GARegressor(eta=ETA, fit_intercept=fit_intercept)
    sgd = SGDRegressor(fit_intercept=fit_intercept, **SGD)
    for X in batches(rng, 6):
        y = X @ w + 0.5 + 0.1 * rng.normal(size=X.shape[0])
        X = sp.csr_matrix(X) if sparse else X
        ga.partial_fit(X, y)
        sgd.partial_fit(X, y)
        assert_same_model(ga, sgd)
    np.testing.assert_allclose(ga.predict(X), sgd.predict(X), rtol=1e-10)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_logistic_is_sgd_classifier(n_classes):
    rng = np.random.default_rng(1)
    W = rng.normal(size=(n_classes, 5))
    classes = np.arange(n_classes) * 10  # labels that are not codes
    ga = GAClassifier(phi="logistic", eta=ETA)
    sgd = SGDClassifier(loss="log_loss", **SGD)
    for X in batches(rng, 5):
        y = classes[np.argmax(X @ W.T + rng.normal(size=(X.shape[0], n_classes)), 1)]
        ga.partial_fit(X, y, classes=classes)
        sgd.partial_fit(X, y, classes=classes)
        assert_same_model(ga, sgd)
    np.testing.assert_array_equal(ga.classes_, sgd.classes_)
    np.testing.assert_array_equal(ga.predict(X), sgd.predict(X))
    np.testing.assert_allclose(ga.decision_function(X), sgd.decision_function(X),
                               rtol=1e-10)
    if n_classes == 2:  # scikit-learn normalizes one-vs-rest probabilities the same way
        np.testing.assert_allclose(ga.predict_proba(X), sgd.predict_proba(X),
                                   rtol=1e-10)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_sign_is_perceptron_with_twice_the_rate(n_classes):
    rng = np.random.default_rng(2)
    W = rng.normal(size=(n_classes, 5))
    classes = np.array(["no", "yes", "maybe"][:n_classes])
    ga = GAClassifier(phi="sign", eta=ETA)
    perceptron = Perceptron(eta0=2 * ETA, shuffle=False)
    for X in batches(rng, 5):
        y = classes[np.argmax(X @ W.T, axis=1)]
        ga.partial_fit(X, y, classes=classes)
        perceptron.partial_fit(X, y, classes=classes)
        assert_same_model(ga, perceptron)
    np.testing.assert_array_equal(ga.predict(X), perceptron.predict(X))


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_sign_meets_the_perceptrons_exact_ties(fit_intercept):
    # Inputs on a grid of tenths: activations of exactly 0 (mistakes, by the
    # Perceptron's convention) recur only if every step rounds its product before
    # the sum, as scikit-learn does. A fused multiply-add left a residue of 1e-17
    # in the dense model, which then learned another sequence of mistakes.
    rng = np.random.default_rng(4)
    X = rng.integers(-10, 11, size=(300, 3)) / 10
    y = np.where(X @ [1.0, -1.0, 0.5] + 0.3 * rng.normal(size=300) > 0, 1, -1)
    ga = GAClassifier(phi="sign", eta=ETA, fit_intercept=fit_intercept)
    perceptron = Perceptron(eta0=2 * ETA, shuffle=False, fit_intercept=fit_intercept)
    ga.partial_fit(X, y, classes=[-1, 1])
    perceptron.partial_fit(X, y, classes=[-1, 1])
    np.testing.assert_array_equal(ga.coef_, perceptron.coef_)
    np.testing.assert_array_equal(ga.intercept_, perceptron.intercept_)
    csr = GAClassifier(phi="sign", eta=ETA, fit_intercept=fit_intercept)
    csr.partial_fit(sp.csr_matrix(X), y, classes=[-1, 1])
    np.testing.assert_array_equal(csr.coef_, ga.coef_)


def test_fit_epochs_match_sgd_regressor_without_shuffling():
    """fit runs max_iter epochs like SGDRegressor.fit (tol=None: no early stop)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 4))
    y = X @ rng.normal(size=4) + 0.1 * rng.normal(size=80)
    ga = GARegressor(eta=ETA, max_iter=7, tol=None, shuffle=False,
                     average=False).fit(X, y)
    sgd = SGDRegressor(max_iter=7, tol=None, **SGD).fit(X, y)
    assert ga.n_iter_ == sgd.n_iter_ == 7
    assert ga.t_ == sgd.t_ - 1 == 7 * 80  # scikit-learn's t_ starts at 1
    assert_same_model(ga, sgd)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("update", ["explicit", "implicit", "natural"])
def test_pnorm_at_two_is_gradient_descent(sparse, update):
    """psi = pnorm at p = 2 is the identity, sign(theta) |theta| / ||theta||_2^0: its
    models are gradient descent's bit for bit (fit, then partial_fit), regressor
    and classifier, and update="natural" (psi's Jacobian is I) is available."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(120, 5))
    y = X @ rng.normal(size=5) + 0.1 * rng.normal(size=120)
    X = sp.csr_matrix(X) if sparse else X
    for Model, params, target in (
        (GARegressor, {"max_iter": 3, "tol": None}, y),
        (GAClassifier, {"phi": "softmax"}, np.digitize(y, [-1.0, 1.0])),
    ):
        pnorm, identity = (
            Model(psi=psi, eta=0.05, update=update, random_state=0, **params)
            .fit(X, target).partial_fit(X, target) for psi in ("pnorm", "identity"))
        np.testing.assert_array_equal(pnorm.coef_, identity.coef_)
        np.testing.assert_array_equal(pnorm.intercept_, identity.intercept_)
        np.testing.assert_array_equal(pnorm.predict(X), identity.predict(X))
