"""The compiled trial loop against a plain-NumPy transcription of KW01 Figure 5.

The oracle below is written from the papers, not from the package: every trial
computes the weights from scratch with the textbook formula of psi, predicts, charges
the matching loss written in its textbook form (KW01 eq. 16, HKW Table I), and makes
the update of eq. (20). EG± is transcribed as HKW §III defines it: EG on the doubled
input (Ux, -Ux) with 2N multiplicative weights, not through our parameterization.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import brentq

from sklearn_ga import PHI, PSI, GAClassifier, GARegressor
from sklearn_ga._configuration import Configuration

ETA, U, P = 0.05, 2.0, 3.0
# Figure 5's additive update; the geodesic psi have theirs (tests/test_updates.py).
ADDITIVE = [name for name in PSI if not PSI[name].geodesic]


def _xlogx(v):
    return np.where(v > 0, v * np.log(np.where(v > 0, v, 1.0)), 0.0)


def oracle_weights(psi, theta, p=P):
    """omega = psi(theta) for one row, written as in the papers (no overflow guard)."""
    if psi == "identity":
        return theta.copy()
    if psi == "softmax":
        return np.exp(theta) / np.exp(theta).sum()
    if psi == "exp":
        return np.exp(theta)
    if psi == "burg":  # the link of the Burg entropy -sum ln w is -1/w
        return -1.0 / theta
    if psi == "pnorm":
        norm = np.sum(np.abs(theta) ** p) ** (1 / p)
        if norm == 0:
            return np.zeros_like(theta)
        return np.sign(theta) * np.abs(theta) ** (p - 1) / norm ** (p - 2)
    raise AssertionError(psi)


def oracle_transfer_and_loss(phi, a, y):
    """(y_hat, L_phi(y, y_hat)) in the textbook form of each matching loss."""
    if phi == "identity":
        y_hat = a
        return y_hat, 0.5 * np.sum((y - y_hat) ** 2)
    if phi == "logistic":
        y_hat = 1 / (1 + np.exp(-a))
        return y_hat, np.sum(_xlogx(y) - y * np.log(y_hat)
                             + _xlogx(1 - y) - (1 - y) * np.log(1 - y_hat))
    if phi == "tanh":
        y_hat = np.tanh(a)
        return y_hat, np.sum(0.5 * (_xlogx(1 + y) - (1 + y) * np.log(1 + y_hat))
                             + 0.5 * (_xlogx(1 - y) - (1 - y) * np.log(1 - y_hat)))
    if phi == "arctan":
        y_hat = np.arctan(a)
        return y_hat, np.sum((y_hat - y) * np.tan(y_hat)
                             + np.log(np.cos(y_hat) / np.cos(y)))
    if phi == "exp":
        y_hat = np.exp(a)
        return y_hat, np.sum(_xlogx(y) - y * np.log(y_hat) - y + y_hat)
    if phi == "softmax":
        y_hat = np.exp(a) / np.exp(a).sum()
        return y_hat, np.sum(_xlogx(y) - y * np.log(y_hat))
    if phi == "sign":
        # The Perceptron's convention: a = 0 is a mistake; the loss is the hinge at 0.
        y_hat = np.where(y * a > 0, y, -y)
        return y_hat, np.sum(np.maximum(0, -y * a))
    raise AssertionError(phi)


def oracle_start(psi, omega, scale=U, p=P):
    """Figure 5's state for the weights ``omega`` (one row): theta, or EG±'s doubled
    weights (w+, w-)."""
    if psi == "identity":
        return omega.copy()
    if psi in ("softmax", "exp"):
        return np.log(omega)
    if psi == "burg":
        return -1.0 / omega
    if psi == "pnorm":  # the q-norm link inverts the p-norm link, 1/p + 1/q = 1
        return oracle_weights("pnorm", omega, p / (p - 1))
    if psi == "eg_pm":
        # w+ - w- = omega / U, and w+ w- = 1 / Z^2 is the same for every j; the
        # 2n weights sum to 1: sum_j sqrt((w+ - w-)^2 + 4 w+ w-) = 1 fixes w+ w-.
        r = omega / scale
        product = brentq(lambda c: np.sum(np.sqrt(r**2 + 4 * c)) - 1, 0.0, 1.0,
                         xtol=1e-300, rtol=8.9e-16)
        total = np.sqrt(r**2 + 4 * product)
        return (total + r) / 2, (total - r) / 2
    raise AssertionError(psi)


def figure5(psi, phi, X, Y, sample_weight=None, eta=ETA, scale=U, intercept=True,
            steps=None, p=P, start=None, power_t=None, alpha=0.0, seen=0):
    """GA(psi, phi, Theta_1, eta) of KW01 Figure 5, with an intercept learned by GD.

    Theta_1 = 0 (uniform weights for softmax and EG±, all ones for exp; -1 for burg,
    all ones), or the parameters of the weights and intercepts ``start``. A trial of
    sample weight s uses the learning rate s * eta_t: eta, or eta / t^power_t at the
    t-th trial
    (``seen`` trials came before X's). ``alpha`` pulls the parameters toward 0 by
    eta_t alpha theta before the step (EG±: each doubled weight raised to the power
    1 - eta_t alpha, which keeps w+ w- equal across coordinates, then normalized).
    ``steps`` (a list) collects each trial's largest parameter step max_ji |Theta_ji
    change|.
    """
    m, n = X.shape
    k = Y.shape[1]
    theta = np.full((k, n), -1.0 if psi == "burg" else 0.0)
    plus, minus = np.full((k, n), 1 / (2 * n)), np.full((k, n), 1 / (2 * n))
    b = np.zeros(k)
    if start is not None:
        b = np.array(start[1], dtype=float).reshape(k)
        rows = [oracle_start(psi, row, scale, p) for row in start[0].reshape(k, n)]
        if psi == "eg_pm":
            plus, minus = (np.array(half) for half in zip(*rows, strict=True))
        else:
            theta = np.array(rows)
    total = 0.0
    for t in range(m):
        x, y = X[t], Y[t]
        s = 1.0 if sample_weight is None else sample_weight[t]
        if psi == "eg_pm":  # HKW §III: omega = scale (w+ - w-)
            omega = scale * (plus - minus)
        else:
            omega = np.array([oracle_weights(psi, row, p) for row in theta])
        a = omega @ x + b
        y_hat, loss = oracle_transfer_and_loss(phi, a, y)
        total += s * loss
        residual = y_hat - y
        rate = eta if power_t is None else eta / (seen + t + 1) ** power_t
        if steps is not None:
            steps.append(s * rate * (scale if psi == "eg_pm" else 1.0)
                         * np.abs(residual).max() * np.abs(x).max())
        if psi == "eg_pm":
            # EG on x' = (Ux, -Ux): w'_i <- w'_i exp(-eta (y_hat - y) x'_i) / Z.
            plus = plus ** (1 - rate * alpha) * np.exp(
                -s * rate * residual[:, None] * scale * x)
            minus = minus ** (1 - rate * alpha) * np.exp(
                s * rate * residual[:, None] * scale * x)
            z = plus.sum(axis=1, keepdims=True) + minus.sum(axis=1, keepdims=True)
            plus /= z
            minus /= z
        else:
            # KW01 eq. (20), after the pull toward Theta_1 = 0.
            theta = (1 - rate * alpha) * theta - s * rate * np.outer(residual, x)
        if intercept:
            b -= s * rate * residual
    weights = scale * (plus - minus) if psi == "eg_pm" else np.array(
        [oracle_weights(psi, row, p) for row in theta])
    return weights, b, total


def regression_targets(phi, rng, m, k):
    """Targets in the range of phi, including the closed end points where allowed."""
    if phi == "identity":
        return rng.normal(size=(m, k))
    if phi == "logistic":
        Y = rng.uniform(0, 1, size=(m, k))
        Y[::7] = 0.0
        Y[3::7] = 1.0
        return Y
    if phi == "tanh":
        Y = rng.uniform(-1, 1, size=(m, k))
        Y[::5] = -1.0
        Y[2::5] = 1.0
        return Y
    if phi == "arctan":
        return rng.uniform(-1.5, 1.5, size=(m, k))
    if phi == "exp":
        Y = rng.exponential(size=(m, k))
        Y[::4] = 0.0
        return Y
    if phi == "softmax":
        Y = rng.dirichlet(np.ones(k), size=m)
        Y[::6] = np.eye(k)[0]
        return Y
    raise AssertionError(phi)


def make_inputs(rng, m, n, sparse):
    X = rng.uniform(-1, 1, size=(m, n))
    if sparse:
        X[rng.uniform(size=X.shape) < 0.6] = 0.0
    return X


def as_layout(X, sparse):
    return sp.csr_matrix(X) if sparse else X


def learn_in_calls(model, X, Y, sample_weight, sparse, cuts=(1, 30)):
    """partial_fit on the rows split at ``cuts``: what happens at the end of a call
    (the decay multiplied out, the schedule's count kept) is on the path."""
    for rows in np.split(np.arange(X.shape[0]), cuts):
        model.partial_fit(as_layout(X[rows], sparse),
                          Y[rows, 0] if Y.shape[1] == 1 else Y[rows],
                          sample_weight=sample_weight[rows])
    return model


def assert_oracle(model, expected, rtol=1e-9):
    """The model's weights, intercepts and on-line loss are ``figure5``'s."""
    weights, intercept, total = expected
    coef = np.asarray(model.coef_).reshape(weights.shape)
    np.testing.assert_allclose(coef, weights, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(model.intercept_, intercept, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(model.cumulative_loss_, total, rtol=rtol)


def assert_matches_oracle(model, psi, phi, X, Y, sample_weight=None):
    assert_oracle(model, figure5(psi, phi, X, Y, sample_weight))
    assert model.t_ == X.shape[0]


REGRESSION_CASES = [
    (psi, phi, k)
    for psi in ADDITIVE
    for phi in PHI
    if PHI[phi].regression
    for k in ((2, 3) if phi == "softmax" else (1, 3))
]


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize(("psi", "phi", "k"), REGRESSION_CASES)
def test_regressor_follows_figure5(psi, phi, k, sparse):
    rng = np.random.default_rng(0)
    X = make_inputs(rng, 60, 7, sparse)
    Y = regression_targets(phi, rng, 60, k)
    y = Y[:, 0] if k == 1 else Y
    model = GARegressor(psi=psi, phi=phi, eta=ETA, U=U, p=P)
    model.partial_fit(sp.csr_matrix(X) if sparse else X, y)
    assert_matches_oracle(model, psi, phi, X, Y)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("psi", ADDITIVE)
@pytest.mark.parametrize("phi", ["identity", "logistic"])
def test_sample_weight_scales_the_step(psi, phi, sparse):
    rng = np.random.default_rng(1)
    X = make_inputs(rng, 40, 5, sparse)
    Y = regression_targets(phi, rng, 40, 1)
    weight = rng.uniform(0, 3, size=40)
    weight[::9] = 0.0
    model = GARegressor(psi=psi, phi=phi, eta=ETA, U=U, p=P)
    model.partial_fit(sp.csr_matrix(X) if sparse else X, Y[:, 0], sample_weight=weight)
    assert_matches_oracle(model, psi, phi, X, Y, weight)


def encode(labels, classes, phi):
    """The classifier's documented target encoding: {0,1} or {-1,+1}, one-vs-rest."""
    low = -1.0 if phi in ("tanh", "sign") else 0.0
    if len(classes) == 2 and phi != "softmax":
        return np.where(labels == classes[1], 1.0, low)[:, None]
    Y = np.full((labels.shape[0], len(classes)), low)
    Y[np.arange(labels.shape[0]), np.searchsorted(classes, labels)] = 1.0
    return Y


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("psi", ADDITIVE)
@pytest.mark.parametrize("phi", [name for name in PHI if PHI[name].classification])
def test_classifier_follows_figure5(phi, psi, n_classes, sparse):
    rng = np.random.default_rng(2)
    X = make_inputs(rng, 60, 6, sparse)
    classes = np.array(["ant", "bee", "cat"][:n_classes])
    labels = classes[rng.integers(0, n_classes, size=60)]
    model = GAClassifier(psi=psi, phi=phi, eta=ETA, U=U, p=P)
    model.partial_fit(sp.csr_matrix(X) if sparse else X, labels, classes=classes)
    assert_matches_oracle(model, psi, phi, X, encode(labels, classes, phi))


@pytest.mark.parametrize("psi", ADDITIVE)
def test_partial_fit_in_batches_is_one_pass(psi):
    """Batches change nothing: partial_fit is the on-line rule, one trial at a time."""
    rng = np.random.default_rng(3)
    X, Y = make_inputs(rng, 90, 8, False), regression_targets("tanh", rng, 90, 1)
    model = GARegressor(psi=psi, phi="tanh", eta=ETA, U=U, p=P)
    for rows in np.split(np.arange(90), [1, 31, 60]):
        model.partial_fit(X[rows], Y[rows, 0])
    assert_matches_oracle(model, psi, "tanh", X, Y)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("psi", ["softmax", "eg_pm", "exp"])
def test_long_multiplicative_steps_follow_figure5(psi, sparse):
    """Steps up to 1/2 scale the exponential terms by series of degree up to 15,
    longer ones by exponentials: both follow Figure 5 (targets out of reach keep the
    residuals, hence the steps, large)."""
    rng = np.random.default_rng(5)
    X = make_inputs(rng, 80, 6, sparse)
    y = np.where(np.arange(80) % 2 == 0, 3.0, -3.0)
    eta = {"softmax": 0.15, "eg_pm": 0.08, "exp": 0.12}[psi]
    model = GARegressor(psi=psi, eta=eta, U=U)
    model.partial_fit(sp.csr_matrix(X) if sparse else X, y)
    steps = []
    weights, intercept, total = figure5(psi, "identity", X, y[:, None], eta=eta,
                                        steps=steps)
    steps = np.array(steps)
    assert np.sum((steps > 0.26) & (steps <= 0.5)) >= 10  # degrees 13 to 15
    assert np.any(steps > 0.5)
    np.testing.assert_allclose(model.coef_, weights[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.intercept_, intercept, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.cumulative_loss_, total, rtol=1e-9)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("p", [2.5, 4.0, 24.95, 25.0, 40.0])
def test_pnorm_follows_figure5_for_integer_and_other_p(p, sparse):
    """An integer p takes its powers by multiplications, any other p by exp and log:
    both are Figure 5's p-norm algorithm."""
    rng = np.random.default_rng(7)
    X = make_inputs(rng, 60, 7, sparse)
    y = regression_targets("tanh", rng, 60, 1)[:, 0]
    model = GARegressor(psi="pnorm", phi="tanh", eta=ETA, U=U, p=p)
    model.partial_fit(sp.csr_matrix(X) if sparse else X, y)
    weights, intercept, total = figure5("pnorm", "tanh", X, y[:, None], p=p)
    np.testing.assert_allclose(model.coef_, weights[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.cumulative_loss_, total, rtol=1e-9)


def test_eg_pm_with_large_parameters_stays_exact():
    """A target outside the l1 ball drives theta past 700, where e^theta overflows."""
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(3000, 5))
    y = 8.0 * X[:, 0]
    model = GARegressor(psi="eg_pm", eta=0.5, U=5.0, fit_intercept=False)
    model.partial_fit(X, y)
    assert np.abs(model.theta_).max() > 750
    assert np.abs(model.coef_).sum() <= 5.0 * (1 + 1e-12)
    weights, _, total = figure5("eg_pm", "identity", X, y[:, None], eta=0.5, scale=5.0,
                                 intercept=False)
    np.testing.assert_allclose(model.coef_, weights[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.cumulative_loss_, total, rtol=1e-9)


PNORM_P = (2.0, 2.5, 3.0, 24.95, 25.0, 40.0, 64.0, 64.5)  # 64.5: exp and log again


@pytest.mark.parametrize(("psi", "p"), [(name, 2.0) for name in PSI if name != "pnorm"]
                         + [("pnorm", p) for p in PNORM_P])
def test_compiled_weights_equal_the_registry_formula(psi, p):
    """The kernel's own exp and log (branch-free polynomials) give the weights of the
    registry's NumPy formula, over parameters of every magnitude."""
    rng = np.random.default_rng(6)
    n = 4000
    signs = rng.choice([-1.0, 1.0], size=n)
    if psi in ("softmax", "eg_pm", "exp"):
        theta = rng.uniform(-700.0, 700.0, size=(1, n))
    else:
        theta = signs * 10.0 ** rng.uniform(-8.0, 8.0, size=n)
        theta = np.abs(theta) if psi == "simplex" else theta
        theta = -np.abs(theta) if psi == "burg" else theta  # (its domain theta < 0)
        theta = theta.reshape(1, n)
    config = Configuration.build("GARegressor", psi=psi, p=p, U=U)
    loop = config.trial_loop(theta.copy(), np.zeros(1), ETA, U)
    expected = PSI[psi].weights(theta, U, p)
    np.testing.assert_allclose(loop.weights(), expected, rtol=1e-12,
                               atol=1e-300)


def test_burg_follows_its_weight_space_update():
    """psi="burg" is the update of the Bregman-divergence slides in weight space,
    w_i <- w_i / (1 + eta (y_hat - y) w_i x_i), from w = 1 (dense and CSR)."""
    rng = np.random.default_rng(3)
    X = make_inputs(rng, 80, 6, sparse=True)
    y = rng.normal(size=80)
    w, b = np.ones(6), 0.0
    for x, target in zip(X, y, strict=True):
        residual = w @ x + b - target
        w = w / (1.0 + ETA * residual * w * x)
        b -= ETA * residual
    for inputs in (X, sp.csr_matrix(X)):
        model = GARegressor(psi="burg", eta=ETA).partial_fit(inputs, y)
        np.testing.assert_allclose(model.coef_, w, rtol=1e-11)
        np.testing.assert_allclose(model.intercept_, b, rtol=1e-11, atol=1e-14)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_burg_step_out_of_its_domain_is_a_divergence(sparse):
    # The first step, -10 (y_hat - y) x = 40, takes theta_1 = -1 to 39, where no
    # weight -1/theta is: the run reports a divergence, and the model is unfitted.
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    model = GARegressor(psi="burg", eta=10.0, fit_intercept=False)
    with pytest.raises(ValueError, match="diverged"):
        model.partial_fit(sp.csr_matrix(X) if sparse else X, [5.0, 0.0])
    assert not hasattr(model, "coef_")


def test_burg_refuses_alpha():
    # alpha's pull toward 0 is not toward Burg's start theta = -1 (its pole).
    with pytest.raises(ValueError, match="not the start"):
        GARegressor(psi="burg", eta=0.01, alpha=0.1).fit(np.ones((3, 2)), np.ones(3))
