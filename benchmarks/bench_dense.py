"""Goals 1-3: one dense epoch of GA against scikit-learn's SGD and BLAS.

Every estimator runs exactly one in-order pass (max_iter=1, tol=None, shuffle=False)
with the same constant learning rate over the same C-contiguous float64 X, so both
do the same arithmetic: the times compare implementations, not algorithms.
"""

import numpy as np
from _timing import best_times, header, report, rows
from sklearn.linear_model import SGDClassifier, SGDRegressor

from sklearn_ga import GAClassifier, GARegressor

ONE_PASS = {"max_iter": 1, "tol": None, "shuffle": False}
SGD = {"penalty": None, "learning_rate": "constant", **ONE_PASS}


def dense_case(m, n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows(m), n))
    y = X[:, :5].sum(axis=1) + 0.1 * rng.standard_normal(X.shape[0])
    labels = (y > 0).astype(int)
    eta = 0.1 / n
    shape = f"{X.shape[0]}x{n}"
    w = np.ones(n)

    ga, sgd, matvec = best_times(
        lambda: GARegressor(eta=eta, **ONE_PASS).fit(X, y),
        lambda: SGDRegressor(eta0=eta, **SGD).fit(X, y),
        lambda: X @ w,
    )
    report(f"1. dense GD epoch {shape}", ga, sgd, "SGDRegressor", 0.5)
    report(f"1. dense GD epoch {shape}", ga, matvec, "X @ w", 3)

    ga_logistic, sgd_logistic = best_times(
        lambda: GAClassifier(eta=eta, **ONE_PASS).fit(X, labels),
        lambda: SGDClassifier(loss="log_loss", eta0=eta, **SGD).fit(X, labels),
    )
    report(f"2. dense logistic epoch {shape}", ga_logistic, sgd_logistic,
           "SGDClassifier", 0.5)

    if n >= 1000:
        # U = 10 bounds ||w||_1 well above the target's 5: EG± can fit it.
        eg_pm, gd = best_times(
            lambda: GARegressor(psi="eg_pm", U=10.0, eta=eta, **ONE_PASS).fit(X, y),
            lambda: GARegressor(eta=eta, **ONE_PASS).fit(X, y),
        )
        report(f"3. dense EG± epoch {shape}", eg_pm, gd, "GA GD", 2)
        # For information: the other psi. pnorm takes a power per coordinate and
        # trial (p = 2 ln n is not an integer); the geodesic psi a sine and cosine
        # per trial and a pass that rescales the row.
        for psi in ("softmax", "exp", "pnorm", "sphere", "simplex"):
            ga = GARegressor(psi=psi, U=10.0, p=2 * np.log(n),
                             eta=eta / 10 if psi == "exp" else eta, **ONE_PASS)
            other, gd = best_times(lambda ga=ga: ga.fit(X, y),
                                   lambda: GARegressor(eta=eta, **ONE_PASS).fit(X, y))
            report(f"dense psi={psi} epoch {shape}", other, gd, "GA GD", None)


def cases():
    dense_case(100_000, 100)
    dense_case(50_000, 1_000)


if __name__ == "__main__":
    header()
    cases()
