"""KMWW's geometric analysis: distances, Theorems 6 and 8, Examples 6 and 7.

The distances are checked against their defining formulas and against the length of
the geodesic integrated numerically in the metric; the bounds against real runs of
the estimators. A run is replayed one trial at a time (``partial_fit`` on one row) to
record the points w_t the theorems speak of; sum_t D(w_t, w_{t+1}) is summed from
them with :func:`distance`.

Theorem 6 assumes each loss L_t convex along the geodesic from w_t to the
comparator w*; its proof uses exactly the first-order inequality
L_t(w*) >= L_t(w_t) + <grad L_t(w_t), Log_{w_t} w*>. Each test below says why its
data satisfy the assumption, and checks that inequality on every trial
(``first_order_gaps``), so that a bound that holds is not a lucky one. The negative
control runs where it fails.
"""

import re

import numpy as np
import pytest

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

# -- helpers -------------------------------------------------------------------------


def replay(model, X, y, start, attribute="coef_"):
    """w_0 (the estimator's start), ..., w_k: the points of a run, one trial at a
    time."""
    points = [np.asarray(start, dtype=float)]
    for t in range(X.shape[0]):
        model.partial_fit(X[t:t + 1], y[t:t + 1])
        points.append(np.array(getattr(model, attribute), dtype=float).ravel())
    return points


def one_call(model, X, y, attribute="coef_"):
    """The run of ``replay`` in one call (the compiled loop over all the rows): its
    end point w_k, on-line loss and the path measure the loop summed."""
    model.partial_fit(X, y)
    return (np.array(getattr(model, attribute), dtype=float).ravel(),
            model.cumulative_loss_, model.path_measure_)


def path_measure(points, geometry="euclidean", U=1.0):
    """sum_t D(w_t, w_{t+1}), D = dist^2 / 2 (KMWW eq. 8)."""
    return sum(0.5 * distance(a, b, geometry=geometry, U=U) ** 2
               for a, b in zip(points[:-1], points[1:], strict=True))


def unit_direction(u, u_star):
    """Angle theta from unit u to unit u_star and the unit tangent at u towards it."""
    theta = 2 * np.arctan2(np.linalg.norm(u - u_star), np.linalg.norm(u + u_star))
    v = u_star - np.cos(theta) * u
    return theta, v / np.linalg.norm(v)


# The weights of the Euclidean parameters theta, psi(theta), and psi's (diagonal)
# Jacobian: gradient descent and the natural EG of KMWW Example 7.
LINKS = {"identity": (lambda theta: theta, np.ones_like), "exp": (np.exp, np.exp)}


def activation_slope(geometry, w, w_star, x, psi="identity", U=1.0):
    """d/ds of the activation at s = 0 along the geodesic gamma from w (s = 0) to
    w_star (s = 1): the activation's part of <grad L(w), Log_w w_star>."""
    if geometry == "euclidean":  # a line in theta
        return (LINKS[psi][1](w) * (w_star - w)) @ x
    if geometry == "sphere":  # Log_w w* = U theta v (KMWW Example 2)
        theta, v = unit_direction(w / U, w_star / U)
        return U * theta * (v @ x)
    # Simplex: sqrt(p(s)) = u cos(s theta) + v sin(s theta), p' = 2 theta u v.
    theta, v = unit_direction(np.sqrt(w), np.sqrt(w_star))
    return 2 * theta * np.sum(x * np.sqrt(w) * v)


def first_order_gaps(points, w_star, X, y, phi, geometry, psi="identity", U=1.0):
    """L_t(w*) - L_t(w_t) - <grad L_t(w_t), Log_{w_t} w*> of each trial: >= 0 where
    L_t is convex along the geodesic (the hypothesis of Theorem 6)."""
    weights = LINKS[psi][0] if geometry == "euclidean" else LINKS["identity"][0]
    gaps = []
    for t in range(X.shape[0]):
        w, x, target = points[t], X[t], y[t:t + 1]
        a, a_star = weights(w) @ x, weights(w_star) @ x
        slope = PHI[phi].transfer(np.array([a]))[0] - target[0]  # L' (KW01 eq. 3)
        gaps.append(matching_loss(target, activation=[a_star], phi=phi)[0]
                    - matching_loss(target, activation=[a], phi=phi)[0]
                    - slope * activation_slope(geometry, w, w_star, x, psi, U))
    return np.array(gaps)


def loss_of(w, X, y, phi, psi="identity"):
    return float(np.sum(matching_loss(y, activation=X @ LINKS[psi][0](w), phi=phi)))
