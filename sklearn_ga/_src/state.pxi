# The state of one run (the codes come before it, from codes.pxi, which setup.py
# writes from sklearn_ga/_codes.py): the thresholds of the factored storage, the State
# struct that every function of the loop reads, its copies for TrialLoop.save, and
# the allocation of its term arrays.

ctypedef fused index_t:
    int32_t
    int64_t


# Recompute a row's weights from theta when its shift is this far from the maximum
# (e^30 ~ 1e13 leaves ample headroom before overflow) ...
cdef double SHIFT_SLACK = 30.0
cdef double TERM_HIGH = exp(SHIFT_SLACK)
cdef double TERM_LOW = exp(-SHIFT_SLACK)
# ... or when incremental normalizer updates moved this many times its current value
# (bounds the relative rounding error of the running sum by ~1e-13) ...
cdef double MASS_LIMIT = 1024.0
# ... or, on CSR input, after this many times n coordinates were touched (bounds the
# number of rounded additions to the normalizer; costs 1/32 of the O(nnz) work).
cdef Py_ssize_t TOUCH_LIMIT = 32
# Small steps |eta (y_hat - y) x_i| <= GA_STEP_MAX update the exponential terms by
# multiplication (e^{theta - d} = e^theta e^{-d}, no exp call); a dense row is
# recomputed from theta every RENEW_DENSE such updates so rounding cannot build up.
cdef double RENEW_DENSE = 64.0
# A multiplied term below this is recomputed from theta (0 would stay 0).
cdef double UNDERFLOW = 1e-300
# TrialLoop.save records the coordinates of a CSR batch of under n / JOURNAL_SHARE
# column entries (gathered at random), else copies whole rows (sequential).
cdef Py_ssize_t JOURNAL_SHARE = 7
# A CSR run holds theta outputs innermost in a copy (_columns_first) of at most this
# many values (1 GiB): a larger theta is not doubled.
cdef Py_ssize_t COLUMNS_FIRST_LIMIT = 2 ** 27
# Coordinates per block of the write-back of a lazy CSR run (_sync_theta).
cdef enum:
    SYNC_BLOCK = 256
# EG+-'s two terms of a coordinate multiply to e^{-2 shift}, and neither exceeds
# TERM_HIGH by more than one step's e^SHIFT_SLACK, so both stay above
# e^{-2 shift - 2 SHIFT_SLACK}: up to this shift (the bound is about 315) none comes
# near UNDERFLOW, and a lazy CSR run stores only num: den = e^{-2 shift} / num.
cdef double PM_HELD_SHIFT = 300.0
# The geodesic psi's theta counts only up to a positive factor, and their steps
# multiply it (KMWW Examples 2, 3: by about 1e17 per pass in a simplex run): a row
# whose largest |theta| leaves [1 / SCALE_LIMIT, SCALE_LIMIT] is brought back to
# [1, 2) by a power of 2, which changes neither the weights nor a bit of their value.
cdef double SCALE_LIMIT = 2.0 ** 200
# pnorm's scale is a series in the normalizer's change since its last power was
# taken (_set_scale) while that change is at most ANCHOR_RANGE (relative): the
# series' next term, binom(a, 8) e^8 with |a| < 1, is then below 5e-20.
cdef double ANCHOR_RANGE = 2.0 ** -8


# A row of psi = identity or pnorm pulled toward 0 by the penalty (alpha) keeps its
# theta as decay_j times the stored one, as SGD's weights keep a scale; below this
# decay the row is multiplied out (_fold_decay), as SGD resets its scale.
cdef double DECAY_FLOOR = 1e-9


# An averaging row's sum of scales restarts from 0 (every coordinate settled first,
# _rebase_row) once it exceeds this many times the row's scale, if at least
# max(n / REBASE_SHARE, REBASE_SHARE) trials went by since it last did (O(n) per
# such trials): a coordinate's sum is its term times a difference of two sums of
# scales, which then keeps all but 16 of its bits, or about as many as the scales
# fell by since the last rebase when they fall fast (as a normalizer grows).
cdef double REBASE_RATIO = 2.0 ** 16
cdef Py_ssize_t REBASE_SHARE = 16


cdef enum:
    ANCHOR_DEGREE = 7  # the degree of that series
    GEODESIC_SUMS = 5  # sums a geodesic CSR row's dot pass keeps for its step


# The state of a run, by concern: its configuration (fixed for the run), the
# parameters with each psi's private storage of them, the averages, the journal of
# TrialLoop.save and the scratch of the current trial. The functions of the loop take
# the whole State; _output_state slices each concern to one output.

cdef struct Config:
    int psi
    int phi
    double eta          # rate of the weights' step (of the trial: run rates)
    double eta_intercept  # rate of the intercepts' step
    double U
    double p
    double binomial[ANCHOR_DEGREE]  # pnorm: binom((2 - p) / p, d) for d = 1, 2, ...
    bint fit_intercept
    # The estimators' options, read only by _trial_options (the plain GA rule skips
    # them).
    bint options        # whether any option below differs from plain GA
    double alpha        # penalty toward Theta_1 = 0: theta_j <- (1 - eta alpha)
                        # theta_j before each step (_pull)
    int update          # UpdateCode
    int loss_kind       # LossCode
    double clip_low     # activations are clipped to [clip_low, clip_high]
    double clip_high    # (GA^Y: predictions clipped to [-Y, Y], KW01 §4)


