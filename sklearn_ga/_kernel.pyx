# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Compiled trial loop of the general additive algorithm GA(psi, phi, Theta, eta).

One loop serves every registered (psi, phi) pair (KW01 Figure 5). For each trial t:

    a = psi(Theta) x + b ;  y_hat = phi(a) ;  loss += L_phi(y, y_hat)
    Theta <- Theta - eta * s * (y_hat - y) x^T ;  b <- b - eta * s * (y_hat - y)

Design
------
* Only the parameters Theta and b are the model. The weights psi(Theta) are kept in
  factored form per row j: ``omega_ji = scale_j * num_ji`` where ``num`` is a bounded
  per-coordinate term and ``scale`` comes from a normalizer, the sum of each
  coordinate's normalizer term (_normalizer_term: num itself, or for pnorm
  num theta / shift, for the geodesic psi num^2). EG+- keeps its two exponentials
  apart, ``num = e^{theta - shift}`` and ``den = e^{-theta - shift}``:
  omega = scale (num - den), norm = sum (num + den); every other psi stores one term.
  Normalized psi (softmax, eg_pm, pnorm) subtract a per-row ``shift`` (the running
  maximum of theta or |theta|) so no exponential or power overflows for large theta.
* Exponential terms (softmax, eg_pm, exp) follow a step d = eta (y_hat - y) x_i
  multiplicatively, e^{theta - d} = e^theta e^{-d}, with e^{-+d} - 1 from series
  in d^2 of the lowest degree (3 to 15) whose truncation error stays below 1e-17
  for the trial's largest |d| <= 1/2, each term scaling with one rounding
  (t + t (e^{-d} - 1)); a trial calls no exp (larger steps: a dense row is
  recomputed, a CSR row's factors come from the branch-free exp).
* A dense row is recomputed from theta (shift and normalizer included) after a large
  step, after RENEW_DENSE small ones (eg_pm: twice as many), or always for pnorm.
  A CSR row updates only its nnz terms and the normalizer incrementally; the row is
  recomputed in O(n) only when the shift drifts (pnorm's terms, when theta outgrows
  it, are rescaled instead: _reshift_row), when the changes summed into the normalizer
  could have eaten its precision, or after TOUCH_LIMIT * n touched coordinates:
  O(nnz) amortized per trial.
* In a CSR run of softmax, eg_pm or exp without options, and of the geodesic
  sphere and simplex, the terms hold theta ("lazy" theta): theta = ln num + shift
  (eg_pm: from its larger term), or num shift for the geodesic psi, whose one
  stored term is num = theta / shift (normalizer term num^2; the simplex weighs
  num^2). An update touches one array of terms (eg_pm: two) at random coordinates,
  as SGD touches its weights, and theta is written back at the end of the run and
  before a row is recomputed. A coordinate whose exponential terms underflow
  (below 1e-300) hands theta back to the theta array, which then updates it and
  recomputes the terms from it.
* A CSR run with a coordinate-wise phi (not softmax) learns its k outputs one after
  another, each as a state of one output (_output_state), as SGD's one-vs-rest
  does: a trial of all k rows would read parameters spread over k x n x 8 bytes.
  Each output takes the steps it takes in a trial of all of them.
* Dense psi = identity and eg_pm sum the next trial's dot product in the same pass
  as this trial's update, so X is streamed once; eg_pm also sums its normalizer and
  the next max |x_i| there.
* The row primitives (dot, axpy, sums, exp, log) are C loops that the compiler
  vectorizes, with a branch-free exp and log; no -ffast-math, so NaN and inf
  propagate and divergence is detected with isfinite. Non-finite inputs make the
  activation non-finite at once, which is how the caller's NaN/inf check of X works.
* The options of the estimators (update="implicit"/"natural", loss="square", Y, and
  the geodesic psi sphere and simplex) run in a separate trial, _trial_options,
  which _trial calls only when one of them is set; it reuses the row primitives.
  Implicit updates solve KW01 eq. (22) per row by a bracketed root search on
  O(nnz) evaluations; natural updates of softmax and EG± and long geodesic steps
  cost O(n) per row.
* Validation, allocation and dtype handling live in Python; this module only loops.
  Failures (non-finite activation, prediction, loss or parameters) are returned as a
  status with the trial index, so the caller can report them and discard the state.
"""

from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy

cdef extern from *:
    """
    #include <float.h>
    #include <math.h>
    #include <stdint.h>
    #include <string.h>

    /* Row primitives of the trial loop, written so the compiler vectorizes them. With
       GCC on x86-64 Linux each one is also compiled for AVX2 + FMA and the fastest
       version the CPU supports is picked when the module loads, so one build runs on
       any x86-64 and uses the wide registers where they exist. */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \\
        && defined(__linux__) && __GNUC__ >= 12
    #define GA_SIMD __attribute__((target_clones("arch=x86-64-v3", "default")))
    #else
    #define GA_SIMD
    #endif

    /* Gradient descent's primitives round each product and each sum, as the CSR
       loops and scikit-learn's SGD do: a fused multiply-add (the AVX2 + FMA clone)
       rounds once, and a Perceptron then steps off the exact ties (a = 0) they meet.
       The other primitives keep their FMAs: without (-ffp-contract=off for the whole
       module), the dense EG+- epoch took 17% longer and pnorm's powers 8%. */
    #if defined(__GNUC__) && !defined(__clang__)
    #define GA_UNFUSED __attribute__((optimize("fp-contract=off")))
    #else
    #define GA_UNFUSED
    #endif

    /* Always inlined, so that arguments constant at the call site (the degree of a
       series) are constants in the loops. */
    #if defined(__GNUC__)
    #define GA_INLINE static inline __attribute__((always_inline))
    #else
    #define GA_INLINE static inline
    #endif

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

    /* p-norm terms num = sign(t) r^(p - 1) with r = |t| / shift (the normalizer
       term r^p = num t / shift is not stored). For an integer p up to 64 the power
       is a product of squares (binary powering, a few roundings); otherwise it is
       e^{(p - 1) ln r} (relative error ~1e-16 |(p - 1) ln r|; r < 1e-300 gives 0,
       below the normalizer's rounding, which is >= 1), the logs and the exps in two
       passes (num holds the logs between them): one fused loop spills registers and
       runs slower. A long row (a recompute) goes in blocks, and a block of zeros
       takes no power: most of a wide sparse row is 0 after a fit's first rows, or
       when features never occur. (Rows of 1000 in blocks took 2% longer.) */
    enum { GA_PNORM_BLOCK = 512 };
    GA_SIMD static void ga_pnorm_terms(const double* theta, double* num, double shift,
                                       double p, Py_ssize_t n) {
        Py_ssize_t q, start, size;
        /* A multiplication, not a 256-bit division per 4 coordinates (7% of the
           power at p = 24.95): one more rounding of r, (p - 1) 1.1e-16 in num. */
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
                    ga_pnorm_terms(theta + start, num + start, shift, p, size);
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

    /* sum_i w_i x_i with eight partial sums (no -ffast-math reassociation needed). */
    GA_SIMD GA_UNFUSED static double ga_dot(const double* w, const double* x,
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

    /* theta -= step * x */
    GA_SIMD GA_UNFUSED static void ga_axpy(double* theta, double step,
                                           const double* x, Py_ssize_t n) {
        Py_ssize_t q;
        for (q = 0; q < n; q++)
            theta[q] -= step * x[q];
    }

    /* theta -= step * x, returning the new theta . x_next: the next trial's dot
       product is summed while the update streams through theta (one pass). */
    GA_SIMD GA_UNFUSED static double ga_axpy_dot(double* restrict theta,
                                                 double step, const double* x,
                                                 const double* x_next, Py_ssize_t n) {
        double s[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
        Py_ssize_t q = 0;
        int l;
        for (; q + 8 <= n; q += 8)
            for (l = 0; l < 8; l++) {
                theta[q + l] -= step * x[q + l];
                s[l] += theta[q + l] * x_next[q + l];
            }
        for (; q < n; q++) {
            theta[q] -= step * x[q];
            s[0] += theta[q] * x_next[q];
        }
        return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    }

    /* sum_i c v_i. With c = 0 the sum is 0 if every v_i is finite and NaN otherwise
       (v * 0 is NaN for NaN and +-inf): a vectorized finiteness test, no branch per
       element. */
    GA_SIMD static double ga_sum(const double* v, double c, Py_ssize_t n) {
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
    GA_SIMD static int ga_uniform(const double* v, Py_ssize_t n) {
        int differ = 0;
        Py_ssize_t q;
        for (q = 1; q < n; q++)
            differ |= v[q] != v[0];
        return !differ;
    }

    /* v_i = value for all i. */
    GA_SIMD static void ga_fill(double* v, double value, Py_ssize_t n) {
        Py_ssize_t q;
        for (q = 0; q < n; q++)
            v[q] = value;
    }

    /* A max is not associative where NaN is involved, so GCC vectorizes it only under
       finite math; the callers never need a NaN here (a NaN input has made the
       activation non-finite and a NaN theta fails the state check). */
    #if defined(__GNUC__) && !defined(__clang__)
    #define GA_FINITE __attribute__((optimize("finite-math-only", "no-signed-zeros")))
    #else
    #define GA_FINITE
    #endif
    GA_SIMD GA_FINITE static double ga_max(const double* v, Py_ssize_t n,
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

    /* One pass of an EG+- update with series of this degree: theta -= d = step x,
       num *= e^{-d}, den *= e^{d}; and, for the next trial, its dot product
       sum (num - den) x_next (returned), the normalizer sum (num + den) (sums[0])
       and max |x_next| (sums[1]), so that the row is read once per trial. */
    GA_INLINE double ga_pm_pass(
            double* restrict theta, double* restrict num, double* restrict den,
            double step, const double* restrict x, const double* restrict x_next,
            Py_ssize_t n, int degree, double* restrict sums) {
        double dot[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
        double total[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
        double top[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
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
        return ((dot[0] + dot[1]) + (dot[2] + dot[3]))
               + ((dot[4] + dot[5]) + (dot[6] + dot[7]));
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

    /* The EG+- pass for |step| max|x| <= GA_STEP_MAX, with max |x| in sums[1] on
       entry. x_next NULL: no next row (the sums are then of x). */
    GA_SIMD static double ga_scale_pm_dot(double* theta, double* num, double* den,
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
    GA_SIMD static int ga_step_factors(double step, const double* x, double* down,
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

    /* theta -= step * x with the terms e^{theta - shift} following multiplicatively,
       num *= e^{-d} (softmax, exp: den is num) with the series degree of dmax =
       |step| max|x| (ga_series_degree, below); returns the new sum of num. */
    #define GA_SCALE_LOOP(P)                                                        \
        for (; q + 4 <= n; q += 4)                                                  \
            for (l = 0; l < 4; l++) {                                               \
                d = step * x[q + l];                                                \
                theta[q + l] -= d;                                                  \
                ga_expm1_pm(d, P, &down, &up);                                      \
                num[q + l] += num[q + l] * down;                                    \
                total[l] += num[q + l];                                             \
            }                                                                       \
        for (; q < n; q++) {                                                        \
            d = step * x[q];                                                        \
            theta[q] -= d;                                                          \
            ga_expm1_pm(d, P, &down, &up);                                          \
            num[q] += num[q] * down;                                                \
            total[0] += num[q];                                                     \
        }
    GA_SIMD static double ga_scale_terms(double* restrict theta, double* restrict num,
                                         double step, const double* x, Py_ssize_t n,
                                         double dmax) {
        double total[4] = {0.0, 0.0, 0.0, 0.0}, d, down, up;
        Py_ssize_t q = 0;
        int l;
        GA_BY_DEGREE(dmax, GA_SCALE_LOOP)
        return (total[0] + total[1]) + (total[2] + total[3]);
    }

    /* theta = ln(num) + shift for the coordinates whose term holds theta (not below
       1e-300 nor overflowed: a long step's term against the old shift): the
       parameters of a lazy CSR run (see _update_sparse_row). */
    GA_SIMD static void ga_theta_from_terms(double* theta, const double* num,
                                            double shift, Py_ssize_t n) {
        Py_ssize_t q;
        for (q = 0; q < n; q++)
            theta[q] = num[q] >= 1e-300 && num[q] <= DBL_MAX
                       ? ga_log(num[q]) + shift : theta[q];
    }

    /* out = c / v: EG+-'s den = e^{-2 shift} / num after a lazy CSR run. */
    GA_SIMD static void ga_quotients(double* out, double c, const double* v,
                                     Py_ssize_t n) {
        Py_ssize_t q;
        for (q = 0; q < n; q++)
            out[q] = c / v[q];
    }

    /* sum_i (a_i - b_i) x_i: the EG+- dot product with weights e^+ - e^-. */
    GA_SIMD static double ga_dot_diff(const double* a, const double* b, const double* x,
                                      Py_ssize_t n) {
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

    /* A dense geodesic row's dot product sum w x (returned) and the quad of its step,
       sum x^2 (sphere: w = num) or scale sum w x^2 (simplex: w = num^2), each in
       eight partial sums, as in ga_dot: one pass that vectorizes. */
    GA_SIMD static double ga_geodesic_sums(const double* num, const double* x,
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

    /* sum_q (a_q - d_q) x_q with d_q = product / a_q, for the gathered a_q in held,
       which it replaces by d_q. */
    GA_SIMD static double ga_held_dot(double product, double* held, const double* x,
                                      Py_ssize_t n) {
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

    /* Weight terms of n parameters (DESIGN.md table): omega_i = scale * num_i and
       the normalizer is sum_i den_i; see _weight_terms in the Cython code. */
    GA_SIMD static void ga_softmax_terms(const double* theta, double* num,
                                         double shift, Py_ssize_t n) {
        Py_ssize_t q;
        for (q = 0; q < n; q++)
            num[q] = ga_exp(theta[q] - shift);
    }

    GA_SIMD static void ga_eg_pm_terms(const double* theta, double* num, double* den,
                                       double shift, Py_ssize_t n) {
        Py_ssize_t q;
        for (q = 0; q < n; q++) {
            num[q] = ga_exp(theta[q] - shift);
            den[q] = ga_exp(-theta[q] - shift);
        }
    }

    GA_SIMD static void ga_exp_terms(const double* theta, double* num, Py_ssize_t n) {
        Py_ssize_t q;
        for (q = 0; q < n; q++)
            num[q] = ga_exp(theta[q]);
    }

    /* The smallest and largest of n >= 1 CSR indices and the number of q with
       indices[q] <= indices[q - 1], in one vectorized pass (csr_structure); the
       count is kept in the indices' own width (so the compare vectorizes without
       widening), block by block so that it cannot overflow. */
    #define GA_INDEX_SCAN(NAME, T)                                                  \
        GA_SIMD static int64_t NAME(const T* indices, Py_ssize_t n, T* low,     \
                                    T* high) {                                  \
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
    """
    double DBL_MAX
    double DBL_MIN
    int64_t ga_index_scan32(const int32_t* indices, Py_ssize_t n, int32_t* low,
                            int32_t* high) noexcept nogil
    int64_t ga_index_scan64(const int64_t* indices, Py_ssize_t n, int64_t* low,
                            int64_t* high) noexcept nogil
    double ga_exp(double x) noexcept nogil
    double ga_lesser(double a, double b) noexcept nogil
    double ga_greater(double a, double b) noexcept nogil
    double ga_least4(double a, double b, double c, double d) noexcept nogil
    double ga_greatest4(double a, double b, double c, double d) noexcept nogil
    void __builtin_prefetch(const void* address) noexcept nogil
    double ga_log(double x) noexcept nogil
    double ga_dot(const double* w, const double* x, Py_ssize_t n) noexcept nogil
    void ga_axpy(double* theta, double step, const double* x,
                 Py_ssize_t n) noexcept nogil
    double ga_axpy_dot(double* theta, double step, const double* x,
                       const double* x_next, Py_ssize_t n) noexcept nogil
    double ga_sum(const double* v, double c, Py_ssize_t n) noexcept nogil
    bint ga_uniform(const double* v, Py_ssize_t n) noexcept nogil
    void ga_fill(double* v, double value, Py_ssize_t n) noexcept nogil
    double ga_max(const double* v, Py_ssize_t n, int absolute) noexcept nogil
    void ga_softmax_terms(const double* theta, double* num, double shift,
                          Py_ssize_t n) noexcept nogil
    void ga_eg_pm_terms(const double* theta, double* num, double* den, double shift,
                        Py_ssize_t n) noexcept nogil
    void ga_exp_terms(const double* theta, double* num, Py_ssize_t n) noexcept nogil
    void ga_pnorm_terms(const double* theta, double* num, double shift, double p,
                        Py_ssize_t n) noexcept nogil
    double GA_STEP_MAX
    double ga_scale_terms(double* theta, double* num, double step, const double* x,
                          Py_ssize_t n, double dmax) noexcept nogil
    double ga_scale_pm_dot(double* theta, double* num, double* den, double step,
                           const double* x, const double* x_next, Py_ssize_t n,
                           double* sums) noexcept nogil
    double ga_held_dot(double product, double* held, const double* x,
                       Py_ssize_t n) noexcept nogil
    double ga_geodesic_sums(const double* num, const double* x, Py_ssize_t n,
                            double scale, int simplex, double* quad) noexcept nogil
    double ga_dot_diff(const double* a, const double* b, const double* x,
                       Py_ssize_t n) noexcept nogil
    void ga_theta_from_terms(double* theta, const double* num, double shift,
                             Py_ssize_t n) noexcept nogil
    void ga_quotients(double* out, double c, const double* v,
                      Py_ssize_t n) noexcept nogil
    bint ga_step_factors(double step, const double* x, double* down, double* up,
                         Py_ssize_t n, double dmax) noexcept nogil

from libc.math cimport (exp, log, log1p, fabs, fmin, fmax, tanh, atan, cos, sin, sqrt,
                        pow, ldexp, ilogb, isfinite, INFINITY)

# Parameterization functions psi (registry: sklearn_ga/_psi.py).
cpdef enum PsiCode:
    PSI_IDENTITY = 0
    PSI_SOFTMAX = 1
    PSI_EG_PM = 2
    PSI_EXP = 3
    PSI_PNORM = 4
    PSI_SPHERE = 5
    PSI_SIMPLEX = 6

# Transfer functions phi (registry: sklearn_ga/_phi.py).
cpdef enum PhiCode:
    PHI_IDENTITY = 0
    PHI_LOGISTIC = 1
    PHI_TANH = 2
    PHI_ARCTAN = 3
    PHI_EXP = 4
    PHI_SOFTMAX = 5
    PHI_SIGN = 6

# Update rules (KW01 eq. 23 explicit, eq. 22/25 implicit; KMWW eq. 5 natural).
cpdef enum UpdateCode:
    UPDATE_EXPLICIT = 0
    UPDATE_IMPLICIT = 1
    UPDATE_NATURAL = 2

# Loss minimized: the matching loss of phi, or the square loss (GA_L, KW01 eq. 35).
cpdef enum LossCode:
    LOSS_MATCHING = 0
    LOSS_SQUARE = 1

cpdef enum Status:
    OK = 0
    DIVERGED = 1
    UNREADABLE = 2  # a CSR run checking its rows stopped at one that failed

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


cdef enum:
    ANCHOR_DEGREE = 7  # the degree of that series
    GEODESIC_SUMS = 5  # sums a geodesic CSR row's dot pass keeps for its step


cdef struct State:
    int psi
    int phi
    Py_ssize_t k
    Py_ssize_t n
    double eta
    double U
    double p
    bint fit_intercept
    double* theta       # k x n parameters
    double* num         # k x n weight numerators (aliases theta for identity)
    double* den         # k x n EG+-'s second terms e^{-theta - shift} (others: num)
    double* norm        # k   sum_i of the normalizer terms (_normalizer_term)
    double* shift       # k   reference maximum of theta (or |theta|)
    double* scale       # k   omega_ji = scale_j * num_ji
    double* mass        # k   |changes| of norm since the last recompute
    double* age         # k   multiplicative dense updates since the last recompute
    double* product     # k   EG+-: num * den = e^{-2 shift} of every coordinate
    double* anchor      # k   pnorm: 1 / the last normalizer whose power was taken
    double* anchor_power  # k  that normalizer^((2 - p) / p) (_set_scale)
    double binomial[ANCHOR_DEGREE]  # pnorm: binom((2 - p) / p, d) for d = 1, 2, ...
    Py_ssize_t touched  # coordinates touched since the last recompute (CSR)
    bint lazy           #     theta is held by the terms (plain CSR run, exponential
                        #     psi; EG+-: by num, den is product / num, not stored)
    double* intercept   # k
    double* a           # k   activations of the current trial
    double* y_hat       # k   predictions of the current trial
    double* dot         # k   psi(Theta) x of the next trial, summed during the update
    bint dot_ready      #     whether dot holds it (dense psi = identity, eg_pm)
    double x_top        #     max |x| of the next dense row, summed by an EG+- update
    bint x_top_ready    #     whether x_top holds it
    double* row_theta   # nnz theta of the coordinates a CSR row touches (scratch)
    double* row_num     # nnz their new num (scratch)
    double* row_den     # nnz their new den (scratch; aliases row_num unless EG+-)
    double* row_held    # k x nnz EG+- lazy runs: the row's den, from the dot products;
                        #     pnorm: 2k x nnz, each output's terms and theta (_held_row)
    Py_ssize_t row_size #     longest CSR row (the stride of row_held)
    # Options of issue 6, read only by _trial_options (the plain GA rule skips them).
    bint options        #     whether any option below differs from plain GA
    int update          #     UpdateCode
    int loss_kind       #     LossCode
    double clip_low     #     activations are clipped to [clip_low, clip_high]
    double clip_high    #     (GA^Y: predictions clipped to [-Y, Y], KW01 §4)
    double* residual    # k   dL/da of the trial (the step is eta * residual * x)
    double* wx          # k   omega_j . x without intercept
    double* rest        # k   normalizer of the coordinates a CSR row leaves alone
    double* rest_shift  # k   the shift of its units
    double lse          #     log-normalizer of softmax in the implicit equation
    double* row_x       # nnz per-coordinate inputs of a simplex step (scratch)
    double* geodesic    # k x GEODESIC_SUMS sums of a CSR row's dot pass (_geodesic_dot)
    # TrialLoop.save of a CSR batch journals only the coordinates it touches; an
    # O(n) write (_guard_rows) first copies every row to ``backup``, once.
    double* backup      #     NULL: no journal
    bint backed_up      #     whether backup holds the rows
    bint unreadable     # a CSR run stopped before a row that failed its check
    State* parent       # the state of all outputs, in a state of one (_output_state)
    double* theta_t     # n x k theta, outputs innermost, during a CSR run of several
                        #     outputs of psi = identity (_columns_first); else NULL
    double* sums        # 4 x k partial sums of such a run's dot products


cdef Py_ssize_t _stored(State* s, double** arrays) noexcept nogil:
    """Put theta, num and den in ``arrays``, those stored (num is theta for the
    identity, den is num but for EG+-); returns their number."""
    cdef Py_ssize_t count = 1
    arrays[0] = s.theta
    if s.num != s.theta:
        arrays[count] = s.num
        count += 1
    if s.den != s.num:
        arrays[count] = s.den
        count += 1
    return count


cdef void _copy_rows(State* s, double* copy, bint back) noexcept nogil:
    """Copy theta, num and den (those stored) to ``copy``, or back from it."""
    cdef double* arrays[3]
    cdef Py_ssize_t size = s.k * s.n, count = _stored(s, arrays), q
    for q in range(count):
        if back:
            memcpy(arrays[q], copy + q * size, size * sizeof(double))
        else:
            memcpy(copy + q * size, arrays[q], size * sizeof(double))


cdef void _copy_columns(State* s, const Py_ssize_t* columns, Py_ssize_t count,
                        double* copy, bint back) noexcept nogil:
    """Copy theta, num and den (those stored) at ``columns`` of every row to
    ``copy``, or back from it: the three of a coordinate together, so that their
    cache misses overlap."""
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


cdef void _guard_rows(State* s) noexcept nogil:
    """Before a write to coordinates a CSR batch may not touch: copy theta, num and
    den (every output's) to the backup of TrialLoop.save, the first time in the
    batch."""
    if s.parent != NULL:
        s = s.parent
    if s.backup == NULL or s.backed_up:
        return
    _copy_rows(s, s.backup, False)
    s.backed_up = True


cdef inline bint _normalized(int psi) noexcept nogil:
    return (psi == PSI_SOFTMAX or psi == PSI_EG_PM or psi == PSI_PNORM
            or _geodesic(psi))


cdef inline bint _geodesic(int psi) noexcept nogil:
    """Weights on a manifold updated along geodesics (KMWW Examples 2, 3)."""
    return psi == PSI_SPHERE or psi == PSI_SIMPLEX


cdef void _terms(State* s, const double* theta, double* num, double* den, double shift,
                 Py_ssize_t n) noexcept nogil:
    """num and den of n parameters (HKW §III, KW01 §3, DESIGN.md table)."""
    cdef Py_ssize_t q
    if s.psi == PSI_SOFTMAX:
        ga_softmax_terms(theta, num, shift, n)
    elif s.psi == PSI_EG_PM:
        # EG on x' = (Ux, -Ux) keeps theta^- = -theta^+: weights e^{+-theta - shift}.
        ga_eg_pm_terms(theta, num, den, shift, n)
    elif s.psi == PSI_EXP:
        ga_exp_terms(theta, num, n)
    elif s.psi == PSI_PNORM:
        # sign(t)|t|^(p-1) / ||theta||_p^(p-2), with |t| measured in units of the shift.
        ga_pnorm_terms(theta, num, shift, s.p, n)
    elif _geodesic(s.psi):
        # omega = U theta / ||theta||_2 (sphere) or theta^2 / ||theta||_2^2 (simplex,
        # KMWW Ex. 3 with theta = sqrt(omega) up to a factor): num = theta / shift;
        # the normalizer term num^2 is not stored (den is num).
        for q in range(n):
            num[q] = theta[q] / shift


cdef inline double _pnorm_shift(double top) noexcept nogil:
    """pnorm's unit for a row whose largest |theta| is top: top, but 1 for a row of
    zeros and DBL_MIN for a subnormal top (the terms multiply by 1 / shift, which
    overflows there; |theta| / DBL_MIN is still at most 1)."""
    return fmax(top, DBL_MIN) if top > 0.0 else 1.0


cdef inline double _pnorm_power(State* s, double norm) noexcept nogil:
    """norm^(-(p-2)/p) by the kernel's exp and log (cheaper than libm pow); 0 for a
    normalizer of 0."""
    return 0.0 if norm == 0.0 else ga_exp(s.binomial[0] * ga_log(norm))


cdef inline double _scale_value(State* s, double norm, double shift) noexcept nogil:
    """omega_ji = scale_j * num_ji for a row with this normalizer and shift."""
    if s.psi == PSI_SOFTMAX or s.psi == PSI_SIMPLEX:
        return 1.0 / norm
    elif s.psi == PSI_EG_PM:
        return s.U / norm
    elif s.psi == PSI_PNORM:
        return shift * _pnorm_power(s, norm)
    elif s.psi == PSI_SPHERE:
        return s.U / sqrt(norm)
    return 1.0


cdef inline void _set_scale(State* s, Py_ssize_t j) noexcept nogil:
    """Row j's scale from its normalizer and shift (_scale_value).

    pnorm's norm^a, a = (2 - p) / p, lies on the path from a trial's update to the
    next prediction, and a log and an exp there cost about 25 ns a trial. A trial
    changes norm little: from the last norm_0 whose power was taken (the anchor),
    norm^a = norm_0^a (1 + e)^a with e = norm / norm_0 - 1, and (1 + e)^a - 1 is
    a series in e (binomial coefficients) while |e| <= ANCHOR_RANGE.
    """
    cdef double e, e2, e4, series, norm = s.norm[j]
    cdef const double* c = s.binomial
    if s.psi != PSI_PNORM:
        s.scale[j] = _scale_value(s, norm, s.shift[j])
        return
    e = norm * s.anchor[j] - 1.0  # (an anchor of 0, none yet: e = -1)
    if fabs(e) <= ANCHOR_RANGE:
        e2 = e * e
        e4 = e2 * e2
        series = e * ((c[0] + c[1] * e) + e2 * (c[2] + c[3] * e)
                      + e4 * ((c[4] + c[5] * e) + e2 * c[6]))
        s.scale[j] = s.shift[j] * (s.anchor_power[j] + s.anchor_power[j] * series)
        return
    s.anchor[j] = 1.0 / norm if norm > 0.0 else 0.0
    s.anchor_power[j] = _pnorm_power(s, norm)
    s.scale[j] = s.shift[j] * s.anchor_power[j]


cdef inline bint _term_holds(State* s, double num) noexcept nogil:
    """Whether a coordinate's term num determines its theta in a lazy CSR run (it
    neither underflowed nor overflowed; EG+-'s never does, see PM_HELD_SHIFT)."""
    return _geodesic(s.psi) or UNDERFLOW <= num <= DBL_MAX


cdef inline double _theta_of_term(State* s, double num, double shift) noexcept nogil:
    """theta from the term e^{theta - shift}, or theta / shift (sphere, simplex)."""
    return num * shift if _geodesic(s.psi) else log(num) + shift


cdef inline double _theta_at(State* s, Py_ssize_t j, Py_ssize_t i) noexcept nogil:
    """The current theta_ji, from the term when it holds it (lazy CSR runs)."""
    cdef Py_ssize_t c = j * s.n + i
    if s.lazy and _term_holds(s, s.num[c]):
        return _theta_of_term(s, s.num[c], s.shift[j])
    return s.theta[c]


cdef void _sync_theta_row(State* s, Py_ssize_t j) noexcept nogil:
    """Bring row j's theta (EG+-: and den) up to date with its terms after a lazy
    CSR run, O(n)."""
    cdef Py_ssize_t i, base = j * s.n
    _guard_rows(s)
    if _geodesic(s.psi):
        for i in range(base, base + s.n):
            s.theta[i] = s.num[i] * s.shift[j]
        return
    ga_theta_from_terms(s.theta + base, s.num + base, s.shift[j], s.n)
    if s.psi == PSI_EG_PM:
        ga_quotients(s.den + base, s.product[j], s.num + base, s.n)


cdef bint _shifts_held(State* s) noexcept nogil:
    """Whether every row's shift allows EG+- to store only num (PM_HELD_SHIFT)."""
    cdef Py_ssize_t j
    for j in range(s.k):
        if s.shift[j] > PM_HELD_SHIFT:
            return False
    return True


cdef void _sync_theta(State* s, const index_t* x_ind, const index_t* indptr,
                      const Py_ssize_t* order, Py_ssize_t trials,
                      Py_ssize_t seen) noexcept nogil:
    """End a lazy CSR run of ``trials`` rows, ``seen`` nonzeros: bring theta (EG+-:
    and den) up to date, coordinate by coordinate when the run touched fewer than
    n."""
    cdef Py_ssize_t t, q, j, c, count
    # The touched coordinates go through the vectorized log of the whole-row path
    # in blocks (gathered, then scattered back): libm's scalar log took 40 ns each.
    cdef Py_ssize_t at[SYNC_BLOCK]
    cdef double terms[SYNC_BLOCK]
    cdef double thetas[SYNC_BLOCK]
    if seen >= s.n:
        for j in range(s.k):
            _sync_theta_row(s, j)
        s.lazy = False
        return
    for j in range(s.k):
        count = 0
        for t in range(trials):
            for q in range(indptr[order[t]], indptr[order[t] + 1]):
                c = j * s.n + x_ind[q]
                at[count], terms[count], thetas[count] = c, s.num[c], s.theta[c]
                count += 1
                if count == SYNC_BLOCK:
                    _write_back(s, j, at, terms, thetas, count)
                    count = 0
        _write_back(s, j, at, terms, thetas, count)
    s.lazy = False


cdef void _write_back(State* s, Py_ssize_t j, const Py_ssize_t* at, double* terms,
                      double* thetas, Py_ssize_t count) noexcept nogil:
    """Set theta (EG+-: and den) of row j's coordinates ``at`` from their gathered
    ``terms`` and stored ``thetas``, as _sync_theta_row does for a whole row."""
    cdef Py_ssize_t q
    if _geodesic(s.psi):
        for q in range(count):
            s.theta[at[q]] = terms[q] * s.shift[j]
        return
    ga_theta_from_terms(thetas, terms, s.shift[j], count)
    for q in range(count):
        s.theta[at[q]] = thetas[q]
    if s.psi == PSI_EG_PM:
        ga_quotients(terms, s.product[j], terms, count)
        for q in range(count):
            s.den[at[q]] = terms[q]


cdef void _recompute_row(State* s, Py_ssize_t j) noexcept nogil:
    """Rebuild row j's shift, weight terms and normalizer from theta in O(n)."""
    cdef Py_ssize_t i, base = j * s.n, other
    cdef double shift = 0.0, factor
    _guard_rows(s)
    if s.lazy:
        _sync_theta_row(s, j)
    if _normalized(s.psi):
        shift = ga_max(s.theta + base, s.n, s.psi != PSI_SOFTMAX)
        if s.psi == PSI_PNORM:
            shift = _pnorm_shift(shift)
        elif _geodesic(s.psi) and not shift > 0.0:
            shift = 1.0
    if _geodesic(s.psi) and not 1.0 / SCALE_LIMIT <= shift <= SCALE_LIMIT:
        factor = ldexp(1.0, -ilogb(shift))
        for i in range(base, base + s.n):
            s.theta[i] *= factor
        shift *= factor
    if s.lazy and s.psi == PSI_EG_PM and shift > PM_HELD_SHIFT:
        # den could underflow against num: end the lazy run, theta and den stored.
        for other in range(s.k):
            if other != j:
                _sync_theta_row(s, other)
        s.lazy = False
    if s.psi != PSI_IDENTITY and ga_uniform(s.theta + base, s.n):
        # A uniform row (every fit starts from one) has a single term to compute.
        _terms(s, s.theta + base, s.num + base, s.den + base, shift, 1)
        ga_fill(s.num + base, s.num[base], s.n)
        if s.den != s.num:
            ga_fill(s.den + base, s.den[base], s.n)
    elif s.psi != PSI_IDENTITY:
        _terms(s, s.theta + base, s.num + base, s.den + base, shift, s.n)
    s.shift[j] = shift
    s.product[j] = exp(-2.0 * shift)
    s.age[j] = 0.0
    _sum_normalizer(s, j)


cdef void _sum_normalizer(State* s, Py_ssize_t j) noexcept nogil:
    """Row j's normalizer summed afresh from its terms (no incremental rounding)."""
    cdef Py_ssize_t base = j * s.n
    if _geodesic(s.psi):
        s.norm[j] = ga_dot(s.num + base, s.num + base, s.n)
    elif s.psi == PSI_PNORM:
        s.norm[j] = ga_dot(s.num + base, s.theta + base, s.n) / s.shift[j]
    else:
        s.norm[j] = ga_sum(s.den + base, 1.0, s.n) if _normalized(s.psi) else 0.0
    if s.psi == PSI_EG_PM:
        s.norm[j] += ga_sum(s.num + base, 1.0, s.n)
    s.mass[j] = 0.0
    _set_scale(s, j)


cdef void _recompute_all(State* s) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(s.k):
        _recompute_row(s, j)
    s.touched = 0


cdef inline double _xlogx(double x) noexcept nogil:
    # 0 ln 0 = 1 ln 1 = 0 without a log call (class targets are 0 or 1).
    return 0.0 if x <= 0.0 or x == 1.0 else x * log(x)


cdef inline double _bernoulli_loss(double z, double a, double tail) noexcept nogil:
    """Matching loss of the logistic function from the activation a (z in [0, 1]).

    softplus(+-a) = max(+-a, 0) + tail with tail = ln(1 + e^{-|a|}): both from one
    exponential, exact when the prediction saturates.
    """
    return (z * ((-a if a < 0.0 else 0.0) + tail) + (1.0 - z) * ((a if a > 0.0 else 0.0)
            + tail) + _xlogx(z) + _xlogx(1.0 - z))


cdef double _transfer_and_loss(State* s, const double* y) noexcept nogil:
    """Set y_hat = phi(a) and return the matching loss L_phi(y, y_hat) (KW01 eq. 2).

    Losses are computed from the activation so they stay exact when y_hat saturates.
    """
    cdef Py_ssize_t j, k = s.k
    cdef double a, loss = 0.0, amax, lse, z
    if s.phi == PHI_SOFTMAX:
        amax = s.a[0]
        for j in range(1, k):
            if s.a[j] > amax:
                amax = s.a[j]
        lse = 0.0
        for j in range(k):
            lse += exp(s.a[j] - amax)
        lse = amax + log(lse)
        for j in range(k):
            s.y_hat[j] = exp(s.a[j] - lse)
            loss += _xlogx(y[j]) - y[j] * (s.a[j] - lse)
        return loss
    for j in range(k):
        a = s.a[j]
        if s.phi == PHI_IDENTITY:
            s.y_hat[j] = a
            loss += 0.5 * (y[j] - a) * (y[j] - a)
        elif s.phi == PHI_LOGISTIC:
            z = exp(-fabs(a))
            s.y_hat[j] = 1.0 / (1.0 + z) if a >= 0.0 else z / (1.0 + z)
            loss += _bernoulli_loss(y[j], a, log1p(z))
        elif s.phi == PHI_TANH:
            s.y_hat[j] = tanh(a)
            # L_tanh(y, a) = L_logistic((1 + y) / 2, 2a).
            loss += _bernoulli_loss(0.5 * (1.0 + y[j]), 2.0 * a,
                                    log1p(exp(-2.0 * fabs(a))))
        elif s.phi == PHI_ARCTAN:
            s.y_hat[j] = atan(a)
            z = log(fabs(a)) + 0.5 * log1p(1.0 / (a * a)) if fabs(a) > 1.0 \
                else 0.5 * log1p(a * a)
            loss += a * (s.y_hat[j] - y[j]) - z - log(cos(y[j]))
        elif s.phi == PHI_EXP:
            s.y_hat[j] = exp(a)
            loss += _xlogx(y[j]) - y[j] * a - y[j] + s.y_hat[j]
        elif s.phi == PHI_SIGN:
            # An undecided prediction (a = 0) counts as a mistake, as in the Perceptron.
            s.y_hat[j] = y[j] if y[j] * a > 0.0 else -y[j]
            loss += -y[j] * a if y[j] * a < 0.0 else 0.0
    return loss


cdef inline double _sparse_dot_diff(const double* a, const double* b,
                                    const double* x_val, const index_t* x_ind,
                                    Py_ssize_t nnz) noexcept nogil:
    """sum_q (a - b)[x_ind[q]] x_val[q]: the EG+- dot product (weights e^+ - e^-)."""
    cdef Py_ssize_t q = 0, i0, i1, i2, i3
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    while q + 4 <= nnz:
        i0, i1, i2, i3 = x_ind[q], x_ind[q + 1], x_ind[q + 2], x_ind[q + 3]
        s0 += (a[i0] - b[i0]) * x_val[q]
        s1 += (a[i1] - b[i1]) * x_val[q + 1]
        s2 += (a[i2] - b[i2]) * x_val[q + 2]
        s3 += (a[i3] - b[i3]) * x_val[q + 3]
        q += 4
    while q < nnz:
        s0 += (a[x_ind[q]] - b[x_ind[q]]) * x_val[q]
        q += 1
    return (s0 + s1) + (s2 + s3)


cdef inline double* _held_row(State* s, Py_ssize_t j) noexcept nogil:
    """Row j's part of row_held: EG+-'s den, or pnorm's terms then theta."""
    return s.row_held + j * (2 if s.psi == PSI_PNORM else 1) * s.row_size


cdef inline double _sparse_dot_held(const double* num, double product,
                                    const double* x_val, const index_t* x_ind,
                                    Py_ssize_t nnz, double* held) noexcept nogil:
    """The EG+- dot product of a lazy CSR run, sum_q (num - den)[x_ind[q]] x_val[q]
    with den = product / num (not stored), which it leaves in held[q] for the update.

    The division costs less than den's own array: the terms of 2^18 features then
    take 2 MiB, as SGD's weights do, instead of 4 MiB (fewer cache misses). The terms
    are gathered first, in a short loop whose cache misses all overlap; the divisions
    then vectorize (ga_held_dot).
    """
    cdef Py_ssize_t q
    for q in range(nnz):
        held[q] = num[x_ind[q]]
    return ga_held_dot(product, held, x_val, nnz)


cdef inline double _sparse_dot(const double* w, const double* x_val,
                               const index_t* x_ind, Py_ssize_t nnz) noexcept nogil:
    """sum_q w[x_ind[q]] x_val[q] with four partial sums (shorter dependency chain)."""
    cdef Py_ssize_t q = 0
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    while q + 4 <= nnz:
        s0 += w[x_ind[q]] * x_val[q]
        s1 += w[x_ind[q + 1]] * x_val[q + 1]
        s2 += w[x_ind[q + 2]] * x_val[q + 2]
        s3 += w[x_ind[q + 3]] * x_val[q + 3]
        q += 4
    while q < nnz:
        s0 += w[x_ind[q]] * x_val[q]
        q += 1
    return (s0 + s1) + (s2 + s3)


cdef inline void _sparse_axpy(double* theta, double step, const double* x_val,
                              const index_t* x_ind, Py_ssize_t nnz) noexcept nogil:
    """theta[x_ind[q]] -= step x_val[q] (unique indices), four loads before four stores.

    On this CPU (Zen 1) a load that follows a store to an address that was itself
    loaded (x_ind[q]) waits for that store, so a plain scatter runs one coordinate at
    a time (in a C harness, half the speed); loading four parameters first lets
    their loads overlap. The other CSR updates are grouped the same way.
    """
    cdef Py_ssize_t q = 0, i0, i1, i2, i3
    cdef double t0, t1, t2, t3
    while q + 4 <= nnz:
        i0, i1, i2, i3 = x_ind[q], x_ind[q + 1], x_ind[q + 2], x_ind[q + 3]
        t0, t1, t2, t3 = theta[i0], theta[i1], theta[i2], theta[i3]
        theta[i0] = t0 - step * x_val[q]
        theta[i1] = t1 - step * x_val[q + 1]
        theta[i2] = t2 - step * x_val[q + 2]
        theta[i3] = t3 - step * x_val[q + 3]
        q += 4
    while q < nnz:
        theta[x_ind[q]] -= step * x_val[q]
        q += 1


cdef inline bint _multiplicative(State* s, double step, double x_top) noexcept nogil:
    """Whether a CSR update may scale the exponential terms instead of recomputing."""
    return ((s.psi == PSI_SOFTMAX or s.psi == PSI_EG_PM or s.psi == PSI_EXP)
            and fabs(step) * x_top <= SHIFT_SLACK)


cdef void _update_dense_row(State* s, Py_ssize_t j, double step, const double* x,
                            double x_top) noexcept nogil:
    """theta_j <- theta_j - step * x for a dense row, weights kept in sync."""
    cdef Py_ssize_t base = j * s.n
    cdef double total
    if s.psi == PSI_EG_PM:
        _update_pm_row(s, j, step, x, NULL, x_top)
        return
    if (not _multiplicative(s, step, x_top) or fabs(step) * x_top > GA_STEP_MAX
            or s.age[j] >= RENEW_DENSE):
        ga_axpy(s.theta + base, step, x, s.n)
        _recompute_row(s, j)
        return
    total = ga_scale_terms(s.theta + base, s.num + base, step, x, s.n,
                           fabs(step) * x_top)
    s.age[j] += 1.0
    if not _normalized(s.psi):
        return
    s.norm[j] = total
    # A normalizer out of [e^-30, e^30] means the shift is stale: re-shift.
    if not TERM_LOW < total < TERM_HIGH:
        _recompute_row(s, j)
    else:
        _set_scale(s, j)


cdef double _update_pm_row(State* s, Py_ssize_t j, double step, const double* x,
                           const double* x_next, double x_top) noexcept nogil:
    """Dense EG+- update of row j (max |x| = x_top) in one pass over the row.

    Returns the next trial's sum (num - den) x_next (x_next may be NULL: 0) and
    stores max |x_next| in s.x_top, both summed in the same pass when the step
    is small; otherwise the row is recomputed and they are summed afterwards.
    """
    cdef Py_ssize_t base = j * s.n
    cdef double sums[2]
    cdef double dot
    # Each term is scaled with one rounding (t + t (e^{-+d} - 1)), half the error of
    # a product by a rounded factor: twice RENEW_DENSE updates drift no further.
    if fabs(step) * x_top <= GA_STEP_MAX and s.age[j] < 2.0 * RENEW_DENSE:
        sums[1] = x_top
        dot = ga_scale_pm_dot(s.theta + base, s.num + base, s.den + base, step, x,
                              x_next, s.n, sums)
        if x_next != NULL:
            s.x_top, s.x_top_ready = sums[1], True
        s.age[j] += 1.0
        s.norm[j] = sums[0]
        # A normalizer out of [e^-30, e^30] means the shift is stale: re-shift.
        if TERM_LOW < sums[0] < TERM_HIGH:
            _set_scale(s, j)
            return dot
    else:
        ga_axpy(s.theta + base, step, x, s.n)
    _recompute_row(s, j)
    return ga_dot_diff(s.num + base, s.den + base, x_next, s.n) if x_next != NULL else 0.0


cdef inline void _renormalize_sparse_row(State* s, Py_ssize_t j, double total,
                                         double mass, double top) noexcept nogil:
    """Add a CSR update's change to row j's normalizer; recompute the row if needed.

    A term above e^30 (theta outgrew the shift) or a vanishing normalizer means the
    shift is stale; many changes summed into the normalizer may have eaten its
    precision: then the row is recomputed from theta (an outgrown shift: _reshift_row,
    unless a term overflowed and lost its value: pnorm's, when one step takes theta
    past every power of the old shift).
    """
    s.norm[j] += total
    s.mass[j] += mass
    if (not s.norm[j] > TERM_LOW or s.mass[j] > MASS_LIMIT * s.norm[j]
            or top > DBL_MAX):
        _recompute_row(s, j)
    elif top > TERM_HIGH:
        _reshift_row(s, j)
    else:
        _set_scale(s, j)


cdef void _reshift_row(State* s, Py_ssize_t j) noexcept nogil:
    """Measure row j in units of its new max |theta|, which outgrew the shift.

    pnorm's terms sign(t) (|t| / shift)^(p - 1) scale by (shift / new shift)^(p - 1),
    a multiplication instead of a power per coordinate (a recompute at p = 24.95 and
    n = 2^18 takes as long as 3000 trials); the normalizer is summed afresh. The
    exponential terms are recomputed: in a lazy run they hold theta, which a term
    scaled below UNDERFLOW would lose.
    """
    cdef Py_ssize_t i, base = j * s.n
    cdef double shift, factor
    cdef double* num = s.num + base
    if s.psi != PSI_PNORM:
        _recompute_row(s, j)
        return
    shift = _pnorm_shift(ga_max(s.theta + base, s.n, 1))
    _guard_rows(s)
    ga_pnorm_terms(&s.shift[j], &factor, shift, s.p, 1)
    for i in range(s.n):
        num[i] *= factor
    s.shift[j] = shift
    _sum_normalizer(s, j)


cdef inline (double, double, double, double) _scaled4(
        double t0, double t1, double t2, double t3, const double* f) noexcept nogil:
    """Four terms t scaled by (1 + f) with one rounding each, t + t f."""
    return t0 + t0 * f[0], t1 + t1 * f[1], t2 + t2 * f[2], t3 + t3 * f[3]


cdef inline Py_ssize_t _scale_held_terms(double* nums, const double* held,
                                          const index_t* x_ind, const double* down,
                                          const double* up, Py_ssize_t q,
                                          Py_ssize_t nnz, bint pm,
                                          double* sums) noexcept nogil:
    """The common case of a lazy CSR update: scale the terms from coordinate q on by
    t + t f (f = e^{-+d} - 1, |d| <= GA_STEP_MAX), adding their change to sums
    (change, mass, top). EG+-'s den (held[q], not stored) scales by its own f.

    Stops at the first coordinate (or group of four) with a num below 2 UNDERFLOW,
    which could fall below UNDERFLOW (f >= e^{-1/2} - 1) and no longer hold theta,
    and returns its position (nnz if none); EG+-'s terms are never that small (see
    PM_HELD_SHIFT). Four coordinates are loaded before any is stored (see
    _sparse_axpy). The terms are positive: mass = sum new + sum old, change = sum
    new - sum old.
    """
    cdef Py_ssize_t i0, i1, i2, i3
    cdef double a0, a1, a2, a3, b0, b1, b2, b3
    cdef double added = 0.0, removed = 0.0, top = sums[2]
    # A local: a global would be reloaded after every store (-fno-strict-aliasing).
    cdef double low = 2.0 * UNDERFLOW
    while q + 4 <= nnz:
        i0, i1, i2, i3 = x_ind[q], x_ind[q + 1], x_ind[q + 2], x_ind[q + 3]
        a0, a1, a2, a3 = nums[i0], nums[i1], nums[i2], nums[i3]
        if not pm and not ga_least4(a0, a1, a2, a3) >= low:
            break
        removed += (a0 + a1) + (a2 + a3)
        a0, a1, a2, a3 = _scaled4(a0, a1, a2, a3, down + q)
        nums[i0], nums[i1], nums[i2], nums[i3] = a0, a1, a2, a3
        if pm:
            b0, b1, b2, b3 = held[q], held[q + 1], held[q + 2], held[q + 3]
            removed += (b0 + b1) + (b2 + b3)
            b0, b1, b2, b3 = _scaled4(b0, b1, b2, b3, up + q)
            a0, a1, a2, a3 = a0 + b0, a1 + b1, a2 + b2, a3 + b3
        added += (a0 + a1) + (a2 + a3)
        top = ga_greater(top, ga_greatest4(a0, a1, a2, a3))
        q += 4
    while q < nnz:
        i0 = x_ind[q]
        a0 = nums[i0]
        if not pm and not a0 >= low:
            break
        removed += a0
        a0 += a0 * down[q]
        nums[i0] = a0
        if pm:
            removed += held[q]
            a0 += held[q] + held[q] * up[q]
        added += a0
        top = ga_greater(top, a0)
        q += 1
    sums[0] += added - removed
    sums[1] += added + removed
    sums[2] = top
    return q


cdef void _update_sparse_row(State* s, Py_ssize_t j, double step, const double* x_val,
                             const index_t* x_ind, Py_ssize_t nnz,
                             double x_top) noexcept nogil:
    """theta_j <- theta_j - step * x on the nnz touched coordinates, in O(nnz).

    Exponential terms are scaled in place (steps up to SHIFT_SLACK); otherwise the
    terms are computed from the gathered theta (so the exponentials vectorize) and
    scattered; pnorm has its own pass (_pnorm_sparse_row). The normalizer is updated
    by their change.
    """
    cdef Py_ssize_t q, i, base = j * s.n
    cdef double* theta = s.theta + base
    cdef double* nums = s.num + base
    cdef double* dens = s.den + base
    cdef double top = 0.0, old, term, num, den, shift, total = 0.0, mass = 0.0
    cdef double* down
    cdef double* up
    cdef double* olds
    cdef double* held = (_held_row(s, j)  # EG+-'s den (lazy runs)
                         if s.row_held != NULL else NULL)
    cdef double sums[3]
    cdef bint pm, small, lazy
    if s.psi == PSI_IDENTITY:
        _sparse_axpy(theta, step, x_val, x_ind, nnz)
        return
    if s.psi == PSI_PNORM:
        _pnorm_sparse_row(s, j, step, x_val, x_ind, nnz)
        return
    if _multiplicative(s, step, x_top):
        # e^{theta - shift} scales by e^{-d} (softmax, exp: den is num) and, for EG+-,
        # e^{-theta - shift} by e^{d}: products that add no cancellation at any step
        # size. The factors are computed first, in a loop over the contiguous row
        # that vectorizes. In a lazy run theta is not touched: num holds it
        # (theta = ln num + shift; EG+-'s den is product / num, in held), so a row
        # costs one random cache line per coordinate, like SGD's. A coordinate
        # whose term underflows hands theta back to the theta array, which then
        # updates it and recomputes its terms from it (so that they can grow back).
        pm = s.psi == PSI_EG_PM
        shift = s.shift[j]
        # Locals: with -fno-strict-aliasing (Python's flags) the fields of s would be
        # reloaded after every store to the terms.
        lazy, down, up = s.lazy, s.row_num, s.row_den
        small = ga_step_factors(step, x_val, down, up if pm else NULL, nnz,
                                fabs(step) * x_top)
        sums[0] = sums[1] = sums[2] = 0.0
        q = 0
        while q < nnz:
            if lazy and small:
                q = _scale_held_terms(nums, held, x_ind, down, up, q, nnz, pm, sums)
                if q == nnz:
                    break
            # A coordinate whose terms underflow, a long step, or theta kept too.
            i = x_ind[q]
            num = nums[i]
            den = (held[q] if lazy else dens[i]) if pm else num
            old = num + den if pm else num
            if num < UNDERFLOW or (pm and den < UNDERFLOW):  # theta in the array
                theta[i] -= step * x_val[q]
                num = ga_exp(theta[i] - shift)
                den = ga_exp(-theta[i] - shift) if pm else num
            else:
                if small:  # t e^{-d} = t + t (e^{-d} - 1), one rounding
                    num += num * down[q]
                    den = den + den * up[q] if pm else num
                else:
                    num *= down[q]
                    den = den * up[q] if pm else num
                if not lazy:
                    theta[i] -= step * x_val[q]
                elif num < UNDERFLOW:
                    theta[i] = _theta_of_term(s, nums[i], shift) - step * x_val[q]
            nums[i] = num
            if pm:
                if not lazy:
                    dens[i] = den
                num += den
            sums[0] += num - old
            sums[1] += num + old
            sums[2] = ga_greater(sums[2], num)
            q += 1
        if _normalized(s.psi):
            _renormalize_sparse_row(s, j, sums[0], sums[1], sums[2])
        return
    olds, down, up = s.row_theta, s.row_num, s.row_den  # gathered theta, new terms
    shift = s.shift[j]
    for q in range(nnz):
        i = x_ind[q]
        old = _theta_at(s, j, i)
        if _normalized(s.psi):
            den = held[q] if s.lazy and s.psi == PSI_EG_PM else dens[i]
            term = _normalizer_term(s, nums[i], den, old, shift)
            total -= term
            mass += fabs(term)
        theta[i] = old - step * x_val[q]
        olds[q] = theta[i]
    _terms(s, olds, down, up, shift, nnz)
    if not _normalized(s.psi):
        for q in range(nnz):
            nums[x_ind[q]] = down[q]
        return
    for q in range(nnz):
        i = x_ind[q]
        term = _normalizer_term(s, down[q], up[q], olds[q], shift)
        nums[i] = down[q]
        dens[i] = up[q]
        total += term
        mass += fabs(term)
        top = ga_greater(top, term)
    _renormalize_sparse_row(s, j, total, mass, top)


cdef inline double* _pnorm_gather(State* s, Py_ssize_t j, const index_t* x_ind,
                                  Py_ssize_t nnz) noexcept nogil:
    """Copy a CSR row's pnorm terms and theta (row j) to row j's held buffers
    (_held_row; returned), for its update: its passes then read them in order, with
    no load after a store, and it only stores. One short loop, whose cache misses
    all overlap."""
    cdef Py_ssize_t q, i
    cdef const double* num = s.num + j * s.n
    cdef const double* theta = s.theta + j * s.n
    cdef double* held_num = _held_row(s, j)
    cdef double* held_theta = held_num + s.row_size
    for q in range(nnz):
        i = x_ind[q]
        held_num[q] = num[i]
        held_theta[q] = theta[i]
    return held_num


cdef void _pnorm_sparse_row(State* s, Py_ssize_t j, double step, const double* x_val,
                            const index_t* x_ind, Py_ssize_t nnz) noexcept nogil:
    """theta_j <- theta_j - step * x on a CSR row for pnorm, whose terms do not hold
    theta: from the row's terms and theta that the dot product gathered
    (_pnorm_gather; the options' trials gather them here), theta moves and the
    terms are computed afresh (ga_pnorm_terms, vectorized), then both are
    scattered. The normalizer changes by their terms num theta / shift (>= 0: num
    has theta's sign).
    """
    cdef Py_ssize_t q, i
    cdef double* theta = s.theta + j * s.n
    cdef double* nums = s.num + j * s.n
    cdef double* held_num = _held_row(s, j)
    cdef double* news = held_num + s.row_size  # theta, then its new values
    cdef double* terms = s.row_num
    cdef double removed, added = 0.0, top = 0.0, term, shift = s.shift[j]
    if s.options:
        _pnorm_gather(s, j, x_ind, nnz)
    removed = ga_dot(held_num, news, nnz)
    ga_axpy(news, step, x_val, nnz)
    ga_pnorm_terms(news, terms, shift, s.p, nnz)
    for q in range(nnz):
        i = x_ind[q]
        theta[i] = news[q]
        nums[i] = terms[q]
        term = terms[q] * news[q]
        added += term
        top = ga_greater(top, term)
    _renormalize_sparse_row(s, j, (added - removed) / shift, (added + removed) / shift,
                            top / shift)


cdef void _geodesic_sparse_row(State* s, Py_ssize_t j, double step,
                               const double* x_val, const index_t* x_ind,
                               Py_ssize_t nnz) noexcept nogil:
    """theta_j <- theta_j - step * x (sphere) or theta_j * (1 - step * x) (simplex) on
    a CSR row whose dot pass was _geodesic_dot. The terms num = theta / shift hold
    theta in CSR runs, so the step moves them directly, a scatter that costs no more
    than SGD's. The normalizer sum num^2 changes by a quadratic in the step whose
    coefficients the dot pass summed: with num -= a x (sphere, a = step / shift),
    sum (num - a x)^2 - num^2 = -2 a sum num x + a^2 sum x^2; with num *= 1 - a x
    (simplex, a = step), sum num^2 ((1 - a x)^2 - 1) = -2 a sum num^2 x
    + a^2 sum num^2 x^2 (the dot pass's scaled sum / scale). The magnitudes of
    those summands bound its rounding (mass), and (max |num| + |a| max |x|)^2, or
    max num^2 (1 + |a| max |x|)^2, bounds the largest new term (top).
    """
    cdef Py_ssize_t q = 0, i0, i1, i2, i3
    cdef double* nums = s.num + j * s.n
    cdef const double* sums = s.geodesic + j * GEODESIC_SUMS
    cdef double o0, o1, o2, o3, top
    cdef bint sphere = s.psi == PSI_SPHERE
    cdef double quad = sums[1] if sphere else sums[1] / s.scale[j]
    cdef double a = step / s.shift[j] if sphere else step
    # num moves by (along + relative num) x.
    cdef double along = a if sphere else 0.0
    cdef double relative = 0.0 if sphere else a
    while q < nnz:
        # Four coordinates loaded before they are stored (see _sparse_axpy); the
        # row's last ones one at a time.
        if q + 4 <= nnz:
            i0, i1, i2, i3 = x_ind[q], x_ind[q + 1], x_ind[q + 2], x_ind[q + 3]
            o0, o1, o2, o3 = nums[i0], nums[i1], nums[i2], nums[i3]
            nums[i0] = o0 - (along + relative * o0) * x_val[q]
            nums[i1] = o1 - (along + relative * o1) * x_val[q + 1]
            nums[i2] = o2 - (along + relative * o2) * x_val[q + 2]
            nums[i3] = o3 - (along + relative * o3) * x_val[q + 3]
            q += 4
        else:
            i0 = x_ind[q]
            o0 = nums[i0]
            nums[i0] = o0 - (along + relative * o0) * x_val[q]
            q += 1
    top = (sums[3] + fabs(a) * sums[4] if sphere
           else sums[3] * (1.0 + fabs(a) * sums[4]))
    _renormalize_sparse_row(s, j, -2.0 * a * sums[0] + a * a * quad,
                            2.0 * fabs(a) * sums[2] + a * a * quad, top * top)


# -- Options of issue 6: GA^Y, GA_L, implicit, natural and geodesic updates ----------
# They run in _trial_options, dispatched from _trial only when s.options is set, and
# reuse the row primitives above for the weights.

# The implicit equation is solved to this relative width of its bracket.
cdef double IMPLICIT_TOL = 4.0 * 2.220446049250313e-16
cdef int IMPLICIT_MAX_STEPS = 200


cdef inline double _unscaled_weight(State* s, double num, double den) noexcept nogil:
    """omega_ji / scale_j of a coordinate, from its terms num and den."""
    if s.psi == PSI_SIMPLEX:
        return num * num
    return num - den if s.psi == PSI_EG_PM else num


cdef inline double _normalizer_term(State* s, double num, double den, double theta,
                                    double shift) noexcept nogil:
    """A coordinate's term of the normalizer norm_j, from its terms and theta (EG+-:
    2 cosh(theta) e^-shift; pnorm: |theta / shift|^p = num theta / shift; sphere and
    simplex: num^2; none of these is stored)."""
    if _geodesic(s.psi):
        return num * num
    if s.psi == PSI_PNORM:
        return num * theta / shift
    return num + den if s.psi == PSI_EG_PM else den


cdef double _row_dot(State* s, Py_ssize_t j, const double* x_val, const index_t* x_ind,
                     Py_ssize_t nnz, bint dense) noexcept nogil:
    """psi(theta_j) . x / scale_j."""
    cdef Py_ssize_t q, i, base = j * s.n
    cdef double total = 0.0
    for q in range(nnz):
        i = base + (q if dense else x_ind[q])
        total += _unscaled_weight(s, s.num[i], s.den[i]) * x_val[q]
    return total


cdef double _geodesic_dot(State* s, Py_ssize_t j, const double* x_val,
                          const index_t* x_ind, Py_ssize_t nnz) noexcept nogil:
    """psi(theta_j) . x / scale_j of a CSR row for the sphere or the simplex, whose
    terms hold theta; the same pass, which takes the row's cache misses, stores in
    s.geodesic what the step needs besides: with w = num (sphere) or num^2
    (simplex), sum x^2 (sphere) or scale sum w x^2 (simplex), sum |w x|, max |num|
    and max |x| (see _geodesic_sparse_row). One sum each, in the row's order: eight
    partial sums indexed by column, as the dense row's (ga_geodesic_sums), took 15%
    longer."""
    cdef Py_ssize_t q
    cdef const double* nums = s.num + j * s.n
    cdef double* sums = s.geodesic + j * GEODESIC_SUMS
    cdef double term, w, x, dot = 0.0, quad = 0.0, size = 0.0, top = 0.0, x_top = 0.0
    cdef double scale = s.scale[j]
    cdef bint sphere = s.psi == PSI_SPHERE
    # The loop below is long per coordinate: a whole row's loads would not fit in
    # the CPU's window of instructions in flight. Start every cache miss first.
    for q in range(nnz):
        __builtin_prefetch(nums + x_ind[q])
    for q in range(nnz):
        term, x = nums[x_ind[q]], x_val[q]
        w = term if sphere else term * term
        dot += w * x
        quad += x * x * (1.0 if sphere else scale * w)
        size += fabs(w * x)
        top = ga_greater(top, fabs(term))
        x_top = ga_greater(x_top, fabs(x))
    sums[0], sums[1], sums[2], sums[3], sums[4] = dot, quad, size, top, x_top
    return dot


cdef inline double _phi_value(int phi, double a) noexcept nogil:
    """phi(a) of a coordinate-wise transfer function."""
    if phi == PHI_LOGISTIC:
        return 1.0 / (1.0 + exp(-a)) if a >= 0.0 else exp(a) / (1.0 + exp(a))
    if phi == PHI_TANH:
        return tanh(a)
    if phi == PHI_ARCTAN:
        return atan(a)
    if phi == PHI_EXP:
        return exp(a)
    return a


cdef double _square_loss(State* s, const double* y) noexcept nogil:
    """1/2 ||y_hat - y||^2 and its gradient in a, residual = dL/da (GA_L, KW01 eq. 35)."""
    cdef Py_ssize_t j
    cdef double d, slope, loss = 0.0, inner = 0.0
    for j in range(s.k):
        d = s.y_hat[j] - y[j]
        loss += 0.5 * d * d
        inner += s.y_hat[j] * d
    for j in range(s.k):
        d = s.y_hat[j] - y[j]
        if s.phi == PHI_SOFTMAX:
            # The softmax Jacobian diag(y_hat) - y_hat y_hat^T applied to d.
            s.residual[j] = s.y_hat[j] * (d - inner)
            continue
        if s.phi == PHI_LOGISTIC:
            slope = s.y_hat[j] * (1.0 - s.y_hat[j])
        elif s.phi == PHI_TANH:
            slope = 1.0 - s.y_hat[j] * s.y_hat[j]
        elif s.phi == PHI_ARCTAN:
            slope = 1.0 / (1.0 + s.a[j] * s.a[j])
        elif s.phi == PHI_EXP:
            slope = s.y_hat[j]
        else:
            slope = 1.0
        s.residual[j] = d * slope
    return loss


cdef inline double _rescale(State* s, double shift, double new_shift) noexcept nogil:
    """Factor taking normalizer terms from units of ``shift`` to ``new_shift``."""
    if s.psi == PSI_PNORM:
        return pow(shift / new_shift, s.p)
    return exp(shift - new_shift)


cdef double _untouched_normalizer(State* s, Py_ssize_t j, const index_t* x_ind,
                                  Py_ssize_t nnz) noexcept nogil:
    """sum_i den_ji over the coordinates a (canonical, sorted) CSR row leaves alone,
    in units of s.rest_shift[j] (the row's shift unless set here)."""
    cdef Py_ssize_t q, i, base = j * s.n
    cdef double rest = s.norm[j], top = -INFINITY, num, den
    if nnz == s.n:
        return 0.0
    for q in range(nnz):
        i = base + x_ind[q]
        rest -= _normalizer_term(s, s.num[i], s.den[i], s.theta[i], s.shift[j])
    if rest >= 0.25 * s.norm[j]:
        return rest
    # The touched terms carry most of the normalizer: sum the others exactly, O(n),
    # in units of their own largest parameter (in the row's units, set by a touched
    # one, they may all underflow, and after the step they may weigh the most).
    q = 0
    for i in range(s.n):
        if q < nnz and x_ind[q] == i:
            q += 1
        else:
            top = fmax(top, s.theta[base + i] if s.psi == PSI_SOFTMAX
                       else fabs(s.theta[base + i]))
    if s.psi == PSI_PNORM:
        if not top > 0.0:
            return 0.0  # the untouched parameters are all 0
        top = _pnorm_shift(top)
    rest = 0.0
    q = 0
    for i in range(s.n):
        if q < nnz and x_ind[q] == i:
            q += 1
        else:
            _terms(s, s.theta + base + i, &num, &den, top, 1)
            if s.psi != PSI_EG_PM:
                den = num  # (the other psi have one term)
            rest += _normalizer_term(s, num, den, s.theta[base + i], top)
    s.rest_shift[j] = top
    return rest


cdef double _implicit_activation(State* s, Py_ssize_t j, double v, const double* x_val,
                                 const index_t* x_ind, Py_ssize_t nnz, bint dense,
                                 double h, double hb, double rest) noexcept nogil:
    """A_j(v) = psi(theta_j - h v x) . x + b_j - hb v (clipped), decreasing in v.

    ``rest`` is the normalizer of the coordinates x does not touch (0 for dense rows),
    in units of s.rest_shift[j].
    """
    cdef Py_ssize_t q, base = j * s.n
    cdef double shift = s.rest_shift[j], top, dot = 0.0, norm = rest, scale = 1.0, a
    for q in range(nnz):
        s.row_theta[q] = s.theta[base + (q if dense else x_ind[q])] - h * v * x_val[q]
    if s.psi == PSI_IDENTITY:
        for q in range(nnz):
            dot += s.row_theta[q] * x_val[q]
    else:
        if _normalized(s.psi) and nnz > 0:
            # Terms relative to the largest new parameter, so that none overflows.
            top = ga_max(s.row_theta, nnz, s.psi != PSI_SOFTMAX)
            if s.psi == PSI_PNORM:
                top = _pnorm_shift(top)
            if norm == 0.0:
                # Nothing else in the normalizer (a dense row, or untouched
                # parameters all 0, as at the start): the new ones set the units,
                # however far from the row's shift (pnorm's powers would under- or
                # overflow).
                shift = top
            elif top > shift:
                norm *= _rescale(s, shift, top)
                shift = top
        _terms(s, s.row_theta, s.row_num, s.row_den, shift, nnz)
        for q in range(nnz):
            dot += _unscaled_weight(s, s.row_num[q], s.row_den[q]) * x_val[q]
            norm += _normalizer_term(s, s.row_num[q], s.row_den[q], s.row_theta[q],
                                     shift)
        if _normalized(s.psi):
            scale = _scale_value(s, norm, shift)
    a = scale * dot + s.intercept[j] - hb * v
    return fmin(fmax(a, s.clip_low), s.clip_high)


cdef double _implicit_gap(State* s, Py_ssize_t j, double v, const double* x_val,
                          const index_t* x_ind, Py_ssize_t nnz, bint dense,
                          const double* y, double h, double hb) noexcept nogil:
    """F_j(v) = v - (phi_j - y_j) at A_j(v), increasing in v; j < 0: the softmax
    normalizer equation G(L) = -sum_l s_l(L), increasing in L = v.

    F_j's root is row j's residual of the implicit update, KW01 eq. (22) / (25); for
    softmax, phi_j = e^{A_j - L} with the log-normalizer L = s.lse held fixed.
    """
    cdef Py_ssize_t l
    cdef double a, total = 0.0
    if j < 0:
        s.lse = v
        for l in range(s.k):
            s.residual[l] = _softmax_row(s, l, x_val, x_ind, nnz, dense, y, h, hb)
            total += s.residual[l]
        return -total
    a = _implicit_activation(s, j, v, x_val, x_ind, nnz, dense, h, hb, s.rest[j])
    if s.phi == PHI_SOFTMAX:
        return v - (exp(a - s.lse) - y[j])
    return v - (_phi_value(s.phi, a) - y[j])


cdef double _implicit_root(State* s, Py_ssize_t j, double lo, double flo, double hi,
                           const double* x_val, const index_t* x_ind, Py_ssize_t nnz,
                           bint dense, const double* y, double h,
                           double hb) noexcept nogil:
    """The root of _implicit_gap between lo (where F = flo) and hi, to machine precision.

    F is increasing and changes sign on [lo, hi]. Regula falsi with the Illinois
    modification converges superlinearly; bisection replaces a step that leaves the
    bracket or that twice in a row fails to halve it.
    """
    cdef double fhi, mid, fmid, width = fabs(hi - lo), last
    cdef int step, slow = 0
    if flo == 0.0:
        return lo
    fhi = _implicit_gap(s, j, hi, x_val, x_ind, nnz, dense, y, h, hb)
    if not fhi * flo < 0.0:
        # F(hi) = 0 up to rounding (or NaN, reported by the caller).
        return hi if fhi == fhi else fhi
    for step in range(IMPLICIT_MAX_STEPS):
        mid = hi - fhi * (hi - lo) / (fhi - flo)
        if slow >= 2 or not fmin(lo, hi) < mid < fmax(lo, hi):
            mid = 0.5 * (lo + hi)
        fmid = _implicit_gap(s, j, mid, x_val, x_ind, nnz, dense, y, h, hb)
        if fmid == 0.0 or fmid != fmid:
            return mid if fmid == 0.0 else fmid
        if fmid * fhi < 0.0:
            lo, flo = hi, fhi
        else:
            flo *= 0.5  # Illinois: the end point kept twice counts half
        hi, fhi = mid, fmid
        last, width = width, fabs(hi - lo)
        slow = slow + 1 if width > 0.5 * last else 0
        if width <= IMPLICIT_TOL * fmax(fabs(lo), fabs(hi)):
            break
    return hi


cdef double _softmax_row(State* s, Py_ssize_t j, const double* x_val,
                         const index_t* x_ind, Py_ssize_t nnz, bint dense,
                         const double* y, double h, double hb) noexcept nogil:
    """s_j(L): the root of v = e^{A_j(v) - L} - y_j for the fixed L = s.lse.

    As for a coordinate-wise phi, [0, r0] with r0 = e^{a_j - L} - y_j brackets it;
    when r0 overflows, the upper end doubles from 1 until F_j turns positive.
    """
    cdef double r0 = exp(s.a[j] - s.lse) - y[j], hi = 1.0
    cdef int step
    if r0 == 0.0 or r0 != r0:
        return r0
    if isfinite(r0):
        return _implicit_root(s, j, 0.0, -r0, r0, x_val, x_ind, nnz, dense, y, h, hb)
    for step in range(IMPLICIT_MAX_STEPS):
        if _implicit_gap(s, j, hi, x_val, x_ind, nnz, dense, y, h, hb) > 0.0:
            break
        hi *= 2.0
    return _implicit_root(s, j, 0.0, -r0, hi, x_val, x_ind, nnz, dense, y, h, hb)


cdef bint _implicit_residuals(State* s, const double* x_val, const index_t* x_ind,
                              Py_ssize_t nnz, bint dense, const double* y, double h,
                              double hb) noexcept nogil:
    """Replace s.residual (the explicit residuals) by the solution of KW01 eq. (22)/(25).

    Coordinate-wise phi: one scalar equation per row, bracketed by [0, r0] since
    F_j(0) = -r0 and F_j(r0) has the sign of r0 (r0 = phi(a_j) - y_j).
    Softmax couples the rows through its log-normalizer L = lse_l A_l(s_l). For a
    fixed L each row's equation s_j = e^{A_j(s_j) - L} - y_j is again monotone, with
    root s_j(L) decreasing in L; the solution is the L where sum_j s_j(L) = 0 (the
    rows of y sum to 1). At the solution s_j lies in [-y_j, 1 - y_j], so L lies
    between lse_j A_j(1 - y_j) and lse_j A_j(-y_j), where the outer root is searched.
    Returns False on NaN.
    """
    cdef Py_ssize_t j
    cdef double v, low, high, top_low = -INFINITY, top_high = -INFINITY
    cdef double sum_low = 0.0, sum_high = 0.0
    for j in range(s.k):
        s.rest_shift[j] = s.shift[j]
        s.rest[j] = (_untouched_normalizer(s, j, x_ind, nnz)
                     if not dense and _normalized(s.psi) else 0.0)
    if s.phi != PHI_SOFTMAX:
        for j in range(s.k):
            v = s.residual[j]
            if v != 0.0:
                v = _implicit_root(s, j, 0.0, -v, v, x_val, x_ind, nnz, dense, y, h, hb)
            if v != v:
                return False
            s.residual[j] = v
        return True
    for j in range(s.k):
        # A_j(1 - y_j) and A_j(-y_j), kept in wx and residual for the log-sum-exp.
        s.wx[j] = _implicit_activation(s, j, 1.0 - y[j], x_val, x_ind, nnz, dense, h, hb,
                                       s.rest[j])
        s.residual[j] = _implicit_activation(s, j, -y[j], x_val, x_ind, nnz, dense, h,
                                             hb, s.rest[j])
        top_low = fmax(top_low, s.wx[j])
        top_high = fmax(top_high, s.residual[j])
    for j in range(s.k):
        sum_low += exp(s.wx[j] - top_low)
        sum_high += exp(s.residual[j] - top_high)
    low, high = top_low + log(sum_low), top_high + log(sum_high)
    if not low < high:
        high = low
    v = _implicit_root(s, -1, low, _implicit_gap(s, -1, low, x_val, x_ind, nnz, dense,
                                                 y, h, hb),
                       high, x_val, x_ind, nnz, dense, y, h, hb)
    if v != v:
        return False
    _implicit_gap(s, -1, v, x_val, x_ind, nnz, dense, y, h, hb)  # s_j(L) at the root
    for j in range(s.k):
        if s.residual[j] != s.residual[j]:
            return False
    return True


cdef void _natural_step(State* s, Py_ssize_t j, double step, const double* x_val,
                        const index_t* x_ind, Py_ssize_t nnz, bint dense) noexcept nogil:
    """theta_j <- theta_j - step Dpsi(theta_j)^T x (KMWW eq. 5).

    Dpsi is symmetric (KW01 §3): diag(omega) - omega omega^T for softmax, diag(omega)
    for exp, (U / Z) diag(cosh theta) - omega omega^T / U for EG+- (Z = sum cosh).
    The rank-one part moves every coordinate (O(n) per row); exp's step, diagonal,
    moves only the row's nonzeros (O(nnz)).
    """
    cdef Py_ssize_t q, i, base = j * s.n
    cdef double along = 0.0, slope
    if s.psi == PSI_SOFTMAX:
        along = step * s.wx[j]
    elif s.psi == PSI_EG_PM:
        along = step * s.wx[j] / s.U
    if along != 0.0:
        _guard_rows(s)
        # The rank-one part, on every coordinate: + step (omega . x) omega (/ U).
        for i in range(base, base + s.n):
            s.theta[i] += along * s.scale[j] * _unscaled_weight(s, s.num[i], s.den[i])
    for q in range(nnz):
        i = base + (q if dense else x_ind[q])
        # The diagonal: omega_i, or (U / Z) cosh theta_i = scale * its normalizer term.
        slope = s.scale[j] * (_normalizer_term(s, s.num[i], s.den[i], s.theta[i],
                                               s.shift[j])
                              if s.psi == PSI_EG_PM
                              else _unscaled_weight(s, s.num[i], s.den[i]))
        s.theta[i] -= step * slope * x_val[q]
    if s.psi == PSI_EXP:
        for q in range(nnz):
            i = base + (q if dense else x_ind[q])
            s.num[i] = ga_exp(s.theta[i])
        return
    _recompute_row(s, j)


cdef bint _geodesic_step(State* s, Py_ssize_t j, double eta, double r,
                         const double* x_val, const index_t* x_ind, Py_ssize_t nnz,
                         bint dense) noexcept nogil:
    """Move omega_j along the geodesic of -eta grad L, grad_omega L = r x (KMWW eq. 10).

    Sphere of radius R = U (Example 2): V = r (x - omega c / R^2), c = omega . x, and
    omega' = omega cos(eta |V| / R) - R V / |V| sin(eta |V| / R) = alpha omega - beta x.
    Simplex, Fisher metric (Example 3): u = sqrt(omega) on the unit sphere,
    V = r u (x - c), |V|^2 = r^2 (sum omega x^2 - c^2) and
    u' = u cos(eta |V| / 2) - V / |V| sin(eta |V| / 2) = u (alpha - beta x).
    theta matters only up to a positive factor (omega = R theta / |theta| or
    theta^2 / |theta|^2), so while alpha >= 1/2 theta takes the O(nnz) step
    theta - (beta / alpha) (x or theta x); otherwise the row is rebuilt from omega'.
    False if |V| is not finite (|x|^2 overflowed): a divergence.
    """
    cdef Py_ssize_t q, i, base = j * s.n
    # c and quad were summed in the dot product's pass.
    cdef double c = s.wx[j], quad = s.geodesic[j * GEODESIC_SUMS + 1]
    cdef double radius, g, angle, ratio, alpha, beta, scale
    cdef double sign = 1.0 if r > 0.0 else -1.0
    cdef bint sphere = s.psi == PSI_SPHERE, lazy
    radius = s.U if sphere else 2.0
    # (c / R)^2 <= quad: c * c alone may overflow where quad does not.
    g = quad - (c / radius) * (c / radius) if sphere else quad - c * c
    if not isfinite(g):
        return False
    if not g > 0.0:
        return True  # the gradient is normal to the manifold: no move
    g = sqrt(g)  # |V| = |r| g
    angle = eta * fabs(r) * g / radius
    ratio = sin(angle) * sign / g  # sin(angle) r / |V|
    if sphere:
        alpha = cos(angle) + ratio * c / radius
        beta = radius * ratio
    else:
        alpha = cos(angle) + ratio * c
        beta = ratio
    if alpha >= 0.5:
        # Sphere: theta = omega shift / scale, theta' = theta - (beta / alpha)
        # shift / scale x; simplex: theta' = theta (1 - (beta / alpha) x).
        scale = beta / alpha * (s.shift[j] / s.scale[j] if sphere else 1.0)
        if not dense:
            _geodesic_sparse_row(s, j, scale, x_val, x_ind, nnz)
        elif sphere:
            _update_dense_row(s, j, scale, x_val, 0.0)
        else:
            for q in range(nnz):
                s.theta[base + q] -= (scale * s.theta[base + q]) * x_val[q]
            _recompute_row(s, j)
        return True
    # A long step: rebuild the row as omega' (sphere) or u' up to a factor (simplex).
    _guard_rows(s)
    if s.lazy:
        _sync_theta_row(s, j)
    for q in range(nnz):
        s.row_x[q] = s.theta[base + (q if dense else x_ind[q])]
    for i in range(s.n):
        if sphere:
            s.theta[base + i] = alpha * s.scale[j] * s.num[base + i]
        else:
            s.theta[base + i] *= alpha
    for q in range(nnz):
        i = base + (q if dense else x_ind[q])
        if sphere:
            s.theta[i] -= beta * x_val[q]
        else:
            s.theta[i] = s.row_x[q] * (alpha - beta * x_val[q])
    lazy, s.lazy = s.lazy, False  # theta was rebuilt: it holds the row, not the terms
    _recompute_row(s, j)
    s.lazy = lazy
    return True


cdef bint _trial_options(State* s, const double* x_val, const index_t* x_ind,
                         Py_ssize_t nnz, bint dense, const double* y, double weight,
                         double* loss) noexcept nogil:
    """One trial of GA with the options: clipped predictions (GA^Y, KW01 §4), the
    square loss (GA_L, eq. 35), implicit (eq. 22) or natural (KMWW eq. 5) updates
    and geodesic parameterizations (KMWW Examples 2, 3)."""
    cdef Py_ssize_t j
    cdef double r, x_top = 0.0, eta = s.eta * weight, step_scale = s.eta * weight
    for j in range(s.k):
        if not _geodesic(s.psi):
            s.wx[j] = s.scale[j] * _row_dot(s, j, x_val, x_ind, nnz, dense)
        elif dense:
            s.wx[j] = s.scale[j] * ga_geodesic_sums(
                s.num + j * s.n, x_val, nnz, s.scale[j], s.psi == PSI_SIMPLEX,
                s.geodesic + j * GEODESIC_SUMS + 1)
        else:
            s.wx[j] = s.scale[j] * _geodesic_dot(s, j, x_val, x_ind, nnz)
        s.a[j] = s.wx[j] + s.intercept[j]
        if not isfinite(s.a[j]):
            return False
        # GA^Y: clipping phi(a) to [-Y, Y] is clipping a to [phi^-1(-Y), phi^-1(Y)].
        s.a[j] = fmin(fmax(s.a[j], s.clip_low), s.clip_high)
    s.dot_ready = False
    loss[0] = _transfer_and_loss(s, y)
    if s.loss_kind == LOSS_SQUARE:
        loss[0] = _square_loss(s, y)
    else:
        for j in range(s.k):
            s.residual[j] = s.y_hat[j] - y[j]
    if not isfinite(loss[0]):
        return False
    if s.psi == PSI_EG_PM and s.update != UPDATE_NATURAL:
        step_scale *= s.U  # HKW §III, as in _trial
    if _multiplicative(s, 0.0, 0.0) and nnz > 0:  # psi with multiplicative steps
        x_top = ga_max(x_val, nnz, 1)
    # KW01 eq. (22): the residuals at the new parameters, not at the old ones.
    if s.update == UPDATE_IMPLICIT and not _implicit_residuals(
            s, x_val, x_ind, nnz, dense, y, step_scale, eta if s.fit_intercept else 0.0):
        return False
    for j in range(s.k):
        r = s.residual[j]
        if r == 0.0:
            continue
        if _geodesic(s.psi):
            if not _geodesic_step(s, j, eta, r, x_val, x_ind, nnz, dense):
                return False
        elif s.update == UPDATE_NATURAL and s.psi != PSI_IDENTITY:
            _natural_step(s, j, step_scale * r, x_val, x_ind, nnz, dense)
        elif dense:
            _update_dense_row(s, j, step_scale * r, x_val, x_top)
        else:
            _update_sparse_row(s, j, step_scale * r, x_val, x_ind, nnz, x_top)
        if s.fit_intercept:
            s.intercept[j] -= eta * r
    return True


cdef bint _trial_columns(State* s, const double* x_val, const index_t* x_ind,
                         Py_ssize_t nnz, const double* y, double weight,
                         double* loss) noexcept nogil:
    """_trial of psi = identity with k > 1 outputs on a CSR row, theta held with its
    outputs innermost (s.theta_t, _columns_first): the row's k x nnz parameters lie
    in nnz runs of k, a few cache lines each, instead of k x nnz lines. The sums and
    steps are those of _sparse_dot and _sparse_axpy, in their order."""
    cdef Py_ssize_t q, j, k = s.k, tail = nnz - nnz % 4
    cdef double* column
    cdef double* sums
    cdef double value, residual
    for j in range(4 * k):
        s.sums[j] = 0.0
    for q in range(nnz):
        column = s.theta_t + x_ind[q] * k
        sums = s.sums + (q % 4 if q < tail else 0) * k  # _sparse_dot's partial sums
        value = x_val[q]
        for j in range(k):
            sums[j] += column[j] * value
    for j in range(k):
        s.a[j] = (s.scale[j] * ((s.sums[j] + s.sums[k + j])
                                + (s.sums[2 * k + j] + s.sums[3 * k + j]))
                  + s.intercept[j])
        if not isfinite(s.a[j]):
            return False
    loss[0] = _transfer_and_loss(s, y)
    if not isfinite(loss[0]):
        return False
    for j in range(k):
        residual = s.y_hat[j] - y[j]
        s.residual[j] = s.eta * weight * residual  # the step (0 leaves theta as is)
        if s.fit_intercept:
            s.intercept[j] -= s.residual[j]
    for q in range(nnz):
        column = s.theta_t + x_ind[q] * k
        value = x_val[q]
        for j in range(k):
            column[j] = column[j] - s.residual[j] * value
    return True


cdef void _swap_layout(State* s, bint inward) noexcept nogil:
    """Copy theta (k x n) to s.theta_t (n x k), or back, in tiles of 64 columns: a
    tile of theta_t is contiguous (it stays in cache), and each output's 64 values
    in theta too. No inner loop walks across theta's rows, which lie n apart: a
    power of two puts them in the same cache sets, and their lines evict each other.
    """
    cdef Py_ssize_t i, j, start, end, k = s.k
    cdef double* row
    for start in range(0, s.n, 64):
        end = min(start + 64, s.n)
        for j in range(k):
            row = s.theta + j * s.n
            if inward:
                for i in range(start, end):
                    s.theta_t[i * k + j] = row[i]
            else:
                for i in range(start, end):
                    row[i] = s.theta_t[i * k + j]


cdef inline bint _columns_first(State* s, Py_ssize_t entries) noexcept nogil:
    """Whether a CSR run of ``entries`` stored values holds theta outputs innermost
    (_trial_columns): psi = identity with k > 1 outputs, and enough entries per
    column that the two transpositions (O(k n)) cost less than the cache lines they
    save (k - 1 per entry). Outputs that a coordinate-wise phi leaves apart
    (_outputs_apart, the same steps) already read one row of theta at a time, which
    fits the caches better than all of theta: 20 classes of 2^14 features ran in
    0.46 of SGDClassifier's epoch held innermost against 0.84 apart, but at 2^18
    (42 MB) the transpositions took a third of a 20 000-row run, which then only
    matched the run apart (3.8 entries per column). Such outputs need 4 entries per
    column, coupled ones 1 (softmax: a run of 6000 rows at 2^18, 1.1 entries per
    column, took 53-54 ms held innermost against 87-88 row by row)."""
    return (s.psi == PSI_IDENTITY and not s.options and s.k > 1
            and s.k * s.n <= COLUMNS_FIRST_LIMIT
            and entries >= (4 if _outputs_apart(s) else 1) * s.n)


cdef inline bint _trial(State* s, const double* x_val, const index_t* x_ind,
                        Py_ssize_t nnz, bint dense, const double* x_next,
                        const double* y, double weight, double* loss) noexcept nogil:
    """One trial of KW01 Figure 5; returns False if anything became non-finite.

    ``x_next`` (dense rows, may be NULL) is the next trial's row: with psi = identity
    or eg_pm its dot products are summed in the same pass as this trial's update.
    """
    cdef Py_ssize_t j, q
    cdef double residual, dot, x_top = 0.0, step_scale = s.eta * weight
    cdef bint fuse = dense and x_next != NULL and (s.psi == PSI_IDENTITY
                                                   or s.psi == PSI_EG_PM)
    if s.options:
        return _trial_options(s, x_val, x_ind, nnz, dense, y, weight, loss)
    if s.theta_t != NULL:
        return _trial_columns(s, x_val, x_ind, nnz, y, weight, loss)
    for j in range(s.k):
        if s.dot_ready:
            dot = s.dot[j]
        elif s.psi == PSI_EG_PM and dense:
            dot = ga_dot_diff(s.num + j * s.n, s.den + j * s.n, x_val, nnz)
        elif s.psi == PSI_EG_PM and s.lazy:
            dot = _sparse_dot_held(s.num + j * s.n, s.product[j], x_val, x_ind, nnz,
                                   _held_row(s, j))
        elif s.psi == PSI_PNORM and not dense:
            dot = ga_dot(_pnorm_gather(s, j, x_ind, nnz), x_val, nnz)
        elif s.psi == PSI_EG_PM:
            dot = _sparse_dot_diff(s.num + j * s.n, s.den + j * s.n, x_val, x_ind, nnz)
        elif dense:
            dot = ga_dot(s.num + j * s.n, x_val, nnz)
        else:
            dot = _sparse_dot(s.num + j * s.n, x_val, x_ind, nnz)
        s.a[j] = s.scale[j] * dot + s.intercept[j]
        if not isfinite(s.a[j]):
            return False
    s.dot_ready = False
    loss[0] = _transfer_and_loss(s, y)
    if not isfinite(loss[0]):
        return False
    if s.psi == PSI_EG_PM:
        # HKW §III: EG on x' = (Ux, -Ux), so the parameter step carries a factor U.
        step_scale *= s.U
    if s.psi != PSI_IDENTITY and s.psi != PSI_PNORM and nnz > 0:
        x_top = s.x_top if dense and s.x_top_ready else ga_max(x_val, nnz, 1)
    s.x_top_ready = False
    for j in range(s.k):
        residual = s.y_hat[j] - y[j]
        # KW01 eq. (20): theta_j <- theta_j - eta (y_hat_j - y_j) x.
        if residual == 0.0:
            if fuse and s.psi == PSI_EG_PM:
                s.dot[j] = ga_dot_diff(s.num + j * s.n, s.den + j * s.n, x_next, nnz)
            elif fuse:
                s.dot[j] = ga_dot(s.theta + j * s.n, x_next, nnz)
            continue
        if fuse and s.psi == PSI_EG_PM:
            s.dot[j] = _update_pm_row(s, j, step_scale * residual, x_val, x_next, x_top)
        elif fuse:
            s.dot[j] = ga_axpy_dot(s.theta + j * s.n, step_scale * residual, x_val,
                                   x_next, nnz)
        elif dense:
            _update_dense_row(s, j, step_scale * residual, x_val, x_top)
        else:
            _update_sparse_row(s, j, step_scale * residual, x_val, x_ind, nnz, x_top)
        if s.fit_intercept:
            s.intercept[j] -= s.eta * weight * residual
    s.dot_ready = fuse
    return True


cdef inline bint _outputs_apart(State* s) noexcept nogil:
    """Whether a CSR run learns the k outputs one after another over the whole
    batch, as SGDClassifier's one-vs-rest does. A trial of all k rows reads k x nnz
    parameters spread over k x n x 8 bytes, beyond the caches for wide X (20 classes
    of 2^18 features: 42 MB, 2.7x SGDClassifier's epoch; 2.6 MB at 2^14: 0.7x).
    Outputs interact only through a softmax phi."""
    return s.k > 1 and s.phi != PHI_SOFTMAX


cdef State _output_state(State* s, Py_ssize_t j) noexcept nogil:
    """Output j of a state as a state of its own (k = 1): its rows of parameters,
    terms and per-output values; scratch, settings and the backup of every row
    (_guard_rows) shared."""
    cdef State one = s[0]
    one.k = 1
    one.parent = s
    one.theta, one.num, one.den = s.theta + j * s.n, s.num + j * s.n, s.den + j * s.n
    one.norm, one.shift, one.scale = s.norm + j, s.shift + j, s.scale + j
    one.mass, one.age, one.product = s.mass + j, s.age + j, s.product + j
    one.anchor, one.anchor_power = s.anchor + j, s.anchor_power + j
    one.intercept, one.a, one.y_hat, one.dot = (s.intercept + j, s.a + j, s.y_hat + j,
                                                 s.dot + j)
    one.residual, one.wx, one.rest, one.rest_shift = (s.residual + j, s.wx + j,
                                                       s.rest + j, s.rest_shift + j)
    one.geodesic = s.geodesic + j * GEODESIC_SUMS
    if s.row_held != NULL:
        one.row_held = _held_row(s, j)
    return one


cdef inline bint _row_readable(const index_t* columns, Py_ssize_t start,
                               Py_ssize_t end, Py_ssize_t stored,
                               Py_ssize_t n) noexcept nogil:
    """Whether a CSR row's entries lie within the ``stored`` ones and its indices
    strictly increase within [0, n) (csr_structure's checks, on one row)."""
    cdef index_t low, high
    cdef int64_t decreases
    if not 0 <= start <= end <= stored:
        return False
    if start == end:
        return True
    if index_t is int32_t:
        decreases = ga_index_scan32(columns + start, end - start, &low, &high)
    else:
        decreases = ga_index_scan64(columns + start, end - start, &low, &high)
    return decreases == 0 and low >= 0 and high < n


cdef (bint, Py_ssize_t, double) _run_trials(
        State* s, const double* values, const index_t* columns, const index_t* indptr,
        Py_ssize_t stored, const double[:, ::1] Y, Py_ssize_t output,
        const double[::1] sample_weight, const Py_ssize_t[::1] order,
        Py_ssize_t limit) noexcept nogil:
    """The first ``limit`` trials of a CSR run, whose targets start at column
    ``output`` of Y; a lazy run ends with theta written back (_sync_theta). With
    ``stored`` >= 0 (the entries the arrays hold), each row is checked before its
    trial (_row_readable), and one that fails stops the run (s.unreadable). Returns
    (ok, trials done or the one that failed, the sum of the weighted losses)."""
    cdef Py_ssize_t t = 0, r, start, nnz, seen = 0
    cdef bint weighted = sample_weight.shape[0] > 0, ok = True
    cdef double loss, total = 0.0, weight = 1.0
    while t < limit:
        r = order[t]
        start = indptr[r]
        if stored >= 0 and not _row_readable(columns, start, indptr[r + 1], stored,
                                             s.n):
            s.unreadable, ok = True, False
            break
        nnz = indptr[r + 1] - start
        seen += nnz
        if weighted:
            weight = sample_weight[r]
        ok = _trial(s, values + start, columns + start, nnz, False, NULL,
                    &Y[r, output], weight, &loss)
        if not ok:
            break
        total += weight * loss
        t += 1
        s.touched += nnz
        if s.touched >= TOUCH_LIMIT * s.n and _normalized(s.psi):
            _recompute_all(s)
    if s.lazy:
        # (A failed trial wrote to its row's columns; an unreadable row was not run.)
        _sync_theta(s, columns, indptr, &order[0], t + (not ok and not s.unreadable),
                    seen)
    return ok, t, total


cdef (bint, Py_ssize_t, double) _run_outputs_apart(
        State* s, const double* values, const index_t* columns, const index_t* indptr,
        Py_ssize_t stored, const double[:, ::1] Y, const double[::1] sample_weight,
        const Py_ssize_t[::1] order) noexcept nogil:
    """The trials of a CSR run, output by output (_outputs_apart): each output takes
    the steps it takes in a trial of all of them. Returns (ok, trials done or the
    first that failed in any output, the sum of the weighted losses)."""
    cdef State one
    cdef Py_ssize_t j, t, limit = order.shape[0]
    cdef bint ok = True, done
    cdef double total = 0.0, loss
    for j in range(s.k):
        one = _output_state(s, j)
        done, t, loss = _run_trials(&one, values, columns, indptr, stored, Y, j,
                                    sample_weight, order, limit)
        total += loss
        if one.unreadable:
            # The first output checked every row up to it: the run stops there.
            s.unreadable = True
            ok, limit = False, t
            break
        if not done:
            # The others run up to it: the trial reported is the first to fail in
            # any output.
            ok, limit = False, t
    s.touched, s.lazy = one.touched, False
    return ok, limit, total


cdef bint _state_finite(State* s, const index_t* columns,
                        Py_ssize_t nnz) noexcept nogil:
    """Whether the parameters, terms and scales are all finite. ``columns``, if not
    NULL, are all the coordinates a journaled CSR batch touched (TrialLoop.save):
    unless a row was written in O(n) (_guard_rows), the others are as they were."""
    cdef Py_ssize_t q, j, c, size = s.k * s.n
    for q in range(s.k):
        if not isfinite(s.intercept[q]) or not isfinite(s.scale[q]):
            return False
    if s.theta_t != NULL:  # (theta held outputs innermost: num and den are theta)
        return ga_sum(s.theta_t, 0.0, size) == 0.0
    if columns != NULL and s.backup != NULL and not s.backed_up:
        for q in range(nnz):
            for j in range(s.k):
                c = j * s.n + columns[q]
                if not (isfinite(s.theta[c]) and isfinite(s.num[c])
                        and isfinite(s.den[c])):
                    return False
        return True
    # The sums are 0, or NaN if any term is not finite (num and den may be theta:
    # one pass over k n values each, 3 ms for 20 outputs of 2^18).
    return (ga_sum(s.theta, 0.0, size) == 0.0
            and (s.num == s.theta or ga_sum(s.num, 0.0, size) == 0.0)
            and (s.den == s.num or ga_sum(s.den, 0.0, size) == 0.0))


HUGE_PAGE = 2 ** 21


cpdef enum CsrStructure:
    CSR_MALFORMED = 0   # not readable: an index or an indptr entry out of range
    CSR_UNSORTED = 1    # readable, but some row's indices do not strictly increase
    CSR_CANONICAL = 2   # sorted, no duplicates: what the O(nnz) updates need


def csr_structure(const index_t[::1] indices, const index_t[::1] indptr,
                  Py_ssize_t n_data, Py_ssize_t n):
    """Check a CSR structure before the loop reads it without bounds checks.

    indptr must start at 0, never decrease and end within the indices and the data
    (``n_data`` values); every index must lie in [0, n). One pass over the indices:
    a row is canonical when its indices strictly increase, so the matrix is iff the
    decreases counted over all consecutive pairs are those at row starts.
    """
    cdef Py_ssize_t m = indptr.shape[0] - 1, nnz, r, start, last = 0
    cdef int64_t decreases, at_starts = 0
    cdef index_t low, high
    cdef bint ordered = True
    if m < 0 or indptr[0] != 0:
        return CSR_MALFORMED
    nnz = indptr[m]
    if nnz > indices.shape[0] or nnz > n_data:
        return CSR_MALFORMED
    if nnz == 0:
        return CSR_CANONICAL
    with nogil:
        for r in range(m):
            start = indptr[r + 1]
            ordered &= start >= indptr[r]
            # A row start inside the data (rows may be empty: count each once).
            if 0 < start < nnz and start != last:
                at_starts += indices[start] <= indices[start - 1]
                last = start
        if index_t is int32_t:
            decreases = ga_index_scan32(&indices[0], nnz, &low, &high)
        else:
            decreases = ga_index_scan64(&indices[0], nnz, &low, &high)
    if not ordered or low < 0 or high >= n:
        return CSR_MALFORMED
    return CSR_CANONICAL if decreases == at_starts else CSR_UNSORTED


def _term_arrays(count, k, n):
    """count new (k, n) float64 arrays in one allocation.

    From 2 MiB up, the allocation is aligned to 2 MiB and at least 4 MiB long, which
    NumPy advises the kernel (Linux) to back with huge pages: a fresh array costs
    a page fault per 4 KiB page on first touch otherwise (about 1 ms per 2 MiB on
    a VM), paid by every fit.
    """
    import numpy as np

    size = count * k * n
    if size * 8 < HUGE_PAGE:
        return np.empty((count, k, n))
    buffer = np.empty(max(size + HUGE_PAGE // 8, 2 * HUGE_PAGE // 8))
    start = (-buffer.ctypes.data % HUGE_PAGE) // 8
    return buffer[start:start + size].reshape(count, k, n)


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
        Learning rate, EG+- scale and p-norm exponent.
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
    """
    cdef State s
    cdef double[:, ::1] theta
    cdef double[:, ::1] num
    cdef double[:, ::1] den
    cdef double[::1] intercept
    cdef double[::1] buffers   # norm, shift, scale, mass, age, a, y_hat, dot, product,
                               # anchor, anchor_power
    cdef double[::1] row_buffers  # row_theta, row_num, row_den, row_held (k rows)
    cdef double[::1] option_buffers  # residual, wx, rest, rest_shift (k each), geodesic
    cdef double[::1] option_row  # row_x (longest row)
    cdef object saved          # save(): intercepts, buffers, then the stored rows
    cdef object journal        # save(columns): the columns and their stored values
    cdef object journal_buffers  # the arrays journal views, kept for the next save
    cdef State saved_state
    cdef object outputs_inner  # theta, outputs innermost (_columns_first), while held

    def __init__(self, int psi, int phi, double[:, ::1] theta, double[::1] intercept,
                 double eta, double U, double p, bint fit_intercept,
                 int update=UPDATE_EXPLICIT, int loss=LOSS_MATCHING,
                 double clip_low=float("-inf"), double clip_high=float("inf"),
                 state=None):
        import numpy as np

        k, n = theta.shape[0], theta.shape[1]
        if intercept.shape[0] != k:
            raise ValueError(f"TrialLoop of {k} x {n} parameters got "
                             f"{intercept.shape[0]} intercepts.")
        self.theta = theta
        self.intercept = intercept
        count = 0 if psi == PSI_IDENTITY else 2 if psi == PSI_EG_PM else 1
        terms = _term_arrays(count, k, n)
        self.num = theta if psi == PSI_IDENTITY else terms[0]
        self.den = terms[1] if psi == PSI_EG_PM else self.num
        self.buffers = np.zeros(11 * k)
        self.s.psi, self.s.phi, self.s.k, self.s.n = psi, phi, k, n
        self.s.eta, self.s.U, self.s.p = eta, U, p
        self.s.fit_intercept = fit_intercept
        self.s.theta = &self.theta[0, 0]
        self.s.num = &self.num[0, 0]
        self.s.den = &self.den[0, 0]
        self.s.intercept = &self.intercept[0]
        self.s.norm = &self.buffers[0]
        self.s.shift = &self.buffers[k]
        self.s.scale = &self.buffers[2 * k]
        self.s.mass = &self.buffers[3 * k]
        self.s.age = &self.buffers[4 * k]
        self.s.a = &self.buffers[5 * k]
        self.s.y_hat = &self.buffers[6 * k]
        self.s.dot = &self.buffers[7 * k]
        self.s.product = &self.buffers[8 * k]
        self.s.anchor = &self.buffers[9 * k]
        self.s.anchor_power = &self.buffers[10 * k]
        self.s.binomial[0] = (2.0 - p) / p  # (also the exponent of _pnorm_power)
        for q in range(1, ANCHOR_DEGREE):
            self.s.binomial[q] = (self.s.binomial[q - 1] * (self.s.binomial[0] - q)
                                  / (q + 1))
        self.option_buffers = np.zeros((4 + GEODESIC_SUMS) * k)
        self.s.residual = &self.option_buffers[0]
        self.s.wx = &self.option_buffers[k]
        self.s.rest = &self.option_buffers[2 * k]
        self.s.rest_shift = &self.option_buffers[3 * k]
        self.s.geodesic = &self.option_buffers[4 * k]
        self.s.update, self.s.loss_kind = update, loss
        self.s.clip_low, self.s.clip_high = clip_low, clip_high
        self.s.options = (update != UPDATE_EXPLICIT or loss != LOSS_MATCHING
                          or clip_low > float("-inf") or clip_high < float("inf")
                          or psi == PSI_SPHERE or psi == PSI_SIMPLEX)
        if state is None:
            with nogil:
                _recompute_all(&self.s)
            return
        num, den, buffers, self.s.touched = state
        if num is not None:
            np.asarray(self.num)[...] = num
        if den is not None:
            np.asarray(self.den)[...] = den
        # (Saved before pnorm's anchors, the last two k values, a state leaves them
        # 0: none yet, and the first scale takes the power afresh.)
        np.asarray(self.buffers)[:len(buffers)] = buffers

    def terms(self):
        """What the loop holds besides theta and b: ``(num, den, buffers, touched)``
        (copies; None for an array psi does not store), to build the same loop
        again with ``TrialLoop(..., state=...)`` instead of computing the terms."""
        self.release()  # (theta held by a run: written back first)
        import numpy as np

        cdef double* arrays[3]
        cdef Py_ssize_t count = _stored(&self.s, arrays)
        return (np.array(self.num) if count > 1 else None,
                np.array(self.den) if count > 2 else None,
                np.array(self.buffers), self.s.touched)

    def _check_shapes(self, Py_ssize_t features, Py_ssize_t rows,
                      const double[:, ::1] Y, const double[::1] sample_weight,
                      const Py_ssize_t[::1] order):
        """The loop reads rows of n features, targets of k outputs, a weight per row
        and the rows of ``order`` without bounds checks: the shapes must agree."""
        cdef Py_ssize_t t
        if features != self.s.n or Y.shape[1] != self.s.k:
            raise ValueError(
                f"TrialLoop of {self.s.k} x {self.s.n} parameters got rows of "
                f"{features} features and {Y.shape[1]} targets."
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

    def run_dense(self, const double[:, ::1] X, const double[:, ::1] Y,
                  const double[::1] sample_weight, const Py_ssize_t[::1] order):
        """Run one trial per entry of ``order`` on the dense rows of X.

        ``sample_weight`` may be empty (all weights 1). Returns
        ``(status, trials, loss_sum)``: on ``DIVERGED``, ``trials`` is the position in
        ``order`` of the failing trial and the state must be discarded.
        """
        self.release()  # (theta held by a run: written back first)
        cdef Py_ssize_t t = 0, r, n_trials = order.shape[0]
        cdef bint weighted = sample_weight.shape[0] > 0, ok = True
        cdef double loss, total = 0.0, weight = 1.0
        cdef const int32_t* no_index = NULL
        cdef const double* x_next
        self._check_shapes(X.shape[1], X.shape[0], Y, sample_weight, order)
        if self.s.options:
            self._row_scratch(self.s.n)  # the implicit update works on whole rows
        self.s.dot_ready = self.s.x_top_ready = False
        with nogil:
            while t < n_trials:
                r = order[t]
                if weighted:
                    weight = sample_weight[r]
                x_next = &X[order[t + 1], 0] if t + 1 < n_trials else NULL
                ok = _trial(&self.s, &X[r, 0], no_index, self.s.n, True, x_next,
                            &Y[r, 0], weight, &loss)
                if not ok:
                    break
                total += weight * loss
                t += 1
            ok = ok and _state_finite(&self.s, no_index, 0)
        return (OK if ok else DIVERGED), t, total

    def run_csr(self, const double[::1] data, const index_t[::1] indices,
                const index_t[::1] indptr, Py_ssize_t n_features,
                const double[:, ::1] Y, const double[::1] sample_weight,
                const Py_ssize_t[::1] order, bint check_rows=False, bint hold=False):
        """Same as :meth:`run_dense` for the rows of a CSR matrix of ``n_features``
        columns.

        Its structure must have been checked (:func:`csr_structure`), and the indices
        of each row must be unique (canonical CSR): the normalizers are updated from
        the rows' terms before and after the update. Or, with ``check_rows``, each
        row is checked just before its trial, while its indices are read anyway
        (a pass of csr_structure over all of them costs 8% of an SGD epoch): the run
        stops before the first row that fails, with status UNREADABLE, and the
        state is then that of the trials before it. A run of k > 1 outputs of
        psi = identity with enough entries per column holds theta transposed, in
        a copy of k x n values (_columns_first). With ``hold``, a run that succeeds
        keeps it so, for the next run_csr (a fit's next epoch), until
        :meth:`release` or any other method but :meth:`weights`, which reads the
        copy: theta is then out of date.
        """
        cdef Py_ssize_t t, r, start, end, longest = 0, n_trials = order.shape[0]
        cdef Py_ssize_t stored = -1
        cdef bint ok, unreadable
        cdef double total
        cdef const double* values = &data[0] if data.shape[0] > 0 else NULL
        cdef const index_t* columns = &indices[0] if indices.shape[0] > 0 else NULL
        self._check_shapes(n_features, indptr.shape[0] - 1, Y, sample_weight, order)
        if check_rows:
            if indptr.shape[0] == 0 or indptr[0] != 0:
                return UNREADABLE, 0, 0.0
            stored = min(indices.shape[0], data.shape[0])
        for r in range(indptr.shape[0] - 1):
            start, end = indptr[r], indptr[r + 1]
            if check_rows:  # (an unchecked row must not size the scratch)
                start, end = max(start, 0), min(end, stored)
            longest = max(longest, end - start)
        self._row_scratch(longest)
        self.s.dot_ready = False
        # The geodesic psi's terms theta / shift hold theta too; their options
        # (geodesic steps, Y, the square loss) read theta through _theta_at.
        self.s.lazy = (not self.s.options and (self.s.psi == PSI_SOFTMAX
                                               or self.s.psi == PSI_EXP
                                               or self.s.psi == PSI_EG_PM
                                               and _shifts_held(&self.s))
                       or _geodesic(self.s.psi))
        cdef double[:, :, ::1] outputs_inner
        if self.s.theta_t == NULL and _columns_first(&self.s,
                                                     indptr[indptr.shape[0] - 1]):
            copy = _term_arrays(1, self.s.n + 4, self.s.k)
            outputs_inner = copy
            self.s.theta_t = &outputs_inner[0, 0, 0]
            self.s.sums = self.s.theta_t + self.s.n * self.s.k
            with nogil:
                _swap_layout(&self.s, True)
            self.outputs_inner = copy  # (weights read it from now on)
        with nogil:
            if _outputs_apart(&self.s) and self.s.theta_t == NULL:
                ok, t, total = _run_outputs_apart(&self.s, values, columns, &indptr[0],
                                                  stored, Y, sample_weight, order)
            else:
                ok, t, total = _run_trials(&self.s, values, columns, &indptr[0], stored,
                                           Y, 0, sample_weight, order, n_trials)
            unreadable, self.s.unreadable = self.s.unreadable, False
            # (The journal's columns are those of every row, and some were not
            # checked when ``order`` leaves them out: then every parameter is.)
            ok = ok and not unreadable and _state_finite(
                &self.s, <const index_t*>NULL if check_rows else columns,
                indptr[indptr.shape[0] - 1])
        if not (hold and ok):
            self.release()
        return (UNREADABLE if unreadable else OK if ok else DIVERGED), t, total

    def release(self):
        """Write theta back from the copy a run_csr holds (``hold``), if any."""
        if self.s.theta_t == NULL:
            return
        with nogil:
            _swap_layout(&self.s, False)
        self.s.theta_t = NULL
        self.outputs_inner = None

    def _row_scratch(self, Py_ssize_t longest):
        """Make the gather buffers of CSR rows hold ``longest`` entries."""
        import numpy as np

        if self.s.options and (self.option_row is None
                               or self.option_row.shape[0] < longest):
            self.option_row = np.empty(max(longest, 1))
            self.s.row_x = &self.option_row[0]
        # EG+-'s den of the row, for every output, in plain CSR runs only; pnorm's
        # terms and theta.
        held = (2 * self.s.k if self.s.psi == PSI_PNORM
                else self.s.k if self.s.psi == PSI_EG_PM and not self.s.options else 0)
        if self.row_buffers is not None and self.s.row_size >= longest:
            return
        self.row_buffers = np.empty((3 + held) * max(longest, 1))
        self.s.row_size = longest
        self.s.row_theta = &self.row_buffers[0]
        self.s.row_num = &self.row_buffers[longest]
        self.s.row_den = (self.s.row_num if self.s.den == self.s.num
                          else &self.row_buffers[2 * longest])
        self.s.row_held = &self.row_buffers[3 * longest] if held else NULL

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
        self.release()  # (theta held by a run: written back first)
        import numpy as np

        cdef double* arrays[3]
        cdef Py_ssize_t rows_at = self._vectors_size()
        if self.saved is None:
            self.saved = np.empty(rows_at + _stored(&self.s, arrays) * self.s.k
                                  * self.s.n)
        cdef double[::1] saved = self.saved
        self._copy_vectors(&saved[0], False)
        self.journal = None
        cdef Py_ssize_t count
        cdef Py_ssize_t[::1] picked
        cdef double[::1] values
        if columns is not None and JOURNAL_SHARE * len(columns) < self.s.n:
            count = len(columns)
            # Buffers reused from call to call: fresh ones would be fresh pages.
            if (self.journal_buffers is None
                    or self.journal_buffers[0].shape[0] < count):
                self.journal_buffers = (np.empty(max(1, count), np.intp),
                                        np.empty(max(1, count) * self.s.k
                                                 * _stored(&self.s, arrays)))
            picked, values = self.journal_buffers
            picked = picked[:count]
            # (A copy, not a view of the caller's X, kept after.)
            np.copyto(np.asarray(picked), columns, casting="safe")
            if count:
                _copy_columns(&self.s, &picked[0], count, &values[0], False)
            self.journal = (picked, values)
            self.s.backup = &saved[rows_at]
        else:
            _copy_rows(&self.s, &saved[rows_at], False)
            self.s.backup = NULL
        self.s.backed_up = False
        self.saved_state = self.s

    def restore(self):
        """Put back the state of the last :meth:`save`."""
        self.release()  # (theta held by a run: written back first)
        cdef State current = self.s
        cdef double[::1] saved = self.saved
        if self.journal is None or current.backed_up:
            _copy_rows(&self.s, &saved[self._vectors_size()], True)
        cdef const Py_ssize_t[::1] picked
        cdef double[::1] values
        if self.journal is not None:
            picked, values = self.journal
            if picked.shape[0]:
                _copy_columns(&self.s, &picked[0], picked.shape[0], &values[0], True)
        self._copy_vectors(&saved[0], True)
        # The run may have grown the row scratch since: keep its buffers.
        self.s = self.saved_state
        self.s.row_theta, self.s.row_num = current.row_theta, current.row_num
        self.s.row_den, self.s.row_held = current.row_den, current.row_held
        self.s.row_size, self.s.row_x = current.row_size, current.row_x
        self.s.backup = NULL
        self.journal = None

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
                    # column: the loop then vectorizes, 10x faster for EG+-.)
                    i = j * n + (q if every else index[q])
                    omega[j, q] = self.s.scale[j] * _unscaled_weight(
                        &self.s, self.s.num[i], self.s.den[i])
        return out
