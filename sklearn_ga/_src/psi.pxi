# psi: each parameterization function's weights in factored storage,
# omega_ji = scale_j * num_ji (doc/developers/compiled_core.rst, "Factored weights").
#
# Every branch on a psi code lives in this file. The rest of the loop (averaging.pxi,
# penalty.pxi, lazy_csr.pxi, the row updates) asks the traits below (which terms a
# psi stores, whether it is normalized, how its terms follow a step) or calls the
# formulas here: a row's terms num and den, its shift and scale, a coordinate's
# normalizer term and unscaled weight, the row's recompute from theta and the
# natural step's Dpsi (KW01 §3, HKW §III, KMWW).
# TrialLoop admits only the codes of _psi_known. Each formula names every code it
# serves and ends in _unknown_psi, which aborts: a psi added to the codes but
# forgotten in one formula stops the process (tests/test_kernel_dispatch.py calls
# every formula with every code) instead of computing another psi's answer.


cdef extern from *:
    """
    #include <stdio.h>
    #include <stdlib.h>
    __attribute__((noreturn, cold)) static void ga_unknown_psi(int psi,
                                                               const char* where) {
        fprintf(stderr, "sklearn_ga._kernel: no case for psi code %d in %s\\n",
                psi, where);
        abort();
    }
    """
    void _unknown_psi "ga_unknown_psi"(int psi, const char* where) noexcept nogil


cdef bint _psi_known(int psi) noexcept nogil:
    """Whether psi is one of the codes this loop implements (PsiCode)."""
    return psi in (PSI_IDENTITY, PSI_SOFTMAX, PSI_EG_PM, PSI_EXP, PSI_PNORM,
                   PSI_SPHERE, PSI_SIMPLEX, PSI_BURG)


cdef int _stored_terms(int psi) noexcept nogil:
    """How many k x n arrays of terms psi stores besides theta: none for the
    identity (num is theta), two for EG+- (num and den), one for the others."""
    if psi == PSI_IDENTITY:
        return 0
    if psi == PSI_EG_PM:
        return 2
    if (psi == PSI_SOFTMAX or psi == PSI_EXP or psi == PSI_PNORM or psi == PSI_SPHERE
            or psi == PSI_SIMPLEX or psi == PSI_BURG):
        return 1
    _unknown_psi(psi, "_stored_terms")


cdef inline bint _normalized(int psi) noexcept nogil:
    """Weights divided by a normalizer summed over the row (scale = f(norm))."""
    return (psi == PSI_SOFTMAX or psi == PSI_EG_PM or psi == PSI_PNORM
            or _geodesic(psi))


cdef inline bint _geodesic(int psi) noexcept nogil:
    """Weights on a manifold updated along geodesics (KMWW Examples 2, 3)."""
    return psi == PSI_SPHERE or psi == PSI_SIMPLEX


