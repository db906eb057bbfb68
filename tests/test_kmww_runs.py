"""KMWW's Theorems 6 and 8 and Examples 6 and 7 on real runs of the estimators.

A run is replayed one trial at a time (tests/test_kmww.py's ``replay``) to record
the points w_t the theorems speak of; each test says why its data satisfy the
theorem's assumption, and checks the first-order inequality on every trial so that
a bound that holds is not a lucky one. The negative control runs where it fails.
"""

import warnings

import numpy as np
import pytest
from test_kmww import (
    first_order_gaps,
    loss_of,
    one_call,
    path_measure,
    replay,
    uniform_sphere,
)

from sklearn_ga import PHI, GARegressor
from sklearn_ga.losses import matching_loss
from sklearn_ga.theory import (
    distance,
    kmww_example6,
    kmww_example7,
    kmww_theorem6,
    kmww_theorem8,
    loss_slope_bound,
)

# -- Theorem 6 on runs ----------------------------------------------------------------


def gd_data(phi, rng, m=300, n=4):
    """Inputs and targets from a comparator w* through phi, with noise."""
    X = rng.normal(size=(m, n))
    w_star = rng.normal(size=n)
    A = X @ w_star
    if phi == "identity":
        y = A + rng.normal(0, 0.3, size=m)
    elif phi == "logistic":
        y = (rng.random(m) < PHI[phi].transfer(A)).astype(float)
    elif phi == "tanh":
        y = np.where(rng.random(m) < (1 + np.tanh(A)) / 2, 1.0, -1.0)
    else:
        y = np.clip(np.arctan(A) + rng.normal(0, 0.3, size=m), -1.5, 1.5)
    return X, y, w_star


def fitted_comparator(X, y, phi, **params):
    model = GARegressor(phi=phi, fit_intercept=False, max_iter=30, tol=None,
                        random_state=0, **params).fit(X, y)
    return np.ravel(model.theta_ if params.get("update") == "natural" else model.coef_)


def test_theorem6_is_an_equality_for_gradient_descent_on_the_square_loss():
    """KMWW Example 4: in Euclidean space the law of cosines is exact, and the
    loss (w.x - y)^2 / 2 is lambda_t-convex along the line from w_t to w* with
    lambda_t = <w* - w_t, x_t>^2 / (2 ||w* - w_t||^2), exactly (a quadratic): (13)
    holds with equality, for any comparator; (12) then holds since lambda_t >= 0."""
    rng = np.random.default_rng(8)
    X, y, w_star = gd_data("identity", rng)
    eta = 0.05
    model = GARegressor(eta=eta, fit_intercept=False)
    points = replay(model, X, y, np.zeros(4))
    path = model.path_measure_  # (summed by the loop, call after call)
    np.testing.assert_allclose(path, path_measure(points), rtol=1e-10)
    for w in (w_star, np.linalg.lstsq(X, y, rcond=None)[0]):
        loss = loss_of(w, X, y, "identity")
        gaps = w - np.array(points[:-1])
        lambdas = np.sum(gaps * X, axis=1) ** 2 / (2 * np.sum(gaps**2, axis=1))
        exact = kmww_theorem6(loss, w, points[0], points[-1], path, eta,
                              lambdas=lambdas, iterates=points[:-1])
        np.testing.assert_allclose(model.cumulative_loss_, exact, rtol=1e-10)
        assert model.cumulative_loss_ <= kmww_theorem6(loss, w, points[0], points[-1],
                                                       path, eta)


@pytest.mark.parametrize("phi", ["logistic", "tanh", "arctan"])
def test_theorem6_holds_for_gradient_descent(phi):
    """Every matching loss of w.x is convex in w (KW01 eq. 3), so Theorem 6 holds
    for every comparator: the generating one and a fitted one."""
    rng = np.random.default_rng(9)
    X, y, w_star = gd_data(phi, rng)
    eta = 0.2
    model = GARegressor(phi=phi, eta=eta, fit_intercept=False)
    points = replay(model, X, y, np.zeros(4))
    np.testing.assert_allclose(model.path_measure_, path_measure(points), rtol=1e-10)
    end, loss, path = one_call(GARegressor(phi=phi, eta=eta, fit_intercept=False), X,
                               y)
    for w in (w_star, fitted_comparator(X, y, phi, eta=0.05)):
        assert np.all(first_order_gaps(points, w, X, y, phi, "euclidean") >= -1e-12)
        bound = kmww_theorem6(loss_of(w, X, y, phi), w, points[0], end, path, eta)
        assert loss <= bound


