# The trial driver: one trial of KW01 Figure 5 (_trial: activation, phi and loss,
# step of every row), the CSR runs (row by row, or output by output when a
# coordinate-wise phi leaves the outputs apart; theta held outputs innermost for
# psi = identity) and the final check that the state is finite.

cdef bint _trial_columns(State* s, const double* x_val, const index_t* x_ind,
                         Py_ssize_t nnz, const double* y, double weight,
                         double* loss) noexcept nogil:
    """_trial of psi = identity with k > 1 outputs on a CSR row, theta held with its
    outputs innermost (s.scratch.theta_t, _columns_first): the row's k x nnz
    parameters lie in nnz runs of k, a few cache lines each, instead of k x nnz
    lines. The sums and steps are those of _sparse_dot and _sparse_axpy, in their
    order."""
    cdef Py_ssize_t q, j, k = s.k, tail = nnz - nnz % 4
    cdef double* column
    cdef double* sums
    cdef double value, residual, moved = 0.0, squares = 0.0
    for j in range(4 * k):
        s.scratch.sums[j] = 0.0
    for q in range(nnz):
        column = s.scratch.theta_t + x_ind[q] * k
        # _sparse_dot's partial sums.
        sums = s.scratch.sums + (q % 4 if q < tail else 0) * k
        value = x_val[q]
        squares += value * value  # (the length of the step, KMWW eq. 8)
        for j in range(k):
            sums[j] += column[j] * value
    sums = s.scratch.sums
    for j in range(k):
        s.scratch.a[j] = (s.params.scale[j] * ((sums[j] + sums[k + j])
                                               + (sums[2 * k + j] + sums[3 * k + j]))
                          + s.params.intercept[j])
        if not isfinite(s.scratch.a[j]):
            return False
    loss[0] = _transfer_and_loss(s, y)
    if not isfinite(loss[0]):
        return False
    for j in range(k):
        residual = s.scratch.y_hat[j] - y[j]
        # The step (0 leaves theta as it is).
        s.scratch.residual[j] = s.config.eta * weight * residual
        moved += residual * residual
        if s.config.fit_intercept:
            s.params.intercept[j] -= s.config.eta_intercept * weight * residual
    if moved != 0.0:
        _add_path(s, moved, (s.config.eta * weight) * (s.config.eta * weight) * squares,
                  s.config.eta_intercept * weight)
    for q in range(nnz):
        column = s.scratch.theta_t + x_ind[q] * k
        value = x_val[q]
        for j in range(k):
            column[j] = column[j] - s.scratch.residual[j] * value
    return True


cdef void _swap_layout(State* s, bint inward) noexcept nogil:
    """Copy theta (k x n) to s.scratch.theta_t (n x k), or back, in tiles of 64
    columns: a tile of theta_t is contiguous (it stays in cache), and each output's
    64 values in theta too. No inner loop walks across theta's rows, which lie n
    apart: a power of two puts them in the same cache sets, and their lines evict
    each other.
    """
    cdef Py_ssize_t i, j, start, end, k = s.k
    cdef double* row
    for start in range(0, s.n, 64):
        end = min(start + 64, s.n)
        for j in range(k):
            row = s.params.theta + j * s.n
            if inward:
                for i in range(start, end):
                    s.scratch.theta_t[i * k + j] = row[i]
            else:
                for i in range(start, end):
                    row[i] = s.scratch.theta_t[i * k + j]


cdef inline bint _columns_first(State* s, Py_ssize_t entries) noexcept nogil:
    """Whether a CSR run of ``entries`` stored values holds theta outputs innermost
    (_trial_columns): psi = identity with k > 1 outputs, and enough entries per
    column that the two transpositions (O(k n)) cost less than the cache lines they
    save (k - 1 per entry). Outputs that a coordinate-wise phi leaves apart
    (_outputs_apart, the same steps) already read one row of theta at a time, which
    fits the caches better than all of theta, so that for them the transpositions
    pay only from about 4 entries per column; coupled outputs (softmax) gain from
    about 1 entry per column on (benchmarks/bench_sparse.py measures both)."""
    return (_no_terms(s.config.psi) and not s.config.options and s.k > 1
            and s.avg.acc == NULL
            and s.k * s.n <= COLUMNS_FIRST_LIMIT
            and entries >= (4 if _outputs_apart(s) else 1) * s.n)