def uniform_sphere(n, U):
    return np.full(n, U / np.sqrt(n))


# -- distance ------------------------------------------------------------------------


def test_euclidean_distance_is_the_norm_at_any_scale():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    np.testing.assert_allclose(distance(a, b), np.linalg.norm(a - b), rtol=1e-14)
    for scale in (1e200, 1e-200):  # no overflow or underflow of the squares
        np.testing.assert_allclose(distance(scale * a, scale * b) / scale,
                                   np.linalg.norm(a - b), rtol=1e-14)


def test_sphere_distance_is_the_great_circle_distance():
    rng = np.random.default_rng(1)
    U = 2.5
    for _ in range(20):
        a, b = rng.normal(size=(2, 5))
        a, b = U * a / np.linalg.norm(a), U * b / np.linalg.norm(b)
        np.testing.assert_allclose(distance(a, b, geometry="sphere", U=U),
                                   U * np.arccos(a @ b / U**2), rtol=1e-10)
    # Near 0 and near pi, where arccos loses the digits: the geodesic of a tangent
    # vector V (Exp_w V = w cos(|V|/U) + U V/|V| sin(|V|/U)) is |V| long.
    w, v = U * np.eye(5)[0], np.eye(5)[1]
    for length in (1e-9 * U, (np.pi - 1e-9) * U):
        end = w * np.cos(length / U) + U * v * np.sin(length / U)
        np.testing.assert_allclose(distance(end, w, geometry="sphere", U=U), length,
                                   rtol=1e-8)


def test_sphere_distance_is_the_length_of_the_geodesic():
    rng = np.random.default_rng(2)
    U, a, b = 3.0, *rng.normal(size=(2, 4))
    u, u_star = a / np.linalg.norm(a), b / np.linalg.norm(b)
    theta, v = unit_direction(u, u_star)
    s = np.linspace(0, theta, 100_001)[:, None]
    curve = U * (u * np.cos(s) + v * np.sin(s))
    np.testing.assert_allclose(curve[-1], U * u_star, atol=1e-12)
    length = np.sum(np.linalg.norm(np.diff(curve, axis=0), axis=1))
    dist = distance(U * u, U * u_star, geometry="sphere", U=U)
    np.testing.assert_allclose(length, dist, rtol=1e-9)
    # A curve off the great circle, with the same ends, is longer.
    normal = np.linalg.svd(np.stack([u, v]))[2][-1]  # normal to the circle's plane
    bent = curve + 0.3 * U * np.sin(np.pi * s / theta) * normal
    bent = U * bent / np.linalg.norm(bent, axis=1, keepdims=True)
    assert np.sum(np.linalg.norm(np.diff(bent, axis=0), axis=1)) > dist * (1 + 1e-3)


def fisher_length(path):
    """Length of a path of the simplex in the Fisher metric g_p(v, v) = sum v_i^2 / p_i
    (the Fisher information of a categorical distribution), by the midpoint rule."""
    steps, middles = np.diff(path, axis=0), (path[1:] + path[:-1]) / 2
    return np.sum(np.sqrt(np.sum(steps**2 / middles, axis=1)))


def test_simplex_distance_is_the_fisher_distance():
    rng = np.random.default_rng(3)
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(4), size=2)
        # The Fisher-Rao distance, from the Bhattacharyya coefficient.
        np.testing.assert_allclose(distance(p, q, geometry="simplex"),
                                   2 * np.arccos(np.sum(np.sqrt(p * q))), rtol=1e-10)
    p, q = rng.dirichlet(np.ones(4), size=2)
    theta, v = unit_direction(np.sqrt(p), np.sqrt(q))
    s = np.linspace(0, theta, 200_001)[:, None]
    geodesic = (np.sqrt(p) * np.cos(s) + v * np.sin(s)) ** 2  # (KMWW Example 3)
    dist = distance(p, q, geometry="simplex")
    np.testing.assert_allclose(fisher_length(geodesic), dist, rtol=1e-8)
    mixture = p + np.linspace(0, 1, 200_001)[:, None] * (q - p)  # not a geodesic
    assert fisher_length(mixture) > dist * (1 + 1e-4)


def test_distance_of_matrices_is_that_of_the_product_manifold():
    rng = np.random.default_rng(4)
    P, Q = rng.dirichlet(np.ones(3), size=(2, 4))
    rows = [distance(p, q, geometry="simplex") for p, q in zip(P, Q, strict=True)]
    np.testing.assert_allclose(distance(P, Q, geometry="simplex"),
                               np.sqrt(np.sum(np.square(rows))), rtol=1e-14)
    assert distance(P, P, geometry="simplex") == 0.0


