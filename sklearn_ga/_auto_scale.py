"""``U="auto"``: the scale U of a psi whose weights U bounds, chosen from the first
rows of the data (the norm of a light ridge fit of the activations of the targets).
"""

import numpy as np
import scipy.sparse as sp

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
        return 1.0
    with np.errstate(all="ignore"):  # (an overflow gives U = 1; the call reports it)
        return _ridge_scale(X, Y, phi, fit_intercept, order)


def _ridge_scale(X, Y, phi, fit_intercept, order):
    """:func:`auto_scale` of a psi whose U bounds the ``order``-norm."""
    Z = _activation_targets(phi, Y[:SCALE_ROWS])
    if sp.issparse(X):  # (a view of the first rows: nothing copied)
        end = X.indptr[Z.shape[0]]
        X = sp.csr_matrix((X.data[:end], X.indices[:end], X.indptr[:Z.shape[0] + 1]),
                          shape=(Z.shape[0], X.shape[1]), copy=False)
    else:
        X = X[:SCALE_ROWS]
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
