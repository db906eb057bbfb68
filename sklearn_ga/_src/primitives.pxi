# The C primitives of the loop (the headers beside this file), declared once. They
# are included into the one C file of the module, so that the compiler inlines them
# into the Cython functions that call them.

cdef extern from "_src/ga_config.h":
    double DBL_MAX
    double DBL_MIN
    void __builtin_prefetch(const void* address) noexcept nogil

cdef extern from "_src/ga_simd.h":
    int GA_SIMD_COUNT
    int GA_PRIMITIVE_COUNT
    const char* const ga_simd_names[]
    const char* const ga_primitive_names[]
    const int ga_simd_chosen[]
    bint ga_simd_supported(int level) noexcept
    int ga_simd_shipped(int primitive) noexcept
    void ga_simd_use_one(int primitive, int level) noexcept

cdef extern from "_src/ga_exp_log.h":
    double ga_exp(double x) noexcept nogil
    double ga_log(double x) noexcept nogil

cdef extern from "_src/ga_rows.h":
    double ga_dot(const double* w, const double* x, Py_ssize_t n) noexcept nogil
    double ga_dot_top(const double* w, const double* x, Py_ssize_t n,
                      double* sums) noexcept nogil
    void ga_axpy(double* theta, double step, const double* x,
                 Py_ssize_t n) noexcept nogil
    double ga_axpy_dot(double* theta, double step, const double* x,
                       const double* x_next, Py_ssize_t n,
                       double* squares) noexcept nogil
    double ga_sum(const double* v, double c, Py_ssize_t n) noexcept nogil
    bint ga_uniform(const double* v, Py_ssize_t n) noexcept nogil
    void ga_fill(double* v, double value, Py_ssize_t n) noexcept nogil
    double ga_max(const double* v, Py_ssize_t n, int absolute) noexcept nogil
    double ga_lesser(double a, double b) noexcept nogil
    double ga_greater(double a, double b) noexcept nogil
    double ga_least4(double a, double b, double c, double d) noexcept nogil
    double ga_greatest4(double a, double b, double c, double d) noexcept nogil
    void _float64_row "ga_float64_row"(const float* row, double* out,
                                       Py_ssize_t n) noexcept nogil
    double ga_dot_diff(const double* a, const double* b, const double* x,
                       Py_ssize_t n) noexcept nogil
    double ga_held_dot(double product, double* held, const double* x,
                       Py_ssize_t n) noexcept nogil
    void ga_quotients(double* out, double c, const double* v,
                      Py_ssize_t n) noexcept nogil
    int64_t ga_index_scan32(const int32_t* indices, Py_ssize_t n, int32_t* low,
                            int32_t* high) noexcept nogil
    int64_t ga_index_scan64(const int64_t* indices, Py_ssize_t n, int64_t* low,
                            int64_t* high) noexcept nogil

cdef extern from "_src/ga_series.h":
    double GA_STEP_MAX

cdef extern from "_src/ga_terms.h":
    void ga_softmax_terms(const double* theta, double* num, double shift,
                          Py_ssize_t n) noexcept nogil
    void ga_eg_pm_terms(const double* theta, double* num, double* den, double shift,
                        Py_ssize_t n) noexcept nogil
    void ga_exp_terms(const double* theta, double* num, Py_ssize_t n) noexcept nogil
    void ga_pnorm_terms(const double* theta, double* num, double shift, double p,
                        Py_ssize_t n) noexcept nogil
    void ga_theta_from_terms(double* theta, const double* num, double shift,
                             Py_ssize_t n) noexcept nogil
    double ga_scale_terms(double* theta, double* num, double step, const double* x,
                          const double* x_next, Py_ssize_t n, double dmax,
                          double* sums) noexcept nogil
    bint ga_step_factors(double step, const double* x, double* down, double* up,
                         Py_ssize_t n, double dmax) noexcept nogil
    double ga_scale_pm_dot(double* theta, double* num, double* den, double step,
                           const double* x, const double* x_next, Py_ssize_t n,
                           double* sums) noexcept nogil
    double ga_geodesic_sums(const double* num, const double* x, Py_ssize_t n,
                            double scale, int simplex, double* quad) noexcept nogil


