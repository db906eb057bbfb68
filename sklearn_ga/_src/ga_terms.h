/* Weight terms of psi in factored storage (omega = scale * num) and their passes:
   computed from theta, stepped multiplicatively, written back to theta. */
#ifndef SKLEARN_GA_GA_TERMS_H
#define SKLEARN_GA_GA_TERMS_H

#include "ga_config.h"
#include "ga_exp_log.h"
#include "ga_series.h"

/* The block of a long p-norm row (ga_pnorm_terms). */
enum { GA_PNORM_BLOCK = 512 };

/* One pass of an EG+- update with series of this degree: theta -= d = step x,
   num *= e^{-d}, den *= e^{d}; and, for the next trial, its dot product
   sum (num - den) x_next (returned), the normalizer sum (num + den) (sums[0]),
   max |x_next| (sums[1]) and |x_next|^2 (sums[2]: the length of the next step,
   KMWW eq. 8), so that the row is read once per trial. */
GA_INLINE double ga_pm_pass(
        double* restrict theta, double* restrict num, double* restrict den,
        double step, const double* restrict x, const double* restrict x_next,
        Py_ssize_t n, int degree, double* restrict sums) {
    double dot[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    double total[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    double top[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    double z[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    double d, down, up, a, b, t;
    Py_ssize_t q = 0;
    int l;
    for (; q + 8 <= n; q += 8)
        for (l = 0; l < 8; l++) {
            d = step * x[q + l];
            theta[q + l] -= d;
            ga_expm1_pm(d, degree, &down, &up);
            a = num[q + l] + num[q + l] * down;
            b = den[q + l] + den[q + l] * up;
            num[q + l] = a;
            den[q + l] = b;
            total[l] += a + b;
            dot[l] += (a - b) * x_next[q + l];
            z[l] += x_next[q + l] * x_next[q + l];
            t = fabs(x_next[q + l]);
            top[l] = t > top[l] ? t : top[l];
        }
    for (; q < n; q++) {
        d = step * x[q];
        theta[q] -= d;
        ga_expm1_pm(d, degree, &down, &up);
        a = num[q] + num[q] * down;
        b = den[q] + den[q] * up;
        num[q] = a;
        den[q] = b;
        total[0] += a + b;
        dot[0] += (a - b) * x_next[q];
        z[0] += x_next[q] * x_next[q];
        t = fabs(x_next[q]);
        top[0] = t > top[0] ? t : top[0];
    }
    for (l = 0; l < 4; l++)
        top[l] = top[l + 4] > top[l] ? top[l + 4] : top[l];
    top[0] = top[1] > top[0] ? top[1] : top[0];
    top[2] = top[3] > top[2] ? top[3] : top[2];
    sums[0] = ((total[0] + total[1]) + (total[2] + total[3]))
              + ((total[4] + total[5]) + (total[6] + total[7]));
    sums[1] = top[2] > top[0] ? top[2] : top[0];
    sums[2] = ((z[0] + z[1]) + (z[2] + z[3])) + ((z[4] + z[5]) + (z[6] + z[7]));
    return ((dot[0] + dot[1]) + (dot[2] + dot[3]))
           + ((dot[4] + dot[5]) + (dot[6] + dot[7]));
}

#endif  /* SKLEARN_GA_GA_TERMS_H */

/* The primitives, once per SIMD level: ga_simd.h defines GA_FN (the name at the
   level) and GA_SIMD (its target) and includes this part once per level. */
#ifdef GA_FN
/* Weight terms of n parameters: omega_i = scale * num_i, the normalizer sums
   each coordinate's term (_terms and _normalizer_term in _src/psi.pxi). */
GA_SIMD static void GA_FN(ga_softmax_terms)(const double* theta, double* num,
                                            double shift, Py_ssize_t n) {
    Py_ssize_t q;
    for (q = 0; q < n; q++)
        num[q] = ga_exp(theta[q] - shift);
}

GA_SIMD static void GA_FN(ga_eg_pm_terms)(const double* theta, double* num, double* den,
                                          double shift, Py_ssize_t n) {
    Py_ssize_t q;
    for (q = 0; q < n; q++) {
        num[q] = ga_exp(theta[q] - shift);
        den[q] = ga_exp(-theta[q] - shift);
    }
}

GA_SIMD static void GA_FN(ga_exp_terms)(const double* theta, double* num,
                                        Py_ssize_t n) {
    Py_ssize_t q;
    for (q = 0; q < n; q++)
        num[q] = ga_exp(theta[q]);
}

/* p-norm terms num = sign(t) r^(p - 1) with r = |t| / shift (the normalizer
   term r^p = num t / shift is not stored). For an integer p up to 64 the power
   is a product of squares (binary powering, a few roundings); otherwise it is
   e^{(p - 1) ln r} (relative error ~1e-16 |(p - 1) ln r|; r < 1e-300 gives 0,
   below the normalizer's rounding, which is >= 1), the logs and the exps in two
   passes (num holds the logs between them): one fused loop spills registers and
   runs slower. A long row (a recompute) goes in blocks, and a block of zeros
   takes no power: most of a wide sparse row is 0 after a fit's first rows, or
   when features never occur. Short rows (a CSR step) go whole. */
GA_SIMD static void GA_FN(ga_pnorm_terms)(const double* theta, double* num,
                                          double shift, double p, Py_ssize_t n) {
    Py_ssize_t q, start, size;
    /* A multiplication, not a (slow, unpipelined) division per coordinate: one
       more rounding of r, (p - 1) 1.1e-16 in num. */
    double r, power, square, inverse = 1.0 / shift;
    int e, b, nonzero;
    if (p == 2.0) {  /* no power to take (a test inside would be if-converted) */
        for (q = 0; q < n; q++)
            num[q] = theta[q] * inverse;
        return;
    }
    if (p == floor(p) && p <= 64.0) {
        /* The six bits of p - 1 in a loop of constant length, unused squares
           multiplied in as 1: the same products, vectorized over q. */
        e = (int)p - 1;
        for (q = 0; q < n; q++) {
            square = fabs(theta[q]) * inverse;
            power = e & 1 ? square : 1.0;
            for (b = 1; b < 6; b++) {
                square *= square;
                power *= (e >> b) & 1 ? square : 1.0;
            }
            num[q] = theta[q] < 0.0 ? -power : power;
        }
        return;
    }
    if (n > 8 * GA_PNORM_BLOCK) {
        for (start = 0; start < n; start += GA_PNORM_BLOCK) {
            size = n - start < GA_PNORM_BLOCK ? n - start : GA_PNORM_BLOCK;
            nonzero = 0;
            for (q = start; q < start + size; q++)
                nonzero |= theta[q] != 0.0;
            if (nonzero)
                GA_FN(ga_pnorm_terms)(theta + start, num + start, shift, p, size);
            else
                memset(num + start, 0, size * sizeof(double));
        }
        return;
    }
    for (q = 0; q < n; q++) {
        r = fabs(theta[q]) * inverse;
        /* e^{-1000} is 0: no second division by the shift to tell. */
        num[q] = r < 1e-300 ? -1000.0 : (p - 1.0) * ga_log(r < 1e-300 ? 1.0 : r);
    }
    for (q = 0; q < n; q++) {
        power = ga_exp(num[q]);
        num[q] = theta[q] < 0.0 ? -power : power;
    }
}

/* theta = ln(num) + shift for the coordinates whose term holds theta (not below
   1e-300 nor overflowed: a long step's term against the old shift): the
   parameters of a lazy CSR run (see _update_sparse_row). */
GA_SIMD static void GA_FN(ga_theta_from_terms)(double* theta, const double* num,
                                               double shift, Py_ssize_t n) {
    Py_ssize_t q;
    for (q = 0; q < n; q++)
        theta[q] = num[q] >= 1e-300 && num[q] <= DBL_MAX
                   ? ga_log(num[q]) + shift : theta[q];
}

/* theta -= step * x with the terms e^{theta - shift} following multiplicatively,
   num *= e^{-d} (softmax, exp: den is num) with the series degree of dmax =
   |step| max|x| (ga_series_degree in ga_series.h); returns the new sum of num in
   four partial sums. With x_next (not NULL), the same pass sums, for the next
   trial, ga_dot(num, x_next) (sums[0]), max |x_next| (sums[1]) and
   ga_dot(x_next, x_next) (sums[2]) in ga_dot's eight partial sums and order, so
   that the row is read once per trial, as EG+-'s is (ga_pm_pass). */
#define GA_SCALE_AT(P, i, lane, next_lane, NEXT)                                \
    do {                                                                        \
        d = step * x[i];                                                        \
        theta[i] -= d;                                                          \
        ga_expm1_pm(d, P, &down, &up);                                          \
        t = num[i] + num[i] * down;                                             \
        num[i] = t;                                                             \
        total[lane] += t;                                                       \
        if (NEXT) {                                                             \
            dot[next_lane] += t * x_next[i];                                    \
            z[next_lane] += x_next[i] * x_next[i];                              \
            a = fabs(x_next[i]);                                                \
            top[next_lane] = a > top[next_lane] ? a : top[next_lane];           \
        }                                                                       \
    } while (0)
/* Four coordinates at i, in vectors (GCC does not vectorize the fused pass of
   scalars): the same operations per lane. */
#define GA_SCALE_AT4(P, i, next_sum, next_squares, next_top, NEXT)              \
    do {                                                                        \
        GA_LOAD4(u, x + (i));                                                   \
        GA_LOAD4(h, theta + (i));                                               \
        GA_LOAD4(w, num + (i));                                                 \
        v = step * u;                                                           \
        h -= v;                                                                 \
        GA_STORE4(theta + (i), h);                                              \
        ga_expm1_down4(&v, P, &v);                                              \
        w = w + w * v;                                                          \
        GA_STORE4(num + (i), w);                                                \
        sum4 += w;                                                              \
        if (NEXT) {                                                             \
            GA_LOAD4(u, x_next + (i));                                          \
            next_sum += w * u;                                                  \
            next_squares += u * u;                                              \
            u = (ga_v4)((ga_i4)u & magnitude);                                  \
            next_top = (ga_v4)(((ga_i4)u & (u > next_top))                      \
                               | ((ga_i4)next_top & ~(u > next_top)));          \
        }                                                                       \
    } while (0)
#define GA_SCALE_PASS(P, NEXT)                                                  \
    for (; q + 8 <= n; q += 8) {                                                \
        GA_SCALE_AT4(P, q, s0, z0, m0, NEXT);                                   \
        GA_SCALE_AT4(P, q + 4, s1, z1, m1, NEXT);                               \
    }                                                                           \
    GA_STORE4(total, sum4);                                                     \
    GA_STORE4(dot, s0);                                                         \
    GA_STORE4(dot + 4, s1);                                                     \
    GA_STORE4(z, z0);                                                           \
    GA_STORE4(z + 4, z1);                                                       \
    GA_STORE4(top, m0);                                                         \
    GA_STORE4(top + 4, m1);                                                     \
    for (; q + 4 <= n; q += 4)                                                  \
        for (l = 0; l < 4; l++)                                                 \
            GA_SCALE_AT(P, q + l, l, 0, NEXT);                                  \
    for (; q < n; q++)                                                          \
        GA_SCALE_AT(P, q, 0, 0, NEXT);
#define GA_SCALE_LOOP(P) GA_SCALE_PASS(P, 0)
#define GA_SCALE_NEXT_LOOP(P) GA_SCALE_PASS(P, 1)
GA_SIMD static double GA_FN(ga_scale_terms)(double* restrict theta,
                                            double* restrict num, double step,
                                            const double* restrict x,
                                            const double* restrict x_next,
                                            Py_ssize_t n, double dmax,
                                            double* restrict sums) {
    const ga_i4 magnitude = {~GA_SIGN_BIT, ~GA_SIGN_BIT, ~GA_SIGN_BIT, ~GA_SIGN_BIT};
    ga_v4 sum4 = {0.0}, s0 = {0.0}, s1 = {0.0}, z0 = {0.0}, z1 = {0.0};
    ga_v4 m0 = {0.0}, m1 = {0.0}, u, v, h, w;
    double total[4], dot[8], z[8], top[8], d, down, up, t, a;
    Py_ssize_t q = 0;
    int l;
    if (x_next == NULL) {
        GA_BY_DEGREE(dmax, GA_SCALE_LOOP)
        return (total[0] + total[1]) + (total[2] + total[3]);
    }
    GA_BY_DEGREE(dmax, GA_SCALE_NEXT_LOOP)
    for (l = 1; l < 8; l++)
        top[0] = ga_greater(top[l], top[0]);
    sums[0] = ((dot[0] + dot[1]) + (dot[2] + dot[3]))
              + ((dot[4] + dot[5]) + (dot[6] + dot[7]));
    sums[1] = top[0];
    sums[2] = ((z[0] + z[1]) + (z[2] + z[3])) + ((z[4] + z[5]) + (z[6] + z[7]));
    return (total[0] + total[1]) + (total[2] + total[3]);
}
#undef GA_SCALE_AT
#undef GA_SCALE_AT4
#undef GA_SCALE_PASS
#undef GA_SCALE_LOOP
#undef GA_SCALE_NEXT_LOOP

/* The factors of a CSR row's multiplicative step d_q = step x_q, all
   |d_q| <= dmax. For dmax <= GA_STEP_MAX (returns 1): down_q = e^{-d_q} - 1 and
   (if up is not NULL) up_q = e^{d_q} - 1 by the series above, so that a term
   scales with one rounding, t + t down_q; beyond (returns 0) the factors
   e^{-+d_q} themselves, by ga_exp (t + t (e^{-d} - 1) would cancel). */
#define GA_FACTOR_LOOP(P)                                                       \
    for (q = 0; q < n; q++) {                                                   \
        ga_expm1_pm(step * x[q], P, &minus, &plus);                             \
        down[q] = minus;                                                        \
        if (up) up[q] = plus;                                                   \
    }
GA_SIMD static int GA_FN(ga_step_factors)(double step, const double* x, double* down,
                                          double* up, Py_ssize_t n, double dmax) {
    Py_ssize_t q;
    double minus, plus;
    if (dmax <= GA_STEP_MAX) {
        GA_BY_DEGREE(dmax, GA_FACTOR_LOOP)
        return 1;
    }
    for (q = 0; q < n; q++) {
        down[q] = ga_exp(-step * x[q]);
        if (up) up[q] = ga_exp(step * x[q]);
    }
    return 0;
}

/* The EG+- pass for |step| max|x| <= GA_STEP_MAX, with max |x| in sums[1] on
   entry (sums: 3 values). x_next NULL: no next row (the sums are then of x). */
GA_SIMD static double GA_FN(ga_scale_pm_dot)(double* theta, double* num, double* den,
                                             double step, const double* x,
                                             const double* x_next, Py_ssize_t n,
                                             double* sums) {
    double dot = 0.0;
    if (x_next == NULL)
        x_next = x;
    #define GA_PM_PASS(P) dot = ga_pm_pass(theta, num, den, step, x, x_next, n, P, sums)
    GA_BY_DEGREE(fabs(step) * sums[1], GA_PM_PASS)
    return dot;
}

/* A dense geodesic row's dot product sum w x (returned) and the quad of its step,
   sum x^2 (sphere: w = num) or scale sum w x^2 (simplex: w = num^2), each in
   eight partial sums, as in ga_dot: one pass that vectorizes. */
GA_SIMD static double GA_FN(ga_geodesic_sums)(const double* num, const double* x,
                                              Py_ssize_t n, double scale, int simplex,
                                              double* quad) {
    double d[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    double g[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    double w;
    Py_ssize_t q = 0;
    int l;
    for (; q + 8 <= n; q += 8)
        for (l = 0; l < 8; l++) {
            w = simplex ? num[q + l] * num[q + l] : num[q + l];
            d[l] += w * x[q + l];
            g[l] += x[q + l] * x[q + l] * (simplex ? scale * w : 1.0);
        }
    for (; q < n; q++) {
        w = simplex ? num[q] * num[q] : num[q];
        d[0] += w * x[q];
        g[0] += x[q] * x[q] * (simplex ? scale * w : 1.0);
    }
    *quad = ((g[0] + g[1]) + (g[2] + g[3])) + ((g[4] + g[5]) + (g[6] + g[7]));
    return ((d[0] + d[1]) + (d[2] + d[3])) + ((d[4] + d[5]) + (d[6] + d[7]));
}

#endif  /* GA_FN */
