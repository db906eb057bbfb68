"""Goals 1-3: one dense epoch of GA against scikit-learn's SGD and BLAS.

Every estimator runs exactly one in-order pass (max_iter=1, tol=None, shuffle=False)
with the same constant learning rate over the same C-contiguous float64 X, so both
do the same arithmetic: the times compare implementations, not algorithms.
"""

import numpy as np
from _timing import best_times, header, report, rows
from sklearn.linear_model import SGDClassifier, SGDRegressor

from sklearn_ga import GAClassifier, GARegressor, GARegressorCV, _kernel

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


# The levels the benchmarks know, above the baseline, with the CPU feature that
# each needs (as /proc/cpuinfo names it).
LEVELS = {"x86-64-v3": "avx2", "x86-64-v4": "avx512f"}


def cpu_has(flag):
    try:
        with open("/proc/cpuinfo") as info:
            return any(line.startswith("flags") and flag in line.split()
                       for line in info)
    except OSError:
        return False


def fit_at(level, model, X, y):
    """Fit model at this SIMD level."""
    _kernel._choose_simd_level(level)
    model.fit(X, y)


def level_case(m, n):
    """Per primitive family, one dense epoch at each SIMD level of the build that the
    CPU runs, against the level below (in one process, the levels alternating:
    ``_kernel._choose_simd_level`` between fits). A level ships only where its rows
    are below 1 on a CPU that has it (doc/developers/compiled_core.rst)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((rows(m), n))
    y = X[:, :5].sum(axis=1) + 0.1 * rng.standard_normal(X.shape[0])
    eta = 0.1 / n
    shape = f"{X.shape[0]}x{n}"
    families = {
        "rows (GD: dot, axpy)": GARegressor(eta=eta, **ONE_PASS),
        "EG± pass": GARegressor(psi="eg_pm", U=10.0, eta=eta, **ONE_PASS),
        "exponential terms (softmax)": GARegressor(psi="softmax", U=10.0, eta=eta,
                                                   **ONE_PASS),
        "exponential terms (exp)": GARegressor(psi="exp", eta=eta / 10, **ONE_PASS),
        "pnorm powers": GARegressor(psi="pnorm", p=2 * np.log(n), eta=eta,
                                    **ONE_PASS),
        "geodesic sums (sphere)": GARegressor(psi="sphere", U=10.0, eta=eta,
                                              **ONE_PASS),
        "lock-step blocks (CV grid)": GARegressorCV(etas=(eta / 10, eta, 10 * eta)),
    }
    chosen = _kernel.SIMD_LEVELS.index(next(iter(_kernel.simd_clones().values())))
    runnable = _kernel.simd_levels_supported()
    try:
        for family, model in families.items():
            for below, level in zip(runnable, runnable[1:], strict=False):
                upper, lower = best_times(
                    lambda level=level, model=model: fit_at(level, model, X, y),
                    lambda below=below, model=model: fit_at(below, model, X, y))
                shipped = level in _kernel.SHIPPED_SIMD_LEVELS
                report(f"SIMD {level}{'' if shipped else ', not shipped'}: dense "
                       f"{family} epoch {shape}", upper, lower, below, 1)
    finally:
        _kernel._choose_simd_level(_kernel.SIMD_LEVELS[chosen])
    for level, flag in LEVELS.items():
        if level in runnable:
            continue
        why = ("not built (CFLAGS=-DGA_MEASURE_V4 make install builds it)"
               if cpu_has(flag) else f"not measurable here (the CPU lacks {flag})")
        shipped = "shipped" if level in _kernel.SHIPPED_SIMD_LEVELS else "not shipped"
        print(f"| SIMD {level}: every family: {why} | - | - | - | <= 1 | {shipped} |",
              flush=True)


def cases():
    dense_case(100_000, 100)
    dense_case(50_000, 1_000)
    level_case(50_000, 1_000)


if __name__ == "__main__":
    header()
    cases()
