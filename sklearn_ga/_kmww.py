"""KMWW: the distances of the geometries, Theorems 6 and 8, Examples 6 and 7.

:func:`distance` is the Riemannian distance of each geometry the estimators run in
(Euclidean, the sphere, the simplex with the Fisher metric); the bounds of KMWW
Theorems 6 and 8 measure with D = dist^2 / 2 (their eq. 8). :func:`loss_slope_bound`
is the Z of their Examples 6 and 7.
"""

import warnings
from collections.abc import Callable
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np

from ._guarantees import _check_nonnegative, _check_positive, _guarantee, _representable
from ._psi._scaled_rows import unit_rows
from .losses import _as_finite_array, _as_parameters, _phi_entry

# Membership of the sphere and the simplex is checked to this relative accuracy.
MANIFOLD_RTOL = 1e-8


def _unit_angles(u, v):
    """Angle between the unit rows of u and v, accurate near 0 and near pi."""
    return 2.0 * np.arctan2(np.linalg.norm(u - v, axis=-1),
                            np.linalg.norm(u + v, axis=-1))


def _on_sphere(w, radius, name, where):
    """The rows of w as unit vectors, after checking that their norms are radius."""
    _, r = unit_rows(w)  # (no overflow at any scale)
    norms = np.linalg.norm(r, axis=-1) * np.max(np.abs(w), axis=-1)
    if not np.all(np.abs(norms - radius) <= MANIFOLD_RTOL * radius):
        raise ValueError(f"{name} is not on {where}: its rows have norms "
                         f"{np.round(norms, 10).tolist()}. Pass weights (coef_), not "
                         "parameters, with the U of the model.")
    return r / np.linalg.norm(r, axis=-1, keepdims=True)


def _euclidean_rows(w_tilde, w, U):
    s, _ = unit_rows(np.maximum(np.abs(w_tilde), np.abs(w)))  # (no overflow)
    return s[:, 0] * np.linalg.norm((w_tilde - w) / s, axis=-1)


def _sphere_rows(w_tilde, w, U):
    where = f"the sphere of radius U={U!r}"
    return U * _unit_angles(_on_sphere(w_tilde, U, "w_tilde", where),
                            _on_sphere(w, U, "w", where))


def _simplex_rows(w_tilde, w, U):
    for name, p in (("w_tilde", w_tilde), ("w", w)):
        if np.any(p < 0) or not np.allclose(p.sum(axis=-1), 1.0, rtol=0.0,
                                            atol=MANIFOLD_RTOL):
            raise ValueError(f"{name} is not on the probability simplex: each row "
                             "must be >= 0 and sum to 1. Pass weights (coef_).")
    # p -> 2 sqrt(p) maps the Fisher metric onto the sphere of radius 2 (Example 3).
    return 2.0 * _unit_angles(*(_on_sphere(np.sqrt(p), 1.0, name, "the simplex")
                                for name, p in (("w_tilde", w_tilde), ("w", w))))


class Geometry(NamedTuple):
    """A manifold of weights: ``rows(w_tilde, w, U)``, the distance of each pair of
    rows (after checking the points), and ``convexity_radius(U)``, beyond which
    D(w*, .) = dist(w*, .)^2 / 2 is not convex: a quarter of a great circle on a
    sphere (the simplex's diameter is no more than that), none in flat space."""

    rows: Callable
    convexity_radius: Callable


GEOMETRIES = {
    "euclidean": Geometry(_euclidean_rows, lambda U: np.inf),
    "sphere": Geometry(_sphere_rows, lambda U: np.pi * U / 2),
    "simplex": Geometry(_simplex_rows, lambda U: np.pi),  # 2 x pi / 2
}


def _points(values, name, shape=None):
    values = _as_parameters(values, name)
    if shape is not None and values.shape != shape:
        raise ValueError(f"{name} has shape {values.shape} but the comparator has "
                         f"shape {shape}; they must match.")
    return values