cdef struct Params:
    double* theta       # k x n parameters
    double* num         # k x n weight numerators (aliases theta for identity)
    double* den         # k x n EG+-'s second terms e^{-theta - shift} (others: num)
    double* intercept   # k
    double* norm        # k   sum_i of the normalizer terms (_normalizer_term)
    double* shift       # k   reference maximum of theta (or |theta|)
    double* scale       # k   omega_ji = scale_j * num_ji
    double* mass        # k   |changes| of norm since the last recompute
    double* age         # k   multiplicative dense updates since the last recompute
    double* product     # k   EG+-: num * den = e^{-2 shift} of every coordinate
    double* anchor      # k   pnorm: 1 / the last normalizer whose power was taken
    double* anchor_power  # k  that normalizer^((2 - p) / p) (_set_scale)
    double* decay       # k   psi = identity, pnorm: theta_j = decay_j * the stored
                        #     row (a factor of scale_j too), 1 between runs
    Py_ssize_t touched  # coordinates touched since the last recompute (CSR)
    bint lazy           # theta is held by the terms (plain CSR run, exponential
                        # psi; EG+-: by num, den is product / num, not stored)


# Averaging (average=True, or a start): the mean of the weights after each averaged
# trial (_average_trial). A coordinate's unscaled weight u (omega / scale) stays as it
# is between its changes while the scale of its row moves every trial, so its sum is
# u times the sum of the scales since its last change: before u changes, the
# coordinate is settled (_settle), O(1).
cdef struct Averages:
    double* acc         # 2 k n or NULL: per coordinate (acc, mark): acc sums its
                        #     weights up to the averaged trial where scales was mark
    double* scales      # k   sum of scale_j after each averaged trial (since rebased)
    double* since       # k   averaged trials since the row was rebased
    double* b           # k   sum of the intercepts after each averaged trial
    double* count       # k   averaged trials (since the model was reset)
    Py_ssize_t start    # trials of a run before its first averaged one


# TrialLoop.save of a CSR batch journals only the coordinates it touches; an O(n)
# write (_guard_rows) first copies every row to ``backup``, once.
cdef struct Journal:
    double* backup      # NULL: no journal
    bint backed_up      # whether backup holds the rows


cdef struct Scratch:
    double* a           # k   activations of the current trial
    double* y_hat       # k   predictions of the current trial
    double* residual    # k   dL/da of the trial (the step is eta * residual * x)
    double* wx          # k   omega_j . x without intercept
    double* dot         # k   psi(Theta) x of the next trial, summed during the update
    bint dot_ready      #     whether dot holds it (dense rows of a _fused_dot psi)
    double x_top        #     max |x| of the next dense row, summed by a fused update
    bint x_top_ready    #     whether x_top holds it
    double x_squares    #     |x|^2 of the next dense row, summed by that pass too
    bint squares_ready  #     whether x_squares holds it
    double* rest        # k   normalizer of the coordinates a CSR row leaves alone
    double* rest_shift  # k   the shift of its units
    double lse          #     log-normalizer of softmax in the implicit equation
    double* row_theta   # nnz theta of the coordinates a CSR row touches
    double* row_num     # nnz their new num
    double* row_den     # nnz their new den (aliases row_num unless EG+-)
    double* row_held    # k x nnz EG+- lazy runs: the row's den, from the dot products;
                        #     pnorm: 2k x nnz, each output's terms and theta (_held_row)
    Py_ssize_t row_size #     longest CSR row (the stride of row_held)
    double* row_x       # nnz per-coordinate inputs of a simplex step
    double* geodesic    # k x GEODESIC_SUMS sums of a CSR row's dot pass (_geodesic_dot)
    double* theta_t     # n x k theta, outputs innermost, during a CSR run of several
                        #     outputs of psi = identity (_columns_first); else NULL
    double* sums        # 4 x k partial sums of such a run's dot products


cdef struct State:
    Py_ssize_t k        # outputs (rows of Theta)
    Py_ssize_t n        # features
    Config config
    Params params
    Averages avg
    Journal journal
    Scratch scratch
    # The run's sums and position.
    double path         # sum_t D(w_t, w_{t+1}) of the run, D = half the squared
                        #     length of a step (KMWW eq. 8; path_measure_)
    double loss_sum     # the weighted losses of the trials, each added as it ends:
                        #     the sum in trial order whatever the batches
                        #     (cumulative_loss_)
    Py_ssize_t trial    # position of the current trial in its run
    bint unreadable     # a CSR run stopped before a row that failed its check
    State* parent       # the state of all outputs, in a state of one (_output_state)


cdef enum:
    STATE_VECTORS = 16  # k-vectors of the parameters, averages and trial scratch
    OPTION_VECTORS = 4 + GEODESIC_SUMS  # k-vectors of the options' scratch


