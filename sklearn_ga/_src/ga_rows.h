/* Row primitives: dot products, axpy, sums, max, fill and the CSR index scan, written
   so that the compiler vectorizes them. */
#ifndef SKLEARN_GA_GA_ROWS_H
#define SKLEARN_GA_GA_ROWS_H

#include "ga_config.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* min and max of two doubles (not NaN) as one instruction; Cython's conditional
   expressions compile to branches, libm's fmin and fmax to calls. */
static inline double ga_lesser(double a, double b) { return a < b ? a : b; }
static inline double ga_greater(double a, double b) { return a > b ? a : b; }
/* The same of a group of four (the grouped CSR loops). */
static inline double ga_least4(double a, double b, double c, double d) {
    return ga_lesser(ga_lesser(a, b), ga_lesser(c, d));
}
static inline double ga_greatest4(double a, double b, double c, double d) {
    return ga_greater(ga_greater(a, b), ga_greater(c, d));
}

/* out = v converted to float64 (exactly): a float32 row that a run reads, four
   values a load and two conversions where SSE2 is there (the x86-64 baseline; GCC
   leaves the plain loop, and a vector type's conversion, scalar). */
static inline void ga_float64_row(const float* v, double* out, Py_ssize_t n) {
    Py_ssize_t q = 0;
#if defined(__SSE2__)
    __m128 f;
    for (; q + 4 <= n; q += 4) {
        f = _mm_loadu_ps(v + q);
        _mm_storeu_pd(out + q, _mm_cvtps_pd(f));
        _mm_storeu_pd(out + q + 2, _mm_cvtps_pd(_mm_movehl_ps(f, f)));
    }
#endif
    for (; q < n; q++)
        out[q] = v[q];
}

#endif  /* SKLEARN_GA_GA_ROWS_H */

/* The primitives, once per SIMD level: ga_simd.h defines GA_FN (the name at the
   level) and GA_SIMD (its target) and includes this part once per level. */
