# The C primitives of the loop (the headers beside this file), declared once. They
# are included into the one C file of the module, so that the compiler inlines them
# into the Cython functions that call them.

cdef extern from "_src/ga_config.h":
    double DBL_MAX
    double DBL_MIN
    void __builtin_prefetch(const void* address) noexcept nogil
    const char* ga_clone(int wide) noexcept

cdef extern from "_src/ga_exp_log.h":
    double ga_exp(double x) noexcept nogil
    double ga_log(double x) noexcept nogil

cdef extern from "_src/ga_rows.h":
    double ga_dot(const double* w, const double* x, Py_ssize_t n) noexcept nogil
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
                          Py_ssize_t n, double dmax) noexcept nogil
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


# The primitives compiled with clones: for AVX-512 too (GA_SIMD_WIDE) or not
# (GA_SIMD). tests/test_primitives.py checks these lists against the headers.
WIDE_PRIMITIVES = ("ga_softmax_terms", "ga_eg_pm_terms", "ga_exp_terms",
                   "ga_pnorm_terms", "ga_theta_from_terms", "ga_scale_terms",
                   "ga_step_factors", "ga_scale_pm_dot", "ga_geodesic_sums")
ROW_PRIMITIVES = ("ga_dot", "ga_axpy", "ga_axpy_dot", "ga_sum", "ga_uniform",
                  "ga_fill", "ga_max", "ga_dot_diff", "ga_held_dot", "ga_quotients",
                  "ga_index_scan32", "ga_index_scan64", "ga_block_dots",
                  "ga_block_update")


def simd_clones():
    """{primitive: the clone the loader picks for it on this CPU}: "x86-64-v4"
    (AVX-512), "x86-64-v3" (AVX2 + FMA), "default", or "none" in a build without
    clones (another compiler or platform). ``make bench`` prints it."""
    wide, rows = ga_clone(1).decode(), ga_clone(0).decode()
    return {**dict.fromkeys(WIDE_PRIMITIVES, wide), **dict.fromkeys(ROW_PRIMITIVES, rows)}
