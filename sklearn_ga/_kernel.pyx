# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Compiled trial loop of the general additive algorithm GA(psi, phi, Theta, eta).

One loop serves every registered (psi, phi) pair (KW01 Figure 5). For each trial t:

    a = psi(Theta) x + b ;  y_hat = phi(a) ;  loss += L_phi(y, y_hat)
    Theta <- Theta - eta * s * (y_hat - y) x^T ;  b <- b - eta * s * (y_hat - y)

The module is one C translation unit, so that the compiler inlines the helpers into
the loop; its parts are included from ``_src/`` by concern. The design (factored
weight storage, lazy theta on CSR, the options) and a map of the files are in
doc/developers/compiled_core.rst. Validation, allocation and dtype handling live in
Python; this module only loops, and reports a failure (a non-finite activation,
prediction, loss or parameter) as a status with the trial index.
"""

from cython cimport floating
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free, malloc, qsort
from libc.string cimport memcpy
from libc.math cimport (exp, expm1, log, log1p, fabs, fmin, fmax, tanh, atan, cos, sin,
                        sqrt, pow, ldexp, ilogb, isfinite, INFINITY, NAN)

include "_src/primitives.pxi"
include "_src/codes.pxi"
include "_src/state.pxi"
include "_src/psi.pxi"
include "_src/lazy_csr.pxi"
include "_src/averaging.pxi"
include "_src/penalty.pxi"
include "_src/phi.pxi"
include "_src/dense_rows.pxi"
include "_src/csr_rows.pxi"
include "_src/options.pxi"
include "_src/trial.pxi"
include "_src/trial_loop.pxi"
include "_src/bounds.pxi"
include "_src/one_row.pxi"
include "_src/dict_rows.pxi"
include "_src/lockstep.pxi"
