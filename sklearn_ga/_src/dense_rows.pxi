# Dense row updates: theta_j <- theta_j - step x with the weights kept in sync,
# by multiplying the exponential terms for small steps (ga_scale_terms, and the one
# pass of EG+-, each of which can sum the next trial's dot product) or by a recompute of
# the row from theta (large steps, every RENEW_DENSE small ones, pnorm always).

cdef void _update_dense_row(State* s, Py_ssize_t j, double step, const double* x,
                            double x_top) noexcept nogil:
    """theta_j <- theta_j - step * x for a dense row, weights kept in sync."""
    if _two_terms(s.config.psi):
        _update_pm_row(s, j, step, x, NULL, x_top)
    else:
        _update_terms_row(s, j, step, x, NULL, x_top)


cdef double _update_terms_row(State* s, Py_ssize_t j, double step, const double* x,
                              const double* x_next, double x_top) noexcept nogil:
    """theta_j <- theta_j - step * x for a dense row of one term per coordinate
    (max |x| = x_top), weights kept in sync.

    Returns the next trial's sum num x_next (x_next may be NULL: 0), summed in
    the pass of a multiplicative step with max |x_next| (s.scratch.x_top) and
    |x_next|^2 (s.scratch.x_squares), as _update_pm_row does; after a recompute, in a
    pass of its own.
    """
    cdef Py_ssize_t base = j * s.n
    cdef double total
    cdef double sums[3]
    if (not _multiplicative(s, step, x_top) or fabs(step) * x_top > GA_STEP_MAX
            or s.params.age[j] >= RENEW_DENSE):
        ga_axpy(s.params.theta + base, step, x, s.n)
        _recompute_row(s, j)
        return ga_dot(s.params.num + base, x_next, s.n) if x_next != NULL else 0.0
    total = ga_scale_terms(s.params.theta + base, s.params.num + base, step, x,
                           x_next, s.n, fabs(step) * x_top, sums)
    if x_next != NULL:
        s.scratch.x_top, s.scratch.x_top_ready = sums[1], True
        s.scratch.x_squares, s.scratch.squares_ready = sums[2], True
    s.params.age[j] += 1.0
    if not _normalized(s.config.psi):
        return sums[0]
    s.params.norm[j] = total
    # A normalizer out of [e^-30, e^30] means the shift is stale: re-shift.
    if not TERM_LOW < total < TERM_HIGH:
        _recompute_row(s, j)
        return ga_dot(s.params.num + base, x_next, s.n) if x_next != NULL else 0.0
    _set_scale(s, j)
    return sums[0]


cdef double _update_pm_row(State* s, Py_ssize_t j, double step, const double* x,
                           const double* x_next, double x_top) noexcept nogil:
    """Dense EG+- update of row j (max |x| = x_top) in one pass over the row.

    Returns the next trial's sum (num - den) x_next (x_next may be NULL: 0) and
    stores max |x_next| in s.scratch.x_top and |x_next|^2 in s.scratch.x_squares, all
    summed in the same pass when the step is small; otherwise the row is recomputed
    and the dot product summed afterwards.
    """
    cdef Py_ssize_t base = j * s.n
    cdef double sums[3]
    cdef double dot
    # Each term is scaled with one rounding (t + t (e^{-+d} - 1)), half the error of
    # a product by a rounded factor: twice RENEW_DENSE updates drift no further.
    if fabs(step) * x_top <= GA_STEP_MAX and s.params.age[j] < 2.0 * RENEW_DENSE:
        sums[1] = x_top
        dot = ga_scale_pm_dot(s.params.theta + base, s.params.num + base,
                              s.params.den + base, step, x, x_next, s.n, sums)
        if x_next != NULL:
            s.scratch.x_top, s.scratch.x_top_ready = sums[1], True
            s.scratch.x_squares, s.scratch.squares_ready = sums[2], True
        s.params.age[j] += 1.0
        s.params.norm[j] = sums[0]
        # A normalizer out of [e^-30, e^30] means the shift is stale: re-shift.
        if TERM_LOW < sums[0] < TERM_HIGH:
            _set_scale(s, j)
            return dot
    else:
        ga_axpy(s.params.theta + base, step, x, s.n)
    _recompute_row(s, j)
    if x_next == NULL:
        return 0.0
    return ga_dot_diff(s.params.num + base, s.params.den + base, x_next, s.n)