# Traits that the update code asks instead of naming codes: C macros, so that each
# is compiled as the comparison it is (an inlined call changes the code around it).
cdef extern from *:
    """
    #define ga_psi_sphere(psi) ((psi) == GA_PSI_SPHERE)
    #define ga_psi_simplex(psi) ((psi) == GA_PSI_SIMPLEX)
    #define ga_psi_no_terms(psi) ((psi) == GA_PSI_IDENTITY)
    #define ga_psi_two_terms(psi) ((psi) == GA_PSI_EG_PM)
    #define ga_psi_power_terms(psi) ((psi) == GA_PSI_PNORM)
    #define ga_psi_signed_shift(psi) ((psi) == GA_PSI_SOFTMAX)
    #define ga_psi_fused_dot(psi) ((psi) == GA_PSI_IDENTITY || (psi) == GA_PSI_EG_PM \
                                   || (psi) == GA_PSI_SOFTMAX || (psi) == GA_PSI_EXP)
    #define ga_psi_homogeneous(psi) ((psi) == GA_PSI_IDENTITY || (psi) == GA_PSI_PNORM)
    #define ga_psi_term_is_weight(psi) ((psi) == GA_PSI_IDENTITY \
        || (psi) == GA_PSI_SOFTMAX || (psi) == GA_PSI_EXP || (psi) == GA_PSI_PNORM \
        || (psi) == GA_PSI_SPHERE || (psi) == GA_PSI_BURG)
    """
    # The geodesic psi whose weights are U theta / ||theta||_2 (KMWW Example 2) ...
    bint _sphere "ga_psi_sphere"(int psi) noexcept nogil
    # ... and theta^2 / ||theta||_2^2 (KMWW Example 3).
    bint _simplex "ga_psi_simplex"(int psi) noexcept nogil
    # The weights are theta itself (identity): no terms, scale 1.
    bint _no_terms "ga_psi_no_terms"(int psi) noexcept nogil
    # Each weight is U (num - den) / norm with two exponential terms (EG+-, HKW
    # §III: EG on x' = (Ux, -Ux), so its parameter step carries a factor U).
    bint _two_terms "ga_psi_two_terms"(int psi) noexcept nogil
    # The terms are powers sign(t) |t / shift|^(p - 1) (pnorm): they do not hold
    # theta, and a CSR step recomputes them from the gathered theta.
    bint _power_terms "ga_psi_power_terms"(int psi) noexcept nogil
    # The row's shift is its largest theta (softmax), not its largest |theta|.
    bint _signed_shift "ga_psi_signed_shift"(int psi) noexcept nogil
    # A dense update that sums the next trial's dot product in its pass over the
    # row (identity: ga_axpy_dot; EG+-: ga_scale_pm_dot; softmax, exp:
    # ga_scale_terms), so X is streamed once.
    bint _fused_dot "ga_psi_fused_dot"(int psi) noexcept nogil
    # psi(c theta) = c psi(theta) for c >= 0 (identity; pnorm, whose terms are
    # powers of theta / shift): a factor of theta is a factor of the weights.
    bint _homogeneous "ga_psi_homogeneous"(int psi) noexcept nogil
    # omega / scale is num itself (not EG+-'s num - den, nor simplex's num^2).
    bint _term_is_weight "ga_psi_term_is_weight"(int psi) noexcept nogil


cdef double _row_bound(int psi, double U, double p, const double* x, Py_ssize_t nnz,
                       Py_ssize_t n) noexcept nogil:
    """x^T Dpsi x of KW01 eq. (28) at its sup over theta for the row of ``nnz``
    stored values x (dense: all n; CSR: the others are 0), the rates' bound
    (bounds.pxi). NaN if a value is not finite. The registry's ``row_bounds``
    (sklearn_ga/_psi) are the reference the tests compare with."""
    cdef Py_ssize_t i
    cdef double high, low, total = 0.0, top
    if nnz == 0:
        return 0.0
    if psi == PSI_IDENTITY or psi == PSI_EXP or psi == PSI_BURG or psi == PSI_SPHERE:
        return ga_dot(x, x, nnz)  # (NaN or inf where x has one)
    if not isfinite(ga_sum(x, 0.0, nnz)):
        return NAN  # (the max below ignores a NaN)
    if psi == PSI_SOFTMAX or psi == PSI_SIMPLEX:
        # KW01 Example 5: (max_i x_i - min_i x_i)^2 / 4, implicit zeros included.
        high = low = x[0] if nnz == n else 0.0
        for i in range(nnz):
            high, low = fmax(high, x[i]), fmin(low, x[i])
        return (high - low) * (high - low) / 4.0
    top = ga_max(x, nnz, 1)
    if psi == PSI_EG_PM:
        return U * U * top * top
    if psi != PSI_PNORM:
        _unknown_psi(psi, "_row_bound")
    # psi = pnorm: ||x||_p in units of the largest |x_i|.
    if top == 0.0:
        return 0.0
    for i in range(nnz):
        total += pow(fabs(x[i]) / top, p)
    top *= pow(total, 1.0 / p)
    return (p - 1.0) * top * top


