"""The update options against plain-NumPy transcriptions of the papers.

The oracle below computes every trial from scratch with the textbook formulas:
weights psi(theta) (EG± as U sinh(theta) / sum cosh(theta)), clipped predictions
(GA^Y, end of KW01 §4), the matching or the square loss (GA_L, KW01 eq. 35, whose
gradient in a is taken by complex-step differentiation of phi), the implicit rule
of KW01 eq. (22) solved by SciPy's ``brentq``, the natural rule of KMWW eq. (5) with
the Jacobian of psi by complex steps, and the geodesic steps of KMWW Examples 2 and 3
written as printed (the sphere's weights and the simplex's probabilities stored as
they are, never renormalized).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import brentq, root
from test_reference import (
    encode,
    make_inputs,
    oracle_transfer_and_loss,
    oracle_weights,
    regression_targets,
)

from sklearn_ga import PHI, PSI, GAClassifier, GARegressor

ETA, U, P = 0.05, 2.0, 3.0
ADDITIVE = [name for name in PSI if not PSI[name].geodesic]
# The psi whose registry entry offers the natural rule (KMWW eq. 5).
NATURAL = [name for name in ADDITIVE if PSI[name].no_natural is None]
COORDINATE_PHI = ["identity", "logistic", "tanh", "arctan", "exp"]
SMOOTH_PHI = COORDINATE_PHI + ["softmax"]
# Y of the clipping cases: each clips some of the predictions of their runs.
CLIP = {"identity": 0.5, "logistic": 0.52, "tanh": 0.3, "arctan": 0.4, "exp": 1.2}
STEP = 1e-30  # complex-step differentiation: exact to rounding for analytic functions


def psi_weights(psi, theta, radius=U):
    """omega = psi(theta) for one row, as printed (complex theta allowed)."""
    if psi == "eg_pm":
        return radius * np.sinh(theta) / np.cosh(theta).sum()
    return oracle_weights(psi, theta)


def psi_jacobian(psi, theta):
    """D psi(theta)[i, l] = d omega_i / d theta_l by complex steps."""
    n = theta.shape[0]
    columns = [psi_weights(psi, theta + 1j * STEP * unit).imag / STEP
               for unit in np.eye(n)]
    return np.array(columns).T


def transfer(phi, a):
    if phi == "identity":
        return a
    if phi == "logistic":
        return 1 / (1 + np.exp(-a))
    if phi == "tanh":
        return np.tanh(a)
    if phi == "arctan":
        return np.arctan(a)
    if phi == "exp":
        return np.exp(a)
    if phi == "softmax":
        return np.exp(a) / np.exp(a).sum()
    raise AssertionError(phi)


def inverse(phi, v):
    return {"identity": lambda: v, "logistic": lambda: np.log(v / (1 - v)),
            "tanh": lambda: np.arctanh(v), "arctan": lambda: np.tan(v),
            "exp": lambda: np.log(v)}[phi]()


def clipped_activation(phi, a, Y):
    """The activation of the GA^Y prediction clip(phi(a), -Y, Y)."""
    if Y is None:
        return a
    y_hat = transfer(phi, a)
    with np.errstate(invalid="ignore"):  # phi^-1(-Y) is NaN below the range of phi
        return np.where(y_hat > Y, inverse(phi, Y),
                        np.where(y_hat < -Y, inverse(phi, -Y), a))


def loss_and_gradient(phi, a, y, loss):
    """(loss, dL/da) of the prediction phi(a): matching loss or GA_L's square loss."""
    y_hat, matching = oracle_transfer_and_loss(phi, a, y)
    if loss == "matching":
        return matching, y_hat - y  # KW01 eq. (3)
    k = a.shape[0]
    jacobian = np.array([transfer(phi, a + 1j * STEP * unit).imag / STEP
                         for unit in np.eye(k)])  # row l: d phi / d a_l
    return 0.5 * np.sum((y_hat - y) ** 2), jacobian @ (y_hat - y)


