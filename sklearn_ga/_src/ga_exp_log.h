/* Branch-free e^x and ln x to about 2 ulp (tests/test_primitives.py), so that loops
   calling them vectorize. */
#ifndef SKLEARN_GA_GA_EXP_LOG_H
#define SKLEARN_GA_GA_EXP_LOG_H

#include "ga_config.h"

/* e^x to about 2 ulp in branch-free arithmetic, so loops calling it vectorize:
   x = k ln2 + r with |r| <= ln2 / 2, e^r by a degree-11 near-minimax (Chebyshev
   fit) polynomial (error < 4e-17) in Estrin's scheme, times 2^k built from the
   exponent bits in two halves so subnormal results round only once.
   NaN stays NaN, overflow gives inf, underflow 0 (no -ffast-math needed). */
static inline double ga_exp(double x) {
    const double shifter = 6755399441055744.0;  /* 1.5 * 2^52: rounds to int */
    double kd, k, r, r2, r4, r8, p, half, rest, s1, s2;
    int64_t b1, b2;
    x = x < -746.0 ? -746.0 : x;
    x = x > 710.0 ? 710.0 : x;
    kd = x * 1.4426950408889634 + shifter;
    k = kd - shifter;
    r = x - k * 6.93147180369123816490e-01 - k * 1.90821492927058770002e-10;
    r2 = r * r;
    r4 = r2 * r2;
    r8 = r4 * r4;
    p = ((1.0 + r) + (0.5 + r * 0.16666666666666666) * r2)
        + ((0.04166666666665136 + r * 0.008333333333332155)
           + (0.0013888888905881542 + r * 0.0001984126985433861) * r2) * r4
        + ((2.4801536388690766e-05 + r * 2.755728006701698e-06)
           + (2.761380686153829e-07 + r * 2.5095554677111112e-08) * r2) * r8;
    half = k * 0.5 + shifter;
    rest = (k - (half - shifter)) + shifter;
    memcpy(&b1, &half, 8);
    memcpy(&b2, &rest, 8);
    b1 = (int64_t)((uint64_t)(b1 + 1023) << 52);
    b2 = (int64_t)((uint64_t)(b2 + 1023) << 52);
    memcpy(&s1, &b1, 8);
    memcpy(&s2, &b2, 8);
    return p * s1 * s2;
}

/* ln x for normal x > 0 (and NaN, inf) to about 2 ulp, branch-free like ga_exp:
   x = m 2^k with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh z = 2 z + z^3 h(z^2)
   for z = (m - 1) / (m + 1), |z| < 0.172, h a degree-6 near-minimax (Chebyshev
   fit) polynomial (error < 1e-17). */
static inline double ga_log(double x) {
    const double two52 = 4503599627370496.0;
    const uint64_t sqrt_half = 0x3fe6a09e667f3bcdULL;  /* the bits of sqrt(1/2) */
    uint64_t bits, exponent_bits;
    double m, k, z, z2, series;
    memcpy(&bits, &x, 8);
    /* Offset by sqrt(1/2)'s bits, the exponent field holds k + 1023 and the
       mantissa field m's offset from sqrt(1/2): no compare and select. */
    bits += 0x3ff0000000000000ULL - sqrt_half;
    exponent_bits = (bits >> 52) | 0x4330000000000000ULL;  /* 2^52 + biased k */
    memcpy(&k, &exponent_bits, 8);
    k = k - two52 - 1023.0;
    bits = (bits & 0x000fffffffffffffULL) + sqrt_half;
    memcpy(&m, &bits, 8);
    z = (m - 1.0) / (m + 1.0);
    z2 = z * z;
    series = 0.14618236865830497;
    series = series * z2 + 0.15331576916675838;
    series = series * z2 + 0.18182893480846;
    series = series * z2 + 0.2222221107497463;
    series = series * z2 + 0.2857142862634218;
    series = series * z2 + 0.39999999999898694;
    series = series * z2 + 0.666666666666667;
    series = k * 6.93147180369123816490e-01
             + (2.0 * z + z * z2 * series + k * 1.90821492927058770002e-10);
    return x <= 1.7976931348623157e308 ? series : x;  /* NaN and inf stay */
}

#endif  /* SKLEARN_GA_GA_EXP_LOG_H */