cdef void _terms(State* s, const double* theta, double* num, double* den, double shift,
                 Py_ssize_t n) noexcept nogil:
    """num and den of n parameters (HKW §III, KW01 §3); the identity stores none."""
    cdef int psi = s.config.psi
    cdef Py_ssize_t q
    if psi == PSI_SOFTMAX:
        ga_softmax_terms(theta, num, shift, n)
    elif psi == PSI_EG_PM:
        # EG on x' = (Ux, -Ux) keeps theta^- = -theta^+: weights e^{+-theta - shift}.
        ga_eg_pm_terms(theta, num, den, shift, n)
    elif psi == PSI_EXP:
        ga_exp_terms(theta, num, n)
    elif psi == PSI_PNORM:
        # sign(t)|t|^(p-1) / ||theta||_p^(p-2), with |t| measured in units of the shift.
        ga_pnorm_terms(theta, num, shift, s.config.p, n)
    elif _geodesic(psi):
        # omega = U theta / ||theta||_2 (sphere) or theta^2 / ||theta||_2^2 (simplex,
        # KMWW Ex. 3 with theta = sqrt(omega) up to a factor): num = theta / shift;
        # the normalizer term num^2 is not stored (den is num).
        for q in range(n):
            num[q] = theta[q] / shift
    elif psi == PSI_BURG:
        # The link of the Burg entropy -sum ln w is -1/w: w = -1/theta on theta < 0.
        # At theta >= 0 the weight is +inf, its limit at 0: an explicit run reports
        # a divergence (its activation, or the final check, is not finite), and the
        # implicit equation is +-inf there, so that its root search stays inside.
        # (+ 0.0: a zero of either sign becomes +0, and 1 / +0 = +inf.)
        for q in range(n):
            num[q] = 1.0 / (fmax(-theta[q], 0.0) + 0.0)
    elif psi != PSI_IDENTITY:
        _unknown_psi(psi, "_terms")


cdef inline double _pnorm_shift(double top) noexcept nogil:
    """pnorm's unit for a row whose largest |theta| is top: top, but 1 for a row of
    zeros and DBL_MIN for a subnormal top (the terms multiply by 1 / shift, which
    overflows there; |theta| / DBL_MIN is still at most 1)."""
    return fmax(top, DBL_MIN) if top > 0.0 else 1.0


cdef inline double _pnorm_power(State* s, double norm) noexcept nogil:
    """norm^(-(p-2)/p) by the kernel's exp and log (cheaper than libm pow); 0 for a
    normalizer of 0."""
    return 0.0 if norm == 0.0 else ga_exp(s.config.binomial[0] * ga_log(norm))


cdef inline double _scale_value(State* s, double norm, double shift) noexcept nogil:
    """omega_ji = scale_j * num_ji for a row with this normalizer and shift."""
    cdef int psi = s.config.psi
    if psi == PSI_SOFTMAX or psi == PSI_SIMPLEX:
        return 1.0 / norm
    elif psi == PSI_EG_PM:
        return s.config.U / norm
    elif psi == PSI_PNORM:
        return shift * _pnorm_power(s, norm)
    elif psi == PSI_SPHERE:
        return s.config.U / sqrt(norm)
    elif psi == PSI_IDENTITY or psi == PSI_EXP or psi == PSI_BURG:
        return 1.0  # (not normalized)
    _unknown_psi(psi, "_scale_value")


cdef inline void _set_scale(State* s, Py_ssize_t j) noexcept nogil:
    """Row j's scale from its normalizer and shift (_scale_value).

    pnorm's norm^a, a = (2 - p) / p, lies on the path from a trial's update to the
    next prediction, and a log and an exp there are a large part of a trial. A trial
    changes norm little: from the last norm_0 whose power was taken (the anchor),
    norm^a = norm_0^a (1 + e)^a with e = norm / norm_0 - 1, and (1 + e)^a - 1 is
    a series in e (binomial coefficients) while |e| <= ANCHOR_RANGE.
    """
    cdef double e, e2, e4, series, norm = s.params.norm[j]
    cdef const double* c = s.config.binomial
    if s.config.psi != PSI_PNORM:
        s.params.scale[j] = _scale_value(s, norm, s.params.shift[j]) * s.params.decay[j]
        return
    e = norm * s.params.anchor[j] - 1.0  # (an anchor of 0, none yet: e = -1)
    if fabs(e) <= ANCHOR_RANGE:
        e2 = e * e
        e4 = e2 * e2
        series = e * ((c[0] + c[1] * e) + e2 * (c[2] + c[3] * e)
                      + e4 * ((c[4] + c[5] * e) + e2 * c[6]))
        s.params.scale[j] = (s.params.shift[j] * s.params.decay[j]
                             * (s.params.anchor_power[j]
                                + s.params.anchor_power[j] * series))
        return
    s.params.anchor[j] = 1.0 / norm if norm > 0.0 else 0.0
    s.params.anchor_power[j] = _pnorm_power(s, norm)
    s.params.scale[j] = s.params.shift[j] * s.params.anchor_power[j] * s.params.decay[j]