def classification_on_the_sphere(rng, U, n=5, m=400, angle=1.0, margin=0.1):
    """Labels +-1 = sign(w*.x) for a comparator w* at `angle` from the uniform start,
    keeping inputs that w* and the start both classify with a margin."""
    start = uniform_sphere(n, U)
    d = rng.normal(size=n)
    d -= (d @ start) * start / U**2
    w_star = start * np.cos(angle) + U * d / np.linalg.norm(d) * np.sin(angle)
    X = rng.normal(size=(6 * m, n))
    norms = U * np.linalg.norm(X, axis=1)
    a0, a_star = X @ start / norms, X @ w_star / norms
    keep = ((np.sign(a0) == np.sign(a_star))
            & (np.minimum(abs(a0), abs(a_star)) > margin))
    X = X[keep][:m]
    return X, np.sign(X @ w_star), w_star, start


def test_theorem6_holds_on_the_sphere():
    """On the sphere of radius U, L(w) = l(w.x) has Riemannian Hessian
    l''(a) (Px)(Px)^T - l'(a) a / U^2 on the tangent plane, positive semi-definite
    wherever l'(a) a <= 0: for tanh and a label y = +-1, where y w.x >= 0. That open
    hemisphere is geodesically convex, so L_t is convex along the geodesic from w_t
    to w* whenever both classify x_t correctly. The data are classified correctly,
    with a margin, by w* and by the start; at this rate the learner makes no
    mistake (asserted), and the fitted comparator classifies every input."""
    rng = np.random.default_rng(10)
    U, eta = 3.0, 0.3
    X, y, w_star, start = classification_on_the_sphere(rng, U)
    model = GARegressor(psi="sphere", phi="tanh", eta=eta, U=U, fit_intercept=False)
    points = replay(model, X, y, start)
    assert all(y[t] * (points[t] @ X[t]) > 0 for t in range(len(y)))
    fitted = fitted_comparator(X, y, "tanh", psi="sphere", U=U, eta=0.3)
    assert np.all(y * (X @ fitted) > 0)
    path = model.path_measure_  # (the geodesics' lengths, summed by the loop)
    np.testing.assert_allclose(path, path_measure(points, "sphere", U), rtol=1e-8)
    end, online, one_path = one_call(
        GARegressor(psi="sphere", phi="tanh", eta=eta, U=U, fit_intercept=False), X, y)
    for w in (w_star, fitted):
        gaps = first_order_gaps(points, w, X, y, "tanh", "sphere", U=U)
        assert np.all(gaps >= -1e-12)
        loss = loss_of(w, X, y, "tanh")
        bound = kmww_theorem6(loss, w, start, points[-1], path, eta,
                              geometry="sphere", U=U)
        assert model.cumulative_loss_ <= bound
        assert online <= kmww_theorem6(loss, w, start, end, one_path, eta,
                                       geometry="sphere", U=U)
        # The proof's inequality of each trial (its sum telescopes to (12)).
        D = [0.5 * distance(w, p, geometry="sphere", U=U) ** 2 for p in points]
        steps = [0.5 * distance(a, b, geometry="sphere", U=U) ** 2
                 for a, b in zip(points[:-1], points[1:], strict=True)]
        for t in range(len(y)):
            lhs = matching_loss(y[t:t + 1], activation=[points[t] @ X[t]], phi="tanh")
            rhs = matching_loss(y[t:t + 1], activation=[w @ X[t]], phi="tanh")
            assert lhs[0] <= rhs[0] + (D[t] - D[t + 1] + steps[t]) / eta + 1e-12


