"""Sparse targets among many irrelevant features: GD vs EG± vs SGDRegressor (HKW §V).

The experiment of Helmbold, Kivinen & Warmuth (1999), Section V, at a reduced size:
y = tanh(u . x) with a target u that has 5 weights of +-1 among N in
{100, 200, 400, 800}, inputs uniform on {-1, +1}^N. Each algorithm's learning rate
is tuned on one data set by the least total on-line loss (a grid from 1x to 64x the
rate of HKW Theorem 1 or 2, in factors of 2) and then measured on a fresh data set.
The loss is the matching loss of tanh, charged on the prediction made *before* each
update (``cumulative_loss_``).

HKW's bounds predict that GD's total loss grows linearly in N and EG±'s logarithmically:
the printed table shows both. ``SGDRegressor`` (plain gradient descent on the square
loss) is run on the linearized target arctanh(y) = u . x, its rate tuned by its own
on-line square loss, and its predictions are passed through tanh so that its loss is
measured on the same scale.

Run with ``make demo``; ``--trials`` and ``--out`` change the size and the figure path.
"""

import argparse
import time

import numpy as np
from sklearn.linear_model import SGDRegressor

from sklearn_ga import PHI, GARegressor

RELEVANT = 5
MULTIPLES = 2.0 ** np.arange(0, 7)  # learning-rate grid: 1x to 64x a theorem's rate
CHUNK = 100  # cumulative losses are recorded every CHUNK trials for the curves


def make_data(n_features, n_trials, seed):
    rng = np.random.default_rng(seed)
    u = np.zeros(n_features)
    u[rng.choice(n_features, RELEVANT, replace=False)] = rng.choice([-1, 1], RELEVANT)
    X = rng.choice([-1.0, 1.0], size=(n_trials, n_features))
    return X, np.tanh(X @ u)


def ga_curve(X, y, eta, **params):
    """Cumulative on-line loss every CHUNK trials (partial_fit is the on-line rule)."""
    model = GARegressor(phi="tanh", eta=eta, fit_intercept=False, **params)
    curve = []
    for start in range(0, X.shape[0], CHUNK):
        model.partial_fit(X[start:start + CHUNK], y[start:start + CHUNK])
        curve.append(model.cumulative_loss_)
    return np.array(curve)


def auto_U(X, y):
    """The U that U="auto" chooses on the first chunk, as ga_curve's first call."""
    return GARegressor(psi="eg_pm", phi="tanh", fit_intercept=False).partial_fit(
        X[:CHUNK], y[:CHUNK]).U_


def sgd_curve(X, y, eta):
    """SGDRegressor on arctanh(y), predicting each trial before learning it."""
    model = SGDRegressor(penalty=None, learning_rate="constant", eta0=eta,
                         fit_intercept=False)
    target = np.arctanh(y)
    activations = np.empty(X.shape[0])
    for t in range(X.shape[0]):
        row = X[t:t + 1]
        activations[t] = model.predict(row)[0] if t else 0.0
        model.partial_fit(row, target[t:t + 1])
    losses = PHI["tanh"].loss(y, activations)
    return np.cumsum(losses)[CHUNK - 1::CHUNK]


def linearized_curve(X, y, eta):
    """On-line square loss of SGDRegressor's updates on arctanh(y), run compiled.

    ``GARegressor(psi="identity", phi="identity")`` makes exactly SGDRegressor's updates
    (tests/test_equivalence.py) without a Python call per trial: it tunes SGD's rate by
    SGD's own on-line loss.
    """
    model = GARegressor(eta=eta, fit_intercept=False)
    return [model.partial_fit(X, np.arctanh(y)).cumulative_loss_]


def tuned(curve_of, base_rate, tune, test, measure=None):
    """Tune eta on one data set by least total loss; return (eta, curve on another)."""
    totals = []
    for multiple in MULTIPLES:
        try:
            totals.append(curve_of(*tune, base_rate * multiple)[-1])
        except ValueError:  # GA reports divergence instead of returning NaN
            totals.append(np.inf)
    eta = base_rate * MULTIPLES[int(np.argmin(totals))]
    return eta, (measure or curve_of)(*test, eta)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--out", default="sparse_target_demo.png")
    args = parser.parse_args()

    started = time.perf_counter()
    results = {}
    for n in (100, 200, 400, 800):
        tune, test = (make_data(n, args.trials, seed) for seed in (2 * n, 2 * n + 1))
        # HKW Theorem 1 (GD): 1 / (2 X_2^2 Z) with X_2^2 = N, Z = 1 for tanh.
        # HKW Theorem 2 (EG±): 1 / (4 (U X_inf)^2 Z) with X_inf = 1, at the U_ of
        # U="auto" (a numeric eta keeps it: no doubling).
        results[n] = {
            "GD": tuned(lambda X, y, eta: ga_curve(X, y, eta, psi="identity"),
                        1 / (2 * n), tune, test),
            # EG± with its default U="auto" (the target's l1 norm is 5): the
            # U_ its first call chooses scales HKW Theorem 2's rate.
            "EG±": tuned(lambda X, y, eta: ga_curve(X, y, eta, psi="eg_pm"),
                         1 / (4 * auto_U(*tune)**2), tune, test),
            "SGDRegressor": tuned(linearized_curve, 1 / (2 * n), tune, test,
                                  measure=sgd_curve),
        }

    names = list(results[100])
    print(f"HKW §V, sparse target ({RELEVANT} relevant of N), tanh, "
          f"{args.trials} trials: total on-line matching loss [tuned eta]\n")
    print(f"{'N':>5} " + " ".join(f"{name:>24}" for name in names))
    for n, row in results.items():
        cells = [f"{curve[-1]:10.2f} [eta={eta:.2e}]" for eta, curve in row.values()]
        print(f"{n:>5} " + " ".join(f"{cell:>24}" for cell in cells))
    for name in names:
        ratio = results[800][name][1][-1] / results[100][name][1][-1]
        print(f"{name}: loss(N=800) / loss(N=100) = {ratio:.1f}")
    print(f"\n({time.perf_counter() - started:.1f} s)")

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no figure (pip install matplotlib).")
        return
    fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 3.5), sharey=True)
    trials = np.arange(1, args.trials // CHUNK + 1) * CHUNK
    for ax, name in zip(axes, names, strict=True):
        for n, row in results.items():
            ax.plot(trials, row[name][1], label=f"N = {n}")
        ax.set_title(name)
        ax.set_xlabel("trial")
    axes[0].set_ylabel("cumulative matching loss")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print(f"Cumulative loss curves written to {args.out}")


if __name__ == "__main__":
    main()
