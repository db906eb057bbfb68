"""What the defaults give: GA with its defaults against a small SGD grid.

On scikit-learn's bundled data sets (diabetes: R^2; breast_cancer, wine, digits:
accuracy), each estimator in a ``StandardScaler`` pipeline, scored by 5-fold CV
(shuffled folds, seed 0, the same folds for every estimator). The reference is the
best mean score of a small SGD grid (``alpha`` x ``eta0``, SGD's own schedule and
squared or log loss), chosen on the test folds themselves: an optimistic reference,
which the defaults should come within 0.02 accuracy (0.03 R^2) of. SGD's own
defaults are a floor. The GA columns are the defaults of GD (``psi="identity"``) and
EG± (``psi="eg_pm"``), plain and CV, with nothing set but ``random_state`` where
there is one.

The goals (within 0.02 / 0.03 of the grid; never below SGD's defaults) are checked
per cell; ``make bench`` prints the table after the timing rows, and
doc/user_guide/defaults.rst is a copy of its output.

Then every psi with the estimator's default phi (``--all``: with every phi whose
range holds the targets), on those data sets and on iris, linnerud (three outputs)
and HKW §V's sparse target: a cell is (NO) more than the margin below the grid,
(warns) where the fit warned (other than about convergence) and (error) where it
refused the data. BENCH_SCALE < 1 learns a sample of each data set's rows.

``--candidates``: the rates of fit's later epochs measured against each other (EG±
on digits), the table of doc/user_guide/defaults.rst that chose them.

``--cost``: what U="auto" costs on wide rows, as bench_online.py's "1000-row CSR
partial_fit call" rows (50 calls of 1000 CSR rows, 2^18 features, 50 nonzeros per
row, from a fresh model at eta=0.01): the time per call, best of 5 in one run,
against the same calls with U=1 given; the sphere's GCV penalty chosen on every
row of the first call (before) and on its first CHOSEN_ROWS (now).

``--wide``: the sphere's U="auto" on wide dense rows (1000 rows of 1200 to 3000
Gaussian features, five targets): R^2 on 1000 more rows with the penalty that
GCV chooses on every row and on the first 256 or 512.
"""

import itertools
import re
import sys
import time
import warnings

