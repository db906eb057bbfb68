/* Blocks of rows for the lock-step grid of psi = identity (lockstep.pxi): the dot
   products of a block of rows with many vectors (the activations X_B Omega^T and
   the block's Gram matrix X_B X_B^T), and the update of many vectors by the block's
   steps (Omega <- Omega - S^T X_B). A level-1 loop loads two doubles per
   multiply-add; a register tile of 4 rows x 3 vectors loads 7 vectors of 4 per 12,
   so the multiply-adds, not the loads, set the pace.

   Every output is computed by the same operations wherever it lies (an edge tile
   is narrower, its entries summed as in a full one; one at the rows' edge repeats
   its last row and drops the copies), so it does not depend on which other
   vectors share the call: threads may split the vectors any way and give the
   results of one thread. The vector type (4 doubles, a GCC and Clang extension)
   is one AVX2 register, two SSE2 ones in the default clone. */
#ifndef SKLEARN_GA_GA_BLOCKS_H
#define SKLEARN_GA_GA_BLOCKS_H

#include "ga_config.h"

/* ga_dots_tile_COUNT: the dot products of 4 rows with COUNT <= 3 vectors (a
   literal, so that the tile's sums stay in registers), lanes of 4 summed pairwise,
   then the last n % 4 coordinates. */
#define GA_DOTS_TILE(COUNT)                                                        \
    GA_INLINE void ga_dots_tile_##COUNT(const double* const* rows,                \
                                        double* const* vectors, Py_ssize_t n,     \
                                        double sums[4][3]) {                      \
        ga_v4 acc[4][3] = {{{0.0}}};                                               \
        ga_v4 w0, w1, w2, xa;                                                      \
        Py_ssize_t i, q;                                                           \
        int a, b;                                                                  \
        for (i = 0; i + 4 <= n; i += 4) {                                          \
            GA_LOAD4(w0, vectors[0] + i);                                          \
            if (COUNT > 1)                                                         \
                GA_LOAD4(w1, vectors[COUNT > 1] + i);                              \
            if (COUNT > 2)                                                         \
                GA_LOAD4(w2, vectors[2 * (COUNT > 2)] + i);                        \
            for (a = 0; a < 4; a++) {                                              \
                GA_LOAD4(xa, rows[a] + i);                                         \
                acc[a][0] += xa * w0;                                              \
                if (COUNT > 1)                                                     \
                    acc[a][1] += xa * w1;                                          \
                if (COUNT > 2)                                                     \
                    acc[a][2] += xa * w2;                                          \
            }                                                                      \
        }                                                                          \
        for (a = 0; a < 4; a++)                                                    \
            for (b = 0; b < COUNT; b++) {                                          \
                sums[a][b] = (acc[a][b][0] + acc[a][b][2])                         \
                             + (acc[a][b][1] + acc[a][b][3]);                      \
                for (q = i; q < n; q++)                                            \
                    sums[a][b] += rows[a][q] * vectors[b][q];                      \
            }                                                                      \
    }
GA_DOTS_TILE(1)
GA_DOTS_TILE(2)
GA_DOTS_TILE(3)

/* ga_update_tile_COUNT: w[b][i] -= sum_r steps[b][r] x_r[i] for COUNT <= 4
   vectors (a literal, as in GA_DOTS_TILE) and the rows x_r = x + r n taken in
   order, as the on-line loop takes them: 8 coordinates at a time, the last ones
   one at a time. */
