# The options of the estimators, in a trial of their own (_trial_options), which
# _trial calls only when one is set (s.config.options): clipped predictions (GA^Y,
# KW01 §4), the square loss (GA_L, eq. 35), implicit updates (eq. 22, 25) solved per
# row by a bracketed root search on O(nnz) evaluations, natural updates (KMWW eq. 5;
# Dpsi in psi.pxi) and the geodesic psi's steps (KMWW Examples 2, 3). They reuse the
# row updates of dense_rows.pxi and csr_rows.pxi for the weights.


cdef bint _update_known(int update) noexcept nogil:
    """Whether update is one of the codes this loop implements (UpdateCode)."""
    return update in (UPDATE_EXPLICIT, UPDATE_IMPLICIT, UPDATE_NATURAL)


cdef bint _loss_known(int loss) noexcept nogil:
    """Whether loss is one of the codes this loop implements (LossCode)."""
    return loss in (LOSS_MATCHING, LOSS_SQUARE)


# The implicit equation is solved to this relative width of its bracket.
cdef double IMPLICIT_TOL = 4.0 * 2.220446049250313e-16
cdef int IMPLICIT_MAX_STEPS = 200


cdef double _row_dot(State* s, Py_ssize_t j, const double* x_val, const index_t* x_ind,
                     Py_ssize_t nnz, bint dense) noexcept nogil:
    """psi(theta_j) . x / scale_j."""
    cdef Py_ssize_t q, i, base = j * s.n
    cdef double total = 0.0
    for q in range(nnz):
        i = base + (q if dense else x_ind[q])
        total += _unscaled_weight(s, s.params.num[i], s.params.den[i]) * x_val[q]
    return total


cdef double _geodesic_dot(State* s, Py_ssize_t j, const double* x_val,
                          const index_t* x_ind, Py_ssize_t nnz) noexcept nogil:
    """psi(theta_j) . x / scale_j of a CSR row for the sphere or the simplex, whose
    terms hold theta; the same pass, which takes the row's cache misses, stores in
    s.scratch.geodesic what the step needs besides: with w = num (sphere) or num^2
    (simplex), sum x^2 (sphere) or scale sum w x^2 (simplex), sum |w x|, max |num|
    and max |x| (see _geodesic_sparse_row). One sum each, in the row's order: eight
    partial sums indexed by column, as the dense row's (ga_geodesic_sums), are
    slower here."""
    cdef Py_ssize_t q
    cdef const double* nums = s.params.num + j * s.n
    cdef double* sums = s.scratch.geodesic + j * GEODESIC_SUMS
    cdef double term, w, x, dot = 0.0, quad = 0.0, size = 0.0, top = 0.0, x_top = 0.0
    cdef double scale = s.params.scale[j]
    cdef bint sphere = _sphere(s.config.psi)
    # The loop below is long per coordinate: a whole row's loads would not fit in
    # the CPU's window of instructions in flight. Start every cache miss first.
    for q in range(nnz):
        __builtin_prefetch(nums + x_ind[q])
    for q in range(nnz):
        term, x = nums[x_ind[q]], x_val[q]
        w = term if sphere else term * term
        dot += w * x
        quad += x * x * (1.0 if sphere else scale * w)
        size += fabs(w * x)
        top = ga_greater(top, fabs(term))
        x_top = ga_greater(x_top, fabs(x))
    sums[0], sums[1], sums[2], sums[3], sums[4] = dot, quad, size, top, x_top
    return dot