def _trajectory(lambdas, iterates, shape):
    """lambda_t and the points w_t of the lambda-convex bounds (13), (17)."""
    lambdas = _as_finite_array(lambdas, "lambdas", "lambdas", dimensions=1)
    iterates = _as_finite_array(iterates, "iterates", "iterates", dimensions=3)
    if iterates.ndim < 2 or iterates.shape[0] != lambdas.shape[0]:
        raise ValueError(f"iterates must hold one point per lambda "
                         f"({lambdas.shape[0]}); got shape {iterates.shape}.")
    return lambdas, [_points(w, "iterates", shape) for w in iterates]


def distance(w_tilde, w, *, geometry="euclidean", U=1.0):
    """Riemannian distance dist(w~, w) of KMWW §2; D = dist^2 / 2 is their eq. (8).

    ============ ==========================================================
    geometry     dist(w~, w)
    ============ ==========================================================
    euclidean    ||w~ - w||_2: the parameters theta of the link-function
                 algorithms, whose geodesics are lines (KMWW §6)
    sphere       U times the angle between w~ and w: the great-circle
                 distance on the sphere of radius U (Example 2)
    simplex      2 arccos(sum_i sqrt(w~_i w_i)): the Fisher (Fisher-Rao)
                 distance, the great-circle distance of 2 sqrt(w) on the
                 sphere of radius 2 (Example 3)
    ============ ==========================================================

    Matrices are k points, one per row, of the product manifold: the distance is
    the square root of the sum of the squared distances of the rows.

    Parameters
    ----------
    w_tilde, w : array-like of shape (n_features,) or (k, n_features)
        Two points: weights ``coef_`` on the sphere or the simplex, parameters
        ``theta_`` for ``"euclidean"``.
    geometry : {"euclidean", "sphere", "simplex"}, default="euclidean"
        The manifold: ``"sphere"`` and ``"simplex"`` are the geometries of
        ``psi="sphere"`` and ``psi="simplex"``; ``"euclidean"`` that of every
        additive update (``psi="identity"``, and ``update="natural"``, whose
        steps are gradient steps in theta).
    U : float, default=1.0
        Radius of the sphere.

    Returns
    -------
    dist : float
        The length of a shortest geodesic from ``w`` to ``w_tilde``.

    Raises
    ------
    ValueError
        For points off the manifold (a row of the sphere whose norm is not U, a
        row of the simplex with a negative entry or a sum other than 1).

    References
    ----------
    Krakowski, Mahony, Williamson and Warmuth, A Geometric View of Non-Linear
    On-Line Stochastic Gradient Descent: §2 (distance), eq. (8) (D), Examples 1-3.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ga.theory import distance
    >>> distance([2.0, 0.0], [0.0, 2.0], geometry="sphere", U=2.0) / np.pi  # U pi / 2
    1.0
    >>> round(distance([1.0, 0.0], [0.5, 0.5], geometry="simplex") / np.pi, 6)
    0.5
    >>> distance([0.0, 0.0], [3.0, 4.0])
    5.0
    """
    _geometry(geometry)
    if not (isinstance(U, Real) and 0.0 < U < np.inf):
        raise ValueError(f"U must be a finite number > 0; got {U!r}.")
    w_tilde = _points(w_tilde, "w_tilde")
    w = _points(w, "w", w_tilde.shape)
    rows = _geometry(geometry).rows(w_tilde, w, U)
    s = np.max(rows)
    return float(s * np.sqrt(np.sum((rows / s) ** 2))) if s > 0 else 0.0


def _geometry(geometry):
    """The entry of GEOMETRIES, or a ValueError."""
    if geometry not in GEOMETRIES:
        raise ValueError(f"geometry={geometry!r} is not one of {sorted(GEOMETRIES)}.")
    return GEOMETRIES[geometry]


