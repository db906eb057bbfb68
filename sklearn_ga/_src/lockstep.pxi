# The lock-step grid of psi = identity on dense rows (GARegressorCV, GAClassifierCV):
# configurations g = (eta_g, Omega_g, b_g) learn the same rows, each as its own
# on-line GA. Row by row each pays a dot product and an update over n coordinates,
# level-1 loops that load two doubles per multiply-add. In blocks of B rows the
# work becomes dot products of many rows with many vectors (ga_blocks.h), and stays
# exactly the on-line rule:
#
# Within a block, by KW01 eq. (20) for the rows s < r before it, configuration g's
# weights and intercepts at row r are
#     Omega_r = Omega_0 - sum_{s<r} S_s x_s^T,  b_r = b_0 - sum_{s<r} S_s,
#     S_s = eta_g w_s (y_hat_s - y_s)   (a k-vector; w_s the sample weight),
# so that its activation is
#     a_r = Omega_0 x_r + b_r - sum_{s<r} S_s (x_s . x_r).
# Omega_0 x_r, for every row and configuration, is one tile product (B x G k); the
# x_s . x_r are the block's Gram matrix (B x B, shared by every configuration);
# the sum is O(B^2 k) per configuration, sequential in r (S_s needs a_s through
# phi): once S_s is known it is subtracted from the activations of the rows after
# s (a vectorized axpy with row s of the Gram matrix). After the block,
# Omega_B = Omega_0 - sum_s S_s x_s^T: another tile product, every coordinate
# taking the steps in row order as the on-line loop does. The activations differ
# from the on-line loop's only by rounding (the dot products are summed in another
# order), and so do the models. The Gram matrix adds B / (4 G k) to the work of the
# two products (B = BLOCK_ROWS).


cdef extern from "_src/ga_blocks.h":
    void ga_block_dots(const double* x, Py_ssize_t R, double** w,
                       Py_ssize_t C, Py_ssize_t n, double* out, Py_ssize_t ldo,
                       int strict) noexcept nogil
    void ga_block_update(double** w, Py_ssize_t C, const double* x,
                         Py_ssize_t R, Py_ssize_t n, const double* steps,
                         Py_ssize_t lds) noexcept nogil

# Rows per block: the Gram matrix costs B / (4 G k) of the products, and tiles of
# fewer rows reload the vectors more often.
cdef enum:
    BLOCK = 16
BLOCK_ROWS = BLOCK


def block_grams(const double[:, ::1] X, double[:, ::1] grams, Py_ssize_t first,
                Py_ssize_t last):
    """The Gram matrices of blocks ``first`` to ``last - 1`` of BLOCK_ROWS rows of
    X: ``grams[q, s * BLOCK_ROWS + r] = x_s . x_r`` for the rows s < r of block q
    (numbered within it). Blocks are independent: threads may share them."""
    cdef Py_ssize_t q, s, rows, m = X.shape[0], n = X.shape[1]
    cdef double* pointers[BLOCK]
    if grams.shape[1] != BLOCK * BLOCK or not (
            0 <= first <= last and (last - 1) * BLOCK < m
            and last <= grams.shape[0]):
        raise ValueError("block_grams: the blocks do not fit X or grams.")
    with nogil:
        for q in range(first, last):
            rows = min(BLOCK, m - q * BLOCK)
            for s in range(rows):
                pointers[s] = <double*>&X[q * BLOCK + s, 0]
            ga_block_dots(pointers[0], rows, pointers, rows, n, &grams[q, 0],
                          BLOCK, True)