@pytest.mark.parametrize("call, message", [
    (lambda: distance([1.0, 0.0], [0.0, 1.0], geometry="sphere", U=2.0),
     "not on the sphere of radius U=2.0"),
    (lambda: distance([0.6, 0.5], [1.0, 0.0], geometry="simplex"), "the probability"),
    (lambda: distance([1.2, -0.2], [1.0, 0.0], geometry="simplex"), "the probability"),
    (lambda: distance([1.0, 0.0], [1.0, 0.0, 0.0]), "must match"),
    (lambda: distance([1.0, np.nan], [1.0, 0.0]), "NaN"),
    (lambda: distance([1.0, np.inf], [1.0, 0.0]), "infinity"),
    (lambda: distance([], []), "empty"),
    (lambda: distance([1.0], [0.0], geometry="hyperbolic"), "geometry="),
    (lambda: distance([1.0], [0.0], U=0.0), "U must be"),
    (lambda: distance([1.0], [1.0], geometry="sphere", U=np.inf), "U must be"),
])
def test_distance_bad_arguments(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


# -- the step of the explicit rule (10) has length eta ||grad L||_g -------------------


@pytest.mark.parametrize("psi, update, geometry", [
    ("identity", "explicit", "euclidean"), ("exp", "natural", "euclidean"),
    ("sphere", "explicit", "sphere"), ("simplex", "explicit", "simplex"),
])
def test_step_length_is_eta_times_the_gradient_norm(psi, update, geometry):
    """KMWW §3.2: dist(w_t, w_{t+1}) = eta ||grad L_t(w_t)||_g, with the norms of
    Examples 2 (sphere), 3 (simplex), 6 (gradient descent) and 7 (natural EG)."""
    rng = np.random.default_rng(5)
    U, eta, X, y = 2.0, 0.3, rng.normal(size=(3, 4)), rng.normal(size=3)
    model = GARegressor(psi=psi, update=update, eta=eta, U=U, fit_intercept=False)
    model.partial_fit(X[:1], y[:1])  # start off the uniform point
    attribute = "theta_" if update == "natural" else "coef_"
    for x, target in zip(X[1:], y[1:], strict=True):
        w = np.array(getattr(model, attribute)).ravel()  # (a copy: updated in place)
        r = model.predict(x[None])[0] - target
        if psi == "sphere":  # the gradient r x projected on the tangent plane
            norm = np.linalg.norm(r * (x - w * (w @ x) / U**2))
        elif psi == "simplex":
            norm = abs(r) * np.sqrt(w @ x**2 - (w @ x) ** 2)
        elif psi == "exp":  # || r x_i w_i ||_2, w = e^theta
            norm = np.linalg.norm(r * x * np.exp(w))
        else:
            norm = np.linalg.norm(r * x)
        model.partial_fit(x[None], [target])
        step = distance(np.ravel(getattr(model, attribute)), w, geometry=geometry, U=U)
        np.testing.assert_allclose(step, eta * norm, rtol=1e-10)


# -- the functions of the bounds -----------------------------------------------------


def test_theorems_6_and_8_evaluate_their_right_hand_sides():
    rng = np.random.default_rng(6)
    w_star, start, end = rng.normal(size=(3, 2, 3))
    D = lambda a, b: 0.5 * np.sum((a - b) ** 2)  # noqa: E731
    loss, path, eta = 2.0, 0.7, 0.3
    rhs12 = loss + (D(w_star, start) - D(w_star, end)) / eta + path / eta
    np.testing.assert_allclose(kmww_theorem6(loss, w_star, start, end, path, eta),
                               rhs12)
    np.testing.assert_allclose(kmww_theorem8(loss, w_star, start, end, path, eta),
                               rhs12 - 2 * path / eta)
    iterates, lambdas = rng.normal(size=(4, 2, 3)), rng.normal(size=4)
    correction = 2 * sum(lam * D(w, w_star)
                         for lam, w in zip(lambdas, iterates, strict=True))
    np.testing.assert_allclose(
        kmww_theorem6(loss, w_star, start, end, path, eta, lambdas=lambdas,
                      iterates=iterates), rhs12 - correction)
    np.testing.assert_allclose(
        kmww_theorem8(loss, w_star, start, end, path, eta, lambdas=lambdas,
                      iterates=iterates), rhs12 - 2 * path / eta - correction)


def test_examples_6_and_7_rates_minimize_the_bound_of_theorem_6():
    R, Z, U, k = 1.5, 0.5, 3.0, 400
    # Example 6: U^2 / (2 eta) + eta k Z^2 R^2 / 2, least at eta = U / (R Z sqrt(k)).
    gd = lambda eta: U**2 / (2 * eta) + eta * k * Z**2 * R**2 / 2  # noqa: E731
    eta, bound = kmww_example6(R, Z, U, k, comparator_loss=1.0)
    np.testing.assert_allclose([eta, bound], [U / (R * Z * 20), 1.0 + R * Z * U * 20])
    np.testing.assert_allclose(gd(eta), bound - 1.0)
    assert gd(0.99 * eta) > gd(eta) < gd(1.01 * eta)
    # Example 7: U^2 / (2 eta) + eta k Z^2 R^2 U^2 / 2, least at 1 / (Z R sqrt(k)).
    eg = lambda eta: U**2 / (2 * eta) + eta * k * (Z * R * U) ** 2 / 2  # noqa: E731
    eta, bound = kmww_example7(R, Z, U, k)
    np.testing.assert_allclose([eta, bound], [1 / (Z * R * 20), R * Z * U**2 * 20])
    np.testing.assert_allclose(eg(eta), bound)
    assert eg(0.99 * eta) > eg(eta) < eg(1.01 * eta)


@pytest.mark.parametrize("phi, n_outputs", [("logistic", 1), ("tanh", 1),
                                            ("arctan", 1), ("tanh", 3), ("softmax", 3)])
def test_loss_slope_bound_is_the_sup_of_the_slope(phi, n_outputs):
    """Z >= ||phi(a) - y||_2 for y in the range of phi, and is approached."""
    rng = np.random.default_rng(7)
    Z = loss_slope_bound(phi, n_outputs)
    k = n_outputs
    A, B = rng.normal(0, 1e4, size=(2, 20_000, k))
    transfer = PHI[phi].transfer
    slopes = np.linalg.norm(transfer(A) - transfer(B), axis=1)
    assert slopes.max() <= Z * (1 + 1e-12)
    assert slopes.max() >= 0.999 * Z


@pytest.mark.parametrize("call, message", [
    (lambda: kmww_theorem6(1.0, [0.0], [0.0], [0.0], 1.0, 0.0), "eta must be"),
    (lambda: kmww_theorem6(1.0, [0.0], [0.0], [0.0], -1.0, 1.0), "path_measure must"),
    (lambda: kmww_theorem6(-1.0, [0.0], [0.0], [0.0], 1.0, 1.0), "comparator_loss"),
    (lambda: kmww_theorem6(1.0, [0.0], [0.0], [0.0], 1.0, 1.0, lambdas=[1.0]),
     "both lambdas and iterates"),
    (lambda: kmww_theorem6(1.0, [0.0], [0.0], [0.0], 1.0, 1.0, lambdas=[1.0, 2.0],
                           iterates=[[0.0]]), "one point per lambda"),
    (lambda: kmww_theorem6(1.0, [0.0, 1.0], [0.0], [0.0], 1.0, 1.0), "must match"),
    (lambda: kmww_theorem6(1.0, [1.0, 0.0], [1.0, 0.0], [1.0, 0.0], 1.0, 1.0,
                           geometry="sphere", U=2.0), "not on the sphere"),
    (lambda: kmww_theorem6(1.0, [0.0], [1e300], [0.0], 1.0, 1e-300), "overflows"),
    (lambda: kmww_theorem6(1.0, [0.0], [0.0], [0.0], 1.0, 1.0, geometry="torus"),
     "geometry="),
    (lambda: kmww_theorem8(1.0, [0.0], [0.0], [0.0], 1.0, np.inf), "eta must be"),
    (lambda: kmww_example6(1.0, 0.0, 1.0, 10), "Z must be"),
    (lambda: kmww_example6(1.0, 1.0, 1.0, 0), "n_trials must be"),
    (lambda: kmww_example6(1.0, 1.0, 1.0, 2.5), "n_trials must be"),
    (lambda: kmww_example6(1e-300, 1e-300, 1.0, 10), "overflows"),
    (lambda: kmww_example7(1.0, 1.0, 1e200, 10), "overflows"),
    (lambda: kmww_example7(1.0, 1.0, 1.0, 10, comparator_loss=np.nan),
     "comparator_loss must be"),
    (lambda: loss_slope_bound("identity"), "Z is infinite"),
    (lambda: loss_slope_bound("exp"), "Z is infinite"),
    (lambda: loss_slope_bound("sign"), "not defined"),
    (lambda: loss_slope_bound("tanh", 0), "n_outputs must be"),
])
def test_bad_arguments(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()