def implicit_residual(psi, phi, theta, b, x, y, r0, h, hb, Y):
    """The root v of v = phi(psi(theta - h v x) . x + b - hb v) - y (KW01 eq. 22)."""
    def gap(v):
        a = psi_weights(psi, theta - h * v * x) @ x + b - hb * v
        return v - (transfer(phi, clipped_activation(phi, np.array([a]), Y)[0]) - y)

    if r0 == 0 or gap(r0) == 0:
        return r0
    return brentq(gap, min(0.0, r0), max(0.0, r0), xtol=1e-300, rtol=8.9e-16)


def implicit_softmax_residuals(psi, theta, b, x, y, h, hb):
    """The root s of s = softmax(A(s)) - y, A_j(s) = psi(theta_j - h s_j x) . x + b_j
    - hb s_j (KW01 eq. 25 with the softmax coupling), by MINPACK's hybrid method."""
    def gap(v):
        a = np.array([psi_weights(psi, theta[j] - h * v[j] * x) @ x + b[j] - hb * v[j]
                      for j in range(len(v))])
        return v - (transfer("softmax", a) - y)

    solution = root(gap, np.zeros(len(y)), method="hybr", tol=1e-15)
    assert np.abs(gap(solution.x)).max() < 1e-13
    return solution.x


def sphere_step(omega, grad, eta, radius):
    """KMWW Example 2 on the sphere of radius R: Exp_omega(-eta V)."""
    V = grad - omega * (grad @ omega) / radius**2
    norm = np.linalg.norm(V)
    if norm == 0:
        return omega
    return (omega * np.cos(eta * norm / radius)
            - radius * V / norm * np.sin(eta * norm / radius))


def simplex_step(p, grad, eta):
    """KMWW Example 3: the Fisher-metric geodesic through sqrt(p)."""
    V = np.sqrt(p) * (grad - p @ grad)
    norm = np.sqrt(p @ grad**2 - (p @ grad) ** 2)
    if not norm > 0:
        return p
    root = np.sqrt(p) * np.cos(eta / 2 * norm) - V / norm * np.sin(eta / 2 * norm)
    return root**2


def oracle(psi, phi, X, Y, *, update="explicit", loss="matching", clip=None,
           eta=ETA, radius=U, intercept=True, sample_weight=None, start=None,
           alpha=0.0):
    """On-line run of GA with the options; returns (weights, intercepts, loss, rs).

    ``rs`` are the residuals (the scalar s of each step) of every trial. ``start``:
    weights and intercepts to start from (the geodesic psi only). ``alpha``: theta
    is pulled to (1 - eta alpha) theta after the prediction, before the update
    rule's step (additive psi).
    """
    m, n = X.shape
    k = Y.shape[1]
    theta = np.full((k, n), -1.0 if psi == "burg" else 0.0)
    if psi == "sphere":
        omega = np.full((k, n), radius / np.sqrt(n))
    elif psi == "simplex":
        omega = np.full((k, n), 1 / n)
    b, total, rs = np.zeros(k), 0.0, []
    if start is not None:
        assert PSI[psi].geodesic
        omega, b = start[0].reshape(k, n).copy(), np.array(start[1], float).reshape(k)
    for t in range(m):
        x, y = X[t], Y[t]
        s = 1.0 if sample_weight is None else sample_weight[t]
        W = (omega if PSI[psi].geodesic
             else np.array([psi_weights(psi, row, radius) for row in theta]))
        a = clipped_activation(phi, W @ x + b, clip)
        value, residual = loss_and_gradient(phi, a, y, loss)
        total += s * value
        h = s * eta * (radius if psi == "eg_pm" and update != "natural" else 1.0)
        if alpha:
            theta = (1 - eta * alpha) * theta
            # The rule's step from the pulled parameters (the implicit equation's
            # bracket from their residual).
            W = np.array([psi_weights(psi, row, radius) for row in theta])
            residual = loss_and_gradient(phi, clipped_activation(phi, W @ x + b, clip),
                                         y, loss)[1]
        if update == "implicit" and phi == "softmax":
            residual = implicit_softmax_residuals(psi, theta, b, x, y, h,
                                                  s * eta * intercept)
        for j in range(k):
            r = residual[j]
            if update == "implicit" and phi != "softmax":
                r = implicit_residual(psi, phi, theta[j], b[j], x, y[j], r, h,
                                      s * eta * intercept, clip)
            if psi == "sphere":
                omega[j] = sphere_step(omega[j], r * x, s * eta, radius)
            elif psi == "simplex":
                omega[j] = simplex_step(omega[j], r * x, s * eta)
            elif update == "natural":
                # KMWW eq. (5): theta - eta Dpsi^T grad_omega L.
                theta[j] -= s * eta * psi_jacobian(psi, theta[j]).T @ (r * x)
            else:
                theta[j] -= h * r * x  # KW01 eq. (23), or (22) with r implicit
            if intercept:
                b[j] -= s * eta * r
            residual[j] = r
        rs.append(residual)
    W = (omega if PSI[psi].geodesic
         else np.array([psi_weights(psi, row, radius) for row in theta]))
    return W, b, total, np.array(rs)


