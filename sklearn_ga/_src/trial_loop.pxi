# The Python face of the loop: TrialLoop owns the State, checks codes and shapes,
# runs dense and CSR batches without the GIL, and saves and restores the state.

cdef class TrialLoop:
    """State of one GA run: parameters (written in place) and scratch buffers.

    Parameters
    ----------
    psi, phi : int
        Codes from :class:`PsiCode` and :class:`PhiCode`.
    theta : ndarray of shape (k, n), float64, C-contiguous
        Parameters Theta, updated in place.
    intercept : ndarray of shape (k,), float64
        Intercepts b, updated in place.
    eta, U, p : float
        Learning rate of the weights (where a run is given no rates of its own),
        EG+- scale and p-norm exponent.
    fit_intercept : bool
        Whether b is learned.
    update, loss : int, optional
        Codes from :class:`UpdateCode` and :class:`LossCode`.
    clip_low, clip_high : float, optional
        Activations are clipped to this interval (GA^Y; infinite: no clipping).
    state : tuple, optional
        The :meth:`terms` of a loop on the same parameters: taken as they are, so
        that this loop continues exactly as that one would (by default the terms
        are computed from theta).
    alpha : float, optional
        Penalty toward Theta_1 = 0: each trial scales theta by ``1 - eta alpha``
        (at least 0) before its step (additive psi only).
    average : bool, optional
        Whether the loop sums the weights and intercepts after each averaged trial
        (see the runs' ``average_from``), for :meth:`average`.
    averages : tuple, optional
        ``(sums, intercept_sums, counts)`` of :meth:`averages` to continue from
        (a loop built again on other settings); by default none.
    intercept_eta : float, optional
        Learning rate of the intercepts where a run is given no rates (by default
        ``eta``).
    """
    cdef State s
    cdef double eta, intercept_eta  # the rates of a run given none
    cdef double[:, ::1] theta
    cdef double[:, ::1] num
    cdef double[:, ::1] den
    cdef double[::1] intercept
    cdef double[::1] buffers   # norm, shift, scale, mass, age, a, y_hat, dot, product,
                               # anchor, anchor_power, decay, avg_scales, avg_b,
                               # avg_count, avg_since
    cdef double[::1] avg       # the averages' (acc, mark) pairs (unset: s.avg.acc NULL)
    cdef double[::1] row_buffers  # row_theta, row_num, row_den, row_held (k rows)
    cdef double[::1] option_buffers  # residual, wx, rest, rest_shift (k each), geodesic
    cdef double[::1] option_row  # row_x (longest row)
    cdef object saved          # save(): intercepts, buffers, then the stored rows
    cdef Py_ssize_t journal_count  # save(columns): the columns journaled (-1: none)
    cdef Py_ssize_t[::1] journal_columns  # their indices, then their stored values:
    cdef double[::1] journal_values       # buffers kept from save to save
    cdef State saved_state
    cdef object outputs_inner  # theta, outputs innermost (_columns_first), while held
    cdef bint running          # a run is in its nogil part (OneRow reads wait)
    cdef public bint count_start  # run_dense sums the loss at Theta_1 (_engine)
    cdef public double start_weight, start_loss  # (Theta_1's weights; the sum)

    def __init__(self, int psi, int phi, double[:, ::1] theta, double[::1] intercept,
                 double eta, double U, double p, bint fit_intercept,
                 int update=UPDATE_EXPLICIT, int loss=LOSS_MATCHING,
                 double clip_low=float("-inf"), double clip_high=float("inf"),
                 state=None, double alpha=0.0, intercept_eta=None,
                 bint average=False, averages=None):
        import numpy as np

        k, n = theta.shape[0], theta.shape[1]
        if intercept.shape[0] != k:
            raise ValueError(f"TrialLoop of {k} x {n} parameters got "
                             f"{intercept.shape[0]} intercepts.")
        # The loop's dispatch on each code is exhaustive over the known codes only.
        for name, code, known in (("psi", psi, _psi_known(psi)),
                                  ("phi", phi, _phi_known(phi)),
                                  ("update", update, _update_known(update)),
                                  ("loss", loss, _loss_known(loss))):
            if not known:
                raise ValueError(f"TrialLoop got the unknown {name} code {code}.")
        if alpha > 0.0 and _geodesic(psi):
            raise ValueError("TrialLoop's penalty alpha is for the additive psi.")
        self.theta = theta
        self.intercept = intercept
        self.journal_count = -1
        count = _stored_terms(psi)
        terms = _term_arrays(count, k, n)
        self.num = theta if count == 0 else terms[0]
        self.den = terms[1] if count == 2 else self.num
        self.buffers = np.zeros(STATE_VECTORS * k)
        self.option_buffers = np.zeros(OPTION_VECTORS * k)
        self.s.config.psi, self.s.config.phi, self.s.k, self.s.n = psi, phi, k, n
        self.eta = eta
        self.intercept_eta = eta if intercept_eta is None else intercept_eta
        self.s.config.eta, self.s.config.eta_intercept = self.eta, self.intercept_eta
        self.s.config.U, self.s.config.p = U, p
        self.s.config.fit_intercept = fit_intercept
        self.s.params.theta = &self.theta[0, 0]
        self.s.params.num = &self.num[0, 0]
        self.s.params.den = &self.den[0, 0]
        self.s.params.intercept = &self.intercept[0]
        _bind_vectors(&self.s, &self.buffers[0], &self.option_buffers[0])
        self.s.config.alpha = alpha
        for q in range(k):
            self.s.params.decay[q] = 1.0
        cdef double* binomial = self.s.config.binomial
        binomial[0] = (2.0 - p) / p  # (also the exponent of _pnorm_power)
        for q in range(1, ANCHOR_DEGREE):
            binomial[q] = binomial[q - 1] * (binomial[0] - q) / (q + 1)
        self.s.config.update, self.s.config.loss_kind = update, loss
        self.s.config.clip_low, self.s.config.clip_high = clip_low, clip_high
        self.s.config.options = (update != UPDATE_EXPLICIT or loss != LOSS_MATCHING
                          or clip_low > float("-inf") or clip_high < float("inf")
                          or _geodesic(psi) or alpha > 0.0)
        if state is None:
            with nogil:
                _recompute_all(&self.s)
        if average:  # (after the first recompute: no terms to settle before it)
            self.avg = np.zeros(2 * k * n)
            self.s.avg.acc = &self.avg[0]
        if state is None:
            if averages is not None and average:
                sums, intercept_sums, counts = averages
                np.asarray(self.avg)[0::2] = np.ravel(sums)
                np.asarray(self.buffers)[13 * k:15 * k] = np.r_[intercept_sums, counts]
            return
        num, den, buffers, self.s.params.touched = state[:4]
        if num is not None:
            np.asarray(self.num)[...] = num
        if den is not None:
            np.asarray(self.den)[...] = den
        # (Saved before pnorm's anchors, the last two k values before the decay, a
        # state leaves them 0: none yet, and the first scale takes the power
        # afresh. The decay is 1 between runs.)
        np.asarray(self.buffers)[:len(buffers)] = buffers
        for q in range(k):
            self.s.params.decay[q] = 1.0
        if average and len(state) > 4 and state[4] is not None:
            np.asarray(self.avg)[...] = state[4]

    def set_rates(self, double eta, double intercept_eta):
        """Set the constant rates of the runs given no rates of their own."""
        self.eta, self.intercept_eta = eta, intercept_eta
        self.s.config.eta, self.s.config.eta_intercept = eta, intercept_eta

    @property
    def rates(self):
        """``(eta, intercept_eta)``: the constant rates (:meth:`set_rates`)."""
        return self.eta, self.intercept_eta

    def terms(self):
        """What the loop holds besides theta and b: ``(num, den, buffers, touched,
        averages)`` (copies; None for an array psi does not store, and for no
        averages), to build the same loop again with ``TrialLoop(...,
        state=...)`` instead of computing the terms."""
        self.release()  # (theta held by a run: written back first)
        import numpy as np

        cdef double* arrays[3]
        cdef Py_ssize_t count = _stored(&self.s, arrays)
        return (np.array(self.num) if count > 1 else None,
                np.array(self.den) if count > 2 else None,
                np.array(self.buffers), self.s.params.touched,
                None if self.s.avg.acc == NULL else np.array(self.avg))

    def average(self, columns=None):
        """``(weights, intercepts, count)``: the mean of the weights psi(Theta_t)
        (a new (k, n) array, or its ``columns``) and of the intercepts b_t after
        each of the ``count`` averaged trials; ``(None, None, 0)`` before the
        first (or without averaging). Reading changes nothing in the loop."""
        import numpy as np

        cdef Py_ssize_t j, q, c, k = self.s.k, n = self.s.n
        cdef double count = self.s.avg.count[0] if self.s.avg.acc != NULL else 0.0
        if count == 0.0:
            return None, None, 0
        cdef bint every = columns is None
        picked = np.empty(0, np.intp) if every else np.asarray(columns, np.intp)
        if picked.size and not (0 <= picked.min() and picked.max() < n):
            raise ValueError(f"Columns must lie in [0, {n}).")
        cdef const Py_ssize_t[::1] index = picked
        out = np.empty((k, n if every else index.shape[0]))
        cdef double[:, ::1] omega = out
        cdef const double* pair
        with nogil:
            for j in range(k):
                for q in range(omega.shape[1]):
                    c = j * n + (q if every else index[q])
                    pair = self.s.avg.acc + 2 * c
                    omega[j, q] = (pair[0] + _average_term(&self.s, j, c)
                                   * (self.s.avg.scales[j] - pair[1])) / count
        intercepts = np.asarray(self.buffers)[13 * k:14 * k] / count
        return out, intercepts, int(count)

    def averages(self):
        """``(sums, intercept_sums, counts)`` of the averaged trials so far, for a
        loop built again (``TrialLoop(..., averages=...)``); None without
        averaging."""
        import numpy as np

        if self.s.avg.acc == NULL:
            return None
        weights, _, count = self.average()
        k = self.s.k
        sums = (np.zeros((k, self.s.n)) if weights is None
                else weights * count)
        return (sums, np.array(self.buffers[13 * k:14 * k]),
                np.array(self.buffers[14 * k:15 * k]))

    @property
    def path(self):
        """sum_t D(w_t, w_{t+1}) over the trials of the runs, D half the squared
        length of a step (KMWW eq. 8): Euclidean in (theta, b) for the additive and
        natural updates, the geodesic's length for the sphere and the simplex (plus
        the intercepts' steps), a penalty's pull not counted. Each trial adds its
        step's; set it to start a count. :meth:`restore` puts it back (loss_sum too)."""
        return self.s.path

    @path.setter
    def path(self, double value):
        self.s.path = value

    @property
    def loss_sum(self):
        """The trials' weighted losses, each added as its trial ends, whatever the
        batches (``cumulative_loss_``); set it to start a count."""
        return self.s.loss_sum

    @loss_sum.setter
    def loss_sum(self, double value):
        self.s.loss_sum = value

    def _check_shapes(self, Py_ssize_t features, Py_ssize_t rows,
                      const double[:, ::1] Y, const double[::1] sample_weight,
                      const Py_ssize_t[::1] order, const double[:, ::1] rates):
        """The loop reads rows of n features, targets of k outputs, a weight per row,
        the rows of ``order`` and the rates of each trial (if any) without bounds
        checks: the shapes must agree."""
        cdef Py_ssize_t t
        if features != self.s.n or Y.shape[1] != self.s.k:
            raise ValueError(
                f"TrialLoop of {self.s.k} x {self.s.n} parameters got rows of "
                f"{features} features and {Y.shape[1]} targets."
            )
        if rates is not None and rates.shape[0] > 0 and (
                rates.shape[0] != order.shape[0] or rates.shape[1] != 2):
            raise ValueError(
                f"TrialLoop got rates of shape {tuple(rates.shape)[:2]} for "
                f"{order.shape[0]} trials; pass one (eta, intercept_eta) pair a "
                "trial, or none."
            )
        for t in range(order.shape[0]):
            if not 0 <= order[t] < rows:
                break
        else:
            if Y.shape[0] == rows and sample_weight.shape[0] in (0, rows):
                return
        span = f" (rows {min(order)} to {max(order)})" if order.shape[0] else ""
        raise ValueError(
            f"TrialLoop got {rows} rows, {Y.shape[0]} targets, "
            f"{sample_weight.shape[0]} sample weights and {order.shape[0]} trials"
            f"{span}."
        )

    def run_dense(self, const floating[:, ::1] X, const double[:, ::1] Y,
                  const double[::1] sample_weight, const Py_ssize_t[::1] order,
                  const double[:, ::1] rates=None, Py_ssize_t average_from=0):
        """Run one trial per entry of ``order`` on the dense rows of X.

        X is float64 or float32: a float32 row is converted into scratch a trial
        ahead of the one that reads it first (``_converted_row``), as a float64
        copy of X would be.
        ``sample_weight`` may be empty (all weights 1). ``rates``, of shape
        (len(order), 2), holds the rates (weights', intercepts') of each trial, by
        its position in ``order``; None or empty: the loop's ``eta`` and
        ``intercept_eta``. A trial of sample weight s steps by s times its rates,
        and its loss counts s times. An averaging loop averages the trials from
        position ``average_from`` of ``order`` on. Returns ``(status, trials,
        loss_sum)``: on ``DIVERGED``, ``trials`` is the position in ``order`` of the
        failing trial and the state must be discarded."""
        import numpy as np

        self.release()  # (theta held by a run: written back first)
        cdef Py_ssize_t t = 0, r, n = X.shape[1], n_trials = order.shape[0]
        cdef bint weighted = sample_weight.shape[0] > 0, ok = True
        # (A float32 row is converted before its trial: its loads want asking for.)
        cdef bint ask = floating is float or not _consecutive(order)
        cdef double loss, total = 0.0, weight = 1.0
        cdef const int32_t* no_index = NULL
        cdef const double *x, *x_next
        cdef double[::1] rows  # (float32 X) this trial's row and the next two, float64
        self._check_shapes(n, X.shape[0], Y, sample_weight, order, rates)
        cdef const double* per_trial = _per_trial(rates)
        if floating is float:
            rows = np.empty(3 * n)
        self.s.avg.start = average_from
        if self.s.config.options:
            self._row_scratch(self.s.n)  # the implicit update works on whole rows
        _begin_run(&self.s)
        self.running = True
        with nogil:
            while t < n_trials:
                if ask:
                    _prefetch_trial(X, order, t + 3)  # (a trial or two ahead of its use)
                _trial_rates(&self.s, per_trial, t)
                self.s.trial = t
                r = order[t]
                weight = sample_weight[r] if weighted else 1.0
                if floating is double:
                    x = &X[r, 0]
                    x_next = &X[order[t + 1], 0] if t + 1 < n_trials else NULL
                else:
                    x = _converted_row(X, order, t, &rows[0], &x_next)
                if self.count_start:
                    self.start_loss += weight * _start_loss(&self.s, self.start_weight,
                                                            x, n, &Y[r, 0])
                ok = _run_trial(&self.s, x, no_index, n, True, x_next, &Y[r, 0],
                                weight, &loss)
                if not ok:
                    break
                total += weight * loss
                t += 1
            ok = _end_run(&self.s, no_index, 0, ok)
        self.running = False
        self.s.config.eta, self.s.config.eta_intercept = self.eta, self.intercept_eta
        return (OK if ok else DIVERGED), t, total

    def run_csr(self, const floating[::1] data, const index_t[::1] indices,
                const index_t[::1] indptr, Py_ssize_t n_features,
                const double[:, ::1] Y, const double[::1] sample_weight,
                const Py_ssize_t[::1] order, bint check_rows=False, bint hold=False,
                const double[:, ::1] rates=None, Py_ssize_t average_from=0):
        """Same as :meth:`run_dense` for the rows of a CSR matrix of ``n_features``
        columns.

        ``data`` may be float32: each row's values are then converted just before its
        trial, as :meth:`run_dense` reads float32 rows. Its structure must have been
        checked (:func:`csr_structure`), and the indices of each row must be unique
        (canonical CSR): the normalizers are updated from the rows' terms before and
        after the update. Or, with ``check_rows``, each row is checked just before its
        trial, while its indices are read anyway (a separate pass of csr_structure over
        all of them would cost more): the run stops before the first row that fails,
        with status UNREADABLE, and the state is then that of the trials before it. A
        run of k > 1 outputs of psi = identity with enough entries per column holds
        theta transposed, in a copy of k x n values (_columns_first). With ``hold``, a
        run that succeeds keeps it so, for the next run_csr (a fit's next epoch), until
        :meth:`release` or any other method but :meth:`weights`, which reads the copy:
        theta is then out of date.
        """
        cdef Py_ssize_t t, r, start, end, longest = 0, n_trials = order.shape[0]
        cdef Py_ssize_t stored = -1
        cdef bint ok, unreadable
        cdef double total
        cdef const double* values = NULL
        cdef const float* values32 = NULL
        cdef double[::1] row64  # (float32 data) the row of the trial, as float64
        cdef double* row64_at = NULL
        if data.shape[0] > 0:
            if floating is double:
                values = &data[0]
            else:
                values32 = &data[0]
        cdef const index_t* columns = &indices[0] if indices.shape[0] > 0 else NULL
        self._check_shapes(n_features, indptr.shape[0] - 1, Y, sample_weight, order,
                           rates)
        cdef const double* per_trial = _per_trial(rates)
        self.s.avg.start = average_from
        if check_rows:
            if indptr.shape[0] == 0 or indptr[0] != 0:
                return UNREADABLE, 0, 0.0
            stored = min(indices.shape[0], data.shape[0])
        for t in range(n_trials):  # (the rows run, not all: a pass may be chunked)
            r = order[t]
            start, end = indptr[r], indptr[r + 1]
            if check_rows:  # (an unchecked row must not size the scratch)
                start, end = max(start, 0), min(end, stored)
            longest = max(longest, end - start)
        self._row_scratch(longest)
        if floating is float:
            import numpy as np

            row64 = np.empty(max(longest, 1))
            row64_at = &row64[0]
        _begin_run(&self.s)
        self.s.params.lazy = _lazy_run(&self.s)
        cdef double[:, :, ::1] outputs_inner
        if self.s.scratch.theta_t == NULL and _columns_first(&self.s,
                                                     indptr[indptr.shape[0] - 1]):
            copy = _term_arrays(1, self.s.n + 4, self.s.k)
            outputs_inner = copy
            self.s.scratch.theta_t = &outputs_inner[0, 0, 0]
            self.s.scratch.sums = self.s.scratch.theta_t + self.s.n * self.s.k
            with nogil:
                _swap_layout(&self.s, True)
            self.outputs_inner = copy  # (weights read it from now on)
        self.running = True
        with nogil:
            if _outputs_apart(&self.s) and self.s.scratch.theta_t == NULL:
                ok, t, total = _run_outputs_apart(&self.s, values, columns, &indptr[0],
                                                  stored, Y, sample_weight, order,
                                                  per_trial, values32, row64_at)
            else:
                ok, t, total = _run_trials(&self.s, values, columns, &indptr[0], stored,
                                           Y, 0, sample_weight, order, per_trial,
                                           n_trials, values32, row64_at)
            unreadable, self.s.unreadable = self.s.unreadable, False
            # (The journal's columns are those of every row, and some were not
            # checked when ``order`` leaves them out: then every parameter is.)
            ok = _end_run(&self.s, <const index_t*>NULL if check_rows else columns,
                          indptr[indptr.shape[0] - 1], ok and not unreadable)
        self.running = False
        self.s.config.eta, self.s.config.eta_intercept = self.eta, self.intercept_eta
        if not (hold and ok):
            self.release()
        return (UNREADABLE if unreadable else OK if ok else DIVERGED), t, total

    def release(self):
        """Write theta back from the copy a run_csr holds (``hold``), if any."""
        if self.s.scratch.theta_t == NULL:
            return
        with nogil:
            _swap_layout(&self.s, False)
        self.s.scratch.theta_t = NULL
        self.outputs_inner = None

    def _row_scratch(self, Py_ssize_t longest):
        """Make the gather buffers of CSR rows hold ``longest`` entries."""
        import numpy as np

        if self.s.config.options and (self.option_row is None
                               or self.option_row.shape[0] < longest):
            self.option_row = np.empty(max(longest, 1))
            self.s.scratch.row_x = &self.option_row[0]
        held = _held_rows(&self.s) * self.s.k
        if self.row_buffers is not None and self.s.scratch.row_size >= longest:
            return
        self.row_buffers = np.empty((3 + held) * max(longest, 1))
        self.s.scratch.row_size = longest
        self.s.scratch.row_theta = &self.row_buffers[0]
        self.s.scratch.row_num = &self.row_buffers[longest]
        self.s.scratch.row_den = (self.s.scratch.row_num
                                  if self.s.params.den == self.s.params.num
                                  else &self.row_buffers[2 * longest])
        self.s.scratch.row_held = &self.row_buffers[3 * longest] if held else NULL

    def save(self, columns=None):
        """Copy the state (parameters, terms, normalizers), for :meth:`restore`.

        A run writes the parameters in place; an estimator that keeps its loop
        between ``partial_fit`` calls saves it before each call, so that a call
        that fails leaves the model exactly as it was. ``columns``, the column
        indices of a CSR batch, if fewer than n / JOURNAL_SHARE (above, a whole
        copy is the faster), limits the copy to the coordinates the batch touches
        (O(k nnz)); the rest is copied only if the run writes it (a row
        recomputed: _guard_rows). No exp either way.
        """
        import numpy as np

        cdef Py_ssize_t count = -1
        if columns is not None and JOURNAL_SHARE * len(columns) < self.s.n:
            count = len(columns)
            # (A copy, not a view of the caller's X, kept after.)
            np.copyto(np.asarray(self._journal_room(count)[:count]), columns,
                      casting="safe")
        self._save(count)

    cdef Py_ssize_t[::1] _journal_room(self, Py_ssize_t count):
        """The journal's buffers made to hold ``count`` columns: its column
        indices, for the caller to fill before :meth:`_save`."""
        import numpy as np

        # Buffers reused from call to call: fresh ones would be fresh pages. (Never
        # empty: an unset memoryview's shape is 0 too.)
        count = max(1, count)
        if self.journal_columns is None or self.journal_columns.shape[0] < count:
            self.journal_columns = np.empty(count, np.intp)
            self.journal_values = np.empty(count * self.s.k * _saved_count(&self.s))
        return self.journal_columns

    cdef int _save(self, Py_ssize_t count) except -1:
        """:meth:`save`: of the ``count`` columns in the journal's buffer if fewer
        than n / JOURNAL_SHARE, else (or for count < 0) of every coordinate."""
        if count >= 0 and not JOURNAL_SHARE * count < self.s.n:
            count = -1
        if self.s.scratch.theta_t != NULL:
            self.release()  # (theta held by a run: written back first)
        cdef Py_ssize_t rows_at = self._vectors_size()
        if self.saved is None:
            import numpy as np

            self.saved = np.empty(rows_at + _saved_count(&self.s) * self.s.k
                                  * self.s.n)
        cdef double[::1] saved = self.saved
        self._copy_vectors(&saved[0], False)
        self.journal_count = count
        if count >= 0:
            if count:
                _copy_columns(&self.s, &self.journal_columns[0], count,
                              &self.journal_values[0], False)
            self.s.journal.backup = &saved[rows_at]
        else:
            _copy_rows(&self.s, &saved[rows_at], False)
            self.s.journal.backup = NULL
        self.s.journal.backed_up = False
        self.saved_state = self.s
        return 0

    def restore(self):
        """Put back the state of the last :meth:`save`."""
        self.release()  # (theta held by a run: written back first)
        cdef State current = self.s
        cdef Scratch* scratch
        cdef Scratch* grown
        cdef double[::1] saved = self.saved
        cdef Py_ssize_t count = self.journal_count
        if count < 0 or current.journal.backed_up:
            _copy_rows(&self.s, &saved[self._vectors_size()], True)
        if count > 0:
            _copy_columns(&self.s, &self.journal_columns[0], count,
                          &self.journal_values[0], True)
        self._copy_vectors(&saved[0], True)
        # The run may have grown the row scratch since: keep its buffers.
        self.s = self.saved_state
        # (set_rates)
        self.eta, self.intercept_eta = self.s.config.eta, self.s.config.eta_intercept
        scratch, grown = &self.s.scratch, &current.scratch
        scratch.row_theta, scratch.row_num = grown.row_theta, grown.row_num
        scratch.row_den, scratch.row_held = grown.row_den, grown.row_held
        scratch.row_size, scratch.row_x = grown.row_size, grown.row_x
        self.s.journal.backup = NULL
        self.journal_count = -1

    cdef Py_ssize_t _vectors_size(self) noexcept:
        return (self.intercept.shape[0] + self.buffers.shape[0]
                + self.option_buffers.shape[0])

    cdef void _copy_vectors(self, double* copy, bint back) noexcept:
        """Copy the intercepts and the per-row buffers to ``copy``
        (:meth:`_vectors_size` doubles), or back from it."""
        cdef double* vectors[3]
        cdef Py_ssize_t sizes[3]
        cdef Py_ssize_t q, offset = 0
        vectors[0], sizes[0] = &self.intercept[0], self.intercept.shape[0]
        vectors[1], sizes[1] = &self.buffers[0], self.buffers.shape[0]
        vectors[2], sizes[2] = &self.option_buffers[0], self.option_buffers.shape[0]
        for q in range(3):
            if back:
                memcpy(vectors[q], copy + offset, sizes[q] * sizeof(double))
            else:
                memcpy(copy + offset, vectors[q], sizes[q] * sizeof(double))
            offset += sizes[q]

    def weights(self, columns=None):
        """The weight matrix Omega = psi(Theta) as a new (k, n) array, or its
        ``columns`` (k, len(columns)) in O(k len(columns)).

        The rows' scales are those the loop predicts with: their normalizers are
        updated incrementally and summed afresh whenever that may have cost them
        precision (MASS_LIMIT bounds their relative rounding by ~1e-13; ~1e-14 in
        practice). Reading the weights changes nothing in the loop, not even where
        it holds theta (another thread may predict while a call runs).
        """
        import numpy as np

        cdef Py_ssize_t j, q, i, k = self.s.k, n = self.s.n
        cdef bint every = columns is None
        picked = np.empty(0, np.intp) if every else np.asarray(columns, np.intp)
        if picked.size and not (0 <= picked.min() and picked.max() < n):
            raise ValueError(f"Columns must lie in [0, {n}).")
        held = self.outputs_inner  # (a reference: it stays alive while read)
        if held is not None:
            # theta outputs innermost (_columns_first), psi = identity: the weights.
            weights = held[0, :n].T
            return np.array(weights if every else weights[:, picked])
        cdef const Py_ssize_t[::1] index = picked
        out = np.empty((k, n if every else index.shape[0]))
        cdef double[:, ::1] omega = out
        with nogil:
            for j in range(k):
                for q in range(omega.shape[1]):
                    # (Whole rows are read in order, not through an index of every
                    # column: the loop then vectorizes.)
                    i = j * n + (q if every else index[q])
                    omega[j, q] = self.s.params.scale[j] * _unscaled_weight(
                        &self.s, self.s.params.num[i], self.s.params.den[i])
        return out