def loss_slope_bound(phi, n_outputs=1):
    """Z of KMWW Examples 6 and 7: a bound on the slope ||phi(a) - y||_2 of the loss.

    The matching loss's gradient in the activation is phi(a) - y (KW01 eq. 3), so
    its norm is at most the diameter of the range of phi: 1 for logistic, 2 for
    tanh, pi for arctan (times sqrt(n_outputs) for several outputs), sqrt(2) for
    softmax. This is not HKW's Z, a bound on phi' (:func:`transfer_bound`).

    Parameters
    ----------
    phi : {"logistic", "tanh", "arctan", "softmax"}
        Transfer function.
    n_outputs : int, default=1
        Number of outputs of a coordinate-wise phi (ignored for softmax).

    Returns
    -------
    Z : float

    Raises
    ------
    ValueError
        For ``"identity"`` and ``"exp"`` (unbounded predictions: Z is infinite;
        pass a Z that bounds abs(y_hat - y) on your run) and ``"sign"`` (no matching
        loss whose gradient is the step).

    References
    ----------
    KMWW Examples 6 and 7 (Z >= max_t abs(L'_t(w_t))); KW01 eq. (3) (the slope).

    Examples
    --------
    >>> from sklearn_ga.theory import loss_slope_bound
    >>> loss_slope_bound("logistic"), loss_slope_bound("tanh", n_outputs=4)
    (1.0, 4.0)
    """
    entry = _phi_entry(phi)
    if not (isinstance(n_outputs, Integral) and n_outputs >= 1):
        raise ValueError(f"n_outputs must be an integer >= 1; got {n_outputs!r}.")
    if entry.threshold:
        raise ValueError("Z is not defined for phi='sign': its step is twice the "
                         "gradient of the hinge loss it charges, no matching loss.")
    if entry.rowwise:
        return float(np.sqrt(2.0))  # two points of the probability simplex
    if not np.isfinite(entry.high - entry.low):
        raise ValueError(f"Z is infinite for phi={phi!r}: its predictions are "
                         "unbounded. Pass a Z that bounds |y_hat - y| on the run.")
    return float((entry.high - entry.low) * np.sqrt(n_outputs))


# -- KMWW: the geometric view (Theorems 6 and 8, Examples 6 and 7) -------------------

def _geometric_bound(comparator_loss, comparator, start, end, path_measure, eta,
                     sign, geometry, U, lambdas, iterates):
    """comparator_loss + (D(w*, w_0) - D(w*, w_k)) / eta + sign path_measure / eta
    - 2 sum_t lambda_t D_t: (12)/(13) with sign +1, (16)/(17) with sign -1."""
    _check_nonnegative(comparator_loss=comparator_loss, path_measure=path_measure)
    _check_positive(eta=eta, U=U)
    if (lambdas is None) != (iterates is None):
        raise ValueError("Give both lambdas and iterates for the lambda-convex bound "
                         "(13)/(17), or neither for (12)/(16).")
    comparator = _points(comparator, "comparator")
    points = [_points(end, "end", comparator.shape),
              _points(start, "start", comparator.shape)]
    if lambdas is not None:
        lambdas, iterates = _trajectory(lambdas, iterates, comparator.shape)
        points += iterates
    dist = np.array([distance(comparator, w, geometry=geometry, U=U)
                     for w in points])
    if np.any(dist[1:] > _geometry(geometry).convexity_radius(U)):
        warnings.warn(
            "The comparator is more than a quarter of a great circle (pi U / 2) from "
            "the start or an iterate: beyond it D(w*, .) is not convex, and a loss "
            "that w* fits can trap the run in another minimum, where (12) fails. "
            "KMWW Theorem 6 assumes each loss convex along the geodesic from w_t to "
            "w*; the value returned is no guarantee unless that holds.", UserWarning,
            stacklevel=3)
    with np.errstate(all="ignore"):  # (reported by _representable)
        D = 0.5 * dist**2  # eq. (8)
        bound = (comparator_loss + (D[1] - D[0]) / eta + sign * path_measure / eta
                 - (0.0 if lambdas is None else 2.0 * float(lambdas @ D[2:])))
    # (The bound may be negative: no underflow to tell.)
    return _representable(f"KMWW Theorem {6 if sign > 0 else 8}", "loss bound",
                          bound, False)