def assert_matches(model, expected, rtol=1e-9):
    weights, intercept, total, _ = expected
    np.testing.assert_allclose(np.asarray(model.coef_).reshape(weights.shape), weights,
                               rtol=rtol, atol=1e-11)
    np.testing.assert_allclose(model.intercept_, intercept, rtol=rtol, atol=1e-11)
    np.testing.assert_allclose(model.cumulative_loss_, total, rtol=rtol)


def _ks(phi):
    return (3,) if phi == "softmax" else (1, 3)


CASES = (
    [(psi, phi, k, "implicit", "matching", None)
     for psi in ADDITIVE for phi in SMOOTH_PHI for k in _ks(phi)]
    + [(psi, phi, k, "natural", loss, None)
       for psi in NATURAL for phi in ["identity", "logistic", "softmax"]
       for k in _ks(phi)
       for loss in ["matching", "square"]]
    + [(psi, phi, k, "explicit", "square", None)
       for psi in ADDITIVE for phi in PHI if PHI[phi].regression for k in _ks(phi)]
    + [(psi, phi, k, update, "matching", clip)
       for psi in ["identity", "softmax"] for phi in COORDINATE_PHI for k in (1, 3)
       for update in ["explicit", "implicit"]
       for clip in [CLIP[phi]]]
    + [(psi, phi, k, "explicit", loss, None)
       for psi in ["sphere", "simplex"]
       for phi in ["identity", "logistic", "tanh", "softmax"] for k in _ks(phi)
       for loss in ["matching", "square"]]
)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize(("psi", "phi", "k", "update", "loss", "clip"), CASES)
def test_regressor_follows_the_oracle(psi, phi, k, update, loss, clip, sparse):
    rng = np.random.default_rng(0)
    X = make_inputs(rng, 60, 7, sparse)
    Y = regression_targets(phi, rng, 60, k)
    model = GARegressor(psi=psi, phi=phi, eta=ETA, U=U, p=P, update=update,
                        loss=loss, Y=clip)
    model.partial_fit(sp.csr_matrix(X) if sparse else X, Y[:, 0] if k == 1 else Y)
    assert_matches(model, oracle(psi, phi, X, Y, update=update, loss=loss, clip=clip))


