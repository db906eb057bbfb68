# CSR row updates in O(nnz): the sparse dot products and the update of the touched
# coordinates only, with each row's normalizer updated by the change of their terms
# (_renormalize_sparse_row recomputes the row when that could have cost precision).
# In a lazy run the terms hold theta (psi.pxi, _lazy_run). Gathers and scatters
# load four coordinates before they store any, so that their cache misses overlap.

cdef inline double _sparse_dot_diff(const double* a, const double* b,
                                    const double* x_val, const index_t* x_ind,
                                    Py_ssize_t nnz) noexcept nogil:
    """sum_q (a - b)[x_ind[q]] x_val[q]: the EG+- dot product (weights e^+ - e^-)."""
    cdef Py_ssize_t q = 0, i0, i1, i2, i3
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    while q + 4 <= nnz:
        i0, i1, i2, i3 = x_ind[q], x_ind[q + 1], x_ind[q + 2], x_ind[q + 3]
        s0 += (a[i0] - b[i0]) * x_val[q]
        s1 += (a[i1] - b[i1]) * x_val[q + 1]
        s2 += (a[i2] - b[i2]) * x_val[q + 2]
        s3 += (a[i3] - b[i3]) * x_val[q + 3]
        q += 4
    while q < nnz:
        s0 += (a[x_ind[q]] - b[x_ind[q]]) * x_val[q]
        q += 1
    return (s0 + s1) + (s2 + s3)


cdef inline double _sparse_dot_held(const double* num, double product,
                                    const double* x_val, const index_t* x_ind,
                                    Py_ssize_t nnz, double* held) noexcept nogil:
    """The EG+- dot product of a lazy CSR run, sum_q (num - den)[x_ind[q]] x_val[q]
    with den = product / num (not stored), which it leaves in held[q] for the update.

    The division costs less than den's own array: the terms of 2^18 features then
    take 2 MiB, as SGD's weights do, instead of 4 MiB (fewer cache misses). The terms
    are gathered first, in a short loop whose cache misses all overlap; the divisions
    then vectorize (ga_held_dot).
    """
    cdef Py_ssize_t q
    for q in range(nnz):
        held[q] = num[x_ind[q]]
    return ga_held_dot(product, held, x_val, nnz)


cdef inline double _sparse_dot(const double* w, const double* x_val,
                               const index_t* x_ind, Py_ssize_t nnz,
                               double* squares) noexcept nogil:
    """sum_q w[x_ind[q]] x_val[q] with four partial sums (shorter dependency chain);
    sum_q x_val[q]^2 in ``squares`` (the length of the step, KMWW eq. 8), summed
    while the gathers are waited for."""
    cdef Py_ssize_t q = 0
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, z0 = 0.0, z1 = 0.0
    while q + 4 <= nnz:
        s0 += w[x_ind[q]] * x_val[q]
        s1 += w[x_ind[q + 1]] * x_val[q + 1]
        s2 += w[x_ind[q + 2]] * x_val[q + 2]
        s3 += w[x_ind[q + 3]] * x_val[q + 3]
        z0 += x_val[q] * x_val[q] + x_val[q + 1] * x_val[q + 1]
        z1 += x_val[q + 2] * x_val[q + 2] + x_val[q + 3] * x_val[q + 3]
        q += 4
    while q < nnz:
        s0 += w[x_ind[q]] * x_val[q]
        z0 += x_val[q] * x_val[q]
        q += 1
    squares[0] = z0 + z1
    return (s0 + s1) + (s2 + s3)


cdef inline void _sparse_axpy(double* theta, double step, const double* x_val,
                              const index_t* x_ind, Py_ssize_t nnz) noexcept nogil:
    """theta[x_ind[q]] -= step x_val[q] (unique indices), four loads before four stores.

    On some CPUs a load that follows a store to an address that was itself loaded
    (x_ind[q]) waits for that store, so a plain scatter runs one coordinate at a
    time; loading four parameters first lets their loads overlap. The other CSR
    updates are grouped the same way.
    """
    cdef Py_ssize_t q = 0, i0, i1, i2, i3
    cdef double t0, t1, t2, t3
    while q + 4 <= nnz:
        i0, i1, i2, i3 = x_ind[q], x_ind[q + 1], x_ind[q + 2], x_ind[q + 3]
        t0, t1, t2, t3 = theta[i0], theta[i1], theta[i2], theta[i3]
        theta[i0] = t0 - step * x_val[q]
        theta[i1] = t1 - step * x_val[q + 1]
        theta[i2] = t2 - step * x_val[q + 2]
        theta[i3] = t3 - step * x_val[q + 3]
        q += 4
    while q < nnz:
        theta[x_ind[q]] -= step * x_val[q]
        q += 1


