"""KMWW's distances and the slope bound Z, re-exported by :mod:`sklearn_ga.theory`.

:func:`distance` is the Riemannian distance of each geometry the estimators run in
(Euclidean, the sphere, the simplex with the Fisher metric); the bounds of KMWW
Theorems 6 and 8 measure with D = dist^2 / 2 (their eq. 8). :func:`loss_slope_bound`
is the Z of their Examples 6 and 7.
"""

from collections.abc import Callable
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np

from ._psi import _unit_rows
from .losses import _as_finite_array, _as_parameters, _phi_entry

# Membership of the sphere and the simplex is checked to this relative accuracy.
MANIFOLD_RTOL = 1e-8


def _unit_angles(u, v):
    """Angle between the unit rows of u and v, accurate near 0 and near pi."""
    return 2.0 * np.arctan2(np.linalg.norm(u - v, axis=-1),
                            np.linalg.norm(u + v, axis=-1))


def _on_sphere(w, radius, name, where):
    """The rows of w as unit vectors, after checking that their norms are radius."""
    _, r = _unit_rows(w)  # (no overflow at any scale)
    norms = np.linalg.norm(r, axis=-1) * np.max(np.abs(w), axis=-1)
    if not np.all(np.abs(norms - radius) <= MANIFOLD_RTOL * radius):
        raise ValueError(f"{name} is not on {where}: its rows have norms "
                         f"{np.round(norms, 10).tolist()}. Pass weights (coef_), not "
                         "parameters, with the U of the model.")
    return r / np.linalg.norm(r, axis=-1, keepdims=True)


def _euclidean_rows(w_tilde, w, U):
    s, _ = _unit_rows(np.maximum(np.abs(w_tilde), np.abs(w)))  # (no overflow)
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