@pytest.mark.parametrize("phi", COORDINATE_PHI)
def test_clipping_cases_clip_some_predictions(phi):
    """The Y of the oracle cases is active on some trials: clipping is exercised."""
    clip = CLIP[phi]
    rng = np.random.default_rng(0)
    X = make_inputs(rng, 60, 7, False)
    Y = regression_targets(phi, rng, 60, 1)
    clipped = GARegressor(phi=phi, eta=ETA, Y=clip).partial_fit(X, Y[:, 0])
    free = GARegressor(phi=phi, eta=ETA).partial_fit(X, Y[:, 0])
    assert clipped.cumulative_loss_ != free.cumulative_loss_
    predictions = np.abs(clipped.predict(X * 10))
    assert np.all(predictions <= clip * (1 + 1e-12))
    assert np.any(predictions > clip * (1 - 1e-12))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize(("psi", "phi", "update", "loss", "clip"), [
    ("identity", "logistic", "implicit", "matching", None),
    ("softmax", "softmax", "implicit", "matching", None),
    ("eg_pm", "tanh", "implicit", "matching", 0.8),
    ("softmax", "softmax", "natural", "matching", None),
    ("exp", "logistic", "natural", "square", None),
    ("identity", "tanh", "explicit", "square", 0.7),
    ("sphere", "logistic", "explicit", "matching", None),
    ("simplex", "softmax", "explicit", "square", None),
])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_follows_the_oracle(psi, phi, update, loss, clip, n_classes,
                                       sparse):
    rng = np.random.default_rng(2)
    X = make_inputs(rng, 60, 6, sparse)
    classes = np.array(["ant", "bee", "cat"][:n_classes])
    labels = classes[rng.integers(0, n_classes, size=60)]
    model = GAClassifier(psi=psi, phi=phi, eta=ETA, U=U, update=update, loss=loss,
                         Y=clip)
    model.partial_fit(sp.csr_matrix(X) if sparse else X, labels, classes=classes)
    assert_matches(model, oracle(psi, phi, X, encode(labels, classes, phi),
                                 update=update, loss=loss, clip=clip))


@pytest.mark.parametrize(("psi", "update"), [("eg_pm", "implicit"),
                                             ("softmax", "natural"),
                                             ("sphere", "explicit"),
                                             ("simplex", "explicit")])
def test_sample_weight_scales_the_step(psi, update):
    rng = np.random.default_rng(1)
    X = make_inputs(rng, 40, 5, False)
    Y = regression_targets("logistic", rng, 40, 1)
    weight = rng.uniform(0, 3, size=40)
    weight[::9] = 0.0
    model = GARegressor(psi=psi, phi="logistic", eta=ETA, U=U, update=update)
    model.partial_fit(X, Y[:, 0], sample_weight=weight)
    assert_matches(model, oracle(psi, "logistic", X, Y, update=update,
                                 sample_weight=weight))


def _one_trial_at_a_time(model, X, y):
    """(theta, intercept) before and after each trial of an on-line pass."""
    states = []
    for t in range(X.shape[0]):
        before = (model.theta_.copy(), model.intercept_.copy()) if t else None
        model.partial_fit(X[t:t + 1], y[t:t + 1])
        states.append((before, (model.theta_.copy(), model.intercept_.copy(),
                                np.asarray(model.coef_).reshape(model.theta_.shape))))
    return states


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize(("psi", "phi", "k"), [
    (psi, phi, k) for psi in ADDITIVE for phi in SMOOTH_PHI for k in _ks(phi)])
