/* Compiler settings shared by the headers of the compiled core (doc/developers/
   compiled_core.rst). Included into the one C file of sklearn_ga._kernel. */
#ifndef SKLEARN_GA_GA_CONFIG_H
#define SKLEARN_GA_GA_CONFIG_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Row primitives of the trial loop, written so the compiler vectorizes them. With
   GCC on x86-64 Linux each one is also compiled for AVX2 + FMA (x86-64-v3) and the
   fastest version the CPU supports is picked when the module loads, so one build
   runs on any x86-64 and uses the wide registers where they exist. The primitives
   that compute more than they load (GA_SIMD_WIDE: the exponential terms and
   series, EG+-'s pass, pnorm's powers, the geodesic sums; ga_terms.h) are compiled
   for AVX-512 (x86-64-v4) too; the loops that stream rows (dot, axpy, sums) gain
   nothing from wider registers while memory feeds them. Every lane keeps its own
   sums and the roundings are those of the source, so a clone changes the speed,
   not the results. ga_clone reports the clone the loader picks. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \
    && defined(__linux__) && __GNUC__ >= 12
#define GA_CLONES 1
#define GA_SIMD __attribute__((target_clones("arch=x86-64-v3", "default")))
#define GA_SIMD_WIDE \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define GA_CLONES 0
#define GA_SIMD
#define GA_SIMD_WIDE
#endif

/* The clone the loader picks for a GA_SIMD (wide = 0) or GA_SIMD_WIDE (wide = 1)
   primitive, by the tests of GCC's resolvers (the most capable clone whose
   instruction set the CPU supports): "x86-64-v4", "x86-64-v3", "default", or
   "none" in a build without clones. */
static const char* ga_clone(int wide) {
#if GA_CLONES
    __builtin_cpu_init();
    if (wide && __builtin_cpu_supports("x86-64-v4"))
        return "x86-64-v4";
    if (__builtin_cpu_supports("x86-64-v3"))
        return "x86-64-v3";
    return "default";
#else
    (void)wide;
    return "none";
#endif
}

/* Gradient descent's primitives round each product and each sum, as the CSR
   loops and scikit-learn's SGD do: a fused multiply-add (the AVX2 + FMA clone)
   rounds once, and a Perceptron then steps off the exact ties (a = 0) they meet.
   The other primitives keep their FMAs (-ffp-contract=off for the whole module
   would slow the EG+- and pnorm passes). */
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

/* Four doubles (a GCC and Clang extension): one AVX2 register, two SSE2 ones in the
   default clone; for loops whose layout the vectorizer would pick badly. Unaligned
   loads and stores (macros: a function returning a vector of 32 bytes would change
   the ABI of the default clone). */
typedef double ga_v4 __attribute__((vector_size(32), aligned(8)));
#define GA_LOAD4(v, p) memcpy(&(v), (p), sizeof(ga_v4))
#define GA_STORE4(p, v) memcpy((p), &(v), sizeof(ga_v4))

/* Finite math for a loop that vectorizes only under it (a max: see ga_max). */
#if defined(__GNUC__) && !defined(__clang__)
#define GA_FINITE __attribute__((optimize("finite-math-only", "no-signed-zeros")))
#else
#define GA_FINITE
#endif

#endif  /* SKLEARN_GA_GA_CONFIG_H */