cdef double _untouched_normalizer(State* s, Py_ssize_t j, const index_t* x_ind,
                                  Py_ssize_t nnz) noexcept nogil:
    """sum_i den_ji over the coordinates a (canonical, sorted) CSR row leaves alone,
    in units of s.scratch.rest_shift[j] (the row's shift unless set here)."""
    cdef Py_ssize_t q, i, base = j * s.n
    cdef double rest = s.params.norm[j], top = -INFINITY, num, den
    if nnz == s.n:
        return 0.0
    for q in range(nnz):
        i = base + x_ind[q]
        rest -= _normalizer_term(s, s.params.num[i], s.params.den[i], s.params.theta[i],
                                 s.params.shift[j])
    if rest >= 0.25 * s.params.norm[j]:
        return rest
    # The touched terms carry most of the normalizer: sum the others exactly, O(n),
    # in units of their own largest parameter (in the row's units, set by a touched
    # one, they may all underflow, and after the step they may weigh the most).
    q = 0
    for i in range(s.n):
        if q < nnz and x_ind[q] == i:
            q += 1
        else:
            top = fmax(top, s.params.theta[base + i] if _signed_shift(s.config.psi)
                       else fabs(s.params.theta[base + i]))
    if _power_terms(s.config.psi):
        if not top > 0.0:
            return 0.0  # the untouched parameters are all 0
        top = _pnorm_shift(top)
    rest = 0.0
    q = 0
    for i in range(s.n):
        if q < nnz and x_ind[q] == i:
            q += 1
        else:
            _terms(s, s.params.theta + base + i, &num, &den, top, 1)
            if not _two_terms(s.config.psi):
                den = num  # (the other psi have one term)
            rest += _normalizer_term(s, num, den, s.params.theta[base + i], top)
    s.scratch.rest_shift[j] = top
    return rest


cdef double _implicit_activation(State* s, Py_ssize_t j, double v, const double* x_val,
                                 const index_t* x_ind, Py_ssize_t nnz, bint dense,
                                 double h, double hb, double rest) noexcept nogil:
    """A_j(v) = psi(theta_j - h v x) . x + b_j - hb v (clipped), decreasing in v.

    ``rest`` is the normalizer of the coordinates x does not touch (0 for dense rows),
    in units of s.scratch.rest_shift[j].
    """
    cdef Py_ssize_t q, base = j * s.n
    cdef double shift = s.scratch.rest_shift[j], top, dot = 0.0, norm = rest
    cdef double scale = 1.0, a
    for q in range(nnz):
        # (A zero x_q, absent from a CSR row, keeps its parameter even where h v
        # overflows: no inf * 0.)
        s.scratch.row_theta[q] = s.params.theta[base + (q if dense else x_ind[q])] - (
            h * v * x_val[q] if x_val[q] != 0.0 else 0.0)
    if _no_terms(s.config.psi):
        for q in range(nnz):
            dot += s.scratch.row_theta[q] * x_val[q]
    else:
        if _normalized(s.config.psi) and nnz > 0:
            # Terms relative to the largest new parameter, so that none overflows.
            top = ga_max(s.scratch.row_theta, nnz, not _signed_shift(s.config.psi))
            if _power_terms(s.config.psi):
                top = _pnorm_shift(top)
            if norm == 0.0:
                # Nothing else in the normalizer (a dense row, or untouched
                # parameters all 0, as at the start): the new ones set the units,
                # however far from the row's shift (pnorm's powers would under- or
                # overflow).
                shift = top
            elif top > shift:
                norm *= _rescale(s, shift, top)
                shift = top
        _terms(s, s.scratch.row_theta, s.scratch.row_num, s.scratch.row_den, shift, nnz)
        for q in range(nnz):
            dot += (_unscaled_weight(s, s.scratch.row_num[q], s.scratch.row_den[q])
                    * x_val[q])
            norm += _normalizer_term(s, s.scratch.row_num[q], s.scratch.row_den[q],
                                     s.scratch.row_theta[q],
                                     shift)
        if _normalized(s.config.psi):
            scale = _scale_value(s, norm, shift)
    a = scale * dot + s.params.intercept[j] - hb * v
    # (Clipped by comparisons, which keep a NaN for the caller to report: fmin and
    # fmax would turn it into an end of the range.)
    if a < s.config.clip_low:
        return s.config.clip_low
    return s.config.clip_high if a > s.config.clip_high else a


cdef double _implicit_gap(State* s, Py_ssize_t j, double v, const double* x_val,
                          const index_t* x_ind, Py_ssize_t nnz, bint dense,
                          const double* y, double h, double hb) noexcept nogil:
    """F_j(v) = v - (phi_j - y_j) at A_j(v), increasing in v; j < 0: the softmax
    normalizer equation G(L) = -sum_l s_l(L), increasing in L = v.

    F_j's root is row j's residual of the implicit update, KW01 eq. (22) / (25); for
    softmax, phi_j = e^{A_j - L} with the log-normalizer L = s.scratch.lse held fixed.
    """
    cdef Py_ssize_t l
    cdef double a, total = 0.0
    if j < 0:
        s.scratch.lse = v
        for l in range(s.k):
            s.scratch.residual[l] = _softmax_row(s, l, x_val, x_ind, nnz, dense, y, h,
                                                 hb)
            total += s.scratch.residual[l]
        return -total
    a = _implicit_activation(s, j, v, x_val, x_ind, nnz, dense, h, hb,
                             s.scratch.rest[j])
    if _coupled(s.config.phi):
        return v - (exp(a - s.scratch.lse) - y[j])
    return v - (_phi_value(s.config.phi, a) - y[j])