def kmww_theorem6(comparator_loss, comparator, start, end, path_measure, eta, *,
                  geometry="euclidean", U=1.0, lambdas=None, iterates=None):
    """Right-hand side of KMWW Theorem 6, (12) or (13): the explicit rule (10).

    On a complete manifold of non-negative sectional curvature (Euclidean space,
    the sphere, the simplex with the Fisher metric), for every comparator w* such
    that each loss L_t is convex along the geodesic from w_t to w*,

        sum_t L_t(w_t) <= sum_t L_t(w*) + (D(w*, w_0) - D(w*, w_k)) / eta
                          + (1 / eta) sum_t D(w_t, w_{t+1})                   (12)

    with D = dist^2 / 2 (eq. 8). If L_t is lambda_t-convex along that geodesic,
    ``- 2 sum_t lambda_t D(w_t, w*)`` may be added (13). The algorithms: the
    explicit ``psi="sphere"`` and ``psi="simplex"`` (geodesic steps), gradient
    descent (``psi="identity"``, explicit or natural: Euclidean in theta), and
    ``update="natural"`` of any psi (Euclidean in theta, where its steps are
    gradient steps of theta -> L_t(psi(theta)), KMWW §6); not the explicit GA
    update of another psi, which is no geodesic step (for it, KW01 Theorem 3:
    :func:`theorem3_bound`).

    The function evaluates the right-hand side; it cannot see the losses, so
    convexity along the geodesics is the caller's to ensure. On the sphere it
    warns when w* is more than pi U / 2 from the start or an iterate, where a
    loss that w* fits may trap the run in another minimum and (12) fail.

    Parameters
    ----------
    comparator_loss : float
        sum_t L_t(w*): the comparator's matching loss on the trials.
    comparator, start, end : array-like of shape (n_features,) or (k, n_features)
        w*, w_0 and w_k: weights on the sphere or the simplex, parameters theta
        for ``"euclidean"`` (see :func:`distance`).
    path_measure : float
        sum_t D(w_t, w_{t+1}) over the k trials, half the summed squared step
        lengths (``path_measure_`` of the estimators).
    eta : float
        The learning rate of the run, > 0.
    geometry : {"euclidean", "sphere", "simplex"}, default="euclidean"
        The manifold (:func:`distance`).
    U : float, default=1.0
        Radius of the sphere.
    lambdas : array-like of shape (k,), default=None
        lambda_t: L_t - lambda_t s^2 is convex along the unit-speed geodesic from
        w_t to w* (negative values are allowed). Give with ``iterates`` for (13).
    iterates : array-like of shape (k, ...) of points, default=None
        w_0, ..., w_{k-1}, for D(w_t, w*) in (13).

    Returns
    -------
    bound : float
        The right-hand side of (12), or of (13) with ``lambdas``.

    Warns
    -----
    UserWarning
        On the sphere, when w* is farther than pi U / 2 from the start or an
        iterate.

    References
    ----------
    KMWW Theorem 6, eqs. (8), (10), (12), (13); Example 4 (its lambda_t for the
    square loss).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ga.theory import kmww_theorem6
    >>> kmww_theorem6(1.0, [3.0, 4.0], [0.0, 0.0], [3.0, 3.0], 2.0, eta=0.5)
    29.0
    >>> quarter = [np.sqrt(2.0), np.sqrt(2.0)]  # pi / 4 from the comparator (2, 0)
    >>> round(kmww_theorem6(1.0, [2.0, 0.0], quarter, [2.0, 0.0], 0.1, eta=0.5,
    ...                     geometry="sphere", U=2.0), 4)
    3.6674
    """
    _geometry(geometry)
    return _geometric_bound(comparator_loss, comparator, start, end, path_measure,
                            eta, 1.0, geometry, U, lambdas, iterates)


