# The rows of a River learner: a dict of feature values by name, learned and
# predicted in O(its keys). The names map to columns (the learner's dict); a row
# becomes (sorted columns, values) and runs through OneRow's CSR trial, whose
# weights are read at those columns only. A feature new to the model takes the next
# column: for one output, theta keeps spare columns (the learner doubles them), so
# that the loop's n grows in place; its parameter starts at Theta_1's value and its
# normalizer term joins the row's normalizer in O(1) (_extend). Several outputs of
# a psi without a normalizer (or pnorm's, which a column at 0 leaves as it is) hold
# their spare columns inside the loop (n is theta's width, each row's stride): at
# Theta_1 a column no row holds changes nothing, and a new feature takes one as it
# is, in O(1).

cpdef enum DictCode:
    DICT_BAD_VALUE = -1   # a value is not a real number (DictRows.bad)
    DICT_NOT_FINITE = -2  # a value is NaN or infinite (DictRows.bad)
    DICT_NEW_NAMES = -3   # a name has no column (DictRows.fresh, in the dict's order)


cdef enum:
    # Insertion sort up to this many entries (the rows of a stream mostly come in
    # the same key order, sorted already); qsort above.
    DICT_SHORT_ROW = 32


cdef struct DictEntry:
    int32_t column
    double value


cdef int _entry_order(const void* a, const void* b) noexcept nogil:
    cdef int32_t i = (<const DictEntry*>a).column, j = (<const DictEntry*>b).column
    return (i > j) - (i < j)


cdef inline void _tuned(double eta, double intercept_eta, double loss,
                        double divergence, double b, double last_eta,
                        double last_intercept_eta, double* out) noexcept nogil:
    """KW01 eq. (31)'s rates of the next trial, from Theorem 3's (eta,
    intercept_eta) = 1 / (2bc), K = ``loss`` and R = ``divergence`` plus the
    intercept's block b^2 eta / (2 intercept_eta): ``f = 2 / (1 + sqrt(1 + 2 eta K /
    R))`` times each, then no larger than the last trial's (the rates never rise).
    The one computation of the River learners' tuned rate (``tuned_rates``)."""
    cdef double reach, f
    if loss > 0.0:
        reach = divergence
        if b != 0.0:
            reach += b * b * eta / (2.0 * intercept_eta)
        f = 2.0 / (1.0 + sqrt(1.0 + 2.0 * eta * loss / reach))
        eta, intercept_eta = eta * f, intercept_eta * f
    out[0] = eta if eta < last_eta else last_eta
    out[1] = intercept_eta if intercept_eta < last_intercept_eta else last_intercept_eta


def tuned_rates(double eta, double intercept_eta, double loss, double divergence,
                double b, double last_eta, double last_intercept_eta):
    """``(eta, intercept_eta)`` of KW01 eq. (31) (``_tuned``): Theorem 3's rates
    tuned to the loss so far and EG±'s divergence bound, capped by the last
    trial's."""
    cdef double out[2]
    _tuned(eta, intercept_eta, loss, divergence, b, last_eta, last_intercept_eta, out)
    return out[0], out[1]


cdef inline double _largest_intercept(State* s) noexcept nogil:
    """max_j |b_j|, the intercept's comparator in eq. (31)'s R."""
    cdef double b = 0.0
    cdef Py_ssize_t j
    for j in range(s.k):
        b = fmax(b, fabs(s.params.intercept[j]))
    return b


def canonical_order(names):
    """The features that one row brings, in an order that does not depend on the
    order of its dict: sorted (by repr, where the names do not compare), so that the
    columns, and the order of every sum, are the same for any order of the keys."""
    try:
        return sorted(names)
    except TypeError:
        return sorted(names, key=repr)


