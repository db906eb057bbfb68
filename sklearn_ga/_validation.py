"""Fast paths of input validation, and the checks of a CSR matrix's structure.

An on-line learner is called on small batches, where scikit-learn's full
validation costs more than learning them: the common cases (a float ndarray or CSR
X, an ndarray y or sample weight) are checked here directly, and anything else goes
through ``validate_data``, with its errors and warnings. The compiled loop reads a
CSR matrix's indices without bounds checks, so their structure is checked here
first (see doc/developers/architecture.rst).
"""

import math

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import _check_n_features

from ._kernel import CsrStructure, csr_structure, float64_block

# The inputs that light_inputs checks itself.
LIGHT_TYPES = (np.ndarray, sp.csr_matrix, sp.csr_array)
# A dense float32 X that the trial loop reads is converted to float64 a block of
# rows at a time (float64_rows), of at most this many entries (1 MiB), or
# BLOCK_ROWS rows, or a BLOCK_SHARE of X's rows: a block stays in cache from its
# conversion to its trials, and is small beside X.
BLOCK_ENTRIES = 1 << 17
BLOCK_ROWS = 16
BLOCK_SHARE = 1 / 64


def light_inputs(estimator, X, float32=False):
    """X as ``validate_data(estimator, X, reset=False, accept_sparse="csr",
    dtype=np.float64)`` returns it, for the common on-line call: a float ndarray
    or CSR matrix to a model fitted without feature names (with ``float32``, a
    float32 ndarray or CSR matrix as it is, its rows read as float64 one at a time
    by the runs: ``TrialLoop.run_dense``, ``run_csr``). Anything else returns None
    and goes through ``validate_data``, with its errors and warnings. The caller
    checks the width (``_check_n_features``) and, if it needs to, finiteness.
    """
    if (type(X) not in LIGHT_TYPES or X.ndim != 2 or X.shape[0] == 0
            or X.shape[1] == 0 or X.dtype not in (np.float64, np.float32)
            or hasattr(estimator, "feature_names_in_")):
        return None
    return X if float32 else X.astype(np.float64, copy=False)


def float64_rows(X, order=None):
    """``(start, stop, block)`` for consecutive blocks of the rows ``order`` of the
    dense X (default: all, in order): block is ``X[order[start:stop]]`` as a
    C-contiguous float64 array of at most BLOCK_ENTRIES entries and a BLOCK_SHARE
    of X's rows (or BLOCK_ROWS rows), valid until the next block is drawn (the
    blocks share one array, so that no block costs an allocation). The values are
    those of a float64 copy of X, so that a pass reading the blocks learns what one
    reading the copy would."""
    m = X.shape[0] if order is None else order.shape[0]
    size = min(m, max(BLOCK_ROWS, min(BLOCK_ENTRIES // max(X.shape[1], 1),
                                      int(BLOCK_SHARE * X.shape[0]))))
    buffer = np.empty((size, X.shape[1]))
    for start in range(0, m, size):
        stop = min(m, start + size)
        block = buffer[:stop - start]
        if order is None:
            block[...] = X[start:stop]
        else:
            float64_block(X, order[start:stop], block)
        yield start, stop, block


def light_validation(estimator, X, y, float32=False):
    """``validate_data``'s checks of a batch for a fitted model, done cheaply
    for a float ndarray or CSR X (:func:`light_inputs`, with ``float32``) and an
    ndarray y of numbers (or of str labels, for a classifier), else None. X's
    finiteness is checked by the trial loop (see ``_passes.TrialRunner``).
    """
    target_validation = estimator._target_validation
    multi_output = target_validation.get("multi_output", False)
    # (A classifier's labels may be str; a regressor's targets are numbers.)
    kinds = "biuf" if target_validation.get("y_numeric") else "biufU"
    X = light_inputs(estimator, X, float32)
    if (X is None or type(y) is not np.ndarray or y.dtype.kind not in kinds
            or not (y.ndim == 1 or (multi_output and y.ndim == 2))
            or X.shape[0] != y.shape[0]
            or (y.dtype.kind == "f" and not np.isfinite(y).all())):
        return None
    _check_n_features(estimator, X, reset=False)
    return (X if sp.issparse(X) else np.ascontiguousarray(X)), y


