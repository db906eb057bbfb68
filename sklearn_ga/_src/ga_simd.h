/* The SIMD levels of the row primitives and the ones the module runs. Each primitive
   of ga_rows.h, ga_terms.h and ga_blocks.h (marked GA_SIMD) is compiled once per
   level, named GA_FN(name) = name_LEVEL, and its callers call it through the table
   ga_simd, which holds one version of each: ga_dot(...) is ga_simd.ga_dot(...).
   The module fills the table once, at import (ga_simd_use_one: every primitive at
   the level SKLEARN_GA_SIMD names, else each at the best level that it ships at and
   the CPU supports), so every call of a primitive in a run is at one level. A call
   through the table is one indirect call, as a call of a target_clones function is
   (the loader's ifunc); the loops inside each version are inlined and unrolled as
   in one build for that level alone. Every version computes the same operations in
   the same order and rounds each product (GA_UNFUSED: no level fuses a multiply-add),
   so the levels give the same results, bit for bit (tests/test_clones.py), at
   their own speeds (benchmarks/bench_dense.py). */
#ifndef SKLEARN_GA_GA_SIMD_H
#define SKLEARN_GA_GA_SIMD_H

#include "ga_config.h"

/* GA_FN(name): the name of the primitive at the level GA_LEVEL. */
#define GA_PASTE(name, level) name##_##level
#define GA_NAMED(name, level) GA_PASTE(name, level)
#define GA_FN(name) GA_NAMED(name, GA_LEVEL)

#define GA_LEVEL default
#define GA_SIMD GA_UNFUSED
#include "ga_rows.h"
#include "ga_terms.h"
#include "ga_blocks.h"
#undef GA_SIMD
#undef GA_LEVEL

#if GA_CLONES
#define GA_LEVEL v3
#define GA_SIMD __attribute__((target("arch=x86-64-v3"))) GA_UNFUSED
#include "ga_rows.h"
#include "ga_terms.h"
#include "ga_blocks.h"
#undef GA_SIMD
#undef GA_LEVEL
#endif

/* AVX-512 (x86-64-v4): built wherever x86-64-v3 is; each primitive runs it only
   where GA_SHIPPED_V4 lists it (or where SKLEARN_GA_SIMD pins the level). */
#if GA_CLONES
#define GA_LEVEL v4
#define GA_SIMD __attribute__((target("arch=x86-64-v4"))) GA_UNFUSED
#include "ga_rows.h"
#include "ga_terms.h"
#include "ga_blocks.h"
#undef GA_SIMD
#undef GA_LEVEL
#endif
#undef GA_FN

/* X(name) for every primitive of the table. */
#define GA_PRIMITIVES(X)                                                           \
    X(ga_dot) X(ga_dot_top) X(ga_axpy) X(ga_axpy_dot) X(ga_sum) X(ga_uniform)    \
    X(ga_fill) X(ga_max) X(ga_dot_diff) X(ga_held_dot) X(ga_quotients)           \
    X(ga_index_scan32) X(ga_index_scan64) X(ga_softmax_terms) X(ga_eg_pm_terms)  \
    X(ga_exp_terms) X(ga_pnorm_terms) X(ga_theta_from_terms) X(ga_scale_terms)   \
    X(ga_step_factors) X(ga_scale_pm_dot) X(ga_geodesic_sums) X(ga_block_dots)   \
    X(ga_block_update)

#define GA_FIELD(name) __typeof__(&name##_default) name;
#define GA_INDEX(name) GA_INDEX_##name,
enum { GA_PRIMITIVES(GA_INDEX) };
#undef GA_INDEX
typedef struct {
    GA_PRIMITIVES(GA_FIELD)
} ga_primitives;
#undef GA_FIELD

#define GA_AT_DEFAULT(name) .name = name##_default,
#define GA_AT_V3(name) .name = name##_v3,
#define GA_AT_V4(name) .name = name##_v4,
#define GA_STRING(name) #name,

/* The levels of this build, from the baseline up, with the name SKLEARN_GA_SIMD
   gives each (GCC's names of the x86-64 levels). */