cdef inline void _renormalize_sparse_row(State* s, Py_ssize_t j, double total,
                                         double mass, double top) noexcept nogil:
    """Add a CSR update's change to row j's normalizer; recompute the row if needed.

    A term above e^30 (theta outgrew the shift) or a vanishing normalizer means the
    shift is stale; many changes summed into the normalizer may have eaten its
    precision: then the row is recomputed from theta (an outgrown shift: _reshift_row,
    unless a term overflowed and lost its value: pnorm's, when one step takes theta
    past every power of the old shift).
    """
    s.params.norm[j] += total
    s.params.mass[j] += mass
    if (not s.params.norm[j] > TERM_LOW
            or s.params.mass[j] > MASS_LIMIT * s.params.norm[j]
            or top > DBL_MAX):
        _recompute_row(s, j)
    elif top > TERM_HIGH:
        _reshift_row(s, j)
    else:
        _set_scale(s, j)


cdef inline (double, double, double, double) _scaled4(
        double t0, double t1, double t2, double t3, const double* f) noexcept nogil:
    """Four terms t scaled by (1 + f) with one rounding each, t + t f."""
    return t0 + t0 * f[0], t1 + t1 * f[1], t2 + t2 * f[2], t3 + t3 * f[3]


cdef inline Py_ssize_t _scale_held_terms(double* nums, const double* held,
                                          const index_t* x_ind, const double* down,
                                          const double* up, Py_ssize_t q,
                                          Py_ssize_t nnz, bint pm,
                                          double* sums) noexcept nogil:
    """The common case of a lazy CSR update: scale the terms from coordinate q on by
    t + t f (f = e^{-+d} - 1, |d| <= GA_STEP_MAX), adding their change to sums
    (change, mass, top). EG+-'s den (held[q], not stored) scales by its own f.

    Stops at the first coordinate (or group of four) with a num below 2 UNDERFLOW,
    which could fall below UNDERFLOW (f >= e^{-1/2} - 1) and no longer hold theta,
    and returns its position (nnz if none); EG+-'s terms are never that small (see
    PM_HELD_SHIFT). Four coordinates are loaded before any is stored (see
    _sparse_axpy). The terms are positive: mass = sum new + sum old, change = sum
    new - sum old.
    """
    cdef Py_ssize_t i0, i1, i2, i3
    cdef double a0, a1, a2, a3, b0, b1, b2, b3
    cdef double added = 0.0, removed = 0.0, top = sums[2]
    # A local: a global would be reloaded after every store (-fno-strict-aliasing).
    cdef double low = 2.0 * UNDERFLOW
    while q + 4 <= nnz:
        i0, i1, i2, i3 = x_ind[q], x_ind[q + 1], x_ind[q + 2], x_ind[q + 3]
        a0, a1, a2, a3 = nums[i0], nums[i1], nums[i2], nums[i3]
        if not pm and not ga_least4(a0, a1, a2, a3) >= low:
            break
        removed += (a0 + a1) + (a2 + a3)
        a0, a1, a2, a3 = _scaled4(a0, a1, a2, a3, down + q)
        nums[i0], nums[i1], nums[i2], nums[i3] = a0, a1, a2, a3
        if pm:
            b0, b1, b2, b3 = held[q], held[q + 1], held[q + 2], held[q + 3]
            removed += (b0 + b1) + (b2 + b3)
            b0, b1, b2, b3 = _scaled4(b0, b1, b2, b3, up + q)
            a0, a1, a2, a3 = a0 + b0, a1 + b1, a2 + b2, a3 + b3
        added += (a0 + a1) + (a2 + a3)
        top = ga_greater(top, ga_greatest4(a0, a1, a2, a3))
        q += 4
    while q < nnz:
        i0 = x_ind[q]
        a0 = nums[i0]
        if not pm and not a0 >= low:
            break
        removed += a0
        a0 += a0 * down[q]
        nums[i0] = a0
        if pm:
            removed += held[q]
            a0 += held[q] + held[q] * up[q]
        added += a0
        top = ga_greater(top, a0)
        q += 1
    sums[0] += added - removed
    sums[1] += added + removed
    sums[2] = top
    return q