def _exp_log(const double[::1] x, bint logarithm):
    """ga_exp (or ga_log) of each x as a new array: a hook for the tests of the
    headers' accuracy (tests/test_primitives.py)."""
    import numpy as np

    out = np.empty(x.shape[0])
    cdef double[::1] result = out
    cdef Py_ssize_t q
    for q in range(x.shape[0]):
        result[q] = ga_log(x[q]) if logarithm else ga_exp(x[q])
    return out


from os import environ as _environ

# The SIMD levels of this build, from the baseline up, and the primitives compiled
# at each (ga_simd.h; tests/test_clones.py checks them against the headers), with
# the highest level each ships at (runs when SKLEARN_GA_SIMD is unset, on a CPU
# that has it; the levels above it are built only to be measured).
SIMD_LEVELS = tuple(ga_simd_names[level].decode() for level in range(GA_SIMD_COUNT))
PRIMITIVES = tuple(ga_primitive_names[q].decode() for q in range(GA_PRIMITIVE_COUNT))
SHIPPED_SIMD_LEVELS = {PRIMITIVES[q]: SIMD_LEVELS[ga_simd_shipped(q)]
                       for q in range(GA_PRIMITIVE_COUNT)}


def _level_index(wanted):
    """The index of the level named ``wanted``, which this CPU runs; else
    ImportError, which says why: a timing pinned to a level must not run another."""
    if wanted not in SIMD_LEVELS:
        raise ImportError(f"SKLEARN_GA_SIMD={wanted!r} is not a level of this "
                          f"build. Its levels are {', '.join(SIMD_LEVELS)}; unset, "
                          f"each primitive runs the best level it ships at that "
                          f"the CPU supports")
    level = SIMD_LEVELS.index(wanted)
    if not ga_simd_supported(level):
        raise ImportError(f"SKLEARN_GA_SIMD={wanted!r}: this CPU does not support "
                          f"that level; it supports "
                          f"{', '.join(simd_levels_supported())}")
    return level


def _choose_simd_level(wanted, primitives=PRIMITIVES):
    """Run ``primitives`` at the level named ``wanted`` from now on (the value of
    the environment variable SKLEARN_GA_SIMD at import; empty: each primitive at
    the best level it ships at that the CPU supports). A level that is not built,
    or that the CPU does not run, raises ImportError. The benchmarks call it
    between fits to time the levels in turn (not while a fit runs: a run's calls
    would change level)."""
    level = _level_index(wanted) if wanted else -1
    for name in primitives:
        q = PRIMITIVES.index(name)
        if wanted:
            ga_simd_use_one(q, level)
        else:
            ga_simd_use_one(q, max(best for best in range(ga_simd_shipped(q) + 1)
                                   if ga_simd_supported(best)))


def simd_levels_supported():
    """The levels of this build that this CPU runs, from the baseline up: the values
    SKLEARN_GA_SIMD may take here."""
    return tuple(name for level, name in enumerate(SIMD_LEVELS)
                 if ga_simd_supported(level))


def simd_clones():
    """{primitive: the SIMD level it runs at}: chosen when the module was imported,
    each primitive at the best level of ``SHIPPED_SIMD_LEVELS`` that the CPU runs:
    "x86-64-v4" (AVX-512) for the primitives measured faster there,
    "x86-64-v3" (AVX2 + FMA), or "default" (the baseline, the only level of a
    build by another compiler or for another platform).
    ``SKLEARN_GA_SIMD=default`` (or another of ``SIMD_LEVELS``) pins every
    primitive to one level before the import; ``make bench`` prints the levels.

    Examples
    --------
    >>> from sklearn_ga._kernel import SIMD_LEVELS, simd_clones
    >>> set(simd_clones().values()) <= set(SIMD_LEVELS)
    True
    """
    return {PRIMITIVES[q]: SIMD_LEVELS[ga_simd_chosen[q]]
            for q in range(GA_PRIMITIVE_COUNT)}


