"""Goal 4: one CSR epoch of every psi against SGDRegressor's sparse epoch.

n = 2^18 features with 50 nonzeros per row: a psi whose trial cost grew with n
(a full renormalization per trial) would be thousands of times slower, so ratios
near 1 show that every psi updates in O(nnz) per trial.
"""

import tracemalloc

import numpy as np
from _timing import best_times, header, report, rows, sparse_data, stable_rate
from sklearn.linear_model import SGDClassifier, SGDRegressor

from sklearn_ga import PSI, GAClassifier, GARegressor

ONE_PASS = {"max_iter": 1, "tol": None, "shuffle": False}


def cases():
    X, y = sparse_data(rows(100_000), 2**18, 50)
    eta = 0.01
    sgd = SGDRegressor(penalty=None, learning_rate="constant", eta0=eta, **ONE_PASS)
    p = 2 * np.log(X.shape[1])  # about 2 ln n suits sparse targets: 24.95 here
    # Last, for information: an integer p takes its powers by multiplications.
    runs = [(psi, p, psi, 1.5) for psi in PSI] + [("pnorm", round(p),
                                                    f"pnorm p={round(p)}", None)]
    for psi, exponent, name, goal in runs:
        ga = GARegressor(psi=psi, eta=eta, U=10.0, p=exponent, **ONE_PASS)
        note = stable_rate(X, y, ga)
        ga_time, sgd_time = best_times(lambda ga=ga: ga.fit(X, y),
                                       lambda: sgd.fit(X, y))
        report(f"4. CSR epoch psi={name}{note} {X.shape[0]}x2^18, 50 nnz/row",
               ga_time, sgd_time, "SGDRegressor", goal)
    float32_values(X, y, eta)
    averaged(X, y, eta, p)
    many_classes()


def float32_values(X, y, eta):
    """Goal 7 on CSR rows: float32 values are read as they are (each row's
    converted just before its trial), so a fit's peak extra memory is the float64
    fit's (the model's k x n arrays and the per-row vectors; a float64 copy of the
    values alone would be 100% of X, data and indices), and its epoch that of the
    float64 values."""
    X32 = X.astype(np.float32)
    size = X32.data.nbytes + X32.indices.nbytes + X32.indptr.nbytes
    for psi in ("identity", "softmax"):
        model = GARegressor(psi=psi, eta=eta, U=10.0, **ONE_PASS)
        model.fit(X32, y)
        peak, peak64 = (_peak_bytes(lambda model=model, data=data: model.fit(data, y))
                        for data in (X32, X))
        print(f"| 7. peak extra memory of fit, CSR float32 psi={psi} (the float64 "
              f"values' fit: {peak64 / 2**20:.2f} MiB) | {peak / 2**20:.2f} MiB | "
              f"X {size / 2**20:.1f} MiB | {peak / size:.4f} | < 0.1 | "
              f"{'yes' if peak < 0.1 * size else 'NO'} |", flush=True)
        t32, t64 = best_times(lambda model=model: model.fit(X32, y),
                              lambda model=model: model.fit(X, y))
        report(f"7. float32 CSR epoch psi={psi} {X.shape[0]}x2^18, 50 nnz/row, "
               "vs the float64 values", t32, t64, "float64", 1.0)


def _peak_bytes(function):
    """The peak memory traced during ``function()``, in bytes."""
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def averaged(X, y, eta, p):
    """Goal 4.2: the CSR epoch with average=True against the plain one, every psi:
    each touched coordinate is settled (its term times the scales summed since it
    last changed) before its step, O(1), so the epoch stays O(nnz)."""
    for psi in PSI:
        plain, mean = (GARegressor(psi=psi, eta=eta, U=10.0, p=p, average=average,
                                   **ONE_PASS) for average in (False, True))
        note = stable_rate(X, y, plain, mean)
        mean_time, plain_time = best_times(
            *(lambda model=model: model.fit(X, y) for model in (mean, plain)))
        report(f"4.2 averaged CSR epoch psi={psi}{note} {X.shape[0]}x2^18, "
               "50 nnz/row", mean_time, plain_time, "plain", 1.5)
    # For information: SGD keeps its averaged weights in a second array too, so its
    # averaging adds the same random cache line per coordinate to its epoch.
    sgd_plain, sgd_mean = (
        SGDRegressor(penalty=None, learning_rate="constant", eta0=eta,
                     average=average, **ONE_PASS) for average in (False, True))
    ga = GARegressor(eta=eta, average=True, **ONE_PASS)
    ga_time, mean_time, plain_time = best_times(
        lambda: ga.fit(X, y), lambda: sgd_mean.fit(X, y), lambda: sgd_plain.fit(X, y))
    report(f"averaged CSR epoch psi=identity {X.shape[0]}x2^18, 50 nnz/row", ga_time,
           mean_time, "SGDRegressor(average=True)", None)
    report(f"SGDRegressor(average=True) CSR epoch {X.shape[0]}x2^18, 50 nnz/row",
           mean_time, plain_time, "SGDRegressor", None)


def many_classes(classes=20):
    """For information: a classifier's CSR epoch against SGDClassifier's one-vs-rest
    epoch (one class after another). A GD run (psi="identity") holds Theta
    transposed, so that a row's k x 50 parameters lie in 50 runs of k (Theta is
    beyond the CPU's caches at 2^18 features, k x n x 8 bytes in all, within them
    at 2^14); other psi learn the one-vs-rest classes of phi="logistic" one after
    another."""
    for log_n in (14, 18):
        X, _ = sparse_data(rows(20_000), 2**log_n, 50)
        y = np.random.default_rng(0).integers(0, classes, X.shape[0])
        sgd = SGDClassifier(loss="log_loss", penalty=None, learning_rate="constant",
                            eta0=0.01, **ONE_PASS)
        for psi, phi in (("identity", "logistic"), ("identity", "softmax"),
                         ("eg_pm", "logistic")):
            ga = GAClassifier(psi=psi, phi=phi, eta=0.01, U=10.0, **ONE_PASS)
            ga_time, sgd_time = best_times(
                *(lambda model=model, X=X, y=y: model.fit(X, y) for model in (ga, sgd)))
            report(f"CSR epoch, psi={psi}, phi={phi}, {classes} classes, "
                   f"{X.shape[0]}x2^{log_n}, 50 nnz/row", ga_time, sgd_time,
                   "SGDClassifier", None)

if __name__ == "__main__":
    header()
    cases()