cdef void _update_sparse_row(State* s, Py_ssize_t j, double step, const double* x_val,
                             const index_t* x_ind, Py_ssize_t nnz,
                             double x_top) noexcept nogil:
    """theta_j <- theta_j - step * x on the nnz touched coordinates, in O(nnz).

    Exponential terms are scaled in place (steps up to SHIFT_SLACK); otherwise the
    terms are computed from the gathered theta (so the exponentials vectorize) and
    scattered; pnorm has its own pass (_pnorm_sparse_row). The normalizer is updated
    by their change.
    """
    cdef Py_ssize_t q, i, base = j * s.n
    cdef double* theta = s.params.theta + base
    cdef double* nums = s.params.num + base
    cdef double* dens = s.params.den + base
    cdef double top = 0.0, old, term, num, den, shift, total = 0.0, mass = 0.0
    cdef double* down
    cdef double* up
    cdef double* olds
    cdef double* held = (_held_row(s, j)  # EG+-'s den (lazy runs)
                         if s.scratch.row_held != NULL else NULL)
    cdef double sums[3]
    cdef bint pm, small, lazy
    if _no_terms(s.config.psi):
        _sparse_axpy(theta, step, x_val, x_ind, nnz)
        return
    if _power_terms(s.config.psi):
        _pnorm_sparse_row(s, j, step, x_val, x_ind, nnz)
        return
    if _multiplicative(s, step, x_top):
        # e^{theta - shift} scales by e^{-d} (softmax, exp: den is num) and, for EG+-,
        # e^{-theta - shift} by e^{d}: products that add no cancellation at any step
        # size. The factors are computed first, in a loop over the contiguous row
        # that vectorizes. In a lazy run theta is not touched: num holds it
        # (theta = ln num + shift; EG+-'s den is product / num, in held), so a row
        # costs one random cache line per coordinate, like SGD's. A coordinate
        # whose term underflows hands theta back to the theta array, which then
        # updates it and recomputes its terms from it (so that they can grow back).
        pm = _two_terms(s.config.psi)
        shift = s.params.shift[j]
        # Locals: with -fno-strict-aliasing (Python's flags) the fields of s would be
        # reloaded after every store to the terms.
        lazy, down, up = s.params.lazy, s.scratch.row_num, s.scratch.row_den
        small = ga_step_factors(step, x_val, down, up if pm else NULL, nnz,
                                fabs(step) * x_top)
        sums[0] = sums[1] = sums[2] = 0.0
        q = 0
        while q < nnz:
            if lazy and small:
                q = _scale_held_terms(nums, held, x_ind, down, up, q, nnz, pm, sums)
                if q == nnz:
                    break
            # A coordinate whose terms underflow, a long step, or theta kept too.
            i = x_ind[q]
            num = nums[i]
            den = (held[q] if lazy else dens[i]) if pm else num
            old = num + den if pm else num
            if num < UNDERFLOW or (pm and den < UNDERFLOW):  # theta in the array
                theta[i] -= step * x_val[q]
                num = ga_exp(theta[i] - shift)
                den = ga_exp(-theta[i] - shift) if pm else num
            else:
                if small:  # t e^{-d} = t + t (e^{-d} - 1), one rounding
                    num += num * down[q]
                    den = den + den * up[q] if pm else num
                else:
                    num *= down[q]
                    den = den * up[q] if pm else num
                if not lazy:
                    theta[i] -= step * x_val[q]
                elif num < UNDERFLOW:
                    theta[i] = _theta_of_term(s, nums[i], shift) - step * x_val[q]
            nums[i] = num
            if pm:
                if not lazy:
                    dens[i] = den
                num += den
            sums[0] += num - old
            sums[1] += num + old
            sums[2] = ga_greater(sums[2], num)
            q += 1
        if _normalized(s.config.psi):
            _renormalize_sparse_row(s, j, sums[0], sums[1], sums[2])
        return
    # The gathered theta, the new terms.
    olds, down, up = s.scratch.row_theta, s.scratch.row_num, s.scratch.row_den
    shift = s.params.shift[j]
    for q in range(nnz):
        i = x_ind[q]
        old = _theta_at(s, j, i)
        if _normalized(s.config.psi):
            den = held[q] if s.params.lazy and _two_terms(s.config.psi) else dens[i]
            term = _normalizer_term(s, nums[i], den, old, shift)
            total -= term
            mass += fabs(term)
        theta[i] = old - step * x_val[q]
        olds[q] = theta[i]
    _terms(s, olds, down, up, shift, nnz)
    if not _normalized(s.config.psi):
        for q in range(nnz):
            nums[x_ind[q]] = down[q]
        return
    for q in range(nnz):
        i = x_ind[q]
        term = _normalizer_term(s, down[q], up[q], olds[q], shift)
        nums[i] = down[q]
        dens[i] = up[q]
        total += term
        mass += fabs(term)
        top = ga_greater(top, term)
    _renormalize_sparse_row(s, j, total, mass, top)