cdef double _implicit_root(State* s, Py_ssize_t j, double lo, double flo, double hi,
                           const double* x_val, const index_t* x_ind, Py_ssize_t nnz,
                           bint dense, const double* y, double h,
                           double hb) noexcept nogil:
    """The root of _implicit_gap between lo (where F = flo) and hi, to machine
    precision.

    F is increasing and changes sign on [lo, hi]. Regula falsi with the Illinois
    modification converges superlinearly; bisection replaces a step that leaves the
    bracket or that twice in a row fails to halve it.
    """
    cdef double fhi, mid, fmid, width = fabs(hi - lo), last
    cdef int step, slow = 0
    if flo == 0.0:
        return lo
    fhi = _implicit_gap(s, j, hi, x_val, x_ind, nnz, dense, y, h, hb)
    if not fhi * flo < 0.0:
        # F(hi) = 0 up to rounding (or NaN, reported by the caller).
        return hi if fhi == fhi else fhi
    for step in range(IMPLICIT_MAX_STEPS):
        mid = hi - fhi * (hi - lo) / (fhi - flo)
        if slow >= 2 or not fmin(lo, hi) < mid < fmax(lo, hi):
            mid = 0.5 * (lo + hi)
        fmid = _implicit_gap(s, j, mid, x_val, x_ind, nnz, dense, y, h, hb)
        if fmid == 0.0 or fmid != fmid:
            return mid if fmid == 0.0 else fmid
        if fmid * fhi < 0.0:
            lo, flo = hi, fhi
        else:
            flo *= 0.5  # Illinois: the end point kept twice counts half
        hi, fhi = mid, fmid
        last, width = width, fabs(hi - lo)
        slow = slow + 1 if width > 0.5 * last else 0
        if width <= IMPLICIT_TOL * fmax(fabs(lo), fabs(hi)):
            break
    return hi


cdef double _softmax_row(State* s, Py_ssize_t j, const double* x_val,
                         const index_t* x_ind, Py_ssize_t nnz, bint dense,
                         const double* y, double h, double hb) noexcept nogil:
    """s_j(L): the root of v = e^{A_j(v) - L} - y_j for the fixed L = s.lse.

    As for a coordinate-wise phi, [0, r0] with r0 = e^{a_j - L} - y_j brackets it;
    when r0 overflows, the upper end doubles from 1 until F_j turns positive.
    """
    cdef double r0 = exp(s.scratch.a[j] - s.scratch.lse) - y[j], hi = 1.0
    cdef int step
    if r0 == 0.0 or r0 != r0:
        return r0
    if isfinite(r0):
        return _implicit_root(s, j, 0.0, -r0, r0, x_val, x_ind, nnz, dense, y, h, hb)
    for step in range(IMPLICIT_MAX_STEPS):
        if _implicit_gap(s, j, hi, x_val, x_ind, nnz, dense, y, h, hb) > 0.0:
            break
        hi *= 2.0
    return _implicit_root(s, j, 0.0, -r0, hi, x_val, x_ind, nnz, dense, y, h, hb)


