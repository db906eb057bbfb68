"""``U="auto"``: the scale U of a psi whose weights U bounds, chosen from the first
rows of the data (the norm of a light ridge fit of the activations of the targets),
and for a psi whose weights lie in a fixed set (nonnegative, or on the simplex) a
warning where such weights cannot fit the data.
"""

import os
import sys
import warnings

import numpy as np
import scipy.sparse as sp
import sklearn.base
from scipy.optimize import nnls

from ._phi import PHI
from ._psi import PSI

# U="auto" reads the first SCALE_ROWS rows of the first batch, with a ridge penalty
# of SCALE_RIDGE times the mean squared norm of a (centred) column.
SCALE_ROWS = 1000
SCALE_RIDGE = 0.01
SCALE_BLOCK = 128  # (rows made dense at a time)
# The activation that stands for a target at an end of a bounded phi's range
# (phi^-1 is infinite there): a label 1 of phi="logistic" is a logit of 4.
SCALE_EDGE = 4.0
# The check of a psi of nonnegative weights reads data of at most RANGE_COLUMNS
# columns, and warns where the best such weights explain less than RANGE_SHARE of
# what a ridge fit explains (held-out R^2; see range_check).
RANGE_COLUMNS = 256
RANGE_SHARE = 0.5


def auto_scale(psi, phi, X, Y, fit_intercept):
    """``U_`` for ``U="auto"``: the largest ``scale_norm`` of a row of a ridge fit
    of the activations of the targets on the first ``SCALE_ROWS`` rows of X (a
    comparator of the size the data need: U bounds the comparator in HKW's
    Theorem 2); 1.0 where psi ignores U or the rows fit nothing.

    The activations are phi^-1(Y), with +-SCALE_EDGE at the ends of a bounded
    range (labels). The fit is centred with an intercept; it solves the n x n
    normal equations, or their m x m dual (X^T (X X^T + lambda I)^-1 Z, the
    kernel centred) when the rows are fewer than the features, so that a CSR X
    of many columns stays sparse.
    """
    order = PSI[psi].scale_norm
    if order is None:
        with np.errstate(all="ignore"):
            range_check(psi, phi, X, Y, fit_intercept)
        return 1.0
    with np.errstate(all="ignore"):  # (an overflow gives U = 1; the call reports it)
        return _ridge_scale(X, Y, phi, fit_intercept, order)


def _ridge_scale(X, Y, phi, fit_intercept, order):
    """:func:`auto_scale` of a psi whose U bounds the ``order``-norm."""
    Z = _activation_targets(phi, Y[:SCALE_ROWS])
    # The first rows, in float64 (a float32 X's too: U is then the float64 copy's).
    if sp.issparse(X):  # (a view of the first rows: only float32 values copied)
        end = X.indptr[Z.shape[0]]
        X = sp.csr_matrix((X.data[:end].astype(np.float64, copy=False),
                           X.indices[:end], X.indptr[:Z.shape[0] + 1]),
                          shape=(Z.shape[0], X.shape[1]), copy=False)
    else:
        X = X[:SCALE_ROWS].astype(np.float64, copy=False)
    m, n = X.shape
    if fit_intercept:
        Z = Z - Z.mean(axis=0)
    if n <= m:  # (X^T X - m mu mu^T, summed over blocks of rows made dense)
        gram, right, mean = np.zeros((n, n)), np.zeros((n, Z.shape[1])), np.zeros(n)
        for start in range(0, m, SCALE_BLOCK):
            D = X[start:start + SCALE_BLOCK]
            D = D.toarray() if sp.issparse(D) else D
            gram += D.T @ D
            right += D.T @ Z[start:start + SCALE_BLOCK]
            mean += D.sum(axis=0) / m
        if fit_intercept:  # (Z is centred: X^T Z = X_c^T Z)
            gram -= m * np.outer(mean, mean)
    else:
        gram = np.asarray((X @ X.T).todense() if sp.issparse(X) else X @ X.T)
        if fit_intercept:  # (H K H, H = I - 1 1^T / m: the kernel of centred rows)
            gram = (gram - gram.mean(axis=0) - gram.mean(axis=1)[:, None]
                    + gram.mean())
        right = Z
    ridge = SCALE_RIDGE * np.trace(gram) / n
    if not (np.isfinite(ridge) and ridge > 0):
        return 1.0
    try:  # (X is checked for NaN by the trial loop, which reports it)
        W = np.linalg.solve(gram + ridge * np.eye(gram.shape[0]), right)
    except np.linalg.LinAlgError:
        return 1.0
    if n > m:  # (sum_i alpha_i = 0 with centring: X_c^T alpha = X^T alpha)
        W = np.asarray(X.T @ W)
    scale = float(np.max(np.linalg.norm(W, ord=order, axis=0)))
    return scale if np.isfinite(scale) and scale > 0 else 1.0


