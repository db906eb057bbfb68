"""Goal 2 of issue 5: tuning eta by one lock-step pass vs one fit and GridSearchCV.

A 20-value eta grid through GARegressorCV (one pass over the data for the whole grid)
against one ``GARegressor.fit`` with a single eta (epochs until the on-line loss
stops improving, the defaults) and against ``GridSearchCV`` over the same grid with
``cv=5`` (one pass per fold and configuration), on the same dense data.
"""

import warnings

import numpy as np
from _timing import best_times, header, report, rows
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


if __name__ == "__main__":
    header()
    cases()