cdef inline void _add_path(State* s, double moved, double row_scale,
                          double eta_b) noexcept nogil:
    """Add D of an additive step to s.path (KMWW eq. 8, Euclidean in theta): each
    row j moved by r_j * step x with |step x|^2 = ``row_scale``, its intercept by
    r_j ``eta_b`` (a coordinate of its own), where sum_j r_j^2 = ``moved``."""
    s.path += 0.5 * moved * (row_scale
                             + (eta_b * eta_b if s.config.fit_intercept else 0.0))


cdef inline bint _trial(State* s, const double* x_val, const index_t* x_ind,
                        Py_ssize_t nnz, bint dense, const double* x_next,
                        const double* y, double weight, double* loss) noexcept nogil:
    """One trial of KW01 Figure 5; returns False if anything became non-finite.

    ``x_next`` (dense rows, may be NULL) is the next trial's row: with a psi of
    _fused_dot its dot products are summed in the same pass as this trial's update.
    """
    cdef Py_ssize_t j, q
    cdef double residual, dot, x_top = -1.0, moved = 0.0
    cdef double step_scale = s.config.eta * weight
    # |x|^2, if the last trial's fused pass summed it (-1: not yet).
    cdef double squares = s.scratch.x_squares if s.scratch.squares_ready else -1.0
    cdef double tops[2]
    cdef bint fuse = dense and x_next != NULL and _fused_dot(s.config.psi)
    if s.config.options:
        return _trial_options(s, x_val, x_ind, nnz, dense, y, weight, loss)
    if s.scratch.theta_t != NULL:
        return _trial_columns(s, x_val, x_ind, nnz, y, weight, loss)
    if s.avg.acc != NULL and not dense:
        _prefetch_averages(s, x_ind, nnz)
    for j in range(s.k):
        if s.scratch.dot_ready:
            dot = s.scratch.dot[j]
        elif _two_terms(s.config.psi) and dense:
            dot = ga_dot_diff(s.params.num + j * s.n, s.params.den + j * s.n, x_val,
                              nnz)
        elif _two_terms(s.config.psi) and s.params.lazy:
            dot = _sparse_dot_held(s.params.num + j * s.n, s.params.product[j], x_val,
                                   x_ind, nnz, _held_row(s, j))
        elif _power_terms(s.config.psi) and not dense:
            dot = ga_dot(_pnorm_gather(s, j, x_ind, nnz), x_val, nnz)
        elif _two_terms(s.config.psi):
            dot = _sparse_dot_diff(s.params.num + j * s.n, s.params.den + j * s.n,
                                   x_val, x_ind, nnz)
        elif dense and j == 0:
            # max |x| and |x|^2 in the pass that reads x for the dot product.
            dot = ga_dot_top(s.params.num, x_val, nnz, tops)
            x_top, squares = tops[0], tops[1]
        elif dense:
            dot = ga_dot(s.params.num + j * s.n, x_val, nnz)
        else:
            dot = _sparse_dot(s.params.num + j * s.n, x_val, x_ind, nnz, &squares)
        s.scratch.a[j] = s.params.scale[j] * dot + s.params.intercept[j]
        if not isfinite(s.scratch.a[j]):
            return False
    s.scratch.dot_ready = False
    loss[0] = _transfer_and_loss(s, y)
    if not isfinite(loss[0]):
        return False
    if _two_terms(s.config.psi):
        # HKW §III: EG on x' = (Ux, -Ux), so the parameter step carries a factor U.
        step_scale *= s.config.U
    if _no_terms(s.config.psi) or _power_terms(s.config.psi) or nnz == 0:
        x_top = 0.0  # (no bound needed)
    elif dense and s.scratch.x_top_ready:
        x_top = s.scratch.x_top
    elif x_top < 0.0:
        x_top = ga_max(x_val, nnz, 1)
    s.scratch.x_top_ready = s.scratch.squares_ready = False
    for j in range(s.k):
        residual = s.scratch.y_hat[j] - y[j]
        moved += residual * residual
        # KW01 eq. (20): theta_j <- theta_j - eta (y_hat_j - y_j) x.
        if residual == 0.0:
            if fuse and _two_terms(s.config.psi):
                s.scratch.dot[j] = ga_dot_diff(s.params.num + j * s.n,
                                               s.params.den + j * s.n, x_next, nnz)
            elif fuse:
                s.scratch.dot[j] = ga_dot(s.params.num + j * s.n, x_next, nnz)
            continue
        if s.avg.acc != NULL:
            _settle_columns(s, j, x_ind, nnz, dense)
        if fuse and _two_terms(s.config.psi):
            s.scratch.dot[j] = _update_pm_row(s, j, step_scale * residual, x_val,
                                              x_next, x_top)
        elif fuse and _no_terms(s.config.psi):
            s.scratch.dot[j] = ga_axpy_dot(s.params.theta + j * s.n,
                                           step_scale * residual, x_val, x_next, nnz,
                                           &s.scratch.x_squares)
            s.scratch.squares_ready = True
        elif fuse:
            s.scratch.dot[j] = _update_terms_row(s, j, step_scale * residual, x_val,
                                                 x_next, x_top)
        elif dense:
            _update_dense_row(s, j, step_scale * residual, x_val, x_top)
        else:
            _update_sparse_row(s, j, step_scale * residual, x_val, x_ind, nnz, x_top)
        if s.config.fit_intercept:
            s.params.intercept[j] -= s.config.eta_intercept * weight * residual
    s.scratch.dot_ready = fuse
    if moved != 0.0:
        if squares < 0.0:  # (not summed by the last trial's pass)
            squares = ga_dot(x_val, x_val, nnz)
        _add_path(s, moved, step_scale * step_scale * squares,
                  s.config.eta_intercept * weight)
    return True