def kmww_theorem8(comparator_loss, comparator, start, end, path_measure, eta, *,
                  lambdas=None, iterates=None):
    """Right-hand side of KMWW Theorem 8, (16) or (17): the implicit rule (9).

    On a complete manifold of non-positive sectional curvature (here Euclidean
    space: ``update="implicit"`` with ``psi="identity"``, whose step
    theta - eta grad L_t(theta_{t+1}) is rule (9)), for every w* and convex L_t,

        sum_t L_t(w_{t+1}) <= sum_t L_t(w*) + (D(w*, w_0) - D(w*, w_k)) / eta
                              - (1 / eta) sum_t D(w_t, w_{t+1}),              (16)

    and ``- 2 sum_t lambda_t D(w_{t+1}, w*)`` may be added where L_t is
    lambda_t-convex along the geodesic from w_{t+1} to w* (17).

    The left side is the loss of each trial *after* its update (Loss(A+) of
    Example 5), not the on-line loss ``cumulative_loss_``: the paper prints
    L_t(w_t), but the last step of its proof replaces L_t(w_{t+1}) by the larger
    L_t(w_t) (Proposition 9), and on real runs the on-line loss exceeds (16). The
    paper also prints D(w_t, w*) in (17), where its proof sums D(w_{t+1}, w*),
    used here. The implicit update of another psi solves KW01 eq. (22), not rule
    (9) in the geometry of theta, and is not covered.

    Parameters
    ----------
    comparator_loss : float
        sum_t L_t(w*).
    comparator, start, end : array-like of shape (n_features,) or (k, n_features)
        w*, w_0 and w_k (parameters ``theta_``).
    path_measure : float
        sum_t D(w_t, w_{t+1}) (``path_measure_``): it *lowers* the bound, so it
        must not be over-estimated.
    eta : float
        The learning rate, > 0.
    lambdas : array-like of shape (k,), default=None
        lambda_t of (17); give with ``iterates``.
    iterates : array-like of shape (k, ...) of points, default=None
        w_1, ..., w_k, for D(w_{t+1}, w*) in (17).

    Returns
    -------
    bound : float
        The right-hand side of (16), or of (17) with ``lambdas``.

    References
    ----------
    KMWW Theorem 8, eqs. (9), (16), (17); Example 5.

    Examples
    --------
    >>> from sklearn_ga.theory import kmww_theorem8
    >>> kmww_theorem8(1.0, [3.0, 4.0], [0.0, 0.0], [3.0, 3.0], 2.0, eta=0.5)
    21.0
    """
    return _geometric_bound(comparator_loss, comparator, start, end, path_measure,
                            eta, -1.0, "euclidean", 1.0, lambdas, iterates)


def _example_guarantee(source, n_trials, comparator_loss, rate_and_bound):
    """A KMWW example's (eta, bound) from ``rate_and_bound(sqrt(n_trials))``."""
    if not (isinstance(n_trials, Integral) and n_trials >= 1):
        raise ValueError(f"n_trials must be an integer >= 1; got {n_trials!r}.")
    _check_nonnegative(comparator_loss=comparator_loss)
    with np.errstate(all="ignore"):  # (reported by _guarantee)
        eta, bound = rate_and_bound(np.sqrt(np.float64(n_trials)))
        return _guarantee(source, eta, comparator_loss + bound, eta_positive=True,
                          bound_positive=True)