def light_sample_weight(sample_weight, n):
    """``_check_sample_weight(..., ensure_non_negative=True)``'s result for an
    ndarray of n finite non-negative numbers, not all 0, without check_array;
    None for anything else, which goes through it (its errors)."""
    if (type(sample_weight) is not np.ndarray or sample_weight.shape != (n,)
            or sample_weight.dtype.kind not in "biuf"):
        return None
    weights = np.ascontiguousarray(sample_weight, dtype=np.float64)
    valid = np.all((weights >= 0.0) & (weights < np.inf)) and np.any(weights > 0.0)
    return weights if valid else None


def all_finite(A):
    """Whether every value of the float ndarray A is finite; read one by one when
    there are few of them (a one-row call's activations), where NumPy's reductions
    cost more than the values."""
    if A.size <= 16:
        return all(map(math.isfinite, A.ravel().tolist()))
    return bool(np.isfinite(A).all())


def surely_finite(X):
    """Whether the sum of X's values (ndarray or CSR) is finite, so that they all
    are. False may also mean finite values whose sum overflows: validate_data then
    tells. A CSR matrix's values are summed alone (its structure is unchecked)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.isfinite((X.data if sp.issparse(X) else X).sum())


def checked_structure(X):
    """The CsrStructure of X (CSR); ValueError if it cannot be read safely.

    The compiled loop and scipy's products read the structure without bounds
    checks; scipy's constructor checks less and its flags can be set by hand. One
    pass over the indices.
    """
    indices, indptr = index_arrays(X)
    structure = csr_structure(indices, indptr, X.data.shape[0], X.shape[1])
    if structure == CsrStructure.CSR_MALFORMED:
        raise ValueError(
            "X is a malformed CSR matrix: its indptr must start at 0, never decrease "
            "and end within indices and data, and its column indices must lie in "
            f"[0, {X.shape[1]}). Check it with X.check_format(full_check=True)."
        )
    return structure


def canonical_csr(X):
    """X (CSR) checked, and canonical (sorted, no duplicates): the loop's O(nnz)
    normalizer updates need each column at most once per row."""
    if checked_structure(X) == CsrStructure.CSR_UNSORTED:
        X = X.copy()
        X.has_canonical_format = False  # (a flag set by hand is not trusted)
        X.sum_duplicates()
    return X


def index_arrays(X):
    """A CSR matrix's indices and indptr, of one of the integer types the loop
    reads (int32, int64): its own arrays if they are, else both converted to int64
    (scipy holds any integer type); ValueError for indices that are no integers."""
    indices, indptr = X.indices, X.indptr
    if indices.dtype == indptr.dtype and indices.dtype in (np.int32, np.int64):
        # (The loop reads contiguous arrays; scipy holds views of any stride.)
        return np.ascontiguousarray(indices), np.ascontiguousarray(indptr)
    for name, array in (("indices", indices), ("indptr", indptr)):
        if array.dtype.kind not in "iu":
            raise ValueError(f"X is a CSR matrix whose {name} have dtype "
                             f"{array.dtype}; a CSR matrix's indices are integers.")
    return indices.astype(np.int64), indptr.astype(np.int64)


def loop_csr(X):
    """X (CSR) with contiguous arrays, and indices of a type the loop reads
    (:func:`index_arrays`): X itself if they are, else a matrix on the converted
    arrays, so that they are converted once per call, not once per pass."""
    indices, indptr = index_arrays(X)
    data = np.ascontiguousarray(X.data)
    if indices is X.indices and indptr is X.indptr and data is X.data:
        return X
    return type(X)((data, indices, indptr), shape=X.shape, copy=False)


class UnsortedRows(Exception):
    """A pass checking the rows of a CSR X (``TrialRunner``) met one whose indices
    do not strictly increase, in an X that is readable: fit sorts it and starts
    again."""