cdef bint _lazy_run(State* s) noexcept nogil:
    """Whether a CSR run holds theta in the terms (lazy theta): the exponential psi
    without options (EG+- while its shifts allow, _shifts_held), and the geodesic
    psi, whose terms theta / shift hold theta too (their options, geodesic steps,
    Y and the square loss, read theta through _theta_at)."""
    cdef int psi = s.config.psi
    return (not s.config.options and (psi == PSI_SOFTMAX or psi == PSI_EXP
                                      or psi == PSI_EG_PM and _shifts_held(s))
            or _geodesic(psi))


cdef Py_ssize_t _held_rows(State* s) noexcept nogil:
    """Rows of scratch a CSR row's update holds per output (_held_row): pnorm's
    terms and theta; EG+-'s den, in plain CSR runs only."""
    cdef int psi = s.config.psi
    if psi == PSI_PNORM:
        return 2
    return 1 if psi == PSI_EG_PM and not s.config.options else 0


cdef void _recompute_row(State* s, Py_ssize_t j) noexcept nogil:
    """Rebuild row j's shift, weight terms and normalizer from theta in O(n)."""
    cdef int psi = s.config.psi
    cdef Py_ssize_t i, base = j * s.n, other
    cdef double shift = 0.0, factor
    _guard_rows(s)
    if s.avg.acc != NULL:
        _rebase_row(s, j)  # (every term may change)
    if s.params.lazy:
        _sync_theta_row(s, j)
    if _normalized(psi):
        shift = ga_max(s.params.theta + base, s.n, psi != PSI_SOFTMAX)
        if psi == PSI_PNORM:
            shift = _pnorm_shift(shift)
        elif _geodesic(psi) and not shift > 0.0:
            shift = 1.0
    if _geodesic(psi) and not 1.0 / SCALE_LIMIT <= shift <= SCALE_LIMIT:
        if shift < DBL_MIN:
            # A subnormal shift: 2^-ilogb(shift) would overflow; lift the row first.
            for i in range(base, base + s.n):
                s.params.theta[i] *= SCALE_LIMIT
            shift *= SCALE_LIMIT
        factor = ldexp(1.0, -ilogb(shift))
        for i in range(base, base + s.n):
            s.params.theta[i] *= factor
        shift *= factor
    if s.params.lazy and psi == PSI_EG_PM and shift > PM_HELD_SHIFT:
        # den could underflow against num: end the lazy run, theta and den stored.
        for other in range(s.k):
            if other != j:
                _sync_theta_row(s, other)
        s.params.lazy = False
    if psi != PSI_IDENTITY and ga_uniform(s.params.theta + base, s.n):
        # A uniform row (every fit starts from one) has a single term to compute.
        _terms(s, s.params.theta + base, s.params.num + base, s.params.den + base,
               shift, 1)
        ga_fill(s.params.num + base, s.params.num[base], s.n)
        if s.params.den != s.params.num:
            ga_fill(s.params.den + base, s.params.den[base], s.n)
    elif psi != PSI_IDENTITY:
        _terms(s, s.params.theta + base, s.params.num + base, s.params.den + base,
               shift, s.n)
    s.params.shift[j] = shift
    s.params.product[j] = exp(-2.0 * shift)
    s.params.age[j] = 0.0
    _sum_normalizer(s, j)


cdef void _sum_normalizer(State* s, Py_ssize_t j) noexcept nogil:
    """Row j's normalizer summed afresh from its terms (no incremental rounding)."""
    cdef int psi = s.config.psi
    cdef Py_ssize_t base = j * s.n
    if _geodesic(psi):
        s.params.norm[j] = ga_dot(s.params.num + base, s.params.num + base, s.n)
    elif psi == PSI_PNORM:
        s.params.norm[j] = (ga_dot(s.params.num + base, s.params.theta + base, s.n)
                            / s.params.shift[j])
    else:
        s.params.norm[j] = (ga_sum(s.params.den + base, 1.0, s.n)
                            if _normalized(psi) else 0.0)
    if psi == PSI_EG_PM:
        s.params.norm[j] += ga_sum(s.params.num + base, 1.0, s.n)
    s.params.mass[j] = 0.0
    _set_scale(s, j)


