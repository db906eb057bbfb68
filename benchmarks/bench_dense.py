"""Goals 1-3: one dense epoch of GA against scikit-learn's SGD and BLAS.

Every estimator runs exactly one in-order pass (max_iter=1, tol=None, shuffle=False)
with the same constant learning rate over the same C-contiguous float64 X, so both
do the same arithmetic: the times compare implementations, not algorithms.
"""

import numpy as np
from _timing import best_times, header, report, rows, sparse_data
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


def fit_at(levels, model, X, y):
    """Fit model with its primitives at ``levels`` (pairs of a level and the
    primitives it applies to, in order)."""
    for level, primitives in levels:
        _kernel._choose_simd_level(level, primitives)
    model.fit(X, y)


def level_families(m, n):
    """{family: (model, X, y, the primitives of the family's epoch)}: the dense
    epochs of each primitive family, and the CSR epochs of the psi whose
    primitives differ there."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((rows(m), n))
    y = X[:, :5].sum(axis=1) + 0.1 * rng.standard_normal(X.shape[0])
    S, z = sparse_data(rows(2 * m), 2**18, 50)
    eta = 0.1 / n
    shape, sparse = f"dense {X.shape[0]}x{n}", f"CSR {S.shape[0]}x2^18"
    return {
        f"{shape} GD": (GARegressor(eta=eta, **ONE_PASS), X, y,
                        ("ga_dot", "ga_axpy")),
        f"{shape} EG±": (GARegressor(psi="eg_pm", U=10.0, eta=eta, **ONE_PASS), X, y,
                         ("ga_eg_pm_terms", "ga_scale_pm_dot")),
        f"{shape} softmax": (GARegressor(psi="softmax", U=10.0, eta=eta, **ONE_PASS),
                             X, y, ("ga_softmax_terms", "ga_scale_terms")),
        f"{shape} exp": (GARegressor(psi="exp", eta=eta / 10, **ONE_PASS), X, y,
                         ("ga_exp_terms",)),
        f"{shape} pnorm": (GARegressor(psi="pnorm", p=2 * np.log(n), eta=eta,
                                       **ONE_PASS), X, y, ("ga_pnorm_terms",)),
        f"{shape} sphere": (GARegressor(psi="sphere", U=10.0, eta=eta, **ONE_PASS),
                            X, y, ("ga_geodesic_sums",)),
        f"{shape} lock-step blocks (CV grid)": (
            GARegressorCV(etas=(eta / 10, eta, 10 * eta)), X, y,
            ("ga_block_dots", "ga_block_update")),
        f"{sparse} EG±": (GARegressor(psi="eg_pm", U=10.0, eta=0.01, **ONE_PASS), S, z,
                          ("ga_eg_pm_terms", "ga_index_scan32", "ga_step_factors")),
        f"{sparse} pnorm": (GARegressor(psi="pnorm", p=2 * np.log(2**18), eta=0.01,
                                        **ONE_PASS), S, z, ("ga_pnorm_terms",)),
        f"{sparse} sphere": (GARegressor(psi="sphere", U=10.0, eta=0.01, **ONE_PASS),
                             S, z, ("ga_geodesic_sums",)),
    }


def level_case(m, n):
    """Per primitive family, one epoch at each SIMD level of the build that the CPU
    runs against the level below, every primitive at once (for information), and
    at the top level one primitive at a time against the level below: the rows
    that decide which primitives ship there (``SHIPPED_SIMD_LEVELS``; a primitive
    ships at a level only where its rows are below 1 on a CPU that has it,
    doc/developers/compiled_core.rst). In one process, the configurations
    alternating (``_kernel._choose_simd_level`` between fits)."""
    chosen = _kernel.simd_clones()
    runnable = _kernel.simd_levels_supported()
    every = _kernel.PRIMITIVES
    try:
        for family, (model, X, y, primitives) in level_families(m, n).items():
            for below, level in zip(runnable, runnable[1:], strict=False):
                configurations = {"every primitive": [(level, every)]}
                if level == runnable[-1]:
                    configurations |= {name: [(below, every), (level, (name,))]
                                       for name in primitives}
                times = best_times(
                    lambda below=below, model=model, X=X, y=y: fit_at(
                        [(below, every)], model, X, y),
                    *(lambda levels=levels, model=model, X=X, y=y: fit_at(
                        levels, model, X, y) for levels in configurations.values()))
                for what, time in zip(configurations, times[1:], strict=True):
                    if what == "every primitive":
                        goal = None
                    else:
                        shipped = _kernel.SHIPPED_SIMD_LEVELS[what] == level
                        goal = 1 if shipped else None
                        what += ", shipped" if shipped else ", not shipped"
                    report(f"SIMD {level} ({what}): {family} epoch", time, times[0],
                           below, goal)
    finally:
        for name, level in chosen.items():
            _kernel._choose_simd_level(level, (name,))
    for level, flag in LEVELS.items():
        if level in runnable:
            continue
        why = ("not built" if level not in _kernel.SIMD_LEVELS else
               f"not measurable here (the CPU lacks {flag})")
        print(f"| SIMD {level}: every family: {why} | - | - | - | - | - |", flush=True)


def cases():
    dense_case(100_000, 100)
    dense_case(50_000, 1_000)
    level_case(50_000, 1_000)


if __name__ == "__main__":
    header()
    cases()
