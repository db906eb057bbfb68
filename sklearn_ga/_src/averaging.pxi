# Averaging (average=True, or a start): the sums of the weights after each averaged
# trial, kept in O(1) per changed coordinate (state.pxi, the fields avg*).


cdef inline double _average_term(State* s, Py_ssize_t j, Py_ssize_t c) noexcept nogil:
    """omega / scale_j of coordinate c of row j, also in a lazy EG+- run (its den
    is product / num there, not stored)."""
    if s.params.lazy and _two_terms(s.config.psi):
        return s.params.num[c] - s.params.product[j] / s.params.num[c]
    return _unscaled_weight(s, s.params.num[c], s.params.den[c])


cdef inline void _settle(State* s, Py_ssize_t j, Py_ssize_t c) noexcept nogil:
    """Add coordinate c's weights since it was last settled to its average sum:
    its term times the scales summed since. Before its term changes."""
    cdef double* pair = s.avg.acc + 2 * c
    cdef double total = s.avg.scales[j]
    pair[0] += _average_term(s, j, c) * (total - pair[1])
    pair[1] = total


cdef inline void _prefetch_averages(State* s, const index_t* x_ind,
                                   Py_ssize_t nnz) noexcept nogil:
    """Start loading the averages of a CSR row's coordinates, which the row's
    settle reads after its dot product: their cache misses overlap those of the
    dot product instead of following them."""
    cdef Py_ssize_t q, j
    for j in range(s.k):
        for q in range(nnz):
            __builtin_prefetch(s.avg.acc + 2 * (j * s.n + x_ind[q]))


cdef void _settle_columns(State* s, Py_ssize_t j, const index_t* x_ind,
                          Py_ssize_t nnz, bint dense) noexcept nogil:
    """Settle the coordinates of row j that a row's step changes (dense: all).

    The common case, a term that is the unscaled weight itself, in a loop of
    locals (-fno-strict-aliasing would reload the fields of s after every store).
    """
    cdef Py_ssize_t q, c, base = j * s.n
    cdef double total = s.avg.scales[j]
    cdef double* avg = s.avg.acc
    cdef const double* num = s.params.num
    if not _term_is_weight(s.config.psi):
        for q in range(nnz):
            _settle(s, j, base + (q if dense else x_ind[q]))
        return
    for q in range(nnz):  # (num is omega / scale)
        c = base + (q if dense else x_ind[q])
        avg[2 * c] += num[c] * (total - avg[2 * c + 1])
        avg[2 * c + 1] = total


cdef void _rebase_row(State* s, Py_ssize_t j) noexcept nogil:
    """Settle every coordinate of row j and restart its sum of scales from 0, O(n):
    before all its terms change (a recompute, a decay multiplied out), and now and
    then (REBASE_RATIO)."""
    cdef Py_ssize_t c, base = j * s.n
    _guard_rows(s)
    for c in range(base, base + s.n):
        _settle(s, j, c)
        s.avg.acc[2 * c + 1] = 0.0
    s.avg.scales[j] = s.avg.since[j] = 0.0


cdef void _average_trial(State* s) noexcept nogil:
    """Add the weights after the trial (scales) and its intercepts to the sums, if
    the trial is averaged."""
    cdef Py_ssize_t j
    if s.avg.acc == NULL or s.trial < s.avg.start:
        return
    for j in range(s.k):
        s.avg.scales[j] += s.params.scale[j]
        s.avg.b[j] += s.params.intercept[j]
        s.avg.count[j] += 1.0
        s.avg.since[j] += 1.0
        if (s.avg.scales[j] > REBASE_RATIO * s.params.scale[j] and s.avg.since[j]
                >= max(s.n // REBASE_SHARE, REBASE_SHARE)):
            _rebase_row(s, j)