cdef inline double* _pnorm_gather(State* s, Py_ssize_t j, const index_t* x_ind,
                                  Py_ssize_t nnz) noexcept nogil:
    """Copy a CSR row's pnorm terms and theta (row j) to row j's held buffers
    (_held_row; returned), for its update: its passes then read them in order, with
    no load after a store, and it only stores. One short loop, whose cache misses
    all overlap."""
    cdef Py_ssize_t q, i
    cdef const double* num = s.params.num + j * s.n
    cdef const double* theta = s.params.theta + j * s.n
    cdef double* held_num = _held_row(s, j)
    cdef double* held_theta = held_num + s.scratch.row_size
    for q in range(nnz):
        i = x_ind[q]
        held_num[q] = num[i]
        held_theta[q] = theta[i]
    return held_num


cdef void _pnorm_sparse_row(State* s, Py_ssize_t j, double step, const double* x_val,
                            const index_t* x_ind, Py_ssize_t nnz) noexcept nogil:
    """theta_j <- theta_j - step * x on a CSR row for pnorm, whose terms do not hold
    theta: from the row's terms and theta that the dot product gathered
    (_pnorm_gather; the options' trials gather them here), theta moves and the
    terms are computed afresh (ga_pnorm_terms, vectorized), then both are
    scattered. The normalizer changes by their terms num theta / shift (>= 0: num
    has theta's sign).
    """
    cdef Py_ssize_t q, i
    cdef double* theta = s.params.theta + j * s.n
    cdef double* nums = s.params.num + j * s.n
    cdef double* held_num = _held_row(s, j)
    cdef double* news = held_num + s.scratch.row_size  # theta, then its new values
    cdef double* terms = s.scratch.row_num
    cdef double removed, added = 0.0, top = 0.0, term, shift = s.params.shift[j]
    if s.config.options:
        _pnorm_gather(s, j, x_ind, nnz)
    removed = ga_dot(held_num, news, nnz)
    ga_axpy(news, step, x_val, nnz)
    ga_pnorm_terms(news, terms, shift, s.config.p, nnz)
    for q in range(nnz):
        i = x_ind[q]
        theta[i] = news[q]
        nums[i] = terms[q]
        term = terms[q] * news[q]
        added += term
        top = ga_greater(top, term)
    _renormalize_sparse_row(s, j, (added - removed) / shift, (added + removed) / shift,
                            top / shift)


