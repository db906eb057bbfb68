# The one-row calls of a stream (test-then-train, one event at a time): a trial on
# one row, dense or CSR, or its activations, in one compiled call each. A call does
# what the general path does around a one-trial run (the rate's bound, the save
# that undoes a failed trial, the runaway check's reference), so that it costs
# little more than the trial itself; the estimators' _one_row.py decides when it
# applies.


cdef class OneRow:
    """One-row trials and activations on a :class:`TrialLoop`.

    Parameters
    ----------
    loop : TrialLoop
        The loop that the calls read and train.
    start : ndarray of shape (n,), float64, or None
        psi(Theta_1), the weights of the initial model whose loss on each row the
        runaway check compares with (None: weights 0).
    runaway_ratio : float
        A trial whose cumulative loss exceeds this many times the initial model's
        is not taken (0: no check; see ``may_run_away``).
    bound_limit : float
        A row whose bound exceeds it is not taken (infinite: no bound is computed).
    growth : float
        The power of the largest |target| in the row bound of psi = exp and burg
        (``TheoryRates.growth``); 0 for the other psi.
    average : int
        The trial (counted since the model was reset, from 1) from which an
        averaging loop averages (SGD's ``average``).
    """
    cdef TrialLoop loop
    cdef const double[::1] start
    cdef bint has_start
    cdef double runaway_ratio, growth
    # A row of a larger weight, or whose bound times its weight is larger, is not
    # taken (a River learner's eta="theory" sets them as its rate falls).
    cdef public double bound_limit, weight_limit
    cdef Py_ssize_t average

    def __init__(self, TrialLoop loop, start, double runaway_ratio,
                 double bound_limit, double growth, Py_ssize_t average):
        self.loop = loop
        self.has_start = start is not None
        if self.has_start:
            self.start = start
        self.runaway_ratio, self.bound_limit = runaway_ratio, bound_limit
        self.weight_limit = INFINITY
        self.growth, self.average = growth, average

    def bound(self, const double[:, ::1] X, const double[::1] y):
        """The row bound of the one dense row of X (of target y): for the tests."""
        return self._bound(&X[0, 0], self.loop.s.n, &y[0])

    cdef double _bound(self, const double* x, Py_ssize_t nnz,
                       const double* y) noexcept nogil:
        """The row bound (bounds.pxi) of the row of ``nnz`` stored values x."""
        cdef State* s = &self.loop.s
        return (_row_bound(s.config.psi, s.config.U, s.config.p, x, nnz, s.n)
                * _target_growth(y, s.k, 1, self.growth))

    def activations(self, const double[:, ::1] X, bint outputs=False):
        """``X psi(Theta)^T + b`` of one dense row X of n features, as a new (1, k)
        array; with ``outputs``, phi of them (clipped to Y's bounds: the
        predictions of a regressor). None if one is not finite (the general path
        reports it), while a run of the loop is under way in another thread, or
        while one holds theta in another layout (the general path then reads the
        weights).
        """
        if X.shape[0] != 1 or X.shape[1] != self.loop.s.n:
            return None
        return self._activations(&X[0, 0], NULL, X.shape[1], outputs)

    def activations_csr(self, const double[::1] data, const int32_t[::1] indices,
                        const int32_t[::1] indptr, Py_ssize_t n_features):
        """:meth:`activations` of one CSR row (checked here: None if it is not one
        canonical row of n features)."""
        cdef Py_ssize_t nnz = self._csr_row(data, indices, indptr, n_features)
        if nnz < 0:
            return None
        return self._activations(&data[0] if nnz else NULL,
                                 &indices[0] if nnz else NULL, nnz, False)

    cdef Py_ssize_t _csr_row(self, const double[::1] data, const int32_t[::1] indices,
                             const int32_t[::1] indptr, Py_ssize_t n_features):
        """The number of entries of a CSR matrix that is one canonical row of n
        features (indices strictly increasing in [0, n)), else -1."""
        cdef Py_ssize_t n = self.loop.s.n
        if n_features != n or indptr.shape[0] != 2 or indptr[0] != 0:
            return -1
        if not _row_readable(&indices[0] if indices.shape[0] else NULL, 0, indptr[1],
                             min(indices.shape[0], data.shape[0]), n):
            return -1
        return indptr[1]

    cdef object _activations(self, const double* x, const int32_t* columns,
                             Py_ssize_t nnz, bint outputs):
        import numpy as np

        out = np.empty((1, self.loop.s.k))
        cdef double[:, ::1] A = out
        return out if self._activations_into(x, columns, nnz, outputs, &A[0, 0]) \
            else None

    cdef bint _activations_into(self, const double* x, const int32_t* columns,
                                Py_ssize_t nnz, bint outputs, double* A) noexcept:
        """The activations of :meth:`activations` into A (k values); False where it
        gives None."""
        cdef TrialLoop loop = self.loop
        cdef State* s = &loop.s
        cdef Py_ssize_t j, q, c
        cdef double dot, top = -INFINITY, total = 0.0
        if (loop.running or s.scratch.theta_t != NULL
                or (outputs and s.config.phi == PHI_SIGN)):
            return False
        for j in range(s.k):
            dot = 0.0
            for q in range(nnz):
                c = j * s.n + (q if columns == NULL else columns[q])
                dot += _unscaled_weight(s, s.params.num[c], s.params.den[c]) * x[q]
            A[j] = s.params.scale[j] * dot + s.params.intercept[j]
            if not isfinite(A[j]):
                return False
        if not outputs:
            return True
        # phi(a), a clipped to [phi^-1(-Y), phi^-1(Y)] (GA^Y, KW01 §4).
        for j in range(s.k):
            A[j] = fmin(fmax(A[j], s.config.clip_low), s.config.clip_high)
            top = fmax(top, A[j])
        for j in range(s.k):
            if s.config.phi == PHI_SOFTMAX:
                A[j] = exp(A[j] - top)
                total += A[j]
            else:
                A[j] = _phi_value(s.config.phi, A[j])
                if not isfinite(A[j]):
                    return False  # (exp overflowed)
        if s.config.phi == PHI_SOFTMAX:
            for j in range(s.k):
                A[j] /= total
        return True

    def learn(self, const double[:, ::1] X, const double[::1] y, double eta,
              double intercept_eta, Py_ssize_t t, double cumulative_loss,
              double initial_loss, double weight=1.0):
        """Trial ``t + 1`` on the one dense row X (n features) of targets y (k), at
        the rates ``eta`` and ``intercept_eta``, of sample weight ``weight``.

        It is not taken (None, the loop unchanged) if the row's bound times
        ``weight`` exceeds the bound limit (the rate would have to fall first), or
        if the trial fails: a non-finite value, or a cumulative loss that is not
        finite or runs away. Else ``(cumulative_loss, initial_loss, path)`` after
        it, from the sums before it (``path``: the loop's path measure).
        """
        if X.shape[0] != 1 or X.shape[1] != self.loop.s.n:
            return None
        return self._learn(&X[0, 0], NULL, X.shape[1], True, y, eta,
                           intercept_eta, t, cumulative_loss, initial_loss, weight)

    def learn_csr(self, const double[::1] data, const int32_t[::1] indices,
                  const int32_t[::1] indptr, Py_ssize_t n_features,
                  const double[::1] y, double eta, double intercept_eta, Py_ssize_t t,
                  double cumulative_loss, double initial_loss, double weight=1.0):
        """:meth:`learn` on one CSR row (checked here: None if it is not one
        canonical row of n features)."""
        cdef Py_ssize_t nnz = self._csr_row(data, indices, indptr, n_features)
        if nnz < 0:
            return None
        return self._learn(&data[0] if nnz else NULL, &indices[0] if nnz else NULL,
                           nnz, False, y, eta, intercept_eta, t,
                           cumulative_loss, initial_loss, weight)

    cdef object _learn(self, const double* x, const int32_t* columns, Py_ssize_t nnz,
                       bint dense, const double[::1] y, double eta,
                       double intercept_eta, Py_ssize_t t, double cumulative_loss,
                       double initial_loss, double weight):
        """The trial of :meth:`learn`, on a dense row (nnz = n) or a CSR row's
        entries at ``columns``: a run of one trial through the steps run_dense and
        run_csr take (trial.pxi's _begin_run, _run_trial, _end_run), with the save
        and the runaway check of a call around it."""
        cdef TrialLoop loop = self.loop
        cdef State* s = &loop.s
        cdef Py_ssize_t j, q, first = 0
        cdef int32_t bounds[2]
        cdef double loss, a, start_loss = 0.0
        cdef Py_ssize_t[::1] journal
        cdef bint ok
        if loop.running or s.scratch.theta_t != NULL or y.shape[0] != s.k:
            return None
        # (Output by output, or outputs innermost: run_csr's layouts.)
        if not dense and (_outputs_apart(s) or _columns_first(s, nnz)):
            return None
        if not weight <= self.weight_limit or (self.bound_limit < INFINITY and not (
                self._bound(x, nnz, &y[0]) * weight <= self.bound_limit)):
            return None
        if (s.config.options or not dense) and s.scratch.row_size < nnz:
            loop._row_scratch(nnz)  # the implicit update works on whole rows
        # The state a failed trial goes back to (TrialLoop.save): a whole copy for a
        # dense row, the coordinates a CSR row touches.
        if dense:
            loop._save(-1)
        else:
            journal = loop._journal_room(nnz)
            for q in range(nnz):
                journal[q] = columns[q]
            loop._save(nnz)
        if self.runaway_ratio > 0.0:
            # The loss of the model at Theta_1 (intercept 0) on the row (in the
            # trial's scratch, which it then overwrites).
            a = 0.0
            if self.has_start:
                for q in range(nnz):
                    a += self.start[q if dense else columns[q]] * x[q]
            for j in range(s.k):
                s.scratch.a[j] = a
            start_loss = weight * _transfer_and_loss(s, &y[0])
        s.config.eta, s.config.eta_intercept = eta, intercept_eta
        # (Averaged from trial ``average`` on, as run_pass's average_from.)
        s.trial, s.avg.start = 0, (t + 1 < self.average) if self.average else 0
        s.loss_sum = cumulative_loss
        # A run of one trial (run_dense's and run_csr's steps around it).
        _begin_run(s)
        if not dense:
            s.params.lazy = _lazy_run(s)
        ok = _run_trial(s, x, columns, nnz, dense, NULL, &y[0], weight, &loss)
        # (A failed trial wrote to its row's columns too.)
        if not dense and s.params.lazy:
            bounds[0], bounds[1] = 0, nnz
            _sync_theta(s, columns, bounds, &first, 1, nnz)
        ok = _end_run(s, columns, nnz, ok)
        s.config.eta, s.config.eta_intercept = loop.eta, loop.intercept_eta
        cumulative_loss = s.loss_sum
        initial_loss += start_loss
        if ok and isfinite(cumulative_loss) and not (
                self.runaway_ratio > 0.0
                and cumulative_loss > self.runaway_ratio * initial_loss > 0.0):
            return cumulative_loss, initial_loss, s.path
        loop.restore()
        return None

