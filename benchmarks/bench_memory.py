"""Goal 7: peak extra memory of fit on a C-contiguous float64 X.

tracemalloc sees every NumPy allocation; the peak during fit, over the size of X,
shows that X is never copied (a copy alone would be 100%).
"""

import tracemalloc

import numpy as np
from _timing import rows

from sklearn_ga import GARegressor


def cases():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((rows(100_000), 100))
    y = X[:, :5].sum(axis=1)
    model = GARegressor(eta=1e-3, max_iter=5, tol=None, random_state=0)
    tracemalloc.start()
    model.fit(X, y)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    ratio = peak / X.nbytes
    print(f"| 7. peak extra memory of fit, X {X.shape[0]}x100 float64 | "
          f"{peak / 2**20:.2f} MiB | X {X.nbytes / 2**20:.1f} MiB | {ratio:.4f} | "
          f"< 0.1 | {'yes' if ratio < 0.1 else 'NO'} |", flush=True)


if __name__ == "__main__":
    cases()