cdef void _geodesic_sparse_row(State* s, Py_ssize_t j, double step,
                               const double* x_val, const index_t* x_ind,
                               Py_ssize_t nnz) noexcept nogil:
    """theta_j <- theta_j - step * x (sphere) or theta_j * (1 - step * x) (simplex) on
    a CSR row whose dot pass was _geodesic_dot. The terms num = theta / shift hold
    theta in CSR runs, so the step moves them directly, a scatter that costs no more
    than SGD's. The normalizer sum num^2 changes by a quadratic in the step whose
    coefficients the dot pass summed: with num -= a x (sphere, a = step / shift),
    sum (num - a x)^2 - num^2 = -2 a sum num x + a^2 sum x^2; with num *= 1 - a x
    (simplex, a = step), sum num^2 ((1 - a x)^2 - 1) = -2 a sum num^2 x
    + a^2 sum num^2 x^2 (the dot pass's scaled sum / scale). The magnitudes of
    those summands bound its rounding (mass), and (max |num| + |a| max |x|)^2, or
    max num^2 (1 + |a| max |x|)^2, bounds the largest new term (top).
    """
    cdef Py_ssize_t q = 0, i0, i1, i2, i3
    cdef double* nums = s.params.num + j * s.n
    cdef const double* sums = s.scratch.geodesic + j * GEODESIC_SUMS
    cdef double o0, o1, o2, o3, top
    cdef bint sphere = _sphere(s.config.psi)
    cdef double quad = sums[1] if sphere else sums[1] / s.params.scale[j]
    cdef double a = step / s.params.shift[j] if sphere else step
    # num moves by (along + relative num) x.
    cdef double along = a if sphere else 0.0
    cdef double relative = 0.0 if sphere else a
    while q < nnz:
        # Four coordinates loaded before they are stored (see _sparse_axpy); the
        # row's last ones one at a time.
        if q + 4 <= nnz:
            i0, i1, i2, i3 = x_ind[q], x_ind[q + 1], x_ind[q + 2], x_ind[q + 3]
            o0, o1, o2, o3 = nums[i0], nums[i1], nums[i2], nums[i3]
            nums[i0] = o0 - (along + relative * o0) * x_val[q]
            nums[i1] = o1 - (along + relative * o1) * x_val[q + 1]
            nums[i2] = o2 - (along + relative * o2) * x_val[q + 2]
            nums[i3] = o3 - (along + relative * o3) * x_val[q + 3]
            q += 4
        else:
            i0 = x_ind[q]
            o0 = nums[i0]
            nums[i0] = o0 - (along + relative * o0) * x_val[q]
            q += 1
    top = (sums[3] + fabs(a) * sums[4] if sphere
           else sums[3] * (1.0 + fabs(a) * sums[4]))
    _renormalize_sparse_row(s, j, -2.0 * a * sums[0] + a * a * quad,
                            2.0 * fabs(a) * sums[2] + a * a * quad, top * top)


# The check of a CSR structure that the Python side makes before a run reads it.

cpdef enum CsrStructure:
    CSR_MALFORMED = 0   # not readable: an index or an indptr entry out of range
    CSR_UNSORTED = 1    # readable, but some row's indices do not strictly increase
    CSR_CANONICAL = 2   # sorted, no duplicates: what the O(nnz) updates need


def csr_structure(const index_t[::1] indices, const index_t[::1] indptr,
                  Py_ssize_t n_data, Py_ssize_t n):
    """Check a CSR structure before the loop reads it without bounds checks.

    indptr must start at 0, never decrease and end within the indices and the data
    (``n_data`` values); every index must lie in [0, n). One pass over the indices:
    a row is canonical when its indices strictly increase, so the matrix is iff the
    decreases counted over all consecutive pairs are those at row starts.
    """
    cdef Py_ssize_t m = indptr.shape[0] - 1, nnz, r, start, last = 0
    cdef int64_t decreases, at_starts = 0
    cdef index_t low, high
    cdef bint ordered = True
    if m < 0 or indptr[0] != 0:
        return CSR_MALFORMED
    nnz = indptr[m]
    if nnz > indices.shape[0] or nnz > n_data:
        return CSR_MALFORMED
    if nnz == 0:
        return CSR_CANONICAL
    with nogil:
        for r in range(m):
            start = indptr[r + 1]
            ordered &= start >= indptr[r]
            # A row start inside the data (rows may be empty: count each once).
            if 0 < start < nnz and start != last:
                at_starts += indices[start] <= indices[start - 1]
                last = start
        if index_t is int32_t:
            decreases = ga_index_scan32(&indices[0], nnz, &low, &high)
        else:
            decreases = ga_index_scan64(&indices[0], nnz, &low, &high)
    if not ordered or low < 0 or high >= n:
        return CSR_MALFORMED
    return CSR_CANONICAL if decreases == at_starts else CSR_UNSORTED


def csr_row_sums(const floating[::1] data, const index_t[::1] indptr, Py_ssize_t start,
                 Py_ssize_t stop):
    """The sums of CSR rows ``start`` to ``stop`` (at most the last), each in float64
    in the order of its entries, as scipy's ``X.sum(axis=1)`` of float64 values
    sums them (a product with ones): no copy of the rows, nor of float32 values."""
    import numpy as np

    stop = max(start, min(stop, indptr.shape[0] - 1))
    out = np.zeros(stop - start)
    cdef double[::1] sums = out
    cdef Py_ssize_t i, q
    cdef double total
    with nogil:
        for i in range(start, stop):
            total = 0.0
            for q in range(indptr[i], indptr[i + 1]):
                total += data[q]
            sums[i - start] = total
    return out