import numpy as np
from _timing import SCALE, sparse_data
from sklearn.datasets import (
    load_breast_cancer,
    load_diabetes,
    load_digits,
    load_iris,
    load_linnerud,
    load_wine,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier, SGDRegressor
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score
from sklearn.multioutput import MultiOutputRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_ga import (
    PHI,
    PSI,
    GAClassifier,
    GAClassifierCV,
    GARegressor,
    GARegressorCV,
    _auto_scale,
    _rates,
)

DATA = {"diabetes": load_diabetes, "breast_cancer": load_breast_cancer,
        "wine": load_wine, "digits": load_digits}
REGRESSION = ("diabetes", "linnerud", "sparse")
# How far below the grid a default may score: accuracy, R^2.
MARGIN = {"accuracy": 0.02, "R^2": 0.03}
ALPHAS = (1e-5, 1e-4, 1e-3, 1e-2)
ETA0S = (1e-3, 1e-2, 1e-1)


def score(model, X, y, regression):
    folds = (KFold if regression else StratifiedKFold)(5, shuffle=True,
                                                        random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return float(cross_val_score(make_pipeline(StandardScaler(), model), X, y,
                                     cv=folds).mean())


def sgd(regression, outputs=1, **params):
    if regression:
        model = SGDRegressor(random_state=0, **params)
        return model if outputs == 1 else MultiOutputRegressor(model)
    return SGDClassifier(loss="log_loss", random_state=0, **params)


def sgd_grid(X, y, regression):
    """The best mean score of the SGD grid (the reference of every table)."""
    outputs = 1 if y.ndim == 1 else y.shape[1]
    return max(score(sgd(regression, outputs, alpha=alpha, eta0=eta0,
                         learning_rate="invscaling"), X, y, regression)
               for alpha, eta0 in itertools.product(ALPHAS, ETA0S))


def ga_models(regression):
    """The GA columns: name -> estimator with its defaults."""
    plain, cv = ((GARegressor, GARegressorCV) if regression
                 else (GAClassifier, GAClassifierCV))
    return {"GA": plain(random_state=0), "GA eg_pm": plain("eg_pm", random_state=0),
            "GA CV": cv(random_state=0), "GA CV eg_pm": cv("eg_pm", random_state=0)}


def table():
    """The rows of the table: (data, metric, grid, SGD defaults, {column: score})."""
    found = []
    for name, load in DATA.items():
        X, y = load(return_X_y=True)
        regression = name in REGRESSION
        grid = sgd_grid(X, y, regression)
        default = score(sgd(regression), X, y, regression)
        columns = {column: score(model, X, y, regression)
                   for column, model in ga_models(regression).items()}
        found.append((name, "R^2" if regression else "accuracy", grid, default,
                      columns))
    return found


def cases(every=False):
    """Print the table, each GA cell marked when it misses a goal, then the
    sweep over every psi (:func:`sweep`)."""
    rows = table()
    names = list(rows[0][4])
    print("\n| data | SGD grid | SGD defaults | " + " | ".join(names) + " |")
    print("|---" * (3 + len(names)) + "|")
    for name, metric, grid, default, columns in rows:
        cells = []
        for column in names:
            value = columns[column]
            met = value >= grid - MARGIN[metric] and value >= default
            cells.append(f"{value:.3f}" + ("" if met else " (NO)"))
        print(f"| {name} {metric} | {grid:.3f} | {default:.3f} | "
              + " | ".join(cells) + " |", flush=True)
    sweep(every)


def sparse_target(return_X_y=True, n_samples=400, n_features=200, seed=0):
    """HKW §V's sparse target: y = tanh(u . x / 2 + noise), u with 5 weights of
    +-1 among ``n_features``, inputs uniform on {-1, +1}^n_features."""
    rng = np.random.default_rng(seed)
    u = np.zeros(n_features)
    u[rng.choice(n_features, 5, replace=False)] = rng.choice([-1.0, 1.0], 5)
    X = rng.choice([-1.0, 1.0], size=(n_samples, n_features))
    return X, np.tanh(X @ u / 2 + rng.normal(0.0, 0.1, n_samples))


SWEEP = {**DATA, "iris": load_iris, "linnerud": load_linnerud,
         "sparse": sparse_target}


def sample(X, y):
    """At BENCH_SCALE < 1, a fixed sample of the rows (at least 100)."""
    keep = max(100, int(X.shape[0] * SCALE))
    if keep >= X.shape[0]:
        return X, y
    rows = np.random.default_rng(0).permutation(X.shape[0])[:keep]
    return X[rows], y[rows]


def phis(regression, y, every):
    """The phi of a data set's rows in the sweep: the estimator's default; with
    ``every``, each phi whose range holds the targets (the others refuse them with
    an error naming the range; softmax regression needs rows of the simplex)."""
    if not every:
        return ["identity" if regression else "logistic"]
    if not regression:
        return [name for name in PHI if PHI[name].classification]
    return [name for name in PHI if PHI[name].regression and name != "softmax"
            and PHI[name].low <= y.min() and y.max() <= PHI[name].high]


def note(message):
    """A warning's first sentence, its numbers and output left out: one note for
    the cells that give it."""
    text = re.sub(r" of output \d+", "", str(message))
    return re.sub(r"-?\d+\.\d+", "#", text).split(": ")[0]


def sweep_cell(model, X, y, regression, grid, metric):
    """A cell of the sweep: the score and its mark."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = score(model, X, y, regression)
        except ValueError as error:
            return "(error)", str(error).split(";")[0]
    messages = {note(w.message) for w in caught
                if not issubclass(w.category, ConvergenceWarning)}
    mark = " (warns)" if messages else (
        " (NO)" if value < grid - MARGIN[metric] else "")
    return f"{value:.3f}{mark}", "; ".join(sorted(messages))


def sweep(every=False):
    """Print every psi (columns) for each data set and phi (rows)."""
    notes = {}
    print("\n| data, phi | SGD grid | " + " | ".join(PSI) + " |")
    print("|---" * (2 + len(PSI)) + "|")
    for name, load in SWEEP.items():
        regression = name in REGRESSION
        X, y = sample(*load(return_X_y=True))
        metric = "R^2" if regression else "accuracy"
        grid = sgd_grid(X, y, regression)
        for phi in phis(regression, y, every):
            estimator = GARegressor if regression else GAClassifier
            cells = []
            for psi in PSI:
                cell, note = sweep_cell(estimator(psi, phi, random_state=0), X, y,
                                        regression, grid, metric)
                cells.append(cell)
                if note:
                    notes.setdefault(note, []).append(f"{name}/{phi}/{psi}")
            print(f"| {name} {metric}, {phi} | {grid:.3f} | " + " | ".join(cells)
                  + " |", flush=True)
    for note, where in notes.items():
        print(f"\n{', '.join(where)}: {note}")


def candidates():
    """EG± on digits with the later epochs' rates at several quantiles of the row
    bounds (1: Theorem 3's rate in every epoch, as before), and averaged."""
    X, y = load_digits(return_X_y=True)
    chosen = _rates.ROW_QUANTILE
    print("\n| later epochs' quantile | GAClassifier(psi='eg_pm') on digits |")
    print("|---|---|")
    try:
        for quantile, average in [(1.0, False), (1.0, True), (0.999, False),
                                  (0.99, False), (0.9, False), (0.5, False)]:
            _rates.ROW_QUANTILE = quantile
            model = GAClassifier("eg_pm", average=average, random_state=0)
            print(f"| {quantile}{', averaged' if average else ''} | "
                  f"{score(model, X, y, False):.3f} |", flush=True)
    finally:
        _rates.ROW_QUANTILE = chosen


def cost():
    """The time per 1000-row CSR partial_fit call of each U (see the docstring)."""
    X, y = sparse_data(50_000, 2**18, 50)
    batches = [(X[s:s + 1000], y[s:s + 1000]) for s in range(0, X.shape[0], 1000)]
    chosen = _auto_scale.CHOSEN_ROWS
    variants = {("sphere", "GCV on every row (before)"): (X.shape[0], "auto"),
                ("sphere", f"GCV on {chosen} rows (now)"): (chosen, "auto"),
                ("sphere", "U=1 given"): (chosen, 1.0),
                ("eg_pm", "U='auto'"): (chosen, "auto"),
                ("eg_pm", "U=1 given"): (chosen, 1.0)}
    best = dict.fromkeys(variants, np.inf)
    try:
        for _ in range(5):
            for (psi, name), (rows, U) in variants.items():
                _auto_scale.CHOSEN_ROWS = rows
                start = time.perf_counter()
                model = GARegressor(psi=psi, eta=0.01, U=U)
                for X_batch, y_batch in batches:
                    model.partial_fit(X_batch, y_batch)
                best[psi, name] = min(best[psi, name],
                                      (time.perf_counter() - start) / len(batches))
    finally:
        _auto_scale.CHOSEN_ROWS = chosen
    print("\n| 1000-row CSR partial_fit call, n=2^18 | ms per call | U=1's = 1 |")
    print("|---|---|---|")
    for psi, name in variants:
        print(f"| psi={psi}, {name} | {best[psi, name] * 1e3:.2f} | "
              f"{best[psi, name] / best[psi, 'U=1 given']:.2f} |")


# The wide data sets: features, the weights' size, the noise, relevant features.
WIDE = [(1500, 0.05, 1.0, 1500), (3000, 0.05, 1.0, 3000), (2000, 1.0, 1.0, 10),
        (2000, 0.3, 3.0, 50), (1200, 0.1, 0.5, 1200)]


def wide():
    """The sphere's held-out R^2 on wide rows (see the docstring)."""
    rng = np.random.default_rng(1)
    chosen = _auto_scale.CHOSEN_ROWS
    print("\n| features, weights, noise | GCV on every row | 256 rows | 512 rows |")
    print("|---|---|---|---|")
    try:
        for n, size, noise, relevant in WIDE:
            X = rng.normal(size=(2000, n))
            w = np.zeros(n)
            w[:relevant] = size * rng.normal(size=relevant)
            y = X @ w + noise * rng.normal(size=2000)
            cells = []
            for rows in (1000, 256, 512):
                _auto_scale.CHOSEN_ROWS = rows
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    model = GARegressor("sphere", random_state=0, max_iter=30).fit(
                        X[:1000], y[:1000])
                cells.append(f"{model.score(X[1000:], y[1000:]):.3f}")
            print(f"| {n}, {relevant} of N(0, {size}^2), {noise} | "
                  + " | ".join(cells) + " |", flush=True)
    finally:
        _auto_scale.CHOSEN_ROWS = chosen


if __name__ == "__main__":
    if "--wide" in sys.argv:
        wide()
    elif "--cost" in sys.argv:
        cost()
    elif "--candidates" in sys.argv:
        candidates()
    else:
        cases(every="--all" in sys.argv)