#ifdef GA_FN
/* sum_i w_i x_i with eight partial sums (no -ffast-math reassociation needed). */
GA_SIMD static double GA_FN(ga_dot)(const double* w, const double* x,
                                    Py_ssize_t n) {
    double s[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    Py_ssize_t q = 0;
    int l;
    for (; q + 8 <= n; q += 8)
        for (l = 0; l < 8; l++)
            s[l] += w[q + l] * x[q + l];
    for (; q < n; q++)
        s[0] += w[q] * x[q];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* ga_dot(w, x, n), with max |x| in sums[0] and ga_dot(x, x, n) in sums[1] (the
   step's bound and its length, KMWW eq. 8), in one pass over x: the same sums in
   the same order, so the same bits, as the three passes. Vectors of four, as in
   ga_axpy_dot; the max as a compare and a select of bits (exact in any order: no
   NaN reaches it, see ga_max). */
GA_SIMD static double GA_FN(ga_dot_top)(const double* w, const double* x,
                                        Py_ssize_t n, double* sums) {
    const ga_i4 magnitude = {~GA_SIGN_BIT, ~GA_SIGN_BIT, ~GA_SIGN_BIT, ~GA_SIGN_BIT};
    ga_v4 s0 = {0.0}, s1 = {0.0}, z0 = {0.0}, z1 = {0.0}, m0 = {0.0}, m1 = {0.0};
    ga_v4 w0, w1, u0, u1, a0, a1;
    double s[8], z[8], m[8], top = 0.0, t;
    Py_ssize_t q = 0;
    int l;
    for (; q + 8 <= n; q += 8) {
        GA_LOAD4(w0, w + q);
        GA_LOAD4(w1, w + q + 4);
        GA_LOAD4(u0, x + q);
        GA_LOAD4(u1, x + q + 4);
        s0 += w0 * u0;
        s1 += w1 * u1;
        z0 += u0 * u0;
        z1 += u1 * u1;
        a0 = (ga_v4)((ga_i4)u0 & magnitude);
        a1 = (ga_v4)((ga_i4)u1 & magnitude);
        m0 = (ga_v4)(((ga_i4)a0 & (a0 > m0)) | ((ga_i4)m0 & ~(a0 > m0)));
        m1 = (ga_v4)(((ga_i4)a1 & (a1 > m1)) | ((ga_i4)m1 & ~(a1 > m1)));
    }
    /* (Stores, not lane reads: those keep the sums in memory through the loop.) */
    GA_STORE4(s, s0);
    GA_STORE4(s + 4, s1);
    GA_STORE4(z, z0);
    GA_STORE4(z + 4, z1);
    GA_STORE4(m, m0);
    GA_STORE4(m + 4, m1);
    for (l = 0; l < 8; l++)
        top = ga_greater(m[l], top);
    for (; q < n; q++) {
        s[0] += w[q] * x[q];
        z[0] += x[q] * x[q];
        t = fabs(x[q]);
        top = ga_greater(t, top);
    }
    sums[0] = top;
    sums[1] = ((z[0] + z[1]) + (z[2] + z[3])) + ((z[4] + z[5]) + (z[6] + z[7]));
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* theta -= step * x */
GA_SIMD static void GA_FN(ga_axpy)(double* theta, double step,
                                   const double* x, Py_ssize_t n) {
    Py_ssize_t q;
    for (q = 0; q < n; q++)
        theta[q] -= step * x[q];
}

/* theta -= step * x, returning the new theta . x_next: the next trial's dot
   product is summed while the update streams through theta (one pass), and so is
   |x_next|^2 (*squares: the length of the next step, KMWW eq. 8). Eight partial
   sums of each, as in ga_dot, held in two vectors of four: with sixteen scalar
   sums GCC vectorizes across blocks of eight coordinates (strided, permuted loads:
   several times slower). */
GA_SIMD static double GA_FN(ga_axpy_dot)(double* restrict theta,
                                         double step, const double* x,
                                         const double* x_next, Py_ssize_t n,
                                         double* squares) {
    ga_v4 s0 = {0.0}, s1 = {0.0}, z0 = {0.0}, z1 = {0.0}, t0, t1, u0, u1, n0, n1;
    double s[8], z[8];
    Py_ssize_t q = 0;
    int l;
    for (; q + 8 <= n; q += 8) {
        GA_LOAD4(t0, theta + q);
        GA_LOAD4(t1, theta + q + 4);
        GA_LOAD4(u0, x + q);
        GA_LOAD4(u1, x + q + 4);
        GA_LOAD4(n0, x_next + q);
        GA_LOAD4(n1, x_next + q + 4);
        t0 -= step * u0;
        t1 -= step * u1;
        GA_STORE4(theta + q, t0);
        GA_STORE4(theta + q + 4, t1);
        s0 += t0 * n0;
        s1 += t1 * n1;
        z0 += n0 * n0;
        z1 += n1 * n1;
    }
    for (l = 0; l < 4; l++) {
        s[l] = s0[l];
        s[l + 4] = s1[l];
        z[l] = z0[l];
        z[l + 4] = z1[l];
    }
    for (; q < n; q++) {
        theta[q] -= step * x[q];
        s[0] += theta[q] * x_next[q];
        z[0] += x_next[q] * x_next[q];
    }
    *squares = ((z[0] + z[1]) + (z[2] + z[3])) + ((z[4] + z[5]) + (z[6] + z[7]));
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* sum_i c v_i. With c = 0 the sum is 0 if every v_i is finite and NaN otherwise
   (v * 0 is NaN for NaN and +-inf): a vectorized finiteness test, no branch per
   element. */
GA_SIMD static double GA_FN(ga_sum)(const double* v, double c, Py_ssize_t n) {
    double s[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    Py_ssize_t q = 0;
    int l;
    for (; q + 8 <= n; q += 8)
        for (l = 0; l < 8; l++)
            s[l] += c * v[q + l];
    for (; q < n; q++)
        s[0] += c * v[q];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* Whether v_1 = ... = v_n (n >= 1; not with a NaN), without a branch per element. */
GA_SIMD static int GA_FN(ga_uniform)(const double* v, Py_ssize_t n) {
    int differ = 0;
    Py_ssize_t q;
    for (q = 1; q < n; q++)
        differ |= v[q] != v[0];
    return !differ;
}

/* v_i = value for all i. */
GA_SIMD static void GA_FN(ga_fill)(double* v, double value, Py_ssize_t n) {
    Py_ssize_t q;
    for (q = 0; q < n; q++)
        v[q] = value;
}

/* A max is not associative where NaN is involved, so GCC vectorizes it only under
   finite math; the callers never need a NaN here (a NaN input has made the
   activation non-finite and a NaN theta fails the state check). */
GA_SIMD GA_FINITE static double GA_FN(ga_max)(const double* v, Py_ssize_t n,
                                              int absolute) {
    double m = absolute ? fabs(v[0]) : v[0], t;
    Py_ssize_t q;
    if (absolute)
        for (q = 1; q < n; q++) {
            t = fabs(v[q]);
            m = t > m ? t : m;
        }
    else
        for (q = 1; q < n; q++) {
            t = v[q];
            m = t > m ? t : m;
        }
    return m;
}

/* sum_i (a_i - b_i) x_i: the EG+- dot product with weights e^+ - e^-. */
GA_SIMD static double GA_FN(ga_dot_diff)(const double* a, const double* b,
                                         const double* x, Py_ssize_t n) {
    double s[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    Py_ssize_t q = 0;
    int l;
    for (; q + 8 <= n; q += 8)
        for (l = 0; l < 8; l++)
            s[l] += (a[q + l] - b[q + l]) * x[q + l];
    for (; q < n; q++)
        s[0] += (a[q] - b[q]) * x[q];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* sum_q (a_q - d_q) x_q with d_q = product / a_q, for the gathered a_q in held,
   which it replaces by d_q. */
GA_SIMD static double GA_FN(ga_held_dot)(double product, double* held,
                                         const double* x, Py_ssize_t n) {
    double s[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    double a, d;
    Py_ssize_t q = 0;
    int l;
    for (; q + 8 <= n; q += 8)
        for (l = 0; l < 8; l++) {
            a = held[q + l];
            d = product / a;
            held[q + l] = d;
            s[l] += (a - d) * x[q + l];
        }
    for (; q < n; q++) {
        a = held[q];
        d = product / a;
        held[q] = d;
        s[0] += (a - d) * x[q];
    }
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* out = c / v: EG+-'s den = e^{-2 shift} / num after a lazy CSR run. */
GA_SIMD static void GA_FN(ga_quotients)(double* out, double c, const double* v,
                                        Py_ssize_t n) {
    Py_ssize_t q;
    for (q = 0; q < n; q++)
        out[q] = c / v[q];
}

/* The smallest and largest of n >= 1 CSR indices and the number of q with
   indices[q] <= indices[q - 1], in one vectorized pass (csr_structure); the
   count is kept in the indices' own width (so the compare vectorizes without
   widening), block by block so that it cannot overflow. */
#define GA_INDEX_SCAN(NAME, T)                                                  \
    GA_SIMD static int64_t GA_FN(NAME)(const T* indices, Py_ssize_t n,      \
                                       T* low, T* high) {                   \
        T least = indices[0], most = indices[0], value, count;              \
        int64_t decreases = 0;                                              \
        Py_ssize_t q = 1, end;                                              \
        while (q < n) {                                                     \
            end = n - q > (1 << 30) ? q + (1 << 30) : n;                    \
            count = 0;                                                      \
            for (; q < end; q++) {                                          \
                value = indices[q];                                         \
                count += value <= indices[q - 1];                           \
                least = value < least ? value : least;                      \
                most = value > most ? value : most;                         \
            }                                                               \
            decreases += count;                                             \
        }                                                                   \
        *low = least;                                                       \
        *high = most;                                                       \
        return decreases;                                                   \
    }
GA_INDEX_SCAN(ga_index_scan32, int32_t)
GA_INDEX_SCAN(ga_index_scan64, int64_t)

#undef GA_INDEX_SCAN
#endif  /* GA_FN */