cdef void _recompute_all(State* s) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(s.k):
        _recompute_row(s, j)
    s.params.touched = 0


cdef inline double* _held_row(State* s, Py_ssize_t j) noexcept nogil:
    """Row j's part of row_held: EG+-'s den, or pnorm's terms then theta."""
    return (s.scratch.row_held
            + j * (2 if s.config.psi == PSI_PNORM else 1) * s.scratch.row_size)


cdef inline bint _multiplicative(State* s, double step, double x_top) noexcept nogil:
    """Whether a CSR update may scale the exponential terms instead of recomputing."""
    cdef int psi = s.config.psi
    return ((psi == PSI_SOFTMAX or psi == PSI_EG_PM or psi == PSI_EXP)
            and fabs(step) * x_top <= SHIFT_SLACK)


cdef void _reshift_row(State* s, Py_ssize_t j) noexcept nogil:
    """Measure row j in units of its new max |theta|, which outgrew the shift.

    pnorm's terms sign(t) (|t| / shift)^(p - 1) scale by (shift / new shift)^(p - 1),
    a multiplication instead of a power per coordinate (a recompute at p = 24.95 and
    n = 2^18 takes as long as 3000 trials); the normalizer is summed afresh. The
    exponential terms are recomputed: in a lazy run they hold theta, which a term
    scaled below UNDERFLOW would lose.
    """
    cdef Py_ssize_t i, base = j * s.n
    cdef double shift, factor
    cdef double* num = s.params.num + base
    if s.config.psi != PSI_PNORM:
        _recompute_row(s, j)
        return
    shift = _pnorm_shift(ga_max(s.params.theta + base, s.n, 1))
    _guard_rows(s)
    if s.avg.acc != NULL:
        _rebase_row(s, j)
    ga_pnorm_terms(&s.params.shift[j], &factor, shift, s.config.p, 1)
    for i in range(s.n):
        num[i] *= factor
    s.params.shift[j] = shift
    _sum_normalizer(s, j)


cdef inline double _unscaled_weight(State* s, double num, double den) noexcept nogil:
    """omega_ji / scale_j of a coordinate, from its terms num and den."""
    cdef int psi = s.config.psi
    if _term_is_weight(psi):
        return num
    if psi == PSI_EG_PM:
        return num - den
    if psi == PSI_SIMPLEX:
        return num * num
    _unknown_psi(psi, "_unscaled_weight")


cdef inline double _normalizer_term(State* s, double num, double den, double theta,
                                    double shift) noexcept nogil:
    """A coordinate's term of the normalizer norm_j, from its terms and theta (EG+-:
    2 cosh(theta) e^-shift; pnorm: |theta / shift|^p = num theta / shift; sphere and
    simplex: num^2; none of these is stored)."""
    cdef int psi = s.config.psi
    if psi == PSI_EG_PM:
        return num + den
    if _geodesic(psi):
        return num * num
    if psi == PSI_PNORM:
        return num * theta / shift
    if (psi == PSI_SOFTMAX or psi == PSI_EXP or psi == PSI_BURG
            or psi == PSI_IDENTITY):
        return den  # (exp, burg, identity: not normalized, their sum is not read)
    _unknown_psi(psi, "_normalizer_term")


cdef inline double _rescale(State* s, double shift, double new_shift) noexcept nogil:
    """Factor taking normalizer terms from units of ``shift`` to ``new_shift``."""
    cdef int psi = s.config.psi
    if psi == PSI_PNORM:
        return pow(shift / new_shift, s.config.p)
    if psi == PSI_SOFTMAX or psi == PSI_EG_PM:
        return exp(shift - new_shift)
    _unknown_psi(psi, "_rescale")


cdef inline double _rank_one_rate(State* s, Py_ssize_t j, double step) noexcept nogil:
    """The factor of omega in the rank-one part of the natural step of row j
    (_natural_step): step (omega . x), / U for EG+-; 0 where Dpsi is diagonal."""
    cdef int psi = s.config.psi
    if psi == PSI_SOFTMAX:
        return step * s.scratch.wx[j]
    if psi == PSI_EG_PM:
        return step * s.scratch.wx[j] / s.config.U
    if psi == PSI_EXP or psi == PSI_BURG or psi == PSI_PNORM or _geodesic(psi):
        return 0.0
    _unknown_psi(psi, "_rank_one_rate")