cdef void _bind_vectors(State* s, double* vectors, double* options) noexcept nogil:
    """Point the k-vectors of the parameters, the averages and the trial's scratch
    into ``vectors`` (STATE_VECTORS k doubles), those of the options' scratch into
    ``options`` (OPTION_VECTORS k); TrialLoop.save copies both whole."""
    cdef Py_ssize_t k = s.k
    cdef Params* p = &s.params
    cdef Averages* avg = &s.avg
    cdef Scratch* scratch = &s.scratch
    p.norm, p.shift, p.scale = vectors, vectors + k, vectors + 2 * k
    p.mass, p.age = vectors + 3 * k, vectors + 4 * k
    scratch.a, scratch.y_hat = vectors + 5 * k, vectors + 6 * k
    scratch.dot = vectors + 7 * k
    p.product, p.anchor = vectors + 8 * k, vectors + 9 * k
    p.anchor_power, p.decay = vectors + 10 * k, vectors + 11 * k
    avg.scales, avg.b = vectors + 12 * k, vectors + 13 * k
    avg.count, avg.since = vectors + 14 * k, vectors + 15 * k
    scratch.residual, scratch.wx = options, options + k
    scratch.rest, scratch.rest_shift = options + 2 * k, options + 3 * k
    scratch.geodesic = options + 4 * k


cdef inline Py_ssize_t _saved_count(State* s) noexcept nogil:
    """How many k x n blocks TrialLoop.save copies: the stored arrays, and the two
    of the averages' (acc, mark) pairs."""
    cdef double* arrays[3]
    return _stored(s, arrays) + (2 if s.avg.acc != NULL else 0)


cdef Py_ssize_t _stored(State* s, double** arrays) noexcept nogil:
    """Put theta, num and den in ``arrays``, those stored (num is theta for the
    identity, den is num but for EG+-); returns their number."""
    cdef Py_ssize_t count = 1
    arrays[0] = s.params.theta
    if s.params.num != s.params.theta:
        arrays[count] = s.params.num
        count += 1
    if s.params.den != s.params.num:
        arrays[count] = s.params.den
        count += 1
    return count


cdef void _copy_rows(State* s, double* copy, bint back) noexcept nogil:
    """Copy theta, num and den (those stored), and the averages, to ``copy``, or
    back from it."""
    cdef double* arrays[3]
    cdef Py_ssize_t size = s.k * s.n, count = _stored(s, arrays), q
    for q in range(count):
        if back:
            memcpy(arrays[q], copy + q * size, size * sizeof(double))
        else:
            memcpy(copy + q * size, arrays[q], size * sizeof(double))
    if s.avg.acc == NULL:
        return
    copy += count * size
    if back:
        memcpy(s.avg.acc, copy, 2 * size * sizeof(double))
    else:
        memcpy(copy, s.avg.acc, 2 * size * sizeof(double))


cdef void _copy_columns(State* s, const Py_ssize_t* columns, Py_ssize_t count,
                        double* copy, bint back) noexcept nogil:
    """Copy theta, num and den (those stored), and the averages, at ``columns`` of
    every row to ``copy``, or back from it: those of a coordinate together, so that
    their cache misses overlap."""
    cdef double* arrays[3]
    cdef Py_ssize_t stored = _stored(s, arrays), q, j, a, c
    for q in range(count):
        for j in range(s.k):
            c = j * s.n + columns[q]
            for a in range(stored):
                if back:
                    arrays[a][c] = copy[0]
                else:
                    copy[0] = arrays[a][c]
                copy += 1
            if s.avg.acc != NULL:
                for a in range(2 * c, 2 * c + 2):
                    if back:
                        s.avg.acc[a] = copy[0]
                    else:
                        copy[0] = s.avg.acc[a]
                    copy += 1


cdef void _guard_rows(State* s) noexcept nogil:
    """Before a write to coordinates a CSR batch may not touch: copy theta, num and
    den (every output's) to the backup of TrialLoop.save, the first time in the
    batch."""
    if s.parent != NULL:
        s = s.parent
    if s.journal.backup == NULL or s.journal.backed_up:
        return
    _copy_rows(s, s.journal.backup, False)
    s.journal.backed_up = True


HUGE_PAGE = 2 ** 21


def _term_arrays(count, k, n):
    """count new (k, n) float64 arrays in one allocation.

    From 2 MiB up, the allocation is aligned to 2 MiB and at least 4 MiB long, which
    NumPy advises the kernel (Linux) to back with huge pages: a fresh array costs
    a page fault per 4 KiB page on first touch otherwise, paid by every fit.
    """
    import numpy as np

    size = count * k * n
    if size * 8 < HUGE_PAGE:
        return np.empty((count, k, n))
    buffer = np.empty(max(size + HUGE_PAGE // 8, 2 * HUGE_PAGE // 8))
    start = (-buffer.ctypes.data % HUGE_PAGE) // 8
    return buffer[start:start + size].reshape(count, k, n)