def test_theorem6_holds_on_the_simplex():
    """Fisher geometry, n = 3, noise-free targets y = x_i of the vertex w* = e_i.
    Along the geodesic from p to e_i, sqrt(p_j(s)) shrinks like sin(theta - s) for
    j != i and sqrt(p_i(s)) = cos(theta - s), so the activation is x_i + (m - x_i)
    sin^2(theta - s) and the square loss along it has second derivative
    2 (m - x_i)^2 sin^2(theta - s) (4 cos^2(theta - s) - 1) >= 0 while theta <= pi/3:
    the loss is convex along every geodesic to e_i from the ball p_i >= 1/4, which
    holds the start (p_i = 1/3) and every iterate (asserted). The fitted comparator
    lies near the vertex; for it the first-order inequality is checked trial by
    trial."""
    rng = np.random.default_rng(11)
    n, i, eta = 3, 0, 0.5
    X = rng.uniform(-1, 1, size=(400, n))
    y, vertex, start = X[:, i], np.eye(n)[i], np.full(n, 1 / n)
    model = GARegressor(psi="simplex", eta=eta, fit_intercept=False)
    points = replay(model, X, y, start)
    assert min(p[i] for p in points) >= 0.25
    path = model.path_measure_
    np.testing.assert_allclose(path, path_measure(points, "simplex"), rtol=1e-8)
    end, online, one_path = one_call(
        GARegressor(psi="simplex", eta=eta, fit_intercept=False), X, y)
    fitted = fitted_comparator(X, y, "identity", psi="simplex", eta=0.5)
    for w in (vertex, fitted):
        assert np.all(first_order_gaps(points, w, X, y, "identity", "simplex") >= 0)
        loss = loss_of(w, X, y, "identity")
        bound = kmww_theorem6(loss, w, start, points[-1], path, eta,
                              geometry="simplex")
        assert model.cumulative_loss_ <= bound
        assert online <= kmww_theorem6(loss, w, start, end, one_path, eta,
                                       geometry="simplex")
    # The rate of the user guide: Fisher distances are at most pi, and a step has
    # length eta |L'| sqrt(Var_p(x)) <= eta Z R_inf, with |y_hat - y| <= Z = 2 here.
    Z, R_inf, k = 2.0, 1.0, len(y)
    eta = np.pi / (Z * R_inf * np.sqrt(k))
    model = GARegressor(psi="simplex", eta=eta, fit_intercept=False)
    points = replay(model, X, y, start)
    assert min(p[i] for p in points) >= 0.25
    assert path_measure(points, "simplex") <= k * (eta * Z * R_inf) ** 2 / 2
    assert model.cumulative_loss_ <= np.pi * Z * R_inf * np.sqrt(k)


# -- Theorem 8 on runs ----------------------------------------------------------------


def after_update_loss(points, X, y, phi):
    """sum_t L_t(w_{t+1}): each trial's loss at the weights its update produced."""
    return float(sum(matching_loss(y[t:t + 1], activation=[points[t + 1] @ X[t]],
                                   phi=phi)[0] for t in range(len(y))))


def test_theorem8_bounds_the_losses_after_the_updates():
    """update="implicit" with psi="identity" is rule (9) in Euclidean space (KMWW
    Example 1). For the square loss (17) is an equality for sum_t L_t(w_{t+1}), with
    lambda_t = <w* - w_{t+1}, x_t>^2 / (2 ||w* - w_{t+1}||^2) (Example 5): the path
    measure, which lowers the bound, is checked to rounding. (16) holds for those
    losses, also for the logistic loss. The on-line loss sum_t L_t(w_t), which the
    paper prints on the left of (16), exceeds it at this rate: its proof bounds the
    losses after the updates only."""
    rng = np.random.default_rng(12)
    eta = 0.5  # explicit gradient descent would diverge at this rate on these inputs
    X, y, w_star = gd_data("identity", rng)
    model = GARegressor(eta=eta, update="implicit", fit_intercept=False)
    points = replay(model, X, y, np.zeros(4))
    path, after = model.path_measure_, after_update_loss(points, X, y, "identity")
    # (It lowers the bound: the loop's sum is the replay's, to rounding.)
    np.testing.assert_allclose(path, path_measure(points), rtol=1e-10)
    for w in (w_star, np.linalg.lstsq(X, y, rcond=None)[0]):
        loss = loss_of(w, X, y, "identity")
        gaps = w - np.array(points[1:])
        lambdas = np.sum(gaps * X, axis=1) ** 2 / (2 * np.sum(gaps**2, axis=1))
        exact = kmww_theorem8(loss, w, points[0], points[-1], path, eta,
                              lambdas=lambdas, iterates=points[1:])
        np.testing.assert_allclose(after, exact, rtol=1e-9)
        bound = kmww_theorem8(loss, w, points[0], points[-1], path, eta)
        assert after <= bound < model.cumulative_loss_
    # The figures of the user guide, for the fitted comparator.
    assert (round(model.cumulative_loss_, 1), round(bound, 1), round(after, 1)) == (
        24.2, 10.4, 3.7)
    X, y, w_star = gd_data("logistic", rng)
    model = GARegressor(phi="logistic", eta=eta, update="implicit", fit_intercept=False)
    points = replay(model, X, y, np.zeros(4))
    np.testing.assert_allclose(model.path_measure_, path_measure(points), rtol=1e-10)
    for w in (w_star, fitted_comparator(X, y, "logistic", eta=0.05)):
        bound = kmww_theorem8(loss_of(w, X, y, "logistic"), w, points[0], points[-1],
                              model.path_measure_, eta)
        assert after_update_loss(points, X, y, "logistic") <= bound


# -- Examples 6 and 7: the tuned rates ------------------------------------------------