_choose_simd_level(_environ.get("SKLEARN_GA_SIMD", "").strip())


def float64_block(const float[:, ::1] X, const Py_ssize_t[::1] rows,
                  double[:, ::1] out):
    """``out[i] = X[rows[i]]`` converted to float64, for each i < len(rows): a
    block of the rows a pass reads from a float32 X (``_validation.float64_rows``),
    gathered and converted in one pass over them."""
    cdef Py_ssize_t i, n = X.shape[1], count = rows.shape[0]
    if out.shape[0] < count or out.shape[1] != n:
        raise ValueError("out cannot hold the rows")
    for i in range(count):
        if not 0 <= rows[i] < X.shape[0]:
            raise IndexError(f"row {rows[i]} is not in X")
    with nogil:
        for i in range(count):
            _float64_row(&X[rows[i], 0], &out[i, 0], n)


def dense_row_sums(const floating[:, ::1] X):
    """The sum of each row of X (float64, or float32 read as it is), in float64 by
    ``ga_sum``: one pass over X at the speed of memory, without a float64 copy of
    a float32 X (for the activations of the initial model, ``_passes``)."""
    import numpy as np

    out = np.zeros(X.shape[0])
    cdef double[::1] sums = out
    cdef double[::1] row  # (float32 X) a row, as float64
    cdef Py_ssize_t i, n = X.shape[1]
    if n == 0:
        return out
    if floating is float:
        row = np.empty(n)
    with nogil:
        for i in range(X.shape[0]):
            if floating is double:
                sums[i] = ga_sum(&X[i, 0], 1.0, n)
            else:
                _float64_row(&X[i, 0], &row[0], n)
                sums[i] = ga_sum(&row[0], 1.0, n)
    return out


# _prefetch_trial asks for at most this many cache lines of a row: the hardware
# prefetcher follows a long row once its first lines are read.
cdef Py_ssize_t PREFETCH_LINES = 16


cdef inline bint _consecutive(const Py_ssize_t[::1] order) noexcept nogil:
    """Whether the trials read the rows one after another in memory: the hardware
    prefetcher streams such a pass, and asking for its rows too only costs."""
    cdef Py_ssize_t t
    for t in range(1, order.shape[0]):
        if order[t] != order[t - 1] + 1:
            return False
    return True


cdef inline void _prefetch_trial(const floating[:, ::1] X, const Py_ssize_t[::1] order,
                                 Py_ssize_t t) noexcept nogil:
    """Ask for the first cache lines of the row of trial t (if any) ahead of it: a
    shuffled pass reads rows in an order no prefetcher guesses, and a float32 row
    is converted before its trial (run_dense), so its loads would not overlap one."""
    cdef const char* row
    cdef Py_ssize_t q, size = X.shape[1] * sizeof(floating)
    if t >= order.shape[0] or size == 0:
        return
    size = min(size, 64 * PREFETCH_LINES)
    row = <const char*>&X[order[t], 0]
    for q in range(0, size, 64):
        __builtin_prefetch(row + q)
    __builtin_prefetch(row + size - 1)


cdef inline const double* _converted_row(const float[:, ::1] X,
                                         const Py_ssize_t[::1] order, Py_ssize_t t,
                                         double* rows, const double** x_next
                                         ) noexcept nogil:
    """Trial t's float32 row as float64 (returned) and the next trial's (x_next; NULL
    after the last), in three rows of scratch: row t + 2 is converted a trial before
    its read (its stores, read at once, would stall the trial's wider loads of it);
    trial 0 converts rows 0 and 1 too (run_dense)."""
    cdef Py_ssize_t i, n = X.shape[1], count = order.shape[0]
    for i in range(0 if t == 0 else t + 2, min(t + 3, count)):
        _float64_row(&X[order[i], 0], rows + (i % 3) * n, n)
    x_next[0] = rows + ((t + 1) % 3) * n if t + 1 < count else NULL
    return rows + (t % 3) * n