cdef bint _implicit_residuals(State* s, const double* x_val, const index_t* x_ind,
                              Py_ssize_t nnz, bint dense, const double* y, double h,
                              double hb) noexcept nogil:
    """Replace s.scratch.residual (the explicit residuals) by the solution of KW01
    eq. (22)/(25).

    Coordinate-wise phi: one scalar equation per row, bracketed by [0, r0] since
    F_j(0) = -r0 and F_j(r0) has the sign of r0 (r0 = phi(a_j) - y_j).
    Softmax couples the rows through its log-normalizer L = lse_l A_l(s_l). For a
    fixed L each row's equation s_j = e^{A_j(s_j) - L} - y_j is again monotone, with
    root s_j(L) decreasing in L; the solution is the L where sum_j s_j(L) = 0 (the
    rows of y sum to 1). At the solution s_j lies in [-y_j, 1 - y_j], so L lies
    between lse_j A_j(1 - y_j) and lse_j A_j(-y_j), where the outer root is searched.
    Returns False on NaN.
    """
    cdef Py_ssize_t j
    cdef double v, low, high, top_low = -INFINITY, top_high = -INFINITY
    cdef double sum_low = 0.0, sum_high = 0.0
    for j in range(s.k):
        s.scratch.rest_shift[j] = s.params.shift[j]
        s.scratch.rest[j] = (_untouched_normalizer(s, j, x_ind, nnz)
                     if not dense and _normalized(s.config.psi) else 0.0)
    if not _coupled(s.config.phi):
        for j in range(s.k):
            v = s.scratch.residual[j]
            if v != 0.0:
                v = _implicit_root(s, j, 0.0, -v, v, x_val, x_ind, nnz, dense, y, h, hb)
            if v != v:
                return False
            s.scratch.residual[j] = v
        return True
    for j in range(s.k):
        # A_j(1 - y_j) and A_j(-y_j), kept in wx and residual for the log-sum-exp.
        s.scratch.wx[j] = _implicit_activation(s, j, 1.0 - y[j], x_val, x_ind, nnz,
                                               dense, h, hb, s.scratch.rest[j])
        s.scratch.residual[j] = _implicit_activation(s, j, -y[j], x_val, x_ind, nnz,
                                                     dense, h, hb, s.scratch.rest[j])
        top_low = fmax(top_low, s.scratch.wx[j])
        top_high = fmax(top_high, s.scratch.residual[j])
    for j in range(s.k):
        sum_low += exp(s.scratch.wx[j] - top_low)
        sum_high += exp(s.scratch.residual[j] - top_high)
    low, high = top_low + log(sum_low), top_high + log(sum_high)
    if not low < high:
        high = low
    v = _implicit_root(s, -1, low, _implicit_gap(s, -1, low, x_val, x_ind, nnz, dense,
                                                 y, h, hb),
                       high, x_val, x_ind, nnz, dense, y, h, hb)
    if v != v:
        return False
    _implicit_gap(s, -1, v, x_val, x_ind, nnz, dense, y, h, hb)  # s_j(L) at the root
    for j in range(s.k):
        if s.scratch.residual[j] != s.scratch.residual[j]:
            return False
    return True


cdef bint _geodesic_step(State* s, Py_ssize_t j, double eta, double r,
                         const double* x_val, const index_t* x_ind, Py_ssize_t nnz,
                         bint dense) noexcept nogil:
    """Move omega_j along the geodesic of -eta grad L, grad_omega L = r x (KMWW eq. 10).

    Sphere of radius R = U (Example 2): V = r (x - omega c / R^2), c = omega . x, and
    omega' = omega cos(eta |V| / R) - R V / |V| sin(eta |V| / R) = alpha omega - beta x.
    Simplex, Fisher metric (Example 3): u = sqrt(omega) on the unit sphere,
    V = r u (x - c), |V|^2 = r^2 (sum omega x^2 - c^2) and
    u' = u cos(eta |V| / 2) - V / |V| sin(eta |V| / 2) = u (alpha - beta x).
    theta matters only up to a positive factor (omega = R theta / |theta| or
    theta^2 / |theta|^2), so while alpha >= 1/2 theta takes the O(nnz) step
    theta - (beta / alpha) (x or theta x); otherwise the row is rebuilt from omega'.
    False if |V| is not finite (|x|^2 overflowed): a divergence.
    """
    cdef Py_ssize_t q, i, base = j * s.n
    # c and quad were summed in the dot product's pass.
    cdef double c = s.scratch.wx[j], quad = s.scratch.geodesic[j * GEODESIC_SUMS + 1]
    cdef double radius, g, angle, ratio, alpha, beta, scale
    cdef double sign = 1.0 if r > 0.0 else -1.0
    cdef bint sphere = _sphere(s.config.psi), lazy
    radius = s.config.U if sphere else 2.0
    # (c / R)^2 <= quad: c * c alone may overflow where quad does not.
    g = quad - (c / radius) * (c / radius) if sphere else quad - c * c
    if not isfinite(g):
        return False
    if not g > 0.0:
        return True  # the gradient is normal to the manifold: no move
    g = sqrt(g)  # |V| = |r| g
    # The geodesic is eta |V| long (KMWW §3.2): D of the step, eq. (8).
    s.path += 0.5 * (eta * fabs(r) * g) * (eta * fabs(r) * g)
    angle = eta * fabs(r) * g / radius
    ratio = sin(angle) * sign / g  # sin(angle) r / |V|
    if sphere:
        alpha = cos(angle) + ratio * c / radius
        beta = radius * ratio
    else:
        alpha = cos(angle) + ratio * c
        beta = ratio
    if alpha >= 0.5:
        # Sphere: theta = omega shift / scale, theta' = theta - (beta / alpha)
        # shift / scale x; simplex: theta' = theta (1 - (beta / alpha) x).
        scale = beta / alpha * (s.params.shift[j] / s.params.scale[j] if sphere
                                else 1.0)
        if not dense:
            _geodesic_sparse_row(s, j, scale, x_val, x_ind, nnz)
        elif sphere:
            _update_dense_row(s, j, scale, x_val, 0.0)
        else:
            for q in range(nnz):
                s.params.theta[base + q] -= ((scale * s.params.theta[base + q])
                                             * x_val[q])
            _recompute_row(s, j)
        return True
    # A long step: rebuild the row as omega' (sphere) or u' up to a factor (simplex).
    _guard_rows(s)
    if s.params.lazy:
        _sync_theta_row(s, j)
    for q in range(nnz):
        s.scratch.row_x[q] = s.params.theta[base + (q if dense else x_ind[q])]
    for i in range(s.n):
        if sphere:
            s.params.theta[base + i] = (alpha * s.params.scale[j]
                                        * s.params.num[base + i])
        else:
            s.params.theta[base + i] *= alpha
    for q in range(nnz):
        i = base + (q if dense else x_ind[q])
        if sphere:
            s.params.theta[i] -= beta * x_val[q]
        else:
            s.params.theta[i] = s.scratch.row_x[q] * (alpha - beta * x_val[q])
    # Theta was rebuilt: it holds the row, not the terms.
    lazy, s.params.lazy = s.params.lazy, False
    _recompute_row(s, j)
    s.params.lazy = lazy
    return True


