# The penalty toward Theta_1 = 0 (alpha) of psi = identity and pnorm: a row's theta
# is decay_j times the stored one between its fold-outs, as SGD's weights keep a
# scale (state.pxi, DECAY_FLOOR).


cdef void _fold_decay(State* s, Py_ssize_t j) noexcept nogil:
    """Multiply row j's decay into its stored theta (psi = identity, pnorm), which
    then is theta: pnorm's terms, powers of theta / shift, and its normalizer stay
    as they are when the shift takes the factor too. O(n)."""
    cdef Py_ssize_t i, base = j * s.n
    cdef double factor = s.params.decay[j]
    if factor == 1.0:
        return
    _guard_rows(s)
    if s.avg.acc != NULL:
        _rebase_row(s, j)
    for i in range(base, base + s.n):
        s.params.theta[i] *= factor
    s.params.decay[j] = 1.0
    if _power_terms(s.config.psi) and s.params.shift[j] * factor >= DBL_MIN:
        s.params.shift[j] *= factor
        _set_scale(s, j)
    else:  # (psi = identity, or a row brought to 0)
        _recompute_row(s, j)


cdef void _fold_all(State* s) noexcept nogil:
    """End a run with every row's decay multiplied out (theta is then theta)."""
    cdef Py_ssize_t j
    if s.config.alpha > 0.0:
        for j in range(s.k):
            _fold_decay(s, j)
