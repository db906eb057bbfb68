# Lazy theta on CSR rows (psi.pxi, _lazy_run): in a plain CSR run of an exponential
# psi, and in any CSR run of a geodesic psi, the terms hold theta (theta = ln num +
# shift, or num * shift), so a row's update writes one array, as SGD's does; theta
# is read from the terms while the run lasts and written back when it ends
# (_sync_theta), for the coordinates the run touched only when they are fewer than n.


cdef inline bint _term_holds(State* s, double num) noexcept nogil:
    """Whether a coordinate's term num determines its theta in a lazy CSR run (it
    neither underflowed nor overflowed; EG+-'s never does, see PM_HELD_SHIFT)."""
    return _geodesic(s.config.psi) or UNDERFLOW <= num <= DBL_MAX


cdef inline double _theta_of_term(State* s, double num, double shift) noexcept nogil:
    """theta from the term e^{theta - shift}, or theta / shift (sphere, simplex)."""
    return num * shift if _geodesic(s.config.psi) else log(num) + shift


cdef inline double _theta_at(State* s, Py_ssize_t j, Py_ssize_t i) noexcept nogil:
    """The current theta_ji, from the term when it holds it (lazy CSR runs)."""
    cdef Py_ssize_t c = j * s.n + i
    if s.params.lazy and _term_holds(s, s.params.num[c]):
        return _theta_of_term(s, s.params.num[c], s.params.shift[j])
    return s.params.theta[c]


cdef bint _shifts_held(State* s) noexcept nogil:
    """Whether every row's shift allows EG+- to store only num (PM_HELD_SHIFT)."""
    cdef Py_ssize_t j
    for j in range(s.k):
        if s.params.shift[j] > PM_HELD_SHIFT:
            return False
    return True


cdef void _sync_theta_row(State* s, Py_ssize_t j) noexcept nogil:
    """Bring row j's theta (EG+-: and den) up to date with its terms after a lazy
    CSR run, O(n)."""
    cdef Py_ssize_t i, base = j * s.n
    _guard_rows(s)
    if _geodesic(s.config.psi):
        for i in range(base, base + s.n):
            s.params.theta[i] = s.params.num[i] * s.params.shift[j]
        return
    ga_theta_from_terms(s.params.theta + base, s.params.num + base, s.params.shift[j],
                        s.n)
    if _two_terms(s.config.psi):
        ga_quotients(s.params.den + base, s.params.product[j], s.params.num + base, s.n)


cdef void _sync_theta(State* s, const index_t* x_ind, const index_t* indptr,
                      const Py_ssize_t* order, Py_ssize_t trials,
                      Py_ssize_t seen) noexcept nogil:
    """End a lazy CSR run of ``trials`` rows, ``seen`` nonzeros: bring theta (EG+-:
    and den) up to date, coordinate by coordinate when the run touched fewer than
    n."""
    cdef Py_ssize_t t, q, j, c, count
    # The touched coordinates go through the vectorized log of the whole-row path
    # in blocks (gathered, then scattered back), not through libm's scalar log.
    cdef Py_ssize_t at[SYNC_BLOCK]
    cdef double terms[SYNC_BLOCK]
    cdef double thetas[SYNC_BLOCK]
    if seen >= s.n:
        for j in range(s.k):
            _sync_theta_row(s, j)
        s.params.lazy = False
        return
    for j in range(s.k):
        count = 0
        for t in range(trials):
            for q in range(indptr[order[t]], indptr[order[t] + 1]):
                c = j * s.n + x_ind[q]
                at[count], terms[count] = c, s.params.num[c]
                thetas[count] = s.params.theta[c]
                count += 1
                if count == SYNC_BLOCK:
                    _write_back(s, j, at, terms, thetas, count)
                    count = 0
        _write_back(s, j, at, terms, thetas, count)
    s.params.lazy = False


cdef void _write_back(State* s, Py_ssize_t j, const Py_ssize_t* at, double* terms,
                      double* thetas, Py_ssize_t count) noexcept nogil:
    """Set theta (EG+-: and den) of row j's coordinates ``at`` from their gathered
    ``terms`` and stored ``thetas``, as _sync_theta_row does for a whole row."""
    cdef Py_ssize_t q
    if _geodesic(s.config.psi):
        for q in range(count):
            s.params.theta[at[q]] = terms[q] * s.params.shift[j]
        return
    ga_theta_from_terms(thetas, terms, s.params.shift[j], count)
    for q in range(count):
        s.params.theta[at[q]] = thetas[q]
    if _two_terms(s.config.psi):
        ga_quotients(terms, s.params.product[j], terms, count)
        for q in range(count):
            s.params.den[at[q]] = terms[q]