def kmww_example6(R2, Z, U, n_trials, comparator_loss=0.0):
    """KMWW Examples 4 and 6 (gradient descent): rate U / (R2 Z sqrt(k)) and bound.

    With R2 >= max_t ||x_t||_2, Z >= max_t abs(L'_t(w_t)) (:func:`loss_slope_bound`)
    and U >= ||w* - w_0||_2, Theorem 6 gives ``Loss(GD) - Loss(w*) <= U^2 / (2 eta)
    + eta k Z^2 R2^2 / 2``, least at eta = U / (R2 Z sqrt(k)), where it is
    R2 Z U sqrt(k). For a convex loss of w.x: every matching loss.

    Parameters
    ----------
    R2 : float
        Bound on the 2-norms of the inputs (with an intercept, on those of (x, 1)).
    Z : float
        Bound on the slope of the loss in the activation along the run.
    U : float
        Bound on the distance of the comparator from the start (``||w*||_2`` from
        the estimators' zero start).
    n_trials : int
        k, the number of trials.
    comparator_loss : float, default=0.0
        Loss(w*), added to the bound.

    Returns
    -------
    guarantee : Guarantee
        ``(eta, bound)`` with bound ``comparator_loss + R2 Z U sqrt(k)``.

    References
    ----------
    KMWW Example 6 (and Example 4 for the square loss), Theorem 6 eq. (12).

    Examples
    --------
    >>> from sklearn_ga.theory import kmww_example6
    >>> kmww_example6(R2=2.0, Z=1.0, U=3.0, n_trials=100)
    Guarantee(eta=0.15, bound=60.0)
    """
    _check_positive(R2=R2, Z=Z, U=U)
    return _example_guarantee("KMWW Example 6", n_trials, comparator_loss, lambda r: (
        U / (R2 * Z * r), R2 * Z * U * r))


def kmww_example7(R_inf, Z, U, n_trials, comparator_loss=0.0):
    """KMWW Example 7 (natural EG): rate 1 / (Z R_inf sqrt(k)) and bound.

    The natural EG (``psi="exp", update="natural"``) updates ln w by
    -eta L'_t x_t w_t (eq. 22), so its step has length at most eta Z R_inf U with
    R_inf >= max_t ||x_t||_inf, Z >= max_t abs(L'_t(w_t)) and U >= max_t ||w_t||_2.
    With U also >= dist(w_0, w*) = ||ln w* - ln w_0||_2 (the paper bounds both by
    U), Theorem 6 gives the rate 1 / (Z R_inf sqrt(k)) and
    ``Loss(EG) - Loss(w*) <= R_inf Z U^2 sqrt(k)``. Since w_0 = (1, ..., 1),
    U >= sqrt(n_features). The losses must be convex along the lines of ln w:
    L_t(w) = l(w.x) is where l'(w.x) x_i >= 0 for every i (its Hessian in ln w
    is l'' (x w)(x w)^T + l' diag(x w)).

    Parameters
    ----------
    R_inf : float
        Bound on the infinity-norms of the inputs.
    Z : float
        Bound on the slope of the loss in the activation along the run.
    U : float
        Bound on the 2-norms of the weights along the run and on the distance of
        ln w* from ln w_0.
    n_trials : int
        k, the number of trials.
    comparator_loss : float, default=0.0
        Loss(w*), added to the bound.

    Returns
    -------
    guarantee : Guarantee
        ``(eta, bound)`` with bound ``comparator_loss + R_inf Z U^2 sqrt(k)``.

    References
    ----------
    KMWW Example 7, eq. (22), Theorem 6 eq. (12).

    Examples
    --------
    >>> from sklearn_ga.theory import kmww_example7
    >>> kmww_example7(R_inf=1.0, Z=1.0, U=2.0, n_trials=100)
    Guarantee(eta=0.1, bound=40.0)
    """
    _check_positive(R_inf=R_inf, Z=Z, U=U)
    return _example_guarantee("KMWW Example 7", n_trials, comparator_loss, lambda r: (
        1.0 / (Z * R_inf * r), R_inf * Z * np.float64(U) ** 2 * r))