def test_implicit_update_solves_eq22(psi, phi, k, sparse):
    """After every trial theta~ = theta - eta (phi(psi(theta~) x + b~) - y) x."""
    rng = np.random.default_rng(5)
    X = make_inputs(rng, 40, 6, sparse) * 3  # long steps: far from the explicit rule
    Y = regression_targets(phi, rng, 40, k)
    eta = 0.02 if "exp" in (psi, phi) or psi == "burg" else 0.5
    model = GARegressor(psi=psi, phi=phi, eta=eta, U=U, p=P, update="implicit")
    data = sp.csr_matrix(X) if sparse else X
    y = Y[:, 0] if k == 1 else Y
    model.partial_fit(data[:1], y[:1])
    h = eta * (U if psi == "eg_pm" else 1.0)  # EG±'s parameter step carries U
    worst, moved = 0.0, 0.0
    for t in range(1, X.shape[0]):
        theta, b = model.theta_.copy(), model.intercept_.copy()
        model.partial_fit(data[t:t + 1], y[t:t + 1])
        weights = np.asarray(model.coef_).reshape(theta.shape)
        a = weights @ X[t] + model.intercept_
        s = transfer(phi, a) - Y[t]
        worst = max(worst, np.abs(model.theta_ - (theta - h * np.outer(s, X[t]))).max(),
                    np.abs(model.intercept_ - (b - eta * s)).max())
        moved = max(moved, np.abs(model.theta_ - theta).max())
    assert worst < 1e-10
    assert moved > 1e-3  # the trials did move the parameters


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_implicit_gradient_descent_closed_form(fit_intercept, sparse):
    """psi = phi = identity: theta - eta (y_hat - y) x / (1 + eta (||x||^2 + [1]))."""
    rng = np.random.default_rng(6)
    X, y = make_inputs(rng, 50, 8, sparse) * 2, rng.normal(size=50) * 3
    eta = 0.7
    model = GARegressor(eta=eta, update="implicit", fit_intercept=fit_intercept)
    data = sp.csr_matrix(X) if sparse else X
    theta, b, total = np.zeros(8), 0.0, 0.0
    for t in range(50):
        y_hat = theta @ X[t] + b
        total += 0.5 * (y_hat - y[t]) ** 2
        scale = 1 + eta * (X[t] @ X[t] + fit_intercept)
        theta = theta - eta * (y_hat - y[t]) * X[t] / scale
        b -= fit_intercept * eta * (y_hat - y[t]) / scale
        model.partial_fit(data[t:t + 1], y[t:t + 1])
        np.testing.assert_allclose(model.coef_, theta, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(model.intercept_, [b], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(model.cumulative_loss_, total, rtol=1e-12)


def _standardized_problem(seed=7, m=2000, n=10):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n))
    y = X @ rng.normal(size=n) + 0.3 * rng.standard_normal(m)
    return X, (y - y.mean()) / y.std()


@pytest.mark.parametrize(("psi", "phi"), [
    ("identity", "identity"), ("pnorm", "identity"), ("identity", "exp")])
def test_implicit_update_is_stable_where_explicit_diverges(psi, phi):
    """Find eta0, the largest rate of a grid at which the explicit rule stays finite;
    at 100 eta0 the implicit rule stays finite with an on-line loss per trial below
    that of always predicting 0."""
    X, y = _standardized_problem()
    if phi == "exp":
        y = np.exp(y)  # Poisson-like rates
    grid = 0.01 * 2.0 ** np.arange(12)
    stable = []
    for eta in grid:
        try:
            GARegressor(psi=psi, phi=phi, eta=eta, p=P).partial_fit(X, y)
            stable.append(eta)
        except ValueError as error:
            assert "diverged" in str(error)
    eta0 = max(stable)
    assert eta0 < grid[-1]  # the explicit rule does diverge on this grid
    with pytest.raises(ValueError, match="diverged"):
        GARegressor(psi=psi, phi=phi, eta=2 * eta0, p=P).partial_fit(X, y)
    model = GARegressor(psi=psi, phi=phi, eta=100 * eta0, p=P, update="implicit")
    model.partial_fit(X, y)
    assert np.all(np.isfinite(model.coef_))
    trivial = PHI[phi].sample_loss(y[:, None], np.zeros((len(y), 1))).mean()
    assert model.cumulative_loss_ / len(y) < trivial
    assert model.score(X, y) > 0.5


def test_sphere_radius_is_U():
    rng = np.random.default_rng(9)
    X, y = rng.standard_normal((300, 4)), rng.standard_normal(300) * 3
    model = GARegressor(psi="sphere", eta=0.05, U=2.5).partial_fit(X, y)
    np.testing.assert_allclose(np.linalg.norm(model.coef_), 2.5, rtol=1e-12)
    # The kernel and the oracle round each trial's cos and sin in their own way (on
    # CPUs with AVX-512, NumPy's differ from libm's in the last bit), and 300
    # geodesic steps of targets of size 3 amplify a difference: an ulp a trial
    # compounds to a few 1e-9 of the small intercept. A wrong step is far larger.
    assert_matches(model, oracle("sphere", "identity", X, y[:, None], radius=2.5),
                   rtol=1e-7)


