"""Norms and powers of rows at any scale: each row in units of its largest entry,
so that powers neither overflow nor all underflow (shared by pnorm, the sphere and
the row bounds)."""

import numpy as np
import scipy.sparse as sp


def unit_rows(theta):
    """theta = shift * r row by row, shift = max |theta| (1 for a zero row), so
    that powers of r (|r| <= 1, one entry 1) neither overflow nor all underflow."""
    shift = np.max(np.abs(theta), axis=-1, keepdims=True)
    shift = np.where(shift > 0, shift, 1.0)
    return shift, theta / shift


def pnorm_norms(theta, p):
    """||theta||_p of each row, at any scale of theta and any p."""
    shift, r = unit_rows(theta)
    return shift[..., 0] * np.sum(np.abs(r) ** p, axis=-1) ** (1 / p)


def row_norms(X, order):
    """||x||_order of each row (dense or CSR)."""
    if sp.issparse(X):
        X = abs(sp.csr_matrix(X))
        if order == np.inf or not X.nnz:
            return X.max(axis=1).toarray()[:, 0]
        # Each row in units of its largest entry, as in pnorm_norms.
        shift = X.max(axis=1).toarray()[:, 0]
        shift[shift == 0] = 1.0
        units = sp.csr_matrix((X.data / np.repeat(shift, np.diff(X.indptr)),
                               X.indices, X.indptr), shape=X.shape)
        powers = np.asarray(units.power(order).sum(axis=1))[:, 0]
        return shift * powers ** (1 / order)
    if order == np.inf:
        return np.maximum(X.max(axis=1), -X.min(axis=1))  # (no copy of |X|)
    return pnorm_norms(X, order)


def squared_norms(X):
    """||x||_2^2 of each row, summed directly so that integer inputs give exact
    values."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).reshape(-1)
    return np.einsum("ij,ij->i", X, X)


def spreads(X):
    """(max_i x_i - min_i x_i)^2 / 4 of each row; implicit zeros count in CSR
    (KW01 Example 5: the bound of EG and of the simplex's first-order step)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        full = np.diff(X.indptr) == X.shape[1]
        high = np.where(full, X.max(axis=1).toarray()[:, 0],
                        np.maximum(X.max(axis=1).toarray()[:, 0], 0))
        low = np.where(full, X.min(axis=1).toarray()[:, 0],
                       np.minimum(X.min(axis=1).toarray()[:, 0], 0))
    else:
        high, low = X.max(axis=1), X.min(axis=1)
    return (high - low) ** 2 / 4