static const ga_primitives ga_simd_levels[] = {
    {GA_PRIMITIVES(GA_AT_DEFAULT)},
#if GA_CLONES
    {GA_PRIMITIVES(GA_AT_V3)},
    {GA_PRIMITIVES(GA_AT_V4)},
#endif
};
static const char* const ga_simd_names[] = {"default",
#if GA_CLONES
    "x86-64-v3", "x86-64-v4",
#endif
};
/* The primitives that run x86-64-v4 on a CPU that has it: only those whose epochs
   were measured faster there than at x86-64-v3 (bench_dense.py's per-primitive
   rows, on the CPU benchmarks/README.md names: pnorm's powers and the geodesic
   sums compute more per byte of the row than the others). The others run
   x86-64-v3: the exponential terms were measured slower at x86-64-v4, and the row
   loops, fed by memory, no faster. */
#define GA_SHIPPED_V4(X) X(ga_pnorm_terms) X(ga_geodesic_sums)

static const char* const ga_primitive_names[] = {GA_PRIMITIVES(GA_STRING)};

enum {
    GA_SIMD_COUNT = sizeof(ga_simd_levels) / sizeof(ga_simd_levels[0]),
    GA_PRIMITIVE_COUNT = sizeof(ga_primitive_names) / sizeof(ga_primitive_names[0])
};

/* The table the callers call through (the baseline until the module chooses), and
   the level index each primitive of it runs. */
static ga_primitives ga_simd = {GA_PRIMITIVES(GA_AT_DEFAULT)};
static int ga_simd_chosen[GA_PRIMITIVE_COUNT];
#undef GA_AT_DEFAULT
#undef GA_AT_V3
#undef GA_AT_V4
#undef GA_STRING

/* Whether this CPU runs level (an index into ga_simd_levels). */
static int ga_simd_supported(int level) {
    if (level == 0)
        return 1;
#if GA_CLONES
    __builtin_cpu_init();
    if (level == 1)
        return __builtin_cpu_supports("x86-64-v3");
    return __builtin_cpu_supports("x86-64-v4");
#else
    return 0;
#endif
}

/* Run primitive q (an index into ga_primitive_names) at level from now on (the
   caller checks that the CPU has it). */
static void ga_simd_use_one(int q, int level) {
    int index = 0;
#define GA_USE_ONE(name)                                                          \
    if (index++ == q)                                                             \
        ga_simd.name = ga_simd_levels[level].name;
    GA_PRIMITIVES(GA_USE_ONE)
#undef GA_USE_ONE
    ga_simd_chosen[q] = level;
}

/* The highest level primitive q ships at: x86-64-v4 where GA_SHIPPED_V4 lists
   it, else x86-64-v3 (or the baseline, in a build without clones). */
static int ga_simd_shipped(int q) {
#if GA_CLONES
    int v4 = 0;
#define GA_IS_V4(name) v4 |= q == GA_INDEX_##name;
    GA_SHIPPED_V4(GA_IS_V4)
#undef GA_IS_V4
    return v4 ? 2 : 1;
#else
    (void)q;
    return 0;
#endif
}

/* The callers' names: calls through the table. */
#define GA_CALL(name) (ga_simd.name)
#define ga_dot GA_CALL(ga_dot)
#define ga_dot_top GA_CALL(ga_dot_top)
#define ga_axpy GA_CALL(ga_axpy)
#define ga_axpy_dot GA_CALL(ga_axpy_dot)
#define ga_sum GA_CALL(ga_sum)
#define ga_uniform GA_CALL(ga_uniform)
#define ga_fill GA_CALL(ga_fill)
#define ga_max GA_CALL(ga_max)
#define ga_dot_diff GA_CALL(ga_dot_diff)
#define ga_held_dot GA_CALL(ga_held_dot)
#define ga_quotients GA_CALL(ga_quotients)
#define ga_index_scan32 GA_CALL(ga_index_scan32)
#define ga_index_scan64 GA_CALL(ga_index_scan64)
#define ga_softmax_terms GA_CALL(ga_softmax_terms)
#define ga_eg_pm_terms GA_CALL(ga_eg_pm_terms)
#define ga_exp_terms GA_CALL(ga_exp_terms)
#define ga_pnorm_terms GA_CALL(ga_pnorm_terms)
#define ga_theta_from_terms GA_CALL(ga_theta_from_terms)
#define ga_scale_terms GA_CALL(ga_scale_terms)
#define ga_step_factors GA_CALL(ga_step_factors)
#define ga_scale_pm_dot GA_CALL(ga_scale_pm_dot)
#define ga_geodesic_sums GA_CALL(ga_geodesic_sums)
#define ga_block_dots GA_CALL(ga_block_dots)
#define ga_block_update GA_CALL(ga_block_update)

#endif  /* SKLEARN_GA_GA_SIMD_H */