cdef void _natural_step(State* s, Py_ssize_t j, double step, const double* x_val,
                        const index_t* x_ind, Py_ssize_t nnz, bint dense) noexcept nogil:
    """theta_j <- theta_j - step Dpsi(theta_j)^T x (KMWW eq. 5).

    Dpsi is symmetric (KW01 §3): diag(omega) - omega omega^T for softmax, diag(omega)
    for exp, diag(omega^2) for burg (1 / theta^2), (U / Z) diag(cosh theta)
    - omega omega^T / U for EG+- (Z = sum cosh). The rank-one part moves every
    coordinate (O(n) per row); the diagonal steps of exp and burg move only the
    row's nonzeros (O(nnz)).
    """
    cdef int psi = s.config.psi
    cdef Py_ssize_t q, i, base = j * s.n
    cdef double along = _rank_one_rate(s, j, step), slope, rank_one, diagonal
    cdef double squares = 0.0
    if along != 0.0:
        _guard_rows(s)
        # The rank-one part, on every coordinate: + step (omega . x) omega (/ U).
        for i in range(base, base + s.n):
            rank_one = along * s.params.scale[j] * _unscaled_weight(
                s, s.params.num[i], s.params.den[i])
            s.params.theta[i] += rank_one
            squares += rank_one * rank_one
    for q in range(nnz):
        i = base + (q if dense else x_ind[q])
        # The diagonal: omega_i, omega_i^2 (burg), or (U / Z) cosh theta_i = scale *
        # its normalizer term (EG+-).
        if psi == PSI_EG_PM:
            slope = s.params.scale[j] * _normalizer_term(
                s, s.params.num[i], s.params.den[i], s.params.theta[i],
                s.params.shift[j])
        elif psi == PSI_BURG:
            slope = s.params.num[i] * s.params.num[i]
        else:
            slope = s.params.scale[j] * _unscaled_weight(s, s.params.num[i],
                                                         s.params.den[i])
        diagonal = step * slope * x_val[q]
        s.params.theta[i] -= diagonal
        # |Delta theta_i|^2 = (rank_one - diagonal)^2: the rank-one part counted
        # above, the rest here (num and den still those before the step).
        rank_one = (along * s.params.scale[j]
                    * _unscaled_weight(s, s.params.num[i], s.params.den[i])
                    if along != 0.0 else 0.0)
        squares += diagonal * (diagonal - 2.0 * rank_one)
    s.path += 0.5 * squares  # KMWW eq. (8), Euclidean in theta (§6)
    if not _normalized(psi):  # exp, burg: the terms of the moved coordinates
        for q in range(nnz):
            i = base + (q if dense else x_ind[q])
            _terms(s, s.params.theta + i, s.params.num + i, s.params.den + i, 0.0, 1)
        return
    _recompute_row(s, j)


def _psi_dispatch(int psi):
    """Test hook: call each formula above on a row of two coordinates for ``psi``,
    as the loop calls it (the rescale of an implicit step's normalizer only for a
    normalized, non-geodesic psi): returns None
    for a code every formula serves, aborts the process otherwise
    (_unknown_psi)."""
    cdef State s
    cdef double theta[2]
    cdef double num[2]
    cdef double den[2]
    cdef double x[2]
    cdef double one = 1.0, zero = 0.0
    theta[0], theta[1], x[0], x[1] = -0.5, -0.25, 1.0, -2.0
    s.k, s.n, s.scratch.wx = 1, 2, &zero
    s.config.psi, s.config.U, s.config.p = psi, 1.0, 3.0
    s.config.binomial[0] = -1.0 / 3.0
    with nogil:
        _stored_terms(psi)
        _row_bound(psi, 1.0, 3.0, x, 2, 2)
        _terms(&s, theta, num, den, 1.0, 2)
        _scale_value(&s, 2.0, 1.0)
        _unscaled_weight(&s, num[0], den[0])
        if not _no_terms(psi):  # (the identity's natural step is its GD step)
            _rank_one_rate(&s, 0, 1.0)
        _normalizer_term(&s, num[0], den[0], theta[0], 1.0)
        if _normalized(psi) and not _geodesic(psi):  # (the implicit update's)
            _rescale(&s, 1.0, 2.0)