cdef class DictRows:
    """The dict rows of a River learner on a :class:`OneRow`, O(keys) each.

    Parameters
    ----------
    calls : OneRow
        The one-row calls on the learner's loop; its ``start`` (the runaway check's
        initial weights) is scratch that each trial fills at its row's columns.
    n : int
        Columns the model holds. With one output the loop's theta may be wider
        (spare columns for new features); with several it is exactly n wide, or,
        for a psi without a normalizer and pnorm, the loop holds theta's every
        column (``inside``).
    start : float
        Theta_1's value of a coordinate, at which a new feature enters.
    checked : bool
        Whether the trials are checked for a runaway loss (``may_run_away``): then
        the calls' initial weights are those each trial is given.

    Attributes
    ----------
    bad : tuple
        ``(name, value)`` of the last value refused (DICT_BAD_VALUE, DICT_NOT_FINITE).
    fresh : list or None
        The names without a column of the last row learned, if it had some.
    work : int
        Coordinates (times outputs) that the calls read or wrote: the trials' rows,
        the new columns, and every O(n) pass (a whole save, a recompute).
    inside : bool
        Whether the loop holds theta's spare columns (several outputs of a psi
        without a normalizer, or of pnorm): a new feature takes the next one as it
        is.
    last_rates : tuple
        The rates of the last row that :meth:`learn` or :meth:`learn_rows` learned
        at eq. (31)'s rates.
    """
    cdef OneRow calls
    cdef TrialLoop loop
    cdef Py_ssize_t width
    cdef double start
    cdef DictEntry* entries
    cdef Py_ssize_t size
    cdef object index_array
    cdef double[::1] target    # the row's targets (k)
    cdef int32_t[::1] indices
    cdef double[::1] values
    cdef double[::1] vectors  # the per-row buffers before _extend, to undo it
    cdef double[::1] start_row  # OneRow's start: psi(Theta_1) at the row's columns
    cdef Py_ssize_t start_n     # the n of start_weight (-1: none yet)
    cdef double start_weight    # psi(Theta_1)'s weight of a coordinate at n columns
    cdef public object bad
    cdef public list fresh
    cdef public Py_ssize_t work
    cdef public bint inside
    cdef public object last_rates

    def __cinit__(self):
        self.entries = NULL

    def __init__(self, OneRow calls, Py_ssize_t n, double start, bint checked):
        import numpy as np

        cdef TrialLoop loop = calls.loop
        self.calls, self.loop, self.start = calls, loop, start
        self.width = loop.theta.shape[1]
        # (pnorm's normalizer ||theta||_q gains nothing from a column at 0.)
        self.inside = loop.s.k > 1 and (not _normalized(loop.s.config.psi)
                                        or loop.s.config.psi == PSI_PNORM)
        if self.inside:
            n = self.width
        if not (n <= self.width and (n == self.width or loop.s.k == 1)):
            raise ValueError(f"DictRows of {n} columns on a loop {self.width} wide.")
        self.vectors = np.empty(loop._vectors_size())
        self.fresh, self.work, self.start_n = None, 0, -1
        if checked:
            self.start_row = np.zeros(max(self.width, 1))
            calls.start, calls.has_start = self.start_row, True
        self._reserve(8)
        self.index_array = np.empty(self.size, np.int32)
        self.indices = self.index_array
        self.values = np.empty(self.size)
        self.target = np.zeros(loop.s.k)
        # (The save's copy, sized for every column theta holds before n is set.)
        loop.saved = None
        loop.save()
        loop.s.n = n

    def __dealloc__(self):
        free(self.entries)

    cdef int _reserve(self, Py_ssize_t size) except -1:
        """Make the row scratch hold ``size`` entries."""
        if size <= self.size:
            return 0
        import numpy as np

        size = max(size, 2 * self.size)
        entries = <DictEntry*>malloc(size * sizeof(DictEntry))
        if entries == NULL:
            raise MemoryError()
        free(self.entries)
        self.entries, self.size = entries, size
        self.index_array = np.empty(size, np.int32)
        self.indices = self.index_array
        self.values = np.empty(size)
        return 0

    def spare_terms(self, Py_ssize_t first):
        """The terms of the spare columns [first, n) held inside the loop, at
        Theta_1, at each row's shift (a loop built on padded terms): O(k (n -
        first))."""
        cdef State* s = &self.loop.s
        cdef Py_ssize_t j, c
        if not self.inside or _no_terms(s.config.psi) or first >= s.n:
            return
        for j in range(s.k):
            c = j * s.n + first
            _terms(s, s.params.theta + c, s.params.num + c, s.params.den + c,
                   s.params.shift[j], s.n - first)
        self.work += s.k * (s.n - first)

    def recompute(self):
        """The terms, shifts and normalizers computed afresh from theta (a loop
        built wider than its n)."""
        with nogil:
            _recompute_all(&self.loop.s)
        self.work += self.loop.s.k * self.loop.s.n

    cdef Py_ssize_t _gather(self, dict x, dict columns, bint learning) except -9:
        """Write the values of ``x`` at their columns into the row scratch, sorted by
        column; the number of entries, or a DICT_ code. Predicting, names without
        a column are left out (their weight is 0), but their values are checked."""
        cdef Py_ssize_t nnz = 0, q, r
        cdef double value
        cdef object column
        cdef DictEntry entry
        if learning:
            self.fresh = None
        self._reserve(len(x))
        for name, item in x.items():
            try:
                value = item
            except (TypeError, ValueError, OverflowError):
                self.bad = (name, item)
                return DICT_BAD_VALUE
            if not isfinite(value):
                self.bad = (name, item)
                return DICT_NOT_FINITE
            column = columns.get(name)
            if column is None:
                if learning:
                    if self.fresh is None:
                        self.fresh = []
                    self.fresh.append(name)
                continue
            self.entries[nnz].column, self.entries[nnz].value = column, value
            nnz += 1
        if learning and self.fresh is not None:
            return DICT_NEW_NAMES
        if nnz > DICT_SHORT_ROW:
            qsort(self.entries, nnz, sizeof(DictEntry), _entry_order)
        else:
            for q in range(1, nnz):
                entry, r = self.entries[q], q
                while r > 0 and self.entries[r - 1].column > entry.column:
                    self.entries[r] = self.entries[r - 1]
                    r -= 1
                self.entries[r] = entry
        for q in range(nnz):
            self.indices[q], self.values[q] = (self.entries[q].column,
                                               self.entries[q].value)
        return nnz

    cdef bint _extend(self, Py_ssize_t first, Py_ssize_t n) noexcept:
        """Columns [first, n) enter the model at Theta_1's value, their terms at
        each row's shift, their normalizer terms added to its normalizer (O(k (n -
        first))); False, with the loop as it was, where the row would then need a
        recompute from theta (a term beyond e^30 of a shift gone far below it, or
        a vanishing normalizer), which the learner's general path does."""
        cdef State* s = &self.loop.s
        cdef Py_ssize_t j, i, c, count = n - first
        cdef double total, top, term
        cdef double* theta
        if count <= 0:
            return True
        for j in range(s.k):
            c = j * n + first
            theta = s.params.theta + c
            for i in range(count):
                theta[i] = self.start
            if not _no_terms(s.config.psi):
                _terms(s, theta, s.params.num + c, s.params.den + c, s.params.shift[j],
                       count)
            if not _normalized(s.config.psi):
                continue
            total, top = 0.0, 0.0
            for i in range(count):
                term = _normalizer_term(s, s.params.num[c + i], s.params.den[c + i],
                                        theta[i], s.params.shift[j])
                total += term
                top = fmax(top, term)
            if not (s.params.norm[j] + total > TERM_LOW and top <= TERM_HIGH):
                return False
        # (Only now: a row refused above has changed nothing the loop reads.)
        self.loop._copy_vectors(&self.vectors[0], False)
        s.n = n
        for j in range(s.k):
            if not _normalized(s.config.psi):
                continue
            c = j * n + first
            total = 0.0
            for i in range(count):
                total += _normalizer_term(s, s.params.num[c + i], s.params.den[c + i],
                                          s.params.theta[c + i], s.params.shift[j])
            # A normalized psi shares its total among the coordinates: the new
            # terms enter Z, and every weight held scales by Z / (Z + total).
            s.params.norm[j] += total
            s.params.mass[j] += total
            _set_scale(s, j)
        self.work += s.k * count
        return True

    cdef double _start_weight(self, Py_ssize_t n) noexcept:
        """psi(Theta_1)'s weight of a coordinate of a row of n at Theta_1's value
        (one value: psi treats the coordinates alike), in O(1) from the terms of
        one coordinate, as _recompute_row computes those of a uniform row."""
        cdef State* s = &self.loop.s
        cdef double theta = self.start, num = theta, den, shift = 0.0
        if n != self.start_n:
            if _normalized(s.config.psi):
                shift = theta if _signed_shift(s.config.psi) else fabs(theta)
                if s.config.psi == PSI_PNORM:
                    shift = _pnorm_shift(shift)
                elif _geodesic(s.config.psi) and not shift > 0.0:
                    shift = 1.0
            if not _no_terms(s.config.psi):
                _terms(s, &theta, &num, &den, shift, 1)
            if not _two_terms(s.config.psi):
                den = num
            self.start_weight = _unscaled_weight(s, num, den) * (
                _scale_value(s, n * _normalizer_term(s, num, den, theta, shift), shift)
                if _normalized(s.config.psi) else 1.0)
            self.start_n = n
        return self.start_weight

    cdef void _undo_extend(self, Py_ssize_t n) noexcept:
        self.loop._copy_vectors(&self.vectors[0], True)
        self.loop.s.n = n

    cdef object _run(self, Py_ssize_t nnz, Py_ssize_t first, Py_ssize_t n,
                     const double[::1] y, double eta, double intercept_eta,
                     Py_ssize_t t, double cumulative_loss, double initial_loss,
                     double weight):
        """The trial of the row in the scratch (columns [first, n) new to the model),
        as OneRow.learn_csr runs it; None where that gives None, the loop as it
        was."""
        cdef TrialLoop loop = self.loop
        cdef State* s = &loop.s
        cdef Py_ssize_t q, held = s.n, touched = s.params.touched
        cdef double start_weight
        if n > (self.width if s.k == 1 else held):
            return None
        if self.inside:
            n = held  # (the new columns are in the loop already, at Theta_1)
        elif not self._extend(first, n):
            return None
        if self.calls.has_start:
            start_weight = self._start_weight(n)
            for q in range(nnz):
                self.start_row[self.indices[q]] = start_weight
        sums = self.calls._learn(&self.values[0], &self.indices[0], nnz, False, y,
                                 eta, intercept_eta, t, cumulative_loss,
                                 initial_loss, weight)
        # (A save that copies whole rows, and a recompute of every row: O(k n).)
        self.work += s.k * (nnz + (s.n if loop.journal_count < 0 else 0))
        if sums is None:
            if n > held:
                self._undo_extend(held)
        elif s.params.touched < touched + nnz:
            self.work += s.k * s.n
        return sums

    def learn(self, dict x, dict columns, y, double eta, double intercept_eta,
              Py_ssize_t t, double cumulative_loss, double initial_loss,
              double weight=1.0, Py_ssize_t first=-1, tuple tuning=None):
        """One trial on the dict ``x`` (OneRow.learn's arguments and result), its
        names at their ``columns``; those from ``first`` on are new to the model
        (-1: none). ``y``: the target of one output (a float), or the targets of
        several (an array). ``tuning``: None, or :meth:`learn_rows`'s (its R of a
        first row): the trial at eq. (31)'s rates, kept in ``last_rates`` if it
        is taken.

        Names without a column take the next ones (in canonical order) where theta
        has spare columns for them (one output), and keep them if the trial is
        taken. Else a DICT_ code: DICT_NEW_NAMES for names that need a wider
        theta, or for a value that is not a finite number. None where the trial is
        not taken, the loop and ``columns`` as they were (``fresh`` then holds the
        row's new names, if any).
        """
        cdef Py_ssize_t nnz = self._gather(x, columns, True), n = len(columns)
        cdef Py_ssize_t q
        cdef const double[::1] targets
        cdef double pair[2]
        if tuning is not None:
            _tuned(eta, intercept_eta, cumulative_loss - <double>tuning[0],
                   tuning[1], _largest_intercept(&self.loop.s), tuning[3], tuning[4],
                   pair)
            eta, intercept_eta = pair[0], pair[1]
        if self.loop.s.k == 1:
            self.target[0] = y
        else:
            targets = y
            if targets.shape[0] != self.loop.s.k:
                raise ValueError(f"DictRows of {self.loop.s.k} outputs got "
                                 f"{targets.shape[0]} targets.")
            for q in range(targets.shape[0]):
                self.target[q] = targets[q]
        if nnz == DICT_NEW_NAMES:
            names = canonical_order(self.fresh)
            if not (self.loop.s.k == 1 or self.inside) or n + len(names) > self.width:
                return nnz
            for q in range(len(names)):
                columns[names[q]] = n + q
            first = n
            nnz = self._gather(x, columns, True)
            n = len(columns)
            sums = self._run(nnz, first, n, self.target, eta, intercept_eta, t,
                             cumulative_loss, initial_loss, weight)
            if sums is None:
                for name in names:
                    del columns[name]
                self.fresh = names
        elif nnz < 0:
            return nnz
        else:
            sums = self._run(nnz, n if first < 0 else first, n, self.target, eta,
                             intercept_eta, t, cumulative_loss, initial_loss, weight)
        if sums is not None and tuning is not None:
            self.last_rates = eta, intercept_eta
        return sums

    def learn_rows(self, const double[:, ::1] X, const int32_t[::1] columns,
                   const double[:, ::1] Y, const double[::1] weights, double eta,
                   double intercept_eta, Py_ssize_t t, double cumulative_loss,
                   double initial_loss, Py_ssize_t n, Py_ssize_t first=-1,
                   tuning=None):
        """:meth:`learn` on each row of X (a frame's values, its columns at
        ``columns``; the model's columns from ``first`` on, up to ``n``, new at the
        first row), in order: ``(rows learned,
        cumulative_loss, initial_loss)``, stopping before a row whose trial is
        not taken (that row's loop as it was).

        ``tuning``: None (every row at ``eta``, ``intercept_eta``), or ``(loss
        before the phase, R of the first row, R of the others, last eta, last
        intercept_eta)``: each row at eq. (31)'s rates (``_tuned``) of the loss
        since the phase began, its R and the intercept as the row finds it; the
        rates of the last row learned are then ``last_rates``."""
        cdef Py_ssize_t r, q, m = X.shape[0], nnz = X.shape[1]
        cdef double phase_loss = 0.0, first_divergence = 0.0, divergence = 0.0
        cdef double pair[2]
        cdef double last[2]  # (the rates of the last row taken)
        cdef bint tuned = tuning is not None
        if tuned:
            phase_loss, first_divergence, divergence, pair[0], pair[1] = tuning
        self._reserve(nnz)
        for r in range(m):
            for q in range(nnz):
                self.entries[q].column, self.entries[q].value = columns[q], X[r, q]
            qsort(self.entries, nnz, sizeof(DictEntry), _entry_order)
            for q in range(nnz):
                self.indices[q], self.values[q] = (self.entries[q].column,
                                                   self.entries[q].value)
            if tuned:
                _tuned(eta, intercept_eta, cumulative_loss - phase_loss,
                       divergence if r else first_divergence,
                       _largest_intercept(&self.loop.s), pair[0], pair[1], pair)
            sums = self._run(nnz, n if r or first < 0 else first, n, Y[r],
                             pair[0] if tuned else eta,
                             pair[1] if tuned else intercept_eta, t + r,
                             cumulative_loss, initial_loss, weights[r])
            if sums is None:
                m = r
                break
            cumulative_loss, initial_loss, _ = sums
            last[0], last[1] = pair[0], pair[1]
        if tuned and m:
            self.last_rates = last[0], last[1]
        return m, cumulative_loss, initial_loss

    def activations(self, dict x, dict columns, bint outputs=False):
        """OneRow's activations of the dict ``x`` (names without a column count 0),
        in O(keys): a (1, k) array, or for one output its value (a float); None
        where OneRow gives None; a DICT_ code for a value that is not a finite
        number."""
        cdef Py_ssize_t nnz = self._gather(x, columns, False)
        cdef double a
        if nnz < 0:
            return nnz
        if self.loop.s.k > 1:
            return self.calls._activations(&self.values[0], &self.indices[0], nnz,
                                           outputs)
        if self.calls._activations_into(&self.values[0], &self.indices[0], nnz,
                                        outputs, &a):
            return a
        return None

    def row(self, dict x, dict columns):
        """``(columns, values)`` of the dict ``x`` (its names with a column, sorted),
        as arrays; a DICT_ code as :meth:`activations` gives one."""
        cdef Py_ssize_t nnz = self._gather(x, columns, False)
        if nnz < 0:
            return nnz
        import numpy as np

        return np.array(self.index_array[:nnz]), np.array(self.values[:nnz])