def block_run(const double[:, ::1] X, const double[:, ::1] Y,
              const double[::1] sample_weight, const double[:, ::1] grams,
              double[:, :, ::1] thetas, double[:, ::1] intercepts,
              const double[::1] etas, const Py_ssize_t[::1] configs, int phi,
              bint fit_intercept, double[::1] losses, unsigned char[::1] diverged):
    """One on-line pass of GA(identity, phi) over the rows of X, in order, for
    each configuration g of ``configs`` not yet ``diverged``: parameters
    ``thetas[g]`` (k x n) and ``intercepts[g]`` updated in place, rate
    ``etas[g]``, the weighted matching losses added to ``losses[g]``.

    ``grams`` are X's blocks' Gram matrices (:func:`block_grams`). A configuration
    whose activation, loss or parameters stop being finite is marked ``diverged``
    and left as it was before the failing row (its parameters checked at the end).
    Each configuration's results depend only on its own arguments, not on the
    other configurations of the call.
    """
    import numpy as np

    cdef Py_ssize_t m = X.shape[0], n = X.shape[1], k = thetas.shape[1]
    cdef Py_ssize_t G = configs.shape[0], q, r, rows, c, j, g, col, live
    cdef bint weighted = sample_weight.shape[0] > 0
    cdef double weight = 1.0, loss, step
    if (thetas.shape[2] != n or Y.shape[0] != m or Y.shape[1] != k
            or sample_weight.shape[0] not in (0, m)
            or grams.shape[0] * BLOCK < m
            or grams.shape[1] != BLOCK * BLOCK
            or intercepts.shape[0] != thetas.shape[0] or intercepts.shape[1] != k
            or etas.shape[0] != thetas.shape[0] or losses.shape[0] != etas.shape[0]
            or diverged.shape[0] != etas.shape[0]):
        raise ValueError("block_run: the shapes of the arguments do not agree.")
    for c in range(G):
        if not 0 <= configs[c] < etas.shape[0]:
            raise ValueError("block_run: a configuration is out of range.")
    # Per live configuration c (its outputs j at columns c k + j): activations and
    # steps of the block's rows, column-major (B per column); weight rows.
    cdef double[::1] activations = np.empty(max(1, G * k * BLOCK))
    cdef double[::1] steps = np.empty(max(1, G * k * BLOCK))
    cdef double[::1] totals = np.zeros(max(1, G))
    cdef double[::1] a = np.empty(k)
    cdef double[::1] y_hat = np.empty(k)
    cdef Py_ssize_t[::1] live_configs = np.empty(max(1, G), np.intp)
    cdef double** vectors = <double**>malloc(max(1, G * k) * sizeof(double*))
    if vectors == NULL:
        raise MemoryError
    cdef State s  # (the fields _transfer_and_loss reads)
    s.config.phi, s.k, s.scratch.a, s.scratch.y_hat = phi, k, &a[0], &y_hat[0]
    with nogil:
        live = 0
        for c in range(G):
            if not diverged[configs[c]]:
                live_configs[live] = configs[c]
                live += 1
        q = 0
        while q < m:
            rows = min(BLOCK, m - q)
            # (Configurations that diverged in the last block leave the list.)
            c = 0
            for col in range(live):
                if not diverged[live_configs[col]]:
                    live_configs[c] = live_configs[col]
                    c += 1
            live = c
            if live == 0:
                break
            for c in range(live):
                for j in range(k):
                    vectors[c * k + j] = &thetas[live_configs[c], j, 0]
            ga_block_dots(&X[q, 0], rows, vectors, live * k, n, &activations[0],
                          BLOCK, False)
            for c in range(live):
                g = live_configs[c]
                for r in range(rows):
                    col = c * k * BLOCK + r
                    if diverged[g]:  # (no step from the failing row on)
                        for j in range(k):
                            steps[col + j * BLOCK] = 0.0
                        continue
                    for j in range(k):
                        a[j] = activations[col + j * BLOCK] + intercepts[g, j]
                        if not isfinite(a[j]):
                            diverged[g] = True
                    if weighted:
                        weight = sample_weight[q + r]
                    loss = 0.0 if diverged[g] else _transfer_and_loss(&s, &Y[q + r, 0])
                    if not isfinite(loss):
                        diverged[g] = True
                    if diverged[g]:
                        for j in range(k):
                            steps[col + j * BLOCK] = 0.0
                        continue
                    totals[c] += weight * loss
                    for j in range(k):
                        step = etas[g] * weight * (y_hat[j] - Y[q + r, j])
                        steps[col + j * BLOCK] = step
                        if fit_intercept:
                            intercepts[g, j] -= step
                        if r + 1 < rows:  # the rows t after r: - S_r (x_r . x_t)
                            _block_correct(&activations[col + j * BLOCK + 1], step,
                                           &grams[q // BLOCK, r * BLOCK + r + 1],
                                           rows - r - 1)
            ga_block_update(vectors, live * k, &X[q, 0], rows, n, &steps[0], BLOCK)
            for c in range(live):
                losses[live_configs[c]] += totals[c]
                totals[c] = 0.0
            q += BLOCK
        for c in range(G):
            g = configs[c]
            if not diverged[g] and not _parameters_finite(&thetas[g, 0, 0],
                                                          &intercepts[g, 0], k, n):
                diverged[g] = True
        free(vectors)


cdef inline void _block_correct(double* activations, double step, const double* gram,
                                Py_ssize_t count) noexcept nogil:
    """activations[t] -= step * gram[t]: a row's step in the activations of the
    rows after it."""
    cdef Py_ssize_t t
    for t in range(count):
        activations[t] -= step * gram[t]


cdef inline bint _parameters_finite(const double* theta, const double* intercept,
                                    Py_ssize_t k, Py_ssize_t n) noexcept nogil:
    """Whether the k x n parameters and k intercepts are finite (ga_sum's test)."""
    return ga_sum(theta, 0.0, k * n) == 0.0 and ga_sum(intercept, 0.0, k) == 0.0


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define GA_PREFETCH(address) __builtin_prefetch(address)
    #else
    #define GA_PREFETCH(address) ((void)0)
    #endif
    """
    void GA_PREFETCH(const void* address) noexcept nogil


cdef inline void _prefetch_columns(const State* s, const int32_t* columns,
                                   Py_ssize_t nnz) noexcept nogil:
    """Ask for the cache lines of the coordinates a CSR row touches (theta and
    its terms), so that the misses of every configuration's trial overlap
    rather than follow one another."""
    cdef Py_ssize_t j, q, c
    for j in range(s.k):
        for q in range(nnz):
            c = j * s.n + columns[q]
            GA_PREFETCH(&s.params.theta[c])
            if s.params.num != s.params.theta:
                GA_PREFETCH(&s.params.num[c])
            if s.params.den != s.params.num:
                GA_PREFETCH(&s.params.den[c])


cdef class GridRow:
    """The one-row trial of every configuration of a lock-step grid in one call
    (a stream's test-then-train event): each configuration's loop takes the row
    through :class:`OneRow`'s trial, the one that its run_dense and run_csr take,
    at its constant rates, without the runaway check (the grid's passes run
    none).

    Parameters
    ----------
    loops : list of TrialLoop
        The loops of the configurations still learning.
    configurations : ndarray of shape (len(loops),), intp
        Each loop's index in the grid (into ``losses``).
    etas, intercept_etas : ndarray of shape (len(loops),), float64
        Each loop's rates.
    """
    cdef list rows
    cdef Py_ssize_t[::1] configurations
    cdef double[::1] etas, intercept_etas

    def __init__(self, list loops, const Py_ssize_t[::1] configurations,
                 const double[::1] etas, const double[::1] intercept_etas):
        if not (len(loops) == configurations.shape[0] == etas.shape[0]
                == intercept_etas.shape[0]):
            raise ValueError("GridRow: one configuration, rate pair and loop each.")
        self.rows = [OneRow(loop, None, 0.0, INFINITY, 0.0, 0) for loop in loops]
        self.configurations = configurations.copy()
        self.etas, self.intercept_etas = etas.copy(), intercept_etas.copy()

    def learn(self, const double[:, ::1] X, const double[::1] y, double[::1] losses):
        """Trial on the one dense row X of targets y for every configuration, its
        loss added to ``losses`` at the configuration's index. Returns the index
        of the least loss then (the first of equals, as ``np.argmin``), or -1 with
        every loop and loss unchanged if a trial is not taken (a row of another
        width, a trial that fails: the general path then runs the row)."""
        if (X.shape[0] != 1 or not self.rows
                or X.shape[1] != (<OneRow>self.rows[0]).loop.s.n):
            return -1
        return self._learn(&X[0, 0], NULL, X.shape[1], True, y, losses)

    def learn_csr(self, const double[::1] data, const int32_t[::1] indices,
                  const int32_t[::1] indptr, Py_ssize_t n_features,
                  const double[::1] y, double[::1] losses):
        """:meth:`learn` on one CSR row (-1 if it is not one canonical row of n
        features)."""
        if not self.rows:
            return -1
        cdef Py_ssize_t nnz = (<OneRow>self.rows[0])._csr_row(data, indices, indptr,
                                                              n_features)
        if nnz < 0:
            return -1
        return self._learn(&data[0] if nnz else NULL, &indices[0] if nnz else NULL,
                           nnz, False, y, losses)

    cdef Py_ssize_t _learn(self, const double* x, const int32_t* columns,
                           Py_ssize_t nnz, bint dense, const double[::1] y,
                           double[::1] losses) except -2:
        cdef Py_ssize_t i, g, best = 0, count = len(self.rows)
        cdef OneRow row
        cdef object sums
        if losses.shape[0] <= 0:
            return -1
        for i in range(count):
            if not 0 <= self.configurations[i] < losses.shape[0]:
                raise ValueError("GridRow: a configuration is out of range.")
        if not dense:
            for i in range(count):
                _prefetch_columns(&(<OneRow>self.rows[i]).loop.s, columns, nnz)
        # Every trial first, the losses after: a trial not taken undoes those
        # before it, and the call changes nothing.
        sums = [None] * count
        for i in range(count):
            row = <OneRow>self.rows[i]
            g = self.configurations[i]
            sums[i] = row._learn(x, columns, nnz, dense, y, self.etas[i],
                                 self.intercept_etas[i], 0, losses[g], 0.0, 1.0)
            if sums[i] is None:
                for g in range(i):
                    (<OneRow>self.rows[g]).loop.restore()
                return -1
        for i in range(count):
            losses[self.configurations[i]] = sums[i][0]
        for g in range(1, losses.shape[0]):
            if losses[g] < losses[best]:
                best = g
        return best