def test_natural_eg_is_kmww_example7():
    """psi = exp, natural: ln w <- ln w - eta L'(w) x_i w_i (KMWW Example 7, eq. 22)."""
    rng = np.random.default_rng(10)
    X, y = rng.uniform(-1, 1, (80, 5)), rng.uniform(-1, 1, 80)
    model = GARegressor(psi="exp", eta=0.1, update="natural", fit_intercept=False)
    model.partial_fit(X, y)
    log_w = np.zeros(5)
    for x, target in zip(X, y, strict=True):
        w = np.exp(log_w)
        log_w = log_w - 0.1 * (w @ x - target) * x * w
    np.testing.assert_allclose(model.coef_, np.exp(log_w), rtol=1e-12)


@pytest.mark.parametrize(("params", "message"), [
    ({"psi": "sphere", "update": "implicit"}, "geodesics"),
    ({"psi": "simplex", "update": "natural"}, "geodesics"),
    ({"loss": "square", "update": "implicit"}, "eq. \\(22\\)"),
    ({"psi": "pnorm", "p": 3.0, "update": "natural"}, "Jacobian"),
    ({"phi": "softmax", "Y": 0.5}, "GA\\^Y"),
])
def test_undefined_combinations_are_refused(params, message):
    rng = np.random.default_rng(11)
    X = rng.standard_normal((20, 3))
    Y = rng.dirichlet(np.ones(2), size=20)
    y = Y if params.get("phi") == "softmax" else Y[:, 0]
    model = GARegressor(psi=params.get("psi", "identity"),
                        phi=params.get("phi", "identity"), eta=0.1).partial_fit(X, y)
    before = {key: getattr(model, key) for key in ("theta_", "intercept_", "coef_",
                                                   "t_", "cumulative_loss_")}
    model.set_params(**params)
    with pytest.raises(ValueError, match=message):
        model.partial_fit(X, y)
    for key, value in before.items():
        np.testing.assert_array_equal(getattr(model, key), value)


@pytest.mark.parametrize(("estimator", "message"), [
    (GAClassifier(phi="sign", loss="square", eta=0.1), "never updates"),
    (GAClassifier(phi="sign", update="implicit", eta=0.1), "eq. \\(22\\)"),
    (GAClassifier(phi="softmax", update="implicit", loss="square", eta=0.1),
     "eq. \\(22\\)"),
    (GAClassifier(phi="sign", Y=0.5, eta=0.1), "GA\\^Y"),
])
def test_sign_options_are_refused(estimator, message):
    X = np.random.default_rng(12).standard_normal((10, 3))
    with pytest.raises(ValueError, match=message):
        estimator.fit(X, np.arange(10) % 2)
    assert not hasattr(estimator, "theta_")


@pytest.mark.parametrize("psi", ["sphere", "simplex"])
def test_geodesic_psi_have_no_bregman_divergence(psi):
    from sklearn_ga.losses import divergence, potential

    with pytest.raises(ValueError, match="geodesics"):
        divergence(np.ones(3), np.ones(3), psi=psi)
    with pytest.raises(ValueError, match="geodesics"):
        potential(np.ones(3), psi=psi)


@pytest.mark.parametrize("params", [{"update": "fast"}, {"loss": "hinge"}, {"Y": 0},
                                    {"Y": -1.0}, {"Y": "big"}])
def test_invalid_option_values(params):
    X = np.random.default_rng(13).standard_normal((10, 3))
    with pytest.raises(ValueError, match=next(iter(params))):
        GARegressor(eta=0.1, **params).fit(X, np.arange(10.0))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("psi", ["identity", "softmax", "eg_pm"])