cdef inline bint _outputs_apart(State* s) noexcept nogil:
    """Whether a CSR run learns the k outputs one after another over the whole
    batch, as SGDClassifier's one-vs-rest does. A trial of all k rows reads k x nnz
    parameters spread over k x n x 8 bytes, beyond the caches for wide X (20 classes
    of 2^18 features: 42 MB). Outputs interact only through a coupled phi
    (softmax)."""
    return s.k > 1 and not _coupled(s.config.phi)


cdef Params _output_params(const Params* p, Py_ssize_t j, Py_ssize_t n) noexcept nogil:
    """Output j's row of the parameters and of their per-output values."""
    cdef Params row = p[0]
    row.theta, row.num, row.den = p.theta + j * n, p.num + j * n, p.den + j * n
    row.intercept, row.norm, row.shift = p.intercept + j, p.norm + j, p.shift + j
    row.scale, row.mass, row.age = p.scale + j, p.mass + j, p.age + j
    row.product, row.anchor = p.product + j, p.anchor + j
    row.anchor_power, row.decay = p.anchor_power + j, p.decay + j
    return row


cdef Averages _output_averages(const Averages* avg, Py_ssize_t j,
                               Py_ssize_t n) noexcept nogil:
    """Output j's row of the averages."""
    cdef Averages row = avg[0]
    if avg.acc != NULL:
        row.acc = avg.acc + 2 * j * n
    row.scales, row.since = avg.scales + j, avg.since + j
    row.b, row.count = avg.b + j, avg.count + j
    return row


cdef State _output_state(State* s, Py_ssize_t j) noexcept nogil:
    """Output j of a state as a state of its own (k = 1): its rows of parameters,
    averages and per-output scratch; the configuration, the row scratch and the
    backup of every row (_guard_rows) shared."""
    cdef State one = s[0]
    cdef Scratch* scratch = &one.scratch
    one.k = 1
    one.parent = s
    one.params = _output_params(&s.params, j, s.n)
    one.avg = _output_averages(&s.avg, j, s.n)
    scratch.a, scratch.y_hat, scratch.dot = (scratch.a + j, scratch.y_hat + j,
                                             scratch.dot + j)
    scratch.residual, scratch.wx = scratch.residual + j, scratch.wx + j
    scratch.rest, scratch.rest_shift = scratch.rest + j, scratch.rest_shift + j
    scratch.geodesic += j * GEODESIC_SUMS
    if scratch.row_held != NULL:
        scratch.row_held = _held_row(s, j)
    return one