def _activation_targets(phi, Y):
    """phi^-1(Y), +-SCALE_EDGE where it is infinite (sign: the labels +-1)."""
    entry = PHI[phi]
    if entry.inverse is None:
        return np.array(Y, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        Z = entry.inverse(np.array(Y, dtype=np.float64))
    return np.nan_to_num(Z, nan=0.0, posinf=SCALE_EDGE, neginf=-SCALE_EDGE)


def _weight_set(entry):
    """"unit sum" or "nonnegative" for a psi whose weights lie in a set that no U
    scales (constrained, with no scale: EG's and the geodesic simplex's weights sum
    to 1, EGU's and Burg's are positive); None for the others."""
    if not entry.constrained or entry.scale_norm is not None:
        return None
    probe = entry.weights(entry.start + np.array([[-0.5, 0.0, 0.5]]), 1.0, 2.0)
    return "unit sum" if np.isclose(probe.sum(), 1.0) else "nonnegative"


def range_check(psi, phi, X, Y, fit_intercept):
    """Warn if the weights that psi can learn fit the first rows far worse than
    weights of any sign: the best of them (nonnegative least squares; on the
    simplex, with their sum held at 1 by a heavy extra row) explains less than
    ``RANGE_SHARE`` of what the ridge fit of :func:`auto_scale` explains, each
    fitted on the even rows of the first ``SCALE_ROWS`` and scored (R^2 of the
    activations phi^-1(Y)) on the odd ones. Nothing is checked for X of more than
    ``RANGE_COLUMNS`` columns or fewer than 20 rows, and for nonnegative weights
    under a phi of rows (softmax), whose predictions do not change when the same
    vector is added to every class's weights."""
    entry = PSI[psi]
    kind = _weight_set(entry)
    m = min(X.shape[0], SCALE_ROWS)
    if (kind is None or (kind == "nonnegative" and PHI[phi].rowwise)
            or X.shape[1] > RANGE_COLUMNS or m < 20):
        return
    D = (X[:m].toarray() if sp.issparse(X) else X[:m]).astype(np.float64, copy=False)
    Z = _activation_targets(phi, Y[:m])
    if not (np.all(np.isfinite(D)) and np.all(np.isfinite(Z))):
        return  # (the trial loop reports what is not finite)
    fit, held = (D[0::2], Z[0::2]), (D[1::2], Z[1::2])
    if fit_intercept:  # (centred at the fitted rows' means: the intercept's part)
        means = fit[0].mean(axis=0), fit[1].mean(axis=0)
        fit = fit[0] - means[0], fit[1] - means[1]
        held = held[0] - means[0], held[1] - means[1]
    A, n = fit[0], D.shape[1]
    gram = A.T @ A
    ridge = SCALE_RIDGE * np.trace(gram) / n
    total = np.sum(held[1] ** 2)
    if not (ridge > 0 and total > 0):
        return
    free = np.linalg.solve(gram + ridge * np.eye(n), A.T @ fit[1])
    if kind == "unit sum":  # (a row that weighs the sum as much as all the rows)
        heavy = np.sqrt(np.sum(A**2))
        A = np.vstack([A, np.full((1, n), heavy)])
    bounded = np.column_stack([
        nnls(A, np.append(z, heavy) if kind == "unit sum" else z)[0]
        for z in fit[1].T])
    explained = [1.0 - np.sum((held[0] @ W - held[1]) ** 2) / total
                 for W in (free, bounded)]
    if explained[0] > 0.1 and explained[1] < RANGE_SHARE * explained[0]:
        warnings.warn(
            f"psi={psi!r} learns weights {entry.weight_range}, and on the first "
            f"rows the best such weights predict the activations of the targets "
            f"far worse than weights of any sign (held-out R^2 {explained[1]:.2f}, "
            f"against {explained[0]:.2f} for a ridge fit): expect a poor model. "
            "psi='eg_pm' (EG±, HKW §III) learns weights of both signs with the "
            "same exponentiated update; 'identity' is gradient descent.",
            UserWarning, stacklevel=_outside_level())


def _outside_level():
    """The stacklevel of the user's call of fit or partial_fit: the first caller
    outside the package and scikit-learn's wrapper of fit (``_fit_context``)."""
    inside = os.path.dirname(__file__), sklearn.base.__file__
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(inside):
        frame, level = frame.f_back, level + 1
    return level
