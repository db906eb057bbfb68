"""Shared helpers of the benchmarks: best-of-k timing, one table row per ratio, CSR
data, and the one-row partial_fit calls of an on-line stream."""

import os
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

# BENCH_SCALE < 1 shrinks the number of samples while iterating (ratios, not times,
# are the result; the table in README.md is made at scale 1).
SCALE = float(os.environ.get("BENCH_SCALE", "1"))
REPEAT = int(os.environ.get("BENCH_REPEAT", "5"))


def rows(m):
    return max(1000, int(m * SCALE))


def best_times(*functions, repeat=REPEAT):
    """Smallest wall time of each function over ``repeat`` rounds.

    The functions run in turn within each round, so that a load from other
    processes on the machine slows all of them alike and the ratios stay fair.
    """
    best = [float("inf")] * len(functions)
    with warnings.catch_warnings():
        # max_iter=1 with tol=None: SGD warns that it did not converge; expected.
        warnings.simplefilter("ignore", ConvergenceWarning)
        for _ in range(repeat):
            for index, function in enumerate(functions):
                start = time.perf_counter()
                function()
                best[index] = min(best[index], time.perf_counter() - start)
    return best


def report(case, ga, reference, reference_name, goal, higher_is_better=False):
    """Print one row: case, both times, the ratio and whether it meets the goal
    (``goal=None``: a row for information, with no goal)."""
    ratio = reference / ga if higher_is_better else ga / reference
    sign = ">=" if higher_is_better else "<="
    if goal is None:
        goal_text = met_text = "-"
    else:
        met = ratio >= goal if higher_is_better else ratio <= goal
        goal_text, met_text = f"{sign} {goal}", "yes" if met else "NO"
    print(f"| {case} | {ga * 1e3:.3f} | {reference_name} {reference * 1e3:.3f} | "
          f"{ratio:.3f} | {goal_text} | {met_text} |", flush=True)


def stable_rate(X, y, *models, tries=3):
    """Set the models' ``eta`` to a rate at which the first learns (X, y) without
    diverging: its own, else a tenth of it, and so on; returns the note a row's name
    carries ("" at the model's own rate). The same data in the same order diverge
    or not in every run, so one trial fit decides."""
    eta = models[0].eta
    for attempt in range(tries):
        try:
            models[0].fit(X, y)
        except ValueError as error:  # (the divergence error)
            if "diverged" not in str(error):
                raise
            eta = eta / 10
            for model in models:
                model.set_params(eta=eta)
            continue
        return f" (at eta/{10**attempt}: diverges at the shared eta)" if attempt else ""
    raise ValueError(f"{models[0]!r} diverges even at eta={eta}")


def header():
    print("| case | GA (ms) | reference (ms) | ratio | goal | met |")
    print("|---|---|---|---|---|---|", flush=True)


def one_row_calls(X, y, estimator, calls=1000, predict=False, **first_call):
    """A function making ``calls`` one-row partial_fit calls on a fitted model,
    each after a predict of its row if ``predict``."""
    estimator.partial_fit(X[:1], y[:1], **first_call)
    batches = [(X[i:i + 1], y[i:i + 1]) for i in range(calls)]

    def run():
        for X_row, y_row in batches:
            if predict:
                estimator.predict(X_row)
            estimator.partial_fit(X_row, y_row)

    return run


def sparse_data(m, n, nnz, seed=0):
    rng = np.random.default_rng(seed)
    columns = np.sort(rng.choice(n, size=(m, nnz)), axis=1)
    X = sp.csr_matrix(
        (rng.standard_normal(m * nnz), columns.ravel(), np.arange(0, m * nnz + 1, nnz)),
        shape=(m, n),
    )
    X.sum_duplicates()
    y = np.asarray(X[:, :1000].sum(axis=1)).ravel() + 0.1 * rng.standard_normal(m)
    return X, y