def test_example6_rate_on_gradient_descent():
    """Logistic labels: |L'| = |y_hat - y| <= Z = 1; R2 = max ||x||_2, U = ||w*||_2
    from the zero start. The steps obey D(w_t, w_{t+1}) <= eta^2 Z^2 R2^2 / 2."""
    rng = np.random.default_rng(13)
    X, y, w_star = gd_data("logistic", rng, m=1000, n=5)
    R2, Z, k = np.linalg.norm(X, axis=1).max(), loss_slope_bound("logistic"), len(y)
    for w in (w_star, fitted_comparator(X, y, "logistic", eta=0.05)):
        eta, bound = kmww_example6(R2, Z, np.linalg.norm(w), k,
                                   comparator_loss=loss_of(w, X, y, "logistic"))
        model = GARegressor(phi="logistic", eta=eta, fit_intercept=False)
        points = replay(model, X, y, np.zeros(5))
        assert path_measure(points) <= k * (eta * Z * R2) ** 2 / 2
        assert model.cumulative_loss_ <= bound


def natural_eg_data(rng, m=600, n=4):
    """Rows of one sign, labelled 0 if nonnegative and 1 if nonpositive: then
    l'(a) x_i = (sigma(a) - y) x_i >= 0 for every i, so the loss of w = e^theta is
    convex in theta (Hessian l'' (x w)(x w)^T + l' diag(x w)) and every step
    lowers every weight, keeping ||w_t||_2 <= ||w_0||_2 = sqrt(n)."""
    X = rng.uniform(0, 1, size=(m, n)) * rng.choice([-1.0, 1.0], size=(m, 1))
    return X, (X[:, 0] < 0).astype(float)


def test_example7_rate_on_natural_eg():
    rng = np.random.default_rng(14)
    n = 4
    X, y = natural_eg_data(rng, n=n)
    R_inf, Z, k = np.abs(X).max(), loss_slope_bound("logistic"), len(y)
    fitted = fitted_comparator(X, y, "logistic", psi="exp", update="natural", eta=0.1)
    for theta in (np.full(n, -2.0), fitted):  # ln w*
        U = max(np.sqrt(n), np.linalg.norm(theta))  # >= ||w_t||_2 and dist(w_0, w*)
        loss = loss_of(theta, X, y, "logistic", "exp")
        eta, bound = kmww_example7(R_inf, Z, U, k, comparator_loss=loss)
        model = GARegressor(psi="exp", phi="logistic", update="natural", eta=eta,
                            fit_intercept=False)
        points = replay(model, X, y, np.zeros(n), attribute="theta_")
        assert max(np.linalg.norm(np.exp(p)) for p in points) <= np.sqrt(n)
        gaps = first_order_gaps(points, theta, X, y, "logistic", "euclidean", "exp")
        assert np.all(gaps >= -1e-12)
        np.testing.assert_allclose(model.path_measure_, path_measure(points),
                                   rtol=1e-8)
        theorem6 = kmww_theorem6(loss, theta, points[0], points[-1],
                                 model.path_measure_, eta)
        assert model.cumulative_loss_ <= theorem6 <= bound


# -- negative control -----------------------------------------------------------------


def test_theorem6_fails_where_its_assumption_does_not_hold():
    """Sphere of radius 1, noise-free targets of w* = -e_1, inputs whose variance
    along e_1 is 1/100 of that across it. The mean loss (w - w*)^T C (w - w*) / 2
    then has a second minimum at -w* = e_1, and the uniform start lies 125 degrees
    from w*, in its basin: the run settles there, paying about 2 (w*.x)^2 a trial,
    and (12) fails (the loss is not convex along the geodesics from w_t to w*:
    the first-order inequality fails). The library warns that its value is no
    guarantee. The same data with w* = e_1, 55 degrees from the start, converge to
    w* and obey (12) without a warning."""
    rng = np.random.default_rng(0)
    n, U, eta = 3, 1.0, 0.02
    X = rng.normal(size=(2000, n)) * [0.1, 1.0, 1.0]
    start = uniform_sphere(n, U)
    for sign in (-1.0, 1.0):
        w_star = sign * np.eye(n)[0]
        y = X @ w_star
        model = GARegressor(psi="sphere", eta=eta, U=U, fit_intercept=False)
        points = replay(model, X, y, start)
        path = path_measure(points, "sphere", U)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            bound = kmww_theorem6(0.0, w_star, start, points[-1], path, eta,
                                  geometry="sphere", U=U)
        gaps = first_order_gaps(points, w_star, X, y, "identity", "sphere", U=U)
        end = distance(w_star, points[-1], geometry="sphere", U=U)
        if sign < 0:
            assert end > 0.99 * np.pi  # trapped at -w*
            assert np.mean(gaps < 0) > 0.5
            assert model.cumulative_loss_ > bound
            assert len(caught) == 1 and "no guarantee" in str(caught[0].message)
        else:
            assert end < 1e-6
            assert model.cumulative_loss_ <= bound
            assert not caught