#define GA_UPDATE_TILE(COUNT)                                                      \
    GA_INLINE void ga_update_tile_##COUNT(double* const* w,                       \
                                          const double* const* steps,             \
                                          const double* x, Py_ssize_t R,          \
                                          Py_ssize_t n) {                         \
        ga_v4 acc[4][2], x0, x1;                                                   \
        Py_ssize_t i, r;                                                           \
        int b;                                                                     \
        double value;                                                              \
        for (i = 0; i + 8 <= n; i += 8) {                                          \
            for (b = 0; b < 4; b++)                                                \
                if (b < COUNT) {                                                   \
                    GA_LOAD4(acc[b][0], w[b] + i);                                 \
                    GA_LOAD4(acc[b][1], w[b] + i + 4);                             \
                }                                                                  \
            for (r = 0; r < R; r++) {                                              \
                GA_LOAD4(x0, x + r * n + i);                                       \
                GA_LOAD4(x1, x + r * n + i + 4);                                   \
                for (b = 0; b < 4; b++)                                            \
                    if (b < COUNT) {                                               \
                        acc[b][0] -= steps[b][r] * x0;                             \
                        acc[b][1] -= steps[b][r] * x1;                             \
                    }                                                              \
            }                                                                      \
            for (b = 0; b < 4; b++)                                                \
                if (b < COUNT) {                                                   \
                    GA_STORE4(w[b] + i, acc[b][0]);                                \
                    GA_STORE4(w[b] + i + 4, acc[b][1]);                            \
                }                                                                  \
        }                                                                          \
        for (; i < n; i++)                                                         \
            for (b = 0; b < COUNT; b++) {                                          \
                value = w[b][i];                                                   \
                for (r = 0; r < R; r++)                                            \
                    value -= steps[b][r] * x[r * n + i];                           \
                w[b][i] = value;                                                   \
            }                                                                      \
    }
GA_UPDATE_TILE(1)
GA_UPDATE_TILE(2)
GA_UPDATE_TILE(3)
GA_UPDATE_TILE(4)

#endif  /* SKLEARN_GA_GA_BLOCKS_H */

/* The primitives, once per SIMD level: ga_simd.h defines GA_FN (the name at the
   level) and GA_SIMD (its target) and includes this part once per level. */
#ifdef GA_FN
/* out[c * ldo + r] = x_r . w[c] for r < R, c < C, the rows x_r = x + r n. With
   strict (w[c] = x_c: the block's Gram matrix), only for r > c: row c of out holds
   x_c . x_r for the rows after c, and tiles wholly on or above the diagonal are
   skipped. Tiles of 4 rows x 3 vectors. */
GA_SIMD static void GA_FN(ga_block_dots)(const double* x, Py_ssize_t R,
                                         double* const* w, Py_ssize_t C, Py_ssize_t n,
                                         double* out, Py_ssize_t ldo, int strict) {
    Py_ssize_t r0, c0;
    int a, b, count;
    const double* rows[4];
    double sums[4][3];
    for (r0 = 0; r0 < R; r0 += 4)
        for (c0 = 0; c0 < C; c0 += 3) {
            if (strict && c0 >= r0 + 3)
                break;
            for (a = 0; a < 4; a++)
                rows[a] = x + (r0 + a < R ? r0 + a : R - 1) * n;
            count = C - c0 < 3 ? (int)(C - c0) : 3;
            if (count == 3)
                ga_dots_tile_3(rows, w + c0, n, sums);
            else if (count == 2)
                ga_dots_tile_2(rows, w + c0, n, sums);
            else
                ga_dots_tile_1(rows, w + c0, n, sums);
            for (a = 0; a < 4; a++)
                for (b = 0; b < count; b++)
                    if (r0 + a < R && (!strict || r0 + a > c0 + b))
                        out[(c0 + b) * ldo + r0 + a] = sums[a][b];
        }
}

/* w[c][i] -= sum_r steps[c * lds + r] x_r[i] for c < C (GA_UPDATE_TILE), in tiles
   of 4 vectors. */
GA_SIMD static void GA_FN(ga_block_update)(double* const* w, Py_ssize_t C,
                                           const double* x, Py_ssize_t R,
                                           Py_ssize_t n, const double* steps,
                                           Py_ssize_t lds) {
    Py_ssize_t c0;
    int b, count;
    const double* step[4];
    for (c0 = 0; c0 < C; c0 += 4) {
        count = C - c0 < 4 ? (int)(C - c0) : 4;
        for (b = 0; b < count; b++)
            step[b] = steps + (c0 + b) * lds;
        if (count == 4)
            ga_update_tile_4(w + c0, step, x, R, n);
        else if (count == 3)
            ga_update_tile_3(w + c0, step, x, R, n);
        else if (count == 2)
            ga_update_tile_2(w + c0, step, x, R, n);
        else
            ga_update_tile_1(w + c0, step, x, R, n);
    }
}

#endif  /* GA_FN */
