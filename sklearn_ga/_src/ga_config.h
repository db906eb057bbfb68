/* Compiler settings shared by the headers of the compiled core (doc/developers/
   compiled_core.rst). Included into the one C file of sklearn_ga._kernel. */
#ifndef SKLEARN_GA_GA_CONFIG_H
#define SKLEARN_GA_GA_CONFIG_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* The SIMD levels of the row primitives (ga_simd.h): each primitive marked GA_SIMD
   in ga_rows.h, ga_terms.h and ga_blocks.h is compiled once per level, and the
   module picks each primitive's level when it loads (SKLEARN_GA_SIMD pins one for
   all; else the best the CPU supports among those the primitive ships at). With
   GCC on x86-64 Linux the levels are the baseline ("default": SSE2), AVX2 + FMA
   ("x86-64-v3") and AVX-512 ("x86-64-v4"); elsewhere the baseline alone. A
   primitive ships at a level only where it was measured faster there on a CPU
   that has it (doc/developers/compiled_core.rst). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \
    && defined(__linux__) && __GNUC__ >= 12
#define GA_CLONES 1
#else
#define GA_CLONES 0
#endif

/* The primitives round each product and each sum (no fused multiply-add, which
   rounds once), at every level: so the levels give the same results, and gradient
   descent's primitives round as the CSR loops and scikit-learn's SGD do (a
   Perceptron then meets the exact ties, a = 0, that they meet). */
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

/* Four doubles (a GCC and Clang extension): one AVX2 register, two SSE2 ones at the
   default level; for loops whose layout the vectorizer would pick badly. Unaligned
   loads and stores through a type that may alias doubles, as the intrinsics'
   __m256d_u does (a memcpy compiles to 16-byte moves through the stack in a
   function of another target); macros, since a function returning a vector of 32
   bytes would change the ABI of the default level. */
typedef double ga_v4 __attribute__((vector_size(32), aligned(8), may_alias));
#define GA_LOAD4(v, p) ((v) = *(const ga_v4*)(p))
#define GA_STORE4(p, v) (*(ga_v4*)(p) = (v))
/* Their bits, for a select by the mask that a comparison of two ga_v4 gives. */
typedef long long ga_i4 __attribute__((vector_size(32), aligned(8), may_alias));
#define GA_SIGN_BIT ((long long)1 << 63)

/* Finite math for a loop that vectorizes only under it (a max: see ga_max). */
#if defined(__GNUC__) && !defined(__clang__)
#define GA_FINITE __attribute__((optimize("finite-math-only", "no-signed-zeros")))
#else
#define GA_FINITE
#endif

#endif  /* SKLEARN_GA_GA_CONFIG_H */
