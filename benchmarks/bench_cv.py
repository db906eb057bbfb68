"""Goal 5.2: tuning eta by one lock-step pass vs one fit and GridSearchCV.

A 20-value eta grid through GARegressorCV (one pass over the data for the whole grid)
against one ``GARegressor.fit`` with a single eta (epochs until the on-line loss
stops improving, the defaults) and against ``GridSearchCV`` over the same grid with
``cv=5`` (one pass per fold and configuration), on the same dense data.

Goals of the grid's own speed, on the same data: the lock-step pass of 20 stable
etas (GD's rows learned in blocks, products of rows and weight vectors) against 20
separate one-pass ``partial_fit`` calls, on one thread; and ``n_jobs=2`` against
``n_jobs=1`` (2 cores needed; another process on the machine takes from it).

Information rows, EG± with 6 configurations (3 etas x 2 Us) against one GARegressor:
a CSR pass (n = 2^18, 50 nonzeros per row), where 6 is the ratio without overhead;
and one-row CSR partial_fit calls at 2^16 features, where any O(n) work per call
would show (the grid keeps every configuration's compiled loop).
"""

import warnings

import numpy as np
from _timing import best_times, header, one_row_calls, report, rows, sparse_data
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import GridSearchCV

from sklearn_ga import GARegressor, GARegressorCV


def cases():
    rng = np.random.default_rng(0)
    m, n = rows(50_000), 1_000
    X = rng.standard_normal((m, n))
    y = X[:, :5].sum(axis=1) + 0.1 * rng.standard_normal(m)
    etas = np.logspace(-6, -2, 20)  # GD is stable below about 1 / ||x||^2 = 1e-3
    best = 1e-4

    def grid_search():
        with warnings.catch_warnings():
            # Diverging etas fail their fits and score NaN, as in any real search.
            warnings.simplefilter("ignore", FitFailedWarning)
            warnings.simplefilter("ignore", UserWarning)
            GridSearchCV(GARegressor(max_iter=1, tol=None, shuffle=False),
                         {"eta": etas}, cv=5, error_score=np.nan).fit(X, y)

    search, single = best_times(
        lambda: GARegressorCV(etas=etas).fit(X, y),
        lambda: GARegressor(eta=best, random_state=0).fit(X, y),
        repeat=3,
    )
    report(f"5.2 CV, 20 etas, {m}x{n}", search, single, "one fit", 3)
    (grid,) = best_times(grid_search, repeat=1)
    report(f"5.2 CV, 20 etas, {m}x{n}", search, grid, "GridSearchCV cv=5", 10,
           higher_is_better=True)

    stable = np.logspace(-6, -3.5, 20)  # (none diverges: the same work in both)
    # The grid's pass alone (max_iter=1: without the selected configuration's
    # finishing epochs), against the passes it replaces; n_jobs shares that pass.
    lockstep, separate = best_times(
        lambda: GARegressorCV(etas=stable, max_iter=1).fit(X, y),
        lambda: [GARegressor(eta=eta).partial_fit(X, y) for eta in stable],
        repeat=3,
    )
    report(f"CV lock-step, 20 stable etas, {m}x{n}", lockstep, separate,
           "20 one-pass fits", 0.4)
    two, one = best_times(
        lambda: GARegressorCV(etas=etas, n_jobs=2, max_iter=1).fit(X, y),
        lambda: GARegressorCV(etas=etas, n_jobs=1, max_iter=1).fit(X, y),
        repeat=3,
    )
    report(f"CV n_jobs=2, 20 etas, {m}x{n}", two, one, "n_jobs=1", 1.7,
           higher_is_better=True)

    grid = {"psi": "eg_pm", "etas": [1e-3, 1e-2, 1e-1], "Us": [1.0, 10.0]}
    X, y = sparse_data(rows(100_000), 2**18, 50)
    search, single = best_times(
        lambda: GARegressorCV(**grid).fit(X, y),
        lambda: GARegressor(psi="eg_pm", eta=1e-2).partial_fit(X, y),
        repeat=3,
    )
    report(f"CSR pass, psi=eg_pm, 6 configurations, {X.shape[0]}x2^18", search,
           single, "GARegressor", None)

    X, y = sparse_data(201, 2**16, 50)
    grid, single = best_times(
        one_row_calls(X, y, GARegressorCV(**grid), 200),
        one_row_calls(X, y, GARegressor(psi="eg_pm", eta=1e-2), 200),
    )
    report("one-row CSR partial_fit call, psi=eg_pm, 6 configurations, n=2^16",
           grid / 200, single / 200, "GARegressor", None)


if __name__ == "__main__":
    header()
    cases()