cdef inline bint _row_readable(const index_t* columns, Py_ssize_t start,
                               Py_ssize_t end, Py_ssize_t stored,
                               Py_ssize_t n) noexcept nogil:
    """Whether a CSR row's entries lie within the ``stored`` ones and its indices
    strictly increase within [0, n) (csr_structure's checks, on one row)."""
    cdef index_t low, high
    cdef int64_t decreases
    if not 0 <= start <= end <= stored:
        return False
    if start == end:
        return True
    if index_t is int32_t:
        decreases = ga_index_scan32(columns + start, end - start, &low, &high)
    else:
        decreases = ga_index_scan64(columns + start, end - start, &low, &high)
    return decreases == 0 and low >= 0 and high < n


cdef inline const double* _per_trial(const double[:, ::1] rates):
    """The per-trial rates of a run (_trial_rates), NULL for none."""
    return &rates[0, 0] if rates is not None and rates.shape[0] > 0 else NULL


cdef inline void _trial_rates(State* s, const double* rates,
                              Py_ssize_t t) noexcept nogil:
    """Set the rates of trial ``t`` of a run from its per-trial ``rates`` (pairs of
    the weights' and the intercepts' rates), if it has them (not NULL)."""
    if rates != NULL:
        s.config.eta, s.config.eta_intercept = rates[2 * t], rates[2 * t + 1]


cdef inline void _begin_run(State* s) noexcept nogil:
    """Before the first trial of a run: no dot product or row sums are carried
    over from another run's last trial (the fused passes')."""
    s.scratch.dot_ready = s.scratch.x_top_ready = s.scratch.squares_ready = False


cdef inline bint _run_trial(State* s, const double* x_val, const index_t* x_ind,
                            Py_ssize_t nnz, bint dense, const double* x_next,
                            const double* y, double weight,
                            double* loss) noexcept nogil:
    """A trial of a run, with what every run does after it: the averages, the
    cumulative loss, and for a CSR row the count of coordinates touched, whose
    limit recomputes the normalizers of the normalized psi. False if it failed
    (the state must be restored)."""
    if not _trial(s, x_val, x_ind, nnz, dense, x_next, y, weight, loss):
        return False
    _average_trial(s)
    s.loss_sum += weight * loss[0]
    if not dense:
        s.params.touched += nnz
        if s.params.touched >= TOUCH_LIMIT * s.n and _normalized(s.config.psi):
            _recompute_all(s)
    return True


cdef inline bint _end_run(State* s, const index_t* columns, Py_ssize_t nnz,
                          bint ok) noexcept nogil:
    """After the last trial of a run that ``ok`` says succeeded: the scales folded
    into the terms, and whether the state is finite (``columns``: the
    coordinates a journaled CSR batch touched, see _state_finite)."""
    if ok:
        _fold_all(s)
    return ok and _state_finite(s, columns, nnz)


