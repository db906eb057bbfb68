"""``U="auto"``: the scale U of a psi whose weights U bounds, chosen from the first
rows of the data (the norm of a light ridge fit of the activations of the targets;
for the sphere, whose weights have the norm U, of the ridge fit that generalized
cross-validation chooses), and for a psi whose weights lie in a fixed set
(nonnegative, or on the simplex) a warning where such weights cannot fit the data.
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
# A fit that chooses its penalty (the sphere's radius, range_check's weights of any
# sign) tries these multiples of a centred column's mean squared norm and keeps the
# one of least generalized cross-validation error (_ridge_penalty).
CHOSEN_RIDGES = 10.0 ** np.arange(-4.0, 2.25, 0.5)
# Where the fit takes the dual of more than CHOSEN_ROWS rows (wide rows), the
# penalty is chosen on its first CHOSEN_ROWS rows: the eigendecomposition that GCV
# takes costs the cube of their number, many times the fit's own solve.
CHOSEN_ROWS = 256
# The check of a psi of nonnegative weights reads data of at most RANGE_COLUMNS
# columns, and warns where, for some output, the best such weights explain
# RANGE_GAP less than weights of any sign (held-out R^2; see range_check): the
# margin of R^2 that benchmarks/bench_defaults.py allows a default below SGD's.
RANGE_COLUMNS = 256
RANGE_GAP = 0.03
# Below RANGE_MIN_ROWS rows the check scores each row by the fit of the others,
# and below RANGE_FEW_ROWS it reads nothing.
RANGE_MIN_ROWS = 20
RANGE_FEW_ROWS = 8
RANGE_RADII = (1.0, 0.5, 0.25)
# U="auto" of a psi whose weights have the norm U (the sphere) warns where an
# output's ridge fit has a norm below RADIUS_SPREAD times the largest (U_).
RADIUS_SPREAD = 0.5


def auto_scale(psi, phi, X, Y, fit_intercept):
    """``U_`` for ``U="auto"``: the largest ``scale_norm`` of a row of a ridge fit
    of the activations of the targets on the first ``SCALE_ROWS`` rows of X (a
    comparator of the size the data need: U bounds the comparator in HKW's
    Theorem 2); 1.0 where psi ignores U or the rows fit nothing. For a psi of
    ``scale_fixed`` (the sphere, whose weights have the norm U) the penalty is
    chosen by cross-validation (:func:`_ridge_penalty`): a radius above the
    norm of the weights that predict best puts the excess on directions of
    noise (the sparse target: 0.738 with the light penalty's radius, 0.761);
    it warns where the outputs need norms far apart.

    The activations are phi^-1(Y), with +-SCALE_EDGE at the ends of a bounded
    range (labels). The fit is centred with an intercept; it solves the n x n
    normal equations, or their m x m dual (X^T (X X^T + lambda I)^-1 Z, the
    kernel centred) when the rows are fewer than the features, so that a CSR X
    of many columns stays sparse.
    """
    entry = PSI[psi]
    if entry.scale_norm is None:
        with np.errstate(all="ignore"):
            range_check(psi, phi, X, Y, fit_intercept)
        return 1.0
    with np.errstate(all="ignore"):  # (an overflow gives U = 1; the call reports it)
        norms = _ridge_norms(X, Y, phi, fit_intercept, entry.scale_norm,
                             entry.scale_fixed)
    if norms is None or not (np.all(np.isfinite(norms)) and np.max(norms) > 0):
        return 1.0
    if entry.scale_fixed and np.min(norms) < RADIUS_SPREAD * np.max(norms):
        warnings.warn(
            f"psi={psi!r} keeps every output's weights at one norm U, and on the "
            f"first rows the outputs' ridge fits have norms from "
            f"{np.min(norms):.3g} to {np.max(norms):.3g}: with U_ the largest, "
            "expect a poor model of the outputs of smaller norm. Fit one model per "
            "output (sklearn.multioutput.MultiOutputRegressor), each choosing its "
            "U, or use psi='identity' (gradient descent).",
            UserWarning, stacklevel=_outside_level())
    return float(np.max(norms))


def _ridge_norms(X, Y, phi, fit_intercept, order, chosen):
    """The ``order``-norm of each output's weights in the ridge fit of
    :func:`auto_scale` (``chosen``: with the penalty that :func:`_ridge_penalty`
    chooses); None where there is no fit."""
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
    gram, right, centred = _normal_equations(X, Z, fit_intercept)
    try:  # (X is checked for NaN by the trial loop, which reports it)
        if chosen and n > m > CHOSEN_ROWS:  # (the penalty of a sample's fit)
            ridge = _ridge_penalty(*_normal_equations(X[:CHOSEN_ROWS],
                                                      Z[:CHOSEN_ROWS], fit_intercept),
                                   n, dual=n > CHOSEN_ROWS, chosen=True,
                                   intercept=fit_intercept)
        else:
            ridge = _ridge_penalty(gram, right, centred, n, dual=n > m,
                                   chosen=chosen, intercept=fit_intercept)
        if not (np.isfinite(ridge) and ridge > 0):
            return None
        W = np.linalg.solve(gram + ridge * np.eye(gram.shape[0]), right)
    except np.linalg.LinAlgError:
        return None
    if n > m:  # (sum_i alpha_i = 0 with centring: X_c^T alpha = X^T alpha)
        W = np.asarray(X.T @ W)
    return np.linalg.norm(W, ord=order, axis=0)


def _normal_equations(X, Z, fit_intercept):
    """``(gram, right, Z_c)`` of the centred ridge fit of Z (m x k) on X (m x n):
    the primal X_c^T X_c and X_c^T Z_c, or, with fewer rows than features, the
    dual's centred kernel X_c X_c^T and Z_c (Z_c: Z centred, with an intercept)."""
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
        return gram, right, Z
    gram = np.asarray((X @ X.T).todense() if sp.issparse(X) else X @ X.T)
    if fit_intercept:  # (H K H, H = I - 1 1^T / m: the kernel of centred rows)
        gram = gram - gram.mean(axis=0) - gram.mean(axis=1)[:, None] + gram.mean()
    return gram, Z, Z


def _ridge_penalty(gram, right, Z, n, dual, chosen, intercept):
    """The penalty lambda of the centred ridge fit of Z (m x k) with normal
    equations ``(gram + lambda I) W = right`` (primal: gram = X_c^T X_c, right =
    X_c^T Z; ``dual``: the centred kernel X_c X_c^T and Z): ``SCALE_RIDGE`` times
    a centred column's mean squared norm (trace / n, n features), or, ``chosen``,
    the multiple of it in ``CHOSEN_RIDGES`` of least generalized cross-validation
    error ||(I - H) Z||^2 / (m - tr H)^2 (Golub, Heath and Wahba, Technometrics
    1979), H the hat matrix (with ``intercept``, that of the intercept too: its
    trace one more than the centred fit's, which fewer rows than features
    would otherwise let interpolate at m - tr H = 1), whose terms follow from
    gram's eigenvalues s and the components p of Z on its eigenvectors (in
    rows' space): the part of ||Z||^2 outside them, plus sum_j p_j^2
    (lambda / (s_j + lambda))^2."""
    if not chosen:
        return SCALE_RIDGE * np.trace(gram) / n
    unit = np.trace(gram) / n
    s, vectors = np.linalg.eigh(gram)
    s = np.maximum(s, 0.0)
    proj = vectors.T @ right
    if not dual:  # (X_c^T Z's components are sqrt(s_j) p_j)
        kept = s > s[-1] * np.finfo(float).eps * gram.shape[0]
        proj = (np.where(kept[:, None], proj, 0.0)
                / np.sqrt(np.where(kept, s, 1.0))[:, None])
    power = np.sum(proj**2, axis=1)
    ridges = CHOSEN_RIDGES * unit
    shrink = ridges[:, None] / (s + ridges[:, None])
    residual = np.sum(Z**2) - power.sum() + (shrink**2) @ power
    error = residual / (Z.shape[0] - intercept - np.sum(1.0 - shrink, axis=1)) ** 2
    return float(ridges[np.argmin(error)])


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


def _nonnegative_fit(A, Z, sums=None, ridge=0.0):
    """The nonnegative least-squares weights of each column of Z on A (n x k):
    with ``sums``, each column's weights summing to its entry, held there by an
    extra row that weighs the sum as much as all the rows; with ``ridge``, the
    penalty ridge ||w||^2 (as rows sqrt(ridge) I of targets 0)."""
    if ridge > 0:
        A = np.vstack([A, np.sqrt(ridge) * np.eye(A.shape[1])])
        Z = np.vstack([Z, np.zeros((A.shape[1], Z.shape[1]))])
    if sums is not None:
        heavy = np.sqrt(np.sum(A**2))
        A = np.vstack([A, np.full((1, A.shape[1]), heavy)])
    return np.column_stack([
        nnls(A, z if sums is None else np.append(z, heavy * total))[0]
        for z, total in zip(Z.T, np.zeros(Z.shape[1]) if sums is None else sums,
                            strict=True)])


def _candidates(kind, A, Z, intercept):
    """The weights that :func:`range_check` compares, fitted on the centred rows
    A (m x n) to Z: a list for weights of any sign and one for weights of the
    set ``kind`` (``intercept``: A and Z are centred for one); None where A is
    zero."""
    n = A.shape[1]
    gram, right = A.T @ A, A.T @ Z
    if not np.trace(gram) > 0:
        return None
    ridge = _ridge_penalty(gram, right, Z, n, dual=False, chosen=True,
                           intercept=intercept)
    free = np.linalg.solve(gram + ridge * np.eye(n), right)
    norms = np.sum(np.abs(free), axis=0)
    blank = np.zeros((A.shape[0], 1))  # (a column that takes what the ball leaves)
    # Each side regularized alike: a ridge fit (of the penalty GCV chooses) and
    # the best weights in l1 balls of RANGE_RADII times its l1 norm (EG±'s
    # comparators, HKW Theorem 2, which a sparse target needs where the rows are
    # few for the ridge fit): for weights of any sign, the nonnegative weights of
    # (x, -x, 0) of that sum; for nonnegative weights, those of (x, 0).
    free = [free] + [
        W[:n] - W[n:2 * n] for W in (
            _nonnegative_fit(np.hstack([A, -A, blank]), Z, radius * norms)
            for radius in RANGE_RADII)]
    if kind == "unit sum":
        return free, [_nonnegative_fit(A, Z, np.ones(Z.shape[1]))]
    return free, [_nonnegative_fit(A, Z, ridge=ridge)] + [
        _nonnegative_fit(np.hstack([A, blank]), Z, radius * norms)[:n]
        for radius in RANGE_RADII]


def range_check(psi, phi, X, Y, fit_intercept):
    """Warn if the weights that psi can learn fit the first rows worse than
    weights of any sign: for some output, the best of them explains
    ``RANGE_GAP`` less than the best weights of any sign, each fitted on the
    even rows of the first ``SCALE_ROWS`` and scored (R^2 of the activations
    phi^-1(Y)) on the odd ones, where weights of any sign explain more than 0.1;
    below ``RANGE_MIN_ROWS`` rows, each row scored by the fit of the others.
    The candidates of either side: a ridge fit (its penalty chosen as in
    :func:`_ridge_penalty`; nonnegative weights at the same penalty) and the
    best weights in l1 balls of ``RANGE_RADII`` times its l1 norm; on the
    simplex, the best weights summing to 1. The best of each side is chosen on
    the held-out rows (an optimistic reference, as the benchmarks' SGD grid is,
    for both alike). Nothing is checked for X of more than ``RANGE_COLUMNS``
    columns or fewer than ``RANGE_FEW_ROWS`` rows, and for nonnegative weights
    under a phi of rows (softmax), whose predictions do not change when the
    same vector is added to every class's weights."""
    entry = PSI[psi]
    kind = _weight_set(entry)
    m = min(X.shape[0], SCALE_ROWS)
    if (kind is None or (kind == "nonnegative" and PHI[phi].rowwise)
            or X.shape[1] > RANGE_COLUMNS or m < RANGE_FEW_ROWS):
        return
    D = (X[:m].toarray() if sp.issparse(X) else X[:m]).astype(np.float64, copy=False)
    Z = _activation_targets(phi, Y[:m])
    if not (np.all(np.isfinite(D)) and np.all(np.isfinite(Z))):
        return  # (the trial loop reports what is not finite)
    # Fitted on the even rows, scored on the odd ones; with fewer than
    # RANGE_MIN_ROWS, each row scored by the fit of the others (leave-one-out).
    rows = np.arange(m)
    splits = ([(rows[0::2], rows[1::2])] if m >= RANGE_MIN_ROWS
              else [(np.delete(rows, i), rows[i:i + 1]) for i in rows])
    errors, total = 0.0, 0.0
    for fitted, scored in splits:
        fit, held = (D[fitted], Z[fitted]), (D[scored], Z[scored])
        if fit_intercept:  # (centred at the fitted rows' means: the intercept's)
            means = fit[0].mean(axis=0), fit[1].mean(axis=0)
            fit = fit[0] - means[0], fit[1] - means[1]
            held = held[0] - means[0], held[1] - means[1]
        candidates = _candidates(kind, *fit, fit_intercept)
        if candidates is None:
            return
        errors = errors + np.array([np.sum((held[0] @ W - held[1]) ** 2, axis=0)
                                    for W in candidates[0] + candidates[1]])
        total = total + np.sum(held[1] ** 2, axis=0)
    total[total <= 0] = np.inf  # (an output constant on the scored rows: no gap)
    explained = 1.0 - errors / total
    free, bounded = explained[:len(candidates[0])], explained[len(candidates[0]):]
    free, bounded = np.max(free, axis=0), np.max(bounded, axis=0)
    gaps = np.where(free > 0.1, free - bounded, -np.inf)
    worst = int(np.argmax(gaps))
    if gaps[worst] > RANGE_GAP:
        output = f" of output {worst}" if gaps.shape[0] > 1 else ""
        warnings.warn(
            f"psi={psi!r} learns weights {entry.weight_range}, and on the first "
            f"rows the best such weights predict the activations of the "
            f"targets{output} worse than weights of any sign (held-out R^2 "
            f"{bounded[worst]:.2f}, against {free[worst]:.2f} for them): expect a "
            "poorer model than gradient descent's. "
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
