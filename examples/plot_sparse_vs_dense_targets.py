"""
=====================================================
GD versus EG± on sparse and dense targets (HKW §V)
=====================================================

Helmbold, Kivinen and Warmuth compared gradient descent (GD) with EG± on a single
tanh neuron, ``y = tanh(u · x)``, without noise. Their relative loss bounds predict:

* **sparse target** (5 relevant weights ±1 among N, inputs uniform on {-1, 1}^N):
  GD's total loss grows linearly with N, EG±'s only logarithmically;
* **dense target** (all N weights ±1, inputs with 5 non-zero entries ±1): GD has the
  same bound as before; EG±'s bound is much worse, though in practice the gap is
  small.

We reproduce their cumulative loss curves (HKW Figures 2–5) for N = 100, 200, 400,
800. As in the paper, each learning rate is tuned on a separate data set drawn from
the same distribution (the rate with the smallest total on-line loss), then the curve
is recorded on a fresh data set. The paper averages ten data sets; we use one.
"""

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp

from sklearn_ga import GARegressor

N_TRIALS = 15_000
DIMENSIONS = [100, 200, 400, 800]
N_ACTIVE = 5  # relevant weights (sparse target) or non-zero inputs (dense target)


def sparse_target(n, rng):
    """Five weights ±1, dense inputs in {-1, 1}^n."""
    u = np.zeros(n)
    u[rng.choice(n, N_ACTIVE, replace=False)] = rng.choice([-1.0, 1.0], N_ACTIVE)
    X = rng.choice([-1.0, 1.0], size=(N_TRIALS, n))
    return X, np.tanh(X @ u), u


def dense_target(n, rng):
    """All n weights ±1, inputs with five non-zero entries ±1 (stored as CSR)."""
    u = rng.choice([-1.0, 1.0], n)
    cols = np.argsort(rng.rand(N_TRIALS, n), axis=1)[:, :N_ACTIVE].ravel()
    rows = np.repeat(np.arange(N_TRIALS), N_ACTIVE)
    vals = rng.choice([-1.0, 1.0], N_TRIALS * N_ACTIVE)
    X = sp.csr_matrix((vals, (rows, cols)), shape=(N_TRIALS, n))
    return X, np.tanh(X @ u), u


# %%
# The learners
# ------------
# GD is ``psi="identity"``; EG± is ``psi="eg_pm"`` with the scale ``U`` set to the
# l1 norm of the target (5 for the sparse target, N for the dense one). Rates are
# searched on a grid of multiples of the theoretical rate (``eta="theory"``,
# KW01 Theorem 3).


def make_learner(algorithm, eta, u):
    if algorithm == "GD":
        return GARegressor(psi="identity", phi="tanh", eta=eta, fit_intercept=False)
    return GARegressor(psi="eg_pm", phi="tanh", eta=eta, U=np.abs(u).sum(),
                       fit_intercept=False)


def tuned_rate(algorithm, X, y, u, factors):
    theory = make_learner(algorithm, "theory", u).partial_fit(X[:1], y[:1]).eta_
    losses = {f: make_learner(algorithm, f * theory, u).partial_fit(X, y)
              .cumulative_loss_ for f in factors}
    return min(losses, key=losses.get) * theory


def loss_curve(learner, X, y, step=100):
    """Cumulative on-line loss after every ``step`` trials."""
    curve = [0.0]
    for start in range(0, X.shape[0], step):
        learner.partial_fit(X[start:start + step], y[start:start + step])
        curve.append(learner.cumulative_loss_)
    return np.arange(0, X.shape[0] + 1, step), np.array(curve)


# %%
# Run the experiment
# ------------------

rng = np.random.RandomState(0)
FACTORS = {"GD": [1, 2, 4, 8], "EG±": [1, 4, 16, 64, 256, 1024]}
results = {}
for target_name, make_data in [("sparse", sparse_target), ("dense", dense_target)]:
    for n in DIMENSIONS:
        X_tune, y_tune, u_tune = make_data(n, rng)
        X, y, u = make_data(n, rng)
        for algorithm in ("GD", "EG±"):
            eta = tuned_rate(algorithm, X_tune, y_tune, u_tune, FACTORS[algorithm])
            trials, curve = loss_curve(make_learner(algorithm, eta, u), X, y)
            results[target_name, algorithm, n] = trials, curve
            print(f"{target_name:6} target  {algorithm:3}  N={n:3}  eta={eta:.3g}  "
                  f"total loss {curve[-1]:7.1f}")

# %%
# Cumulative loss curves
# ----------------------
# Each gap between two adjacent curves is a doubling of N. On the sparse target GD's
# total loss roughly doubles with N while EG±'s barely moves; on the dense target GD
# behaves as on the sparse one and EG± is worse, by much less than its bound says.

fig, axes = plt.subplots(2, 2, figsize=(10, 7.5), sharex=True)
colors = plt.cm.viridis(np.linspace(0, 0.85, len(DIMENSIONS)))
for row, target_name in enumerate(["sparse", "dense"]):
    for col, algorithm in enumerate(["GD", "EG±"]):
        ax = axes[row, col]
        for n, color in zip(DIMENSIONS, colors, strict=True):
            trials, curve = results[target_name, algorithm, n]
            ax.plot(trials, curve, color=color, label=f"N = {n}")
        ax.set_title(f"{algorithm}, {target_name} target")
        ax.set_ylabel("cumulative loss")
        ax.grid(alpha=0.3)
    axes[row, 1].sharey(axes[row, 0])
for ax in axes[1]:
    ax.set_xlabel("trials")
axes[0, 0].legend()
fig.tight_layout()

# %%
# Total loss against the number of features
# -----------------------------------------
# The same totals on a logarithmic N axis: a straight rising line for GD on the sparse
# target (linear in N), an almost flat one for EG± (logarithmic in N).

fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
for ax, target_name in zip(axes, ["sparse", "dense"], strict=True):
    for algorithm, marker in [("GD", "o"), ("EG±", "s")]:
        totals = [results[target_name, algorithm, n][1][-1] for n in DIMENSIONS]
        ax.plot(DIMENSIONS, totals, marker=marker, label=algorithm)
    ax.set_xscale("log", base=2)
    ax.set_xticks(DIMENSIONS, [str(n) for n in DIMENSIONS])
    ax.set_xlabel("number of features N")
    ax.set_title(f"{target_name} target")
    ax.grid(alpha=0.3)
axes[0].set_ylabel(f"total loss after {N_TRIALS} trials")
axes[0].legend()
fig.tight_layout()
plt.show()
