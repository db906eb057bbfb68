/* Blocks of rows for the lock-step grid of psi = identity (lockstep.pxi): the dot
   products of a block of rows with many vectors (the activations X_B Omega^T and
   the block's Gram matrix X_B X_B^T), and the update of many vectors by the block's
   steps (Omega <- Omega - S^T X_B). A level-1 loop loads two doubles per
   multiply-add; a register tile of 4 rows x 3 vectors loads 7 vectors of 4 per 12,
   so the multiply-adds, not the loads, set the pace.

   Every output is computed by the same operations wherever it lies in a tile (an
   edge tile repeats its last row or vector and drops the copies' results), so it
   does not depend on which other vectors share the call: threads may split the
   vectors any way and give the results of one thread. The vector type (4 doubles,
   a GCC and Clang extension) is one AVX2 register, two SSE2 ones in the default
   clone. */
#ifndef SKLEARN_GA_GA_BLOCKS_H
#define SKLEARN_GA_GA_BLOCKS_H

#include "ga_config.h"

typedef double ga_v4 __attribute__((vector_size(32), aligned(8)));

/* Unaligned loads and stores (macros: a function returning a vector of 32 bytes
   would change the ABI of the default clone). */
#define GA_LOAD4(v, p) memcpy(&(v), (p), sizeof(ga_v4))
#define GA_STORE4(p, v) memcpy((p), &(v), sizeof(ga_v4))

/* out[c * ldo + r] = x_r . w[c] for r < R, c < C, the rows x_r = x + r n. With
   strict (w[c] = x_c: the block's Gram matrix), only for r > c: row c of out holds
   x_c . x_r for the rows after c, and tiles wholly on or above the diagonal are
   skipped. */
GA_SIMD static void ga_block_dots(const double* x, Py_ssize_t R,
                                  double* const* w, Py_ssize_t C, Py_ssize_t n,
                                  double* out, Py_ssize_t ldo, int strict) {
    Py_ssize_t r0, c0, i, q;
    int a, b;
    const double* rows[4];
    const double* vectors[3];
    for (r0 = 0; r0 < R; r0 += 4)
        for (c0 = 0; c0 < C; c0 += 3) {
            if (strict && c0 >= r0 + 3)
                break;
            ga_v4 acc[4][3] = {{{0.0}}};
            double sum;
            for (a = 0; a < 4; a++)
                rows[a] = x + (r0 + a < R ? r0 + a : R - 1) * n;
            for (b = 0; b < 3; b++)
                vectors[b] = w[c0 + b < C ? c0 + b : C - 1];
            for (i = 0; i + 4 <= n; i += 4) {
                ga_v4 w0, w1, w2, xa;
                GA_LOAD4(w0, vectors[0] + i);
                GA_LOAD4(w1, vectors[1] + i);
                GA_LOAD4(w2, vectors[2] + i);
                for (a = 0; a < 4; a++) {
                    GA_LOAD4(xa, rows[a] + i);
                    acc[a][0] += xa * w0;
                    acc[a][1] += xa * w1;
                    acc[a][2] += xa * w2;
                }
            }
            for (a = 0; a < 4; a++)
                for (b = 0; b < 3; b++) {
                    sum = (acc[a][b][0] + acc[a][b][2]) + (acc[a][b][1] + acc[a][b][3]);
                    for (q = i; q < n; q++)
                        sum += rows[a][q] * vectors[b][q];
                    if (r0 + a < R && c0 + b < C && (!strict || r0 + a > c0 + b))
                        out[(c0 + b) * ldo + r0 + a] = sum;
                }
        }
}

/* w[c][i] -= sum_r steps[c * lds + r] x_r[i] for c < C, the rows x_r = x + r n
   taken in order, as the on-line loop takes them. Tiles of 4 vectors x 8
   coordinates; the last coordinates one at a time. */
GA_SIMD static void ga_block_update(double* const* w, Py_ssize_t C, const double* x,
                                    Py_ssize_t R, Py_ssize_t n, const double* steps,
                                    Py_ssize_t lds) {
    Py_ssize_t c0, i, r;
    int b;
    double* vectors[4];
    const double* step[4];
    for (c0 = 0; c0 < C; c0 += 4) {
        for (b = 0; b < 4; b++) {
            vectors[b] = w[c0 + b < C ? c0 + b : C - 1];
            step[b] = steps + (c0 + b < C ? c0 + b : C - 1) * lds;
        }
        for (i = 0; i + 8 <= n; i += 8) {
            ga_v4 acc[4][2];
            for (b = 0; b < 4; b++) {
                GA_LOAD4(acc[b][0], vectors[b] + i);
                GA_LOAD4(acc[b][1], vectors[b] + i + 4);
            }
            for (r = 0; r < R; r++) {
                ga_v4 x0, x1;
                GA_LOAD4(x0, x + r * n + i);
                GA_LOAD4(x1, x + r * n + i + 4);
                for (b = 0; b < 4; b++) {
                    acc[b][0] -= step[b][r] * x0;
                    acc[b][1] -= step[b][r] * x1;
                }
            }
            for (b = 0; b < 4 && c0 + b < C; b++) {
                GA_STORE4(vectors[b] + i, acc[b][0]);
                GA_STORE4(vectors[b] + i + 4, acc[b][1]);
            }
        }
        for (; i < n; i++)
            for (b = 0; b < 4 && c0 + b < C; b++) {
                double value = vectors[b][i];
                for (r = 0; r < R; r++)
                    value -= step[b][r] * x[r * n + i];
                vectors[b][i] = value;
            }
    }
}

#endif  /* SKLEARN_GA_GA_BLOCKS_H */
