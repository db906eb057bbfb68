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
"""

import itertools
import warnings

from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier, SGDRegressor
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_ga import GAClassifier, GAClassifierCV, GARegressor, GARegressorCV

DATA = {"diabetes": load_diabetes, "breast_cancer": load_breast_cancer,
        "wine": load_wine, "digits": load_digits}
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


def sgd(regression, **params):
    if regression:
        return SGDRegressor(random_state=0, **params)
    return SGDClassifier(loss="log_loss", random_state=0, **params)


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
        regression = name == "diabetes"
        grid = max(score(sgd(regression, alpha=alpha, eta0=eta0,
                             learning_rate="invscaling"), X, y, regression)
                   for alpha, eta0 in itertools.product(ALPHAS, ETA0S))
        default = score(sgd(regression), X, y, regression)
        columns = {column: score(model, X, y, regression)
                   for column, model in ga_models(regression).items()}
        found.append((name, "R^2" if regression else "accuracy", grid, default,
                      columns))
    return found


def cases():
    """Print the table, each GA cell marked when it misses a goal."""
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


if __name__ == "__main__":
    cases()
