"""Goals 1-3 of issue 4: one dense epoch of GA against scikit-learn's SGD and BLAS.

Every estimator runs exactly one in-order pass (max_iter=1, tol=None, shuffle=False)
with the same constant learning rate over the same C-contiguous float64 X, so both
do the same arithmetic: the times compare implementations, not algorithms.
"""

import numpy as np
from _timing import best_time, header, report, rows
from sklearn.linear_model import SGDClassifier, SGDRegressor

from sklearn_ga import GAClassifier, GARegressor

ONE_PASS = {"max_iter": 1, "tol": None, "shuffle": False}


def data(m, n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n))
    y = X[:, :5].sum(axis=1) + 0.1 * rng.standard_normal(m)
    return X, y


def main():
    header()
    for m, n in [(100_000, 100), (50_000, 1_000)]:
        m = rows(m)
        X, y = data(m, n)
        eta = 0.1 / n
        w = np.ones(n)
        shape = f"{m}x{n}"
        ga = best_time(lambda: GARegressor(eta=eta, **ONE_PASS).fit(X, y))
        sgd = best_time(lambda: SGDRegressor(
            penalty=None, learning_rate="constant", eta0=eta, **ONE_PASS).fit(X, y))
        matvec = best_time(lambda: X @ w)
        report(f"1. dense GD epoch {shape}", ga, sgd, "SGDRegressor", 0.5)
        report(f"1. dense GD epoch {shape}", ga, matvec, "X @ w", 3)

        labels = (y > 0).astype(int)
        ga = best_time(lambda: GAClassifier(eta=eta, **ONE_PASS).fit(X, labels))
        sgd = best_time(lambda: SGDClassifier(
            loss="log_loss", penalty=None, learning_rate="constant", eta0=eta,
            **ONE_PASS).fit(X, labels))
        report(f"2. dense logistic epoch {shape}", ga, sgd, "SGDClassifier", 0.5)

        if n == 1_000:
            eg_pm = best_time(lambda: GARegressor(
                psi="eg_pm", U=10.0, eta=eta, **ONE_PASS).fit(X, y))
            report(f"3. dense EG± epoch {shape}", eg_pm, ga_gd(X, y, eta),
                   "GA GD", 2)
        del X


def ga_gd(X, y, eta):
    return best_time(lambda: GARegressor(eta=eta, **ONE_PASS).fit(X, y))


if __name__ == "__main__":
    main()