cdef void _pull(State* s, Py_ssize_t j) noexcept nogil:
    """The penalty alpha Delta_psi(Theta, Theta_1) toward the start Theta_1 = 0:
    theta_j <- (1 - eta alpha) theta_j before the trial's step, as SGD's L2 penalty
    scales its weights (by 0 where eta alpha > 1); the update rule's own step
    follows, from the pulled theta.

    psi = identity and pnorm (_homogeneous) under the explicit rule take the factor
    into their decay and scale, O(1) (the step of the stored row is divided by the
    decay); otherwise theta is scaled and the row's terms recomputed, O(n)
    (exponentials for the exponential psi).
    """
    cdef Py_ssize_t i, base = j * s.n
    cdef double factor = fmax(0.0, 1.0 - s.config.eta * s.config.alpha)
    if factor == 1.0:
        return
    if _homogeneous(s.config.psi) and s.config.update == UPDATE_EXPLICIT:
        s.params.decay[j] *= factor
        s.params.scale[j] *= factor
        if s.params.decay[j] < DECAY_FLOOR:
            _fold_decay(s, j)
        return
    _guard_rows(s)
    if s.avg.acc != NULL:
        _rebase_row(s, j)  # (the identity's terms are theta)
    for i in range(base, base + s.n):
        s.params.theta[i] *= factor
    _recompute_row(s, j)


