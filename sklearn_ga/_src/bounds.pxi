# The two per-trial quantities of the rates that every path asks for: the row bound
# x^T Dpsi x of KW01 eq. (28) (psi.pxi's _row_bound, times the growth factor below)
# and the factor 1 / t^power_t of learning_rate="invscaling". Each is computed by
# these functions once, for the rate objects of _rates.py (a batch's rows) and for
# the one-row calls alike, so that the paths agree to the bit on any CPU (NumPy's
# vectorised power and sums round otherwise on some).


cdef inline double _schedule_factor(double trial, double power_t) noexcept nogil:
    """1 / trial^power_t: the invscaling factor of the trial-th trial (from 1)."""
    return pow(trial, -power_t)


cdef inline double _target_growth(const double* y, Py_ssize_t k, Py_ssize_t stride,
                                  double growth) noexcept nogil:
    """max(|y|, 1)^growth: the row bound's factor for the psi of growing weights
    (the default rate's rule for EGU and Burg; ``TheoryRates``); 1 for the others
    (growth 0)."""
    cdef Py_ssize_t j
    cdef double largest = 1.0
    if growth == 0.0:
        return 1.0
    for j in range(k):
        largest = fmax(largest, fabs(y[j * stride]))
    return pow(largest, growth)


def invscaling_factors(Py_ssize_t t, Py_ssize_t count, double power_t):
    """The factors 1 / trial^power_t of trials t + 1 ... t + count, a new array."""
    import numpy as np

    out = np.empty(count)
    cdef double[::1] factors = out
    cdef Py_ssize_t i
    for i in range(count):
        factors[i] = _schedule_factor(<double>(t + i + 1), power_t)
    return out


def invscaling_factor(Py_ssize_t trial, double power_t):
    """The factor of one trial (from 1): an entry of :func:`invscaling_factors`."""
    return _schedule_factor(<double>trial, power_t)


def dense_row_bounds(const double[:, :] X, const double[:, :] Y, int psi, double U,
                     double p, double growth):
    """The row bound of each row of X (targets Y, for ``growth``), a new array."""
    import numpy as np

    cdef Py_ssize_t i, q, m = X.shape[0], n = X.shape[1]
    out = np.empty(m)
    cdef double[::1] bounds = out
    cdef double[::1] row = np.empty(max(n, 1))
    cdef bint contiguous = n <= 1 or X.strides[1] == sizeof(double)
    cdef const double* x
    with nogil:
        for i in range(m):
            if contiguous:
                x = &X[i, 0] if n else NULL
            else:
                for q in range(n):
                    row[q] = X[i, q]
                x = &row[0]
            bounds[i] = _row_bound(psi, U, p, x, n, n) * _target_growth(
                &Y[i, 0], Y.shape[1], Y.strides[1] // sizeof(double), growth)
    return out


def csr_row_bounds(const floating[::1] data, const int64_t[::1] indptr, Py_ssize_t n,
                   const double[:, :] Y, int psi, double U, double p, double growth):
    """:func:`dense_row_bounds` of the CSR rows of ``data`` (float64, or float32:
    each row converted first, into a row of scratch) and ``indptr``."""
    import numpy as np

    cdef Py_ssize_t i, q, m = indptr.shape[0] - 1, longest = 1
    out = np.empty(m)
    cdef double[::1] bounds = out
    cdef double[::1] row
    cdef const double* x
    if floating is float:
        for i in range(m):
            longest = max(longest, indptr[i + 1] - indptr[i])
        row = np.empty(longest)
    with nogil:
        for i in range(m):
            x = NULL
            if indptr[i + 1] > indptr[i]:
                if floating is double:
                    x = &data[indptr[i]]
                else:
                    _float64_row(&data[indptr[i]], &row[0], indptr[i + 1] - indptr[i])
                    x = &row[0]
            bounds[i] = _row_bound(
                psi, U, p, x, indptr[i + 1] - indptr[i], n) * _target_growth(
                    &Y[i, 0], Y.shape[1], Y.strides[1] // sizeof(double), growth)
    return out
