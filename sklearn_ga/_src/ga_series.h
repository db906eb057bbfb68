/* e^{-+d} - 1 by Taylor series of a degree fixed at each call, for the multiplicative
   steps of the exponential weight terms. */
#ifndef SKLEARN_GA_GA_SERIES_H
#define SKLEARN_GA_GA_SERIES_H

#include "ga_config.h"

/* Steps |d| <= GA_STEP_MAX update exponential terms by series (see below). */
#define GA_STEP_MAX 0.5

/* 1 / k! for the series of e^{-+d} below. */
static const double ga_inv_factorial[17] = {1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24,
    1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320, 1.0 / 362880, 1.0 / 3628800,
    1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800.0, 1.0 / 87178291200.0,
    1.0 / 1307674368000.0, 1.0 / 20922789888000.0};

/* e^{-d} - 1 and e^{d} - 1 = (cosh d - 1) -+ sinh d by their Taylor series to
   this degree (3 to 15, a constant at each call so that the loops are unrolled
   and vectorized), in Horner's scheme in d^2. The -1 lets the caller scale a
   term by one rounding, t + t (e^{-+d} - 1). */
GA_INLINE void ga_expm1_pm(double d, int degree, double* down, double* up) {
    double u = d * d, even = ga_inv_factorial[degree / 2 * 2];
    double odd = ga_inv_factorial[(degree - 1) / 2 * 2 + 1];
    int k;
    for (k = degree / 2 - 1; k >= 1; k--)
        even = even * u + ga_inv_factorial[2 * k];
    for (k = (degree - 1) / 2 - 1; k >= 1; k--)
        odd = odd * u + ga_inv_factorial[2 * k + 1];
    even *= u;
    odd = d + (d * u) * odd;
    *down = even - odd;
    *up = even + odd;
}

/* e^{-d} - 1 of ga_expm1_pm, in four lanes (the same operations in each). */
GA_INLINE void ga_expm1_down4(const ga_v4* d, int degree, ga_v4* down) {
    double e = ga_inv_factorial[degree / 2 * 2];
    double o = ga_inv_factorial[(degree - 1) / 2 * 2 + 1];
    ga_v4 u = *d * *d, even = {e, e, e, e}, odd = {o, o, o, o};
    int k;
    for (k = degree / 2 - 1; k >= 1; k--)
        even = even * u + ga_inv_factorial[2 * k];
    for (k = (degree - 1) / 2 - 1; k >= 1; k--)
        odd = odd * u + ga_inv_factorial[2 * k + 1];
    even *= u;
    odd = *d + (*d * u) * odd;
    *down = even - odd;
}

/* The lowest degree p (3 to 15) of the series of e^{-+d} whose truncation error
   e^{2 dmax} dmax^(p+1) / (p+1)! stays below 1e-17 relative for all
   |d| <= dmax <= GA_STEP_MAX. */
static inline int ga_series_degree(double dmax) {
    static const double limits[12] = {1.2e-4, 1e-3, 4e-3, 1.2e-2, 2.5e-2, 5e-2,
                                      8.5e-2, 0.13, 0.19, 0.26, 0.34, 0.44};
    int p = 0;
    while (p < 12 && dmax > limits[p])
        p++;
    return p + 3;
}

/* STEP(p) for the series degree of dmax, p a constant in each branch (so that
   the loops are unrolled and vectorized). */
#define GA_BY_DEGREE(DMAX, STEP)                                                \
    switch (ga_series_degree(DMAX)) {                                           \
        case 3: STEP(3); break;                                                 \
        case 4: STEP(4); break;                                                 \
        case 5: STEP(5); break;                                                 \
        case 6: STEP(6); break;                                                 \
        case 7: STEP(7); break;                                                 \
        case 8: STEP(8); break;                                                 \
        case 9: STEP(9); break;                                                 \
        case 10: STEP(10); break;                                               \
        case 11: STEP(11); break;                                               \
        case 12: STEP(12); break;                                               \
        case 13: STEP(13); break;                                               \
        case 14: STEP(14); break;                                               \
        default: STEP(15);                                                      \
    }

#endif  /* SKLEARN_GA_GA_SERIES_H */