cdef bint _trial_options(State* s, const double* x_val, const index_t* x_ind,
                         Py_ssize_t nnz, bint dense, const double* y, double weight,
                         double* loss) noexcept nogil:
    """One trial of GA with the options: clipped predictions (GA^Y, KW01 §4), the
    square loss (GA_L, eq. 35), implicit (eq. 22) or natural (KMWW eq. 5) updates
    and geodesic parameterizations (KMWW Examples 2, 3)."""
    cdef Py_ssize_t j
    cdef double r, x_top = 0.0, eta = s.config.eta * weight
    cdef double step_scale = s.config.eta * weight
    cdef double eta_b = (s.config.eta_intercept * weight if s.config.fit_intercept
                         else 0.0)
    cdef double moved = 0.0, stepped = 0.0  # sum r^2 of the additive, of all steps
    for j in range(s.k):
        if not _geodesic(s.config.psi):
            s.scratch.wx[j] = s.params.scale[j] * _row_dot(s, j, x_val, x_ind, nnz,
                                                           dense)
        elif dense:
            s.scratch.wx[j] = s.params.scale[j] * ga_geodesic_sums(
                s.params.num + j * s.n, x_val, nnz, s.params.scale[j],
                _simplex(s.config.psi), s.scratch.geodesic + j * GEODESIC_SUMS + 1)
        else:
            s.scratch.wx[j] = s.params.scale[j] * _geodesic_dot(s, j, x_val, x_ind, nnz)
        s.scratch.a[j] = s.scratch.wx[j] + s.params.intercept[j]
        if not isfinite(s.scratch.a[j]):
            return False
        # GA^Y: clipping phi(a) to [-Y, Y] is clipping a to [phi^-1(-Y), phi^-1(Y)].
        s.scratch.a[j] = fmin(fmax(s.scratch.a[j], s.config.clip_low),
                              s.config.clip_high)
    s.scratch.dot_ready = False
    loss[0] = _transfer_and_loss(s, y)
    if s.config.loss_kind == LOSS_SQUARE:
        loss[0] = _square_loss(s, y)
    else:
        for j in range(s.k):
            s.scratch.residual[j] = s.scratch.y_hat[j] - y[j]
    if not isfinite(loss[0]):
        return False
    if _two_terms(s.config.psi) and s.config.update != UPDATE_NATURAL:
        step_scale *= s.config.U  # HKW §III, as in _trial
    if _multiplicative(s, 0.0, 0.0) and nnz > 0:  # psi with multiplicative steps
        x_top = ga_max(x_val, nnz, 1)
    if s.config.alpha > 0.0:  # the penalty's step comes before the update rule's
        for j in range(s.k):
            _pull(s, j)
        if s.config.update != UPDATE_EXPLICIT:
            # The natural rule's Dpsi and the implicit equation (its bracket from the
            # residual) are taken at the pulled parameters.
            for j in range(s.k):
                s.scratch.wx[j] = s.params.scale[j] * _row_dot(s, j, x_val, x_ind,
                                                               nnz, dense)
                s.scratch.a[j] = fmin(fmax(s.scratch.wx[j] + s.params.intercept[j],
                                           s.config.clip_low), s.config.clip_high)
            _transfer_and_loss(s, y)
            if s.config.loss_kind == LOSS_SQUARE:
                _square_loss(s, y)
            else:
                for j in range(s.k):
                    s.scratch.residual[j] = s.scratch.y_hat[j] - y[j]
    # KW01 eq. (22): the residuals at the new parameters, not at the old ones.
    if s.config.update == UPDATE_IMPLICIT and not _implicit_residuals(
            s, x_val, x_ind, nnz, dense, y, step_scale, eta_b):
        return False
    for j in range(s.k):
        r = s.scratch.residual[j]
        if r == 0.0:
            continue
        if s.avg.acc != NULL:
            _settle_columns(s, j, x_ind, nnz, dense)
        if _geodesic(s.config.psi):
            if not _geodesic_step(s, j, eta, r, x_val, x_ind, nnz, dense):
                return False
        elif not isfinite(step_scale * r):
            # eta U overflowed: the step of a coordinate with x_i != 0 is infinite, a
            # divergence; a row without one changes no parameter. The same on dense
            # and CSR rows (a zero of a dense row is an absent entry of a CSR one).
            if nnz > 0 and ga_max(x_val, nnz, 1) > 0.0:
                return False
        elif s.config.update == UPDATE_NATURAL and not _no_terms(s.config.psi):
            _natural_step(s, j, step_scale * r, x_val, x_ind, nnz, dense)
        elif dense:
            _update_dense_row(s, j, step_scale * r / s.params.decay[j], x_val, x_top)
            moved += r * r
        else:
            _update_sparse_row(s, j, step_scale * r / s.params.decay[j], x_val, x_ind,
                               nnz, x_top)
            moved += r * r
        stepped += r * r
        if s.config.fit_intercept:
            s.params.intercept[j] -= eta_b * r
    # D of the additive rows' steps and of every intercept's (the geodesic and
    # natural steps added their rows'; a penalty's pull is not counted).
    if moved != 0.0:
        _add_path(s, moved, step_scale * step_scale * ga_dot(x_val, x_val, nnz), 0.0)
    _add_path(s, stepped, 0.0, eta_b)
    return True