cdef (bint, Py_ssize_t, double) _run_trials(
        State* s, const double* values, const index_t* columns, const index_t* indptr,
        Py_ssize_t stored, const double[:, ::1] Y, Py_ssize_t output,
        const double[::1] sample_weight, const Py_ssize_t[::1] order,
        const double* rates, Py_ssize_t limit, const float* values32,
        double* row64) noexcept nogil:
    """The first ``limit`` trials of a CSR run, whose targets start at column
    ``output`` of Y, at the per-trial ``rates`` (_trial_rates); a lazy run ends
    with theta written back (_sync_theta). With ``stored`` >= 0 (the entries the
    arrays hold), each row is checked before its trial (_row_readable), and one
    that fails stops the run (s.unreadable). The values are ``values``, or, if
    not NULL, the float32 ``values32``: each row's converted into ``row64`` (room
    for the longest) just before its trial. Returns (ok, trials done or the one
    that failed, the sum of the weighted losses)."""
    cdef Py_ssize_t t = 0, r, start, nnz, seen = 0
    cdef bint weighted = sample_weight.shape[0] > 0, ok = True
    cdef double loss, total = 0.0, weight = 1.0
    cdef const double* x_val
    while t < limit:
        _trial_rates(s, rates, t)
        s.trial = t
        r = order[t]
        start = indptr[r]
        if stored >= 0 and not _row_readable(columns, start, indptr[r + 1], stored,
                                             s.n):
            s.unreadable, ok = True, False
            break
        nnz = indptr[r + 1] - start
        seen += nnz
        if weighted:
            weight = sample_weight[r]
        if values32 != NULL:
            _float64_row(values32 + start, row64, nnz)
            x_val = row64
        else:
            x_val = values + start
        ok = _run_trial(s, x_val, columns + start, nnz, False, NULL, &Y[r, output],
                        weight, &loss)
        if not ok:
            break
        total += weight * loss
        t += 1
    if s.params.lazy:
        # (A failed trial wrote to its row's columns; an unreadable row was not run.)
        _sync_theta(s, columns, indptr, &order[0], t + (not ok and not s.unreadable),
                    seen)
    return ok, t, total


cdef (bint, Py_ssize_t, double) _run_outputs_apart(
        State* s, const double* values, const index_t* columns, const index_t* indptr,
        Py_ssize_t stored, const double[:, ::1] Y, const double[::1] sample_weight,
        const Py_ssize_t[::1] order, const double* rates, const float* values32,
        double* row64) noexcept nogil:
    """The trials of a CSR run, output by output (_outputs_apart): each output takes
    the steps it takes in a trial of all of them, at the same rates (the values as
    _run_trials reads them). Returns (ok, trials done or the
    first that failed in any output, the sum of the weighted losses)."""
    cdef State one
    cdef Py_ssize_t j, t, limit = order.shape[0]
    cdef bint ok = True, done
    cdef double total = 0.0, loss
    for j in range(s.k):
        one = _output_state(s, j)
        one.path = one.loss_sum = 0.0
        done, t, loss = _run_trials(&one, values, columns, indptr, stored, Y, j,
                                    sample_weight, order, rates, limit, values32,
                                    row64)
        total += loss
        s.path += one.path
        s.loss_sum += one.loss_sum
        if one.unreadable:
            # The first output checked every row up to it: the run stops there.
            s.unreadable = True
            ok, limit = False, t
            break
        if not done:
            # The others run up to it: the trial reported is the first to fail in
            # any output.
            ok, limit = False, t
    s.params.touched, s.params.lazy = one.params.touched, False
    return ok, limit, total


cdef bint _state_finite(State* s, const index_t* columns,
                        Py_ssize_t nnz) noexcept nogil:
    """Whether the parameters, terms and scales are all finite. ``columns``, if not
    NULL, are all the coordinates a journaled CSR batch touched (TrialLoop.save):
    unless a row was written in O(n) (_guard_rows), the others are as they were."""
    cdef Py_ssize_t q, j, c, size = s.k * s.n
    for q in range(s.k):
        if not isfinite(s.params.intercept[q]) or not isfinite(s.params.scale[q]):
            return False
    # (Theta held outputs innermost: num and den are theta.)
    if s.scratch.theta_t != NULL:
        return ga_sum(s.scratch.theta_t, 0.0, size) == 0.0
    if columns != NULL and s.journal.backup != NULL and not s.journal.backed_up:
        for q in range(nnz):
            for j in range(s.k):
                c = j * s.n + columns[q]
                if not (isfinite(s.params.theta[c]) and isfinite(s.params.num[c])
                        and isfinite(s.params.den[c])):
                    return False
        return True
    # The sums are 0, or NaN if any term is not finite (num and den may be theta:
    # one pass over k n values each).
    return (ga_sum(s.params.theta, 0.0, size) == 0.0
            and (s.params.num == s.params.theta
                 or ga_sum(s.params.num, 0.0, size) == 0.0)
            and (s.params.den == s.params.num
                 or ga_sum(s.params.den, 0.0, size) == 0.0))
