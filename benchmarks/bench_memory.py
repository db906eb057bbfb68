"""Goal 7: peak extra memory of fit on a C-contiguous float64 X, and on a float32 X
(read a block of rows at a time, never copied whole), whose epoch is timed against
the same rows' in float64.

tracemalloc sees every NumPy allocation; the peak during fit, over the size of X,
shows that X is never copied (a copy alone would be 100%; a float64 copy of a
float32 X 200%).
"""

import tracemalloc

import numpy as np
from _timing import best_times, report, rows

from sklearn_ga import GARegressor


def peak_ratio(model, X, y):
    """The peak memory traced during ``model.fit(X, y)``, in bytes, and over X's."""
    tracemalloc.start()
    try:
        model.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, peak / X.nbytes


def memory_row(case, X, peak, ratio):
    print(f"| 7. peak extra memory of fit, {case} | {peak / 2**20:.2f} MiB | "
          f"X {X.nbytes / 2**20:.1f} MiB | {ratio:.4f} | < 0.1 | "
          f"{'yes' if ratio < 0.1 else 'NO'} |", flush=True)


def cases():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((rows(100_000), 100))
    y = X[:, :5].sum(axis=1)
    model = GARegressor(eta=1e-3, max_iter=5, tol=None, random_state=0)
    memory_row(f"X {X.shape[0]}x100 float64", X, *peak_ratio(model, X, y))

    # The float32 rows of the case (2,000,000 x 50 at scale 1): the peak
    # beside X, and one epoch against the same rows in float64.
    X32 = rng.standard_normal((rows(2_000_000), 50), dtype=np.float32)
    y = X32[:, :5].sum(axis=1, dtype=np.float64)
    shape = f"{X32.shape[0]}x50"
    model = GARegressor(eta=1e-3, max_iter=1, tol=None, random_state=0)
    memory_row(f"X {shape} float32", X32, *peak_ratio(model, X32, y))
    X64 = X32.astype(np.float64)
    t32, t64 = best_times(lambda: model.fit(X32, y), lambda: model.fit(X64, y))
    report(f"7. float32 epoch {shape}, vs the float64 rows", t32, t64,
           "float64", 1.0)


if __name__ == "__main__":
    cases()