def test_implicit_softmax_solves_eq25_at_huge_rates(psi, sparse):
    """Strongly coupled outputs (eta = 1000): eq. (25) still holds to 1e-10."""
    rng = np.random.default_rng(14)
    X = make_inputs(rng, 60, 8, sparse) * 2
    Y = rng.dirichlet(np.ones(4), size=60)
    eta = 1000.0
    model = GARegressor(psi=psi, phi="softmax", eta=eta, U=U, update="implicit")
    data = sp.csr_matrix(X) if sparse else X
    model.partial_fit(data[:1], Y[:1])
    h = eta * (U if psi == "eg_pm" else 1.0)
    worst = 0.0
    for t in range(1, 60):
        theta = model.theta_.copy()
        model.partial_fit(data[t:t + 1], Y[t:t + 1])
        s = transfer("softmax", model.coef_ @ X[t] + model.intercept_) - Y[t]
        worst = max(worst, np.abs(model.theta_ - (theta - h * np.outer(s, X[t]))).max())
    assert worst < 1e-10
    assert np.isfinite(model.cumulative_loss_)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("p", [50.0, 1000.0])
def test_implicit_pnorm_first_step_at_a_large_p(p, sparse):
    # From theta = 0 the row has no scale yet: its terms must be measured in units
    # of the new parameters, or |theta|^(p - 1) under- or overflows for large p.
    x, y, eta = np.array([1.0, 0.5, -0.25]), 1.0, 0.1

    def gap(v):  # v = y_hat - y at the updated parameters (KW01 eq. 22)
        theta = -eta * v * x
        return PSI["pnorm"].weights(theta[None], 1.0, p)[0] @ x - y - v

    v = brentq(gap, -1.0, 0.0, xtol=1e-15)
    model = GARegressor(psi="pnorm", p=p, eta=eta, update="implicit",
                        fit_intercept=False)
    model.partial_fit(sp.csr_matrix(x[None]) if sparse else x[None], [y])
    np.testing.assert_allclose(model.theta_[0], -eta * v * x, rtol=1e-9)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize(("psi", "first", "second", "params"), [
    # theta = [800, 0, 0], then a target that pulls theta_0 back near the others.
    ("softmax", ([1.0, 0.0, 0.0], 1.8), ([1.0, 0.0, 0.0], -0.3), {"eta": 1000.0}),
    ("eg_pm", ([1.0, 0.0, 0.0], 1.8), ([1.0, 0.0, 0.0], -0.7), {"eta": 1000.0}),
    # theta = c [1, 0.4], then theta_0 pushed down to about theta_1: 0.4^1000.
    ("pnorm", ([1.0, 0.4], 1.0), ([1.0, 0.0], None), {"eta": 1.0, "p": 1000.0}),
], ids=["softmax", "eg_pm", "pnorm"])
def test_implicit_csr_step_counts_untouched_terms_far_below_the_shift(
        psi, first, second, params, sparse):
    # A CSR row's implicit equation needs the normalizer of the coordinates it does
    # not touch. In units of the row's shift (here the touched theta_0) those terms
    # underflow to 0, yet after the step they carry half the weight or more.
    model = GARegressor(psi=psi, update="implicit", fit_intercept=False, U=1.0,
                        **params)
    model.partial_fit(np.array([first[0]]), [first[1]])
    theta = model.theta_.copy()
    x = np.array(second[0])
    y = -0.2 * theta[0, 0] if second[1] is None else second[1]
    model.partial_fit(sp.csr_matrix(x[None]) if sparse else x[None], [y])
    # KW01 eq. (22): theta~ = theta - eta (psi(theta~) . x - y) x.
    s = model.coef_ @ x - y
    np.testing.assert_allclose(model.theta_[0], theta[0] - params["eta"] * s * x,
                               rtol=1e-9, atol=1e-9)
    assert abs(model.theta_[0, 0] - theta[0, 0]) > 100 * (psi != "pnorm")
