"""
=====================================================
Weight trajectories of EG± and GD on a sparse target
=====================================================

Gradient descent adds a step to every weight, so on a sparse target the irrelevant
weights wander: each trial pushes them by noise of the size of the input, until the
error becomes small. EG± updates its weights multiplicatively (ω = U sinh θ / Σ cosh θ),
so the weight mass moves quickly to the few features that help.

We follow ``coef_`` during one on-line pass over a sparse tanh target (3 relevant
features of 100) for both learners, each with four times its theoretical learning rate
(``eta="theory"``, KW01 Theorem 3).
"""

import matplotlib.pyplot as plt
import numpy as np

from sklearn_ga import GARegressor

rng = np.random.RandomState(1)
n_trials, n_features = 3000, 100
relevant = [0, 1, 2]
u = np.zeros(n_features)
u[relevant] = [1.0, -1.0, 0.5]
X = rng.choice([-1.0, 1.0], size=(n_trials, n_features))
y = np.tanh(X @ u)


def trajectory(psi, step=10, **params):
    """coef_ after every ``step`` trials of one on-line pass."""
    model = GARegressor(psi=psi, phi="tanh", fit_intercept=False, **params)
    theory = GARegressor(psi=psi, phi="tanh", fit_intercept=False, **params)
    model.set_params(eta=4 * theory.partial_fit(X[:1], y[:1]).eta_)
    weights, losses = [np.zeros(n_features)], [0.0]
    for start in range(0, n_trials, step):
        model.partial_fit(X[start:start + step], y[start:start + step])
        weights.append(model.coef_.copy())
        losses.append(model.cumulative_loss_)
    return np.arange(0, n_trials + 1, step), np.array(weights), np.array(losses)


runs = {
    "GD (psi='identity')": trajectory("identity"),
    "EG± (psi='eg_pm', U=2.5)": trajectory("eg_pm", U=2.5),
}

# %%
# The weights over time
# ---------------------
# Relevant weights in colour (dotted lines: their target values), the 97 irrelevant
# ones in grey.

fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
irrelevant = np.setdiff1d(np.arange(n_features), relevant)
for ax, (name, (trials, weights, _)) in zip(axes, runs.items(), strict=True):
    ax.plot(trials, weights[:, irrelevant], color="0.6", lw=0.5)
    for i, color in zip(relevant, ["C0", "C1", "C2"], strict=True):
        ax.plot(trials, weights[:, i], color=color, lw=2, label=f"w[{i}]")
        ax.axhline(u[i], color=color, ls=":", lw=1)
    ax.set_title(name)
    ax.set_xlabel("trials")
    ax.grid(alpha=0.3)
axes[0].set_ylabel("weight")
axes[0].legend(loc="lower right")
fig.tight_layout()

# %%
# Weight on irrelevant features and cumulative loss
# -------------------------------------------------
# The l1 norm of the 97 irrelevant weights: after a noisy start (the first trials
# rescale all weights by large factors) EG± moves its mass to the relevant features
# within a few hundred trials, GD takes several times longer, and its total on-line
# loss is correspondingly larger.

fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
for name, (trials, weights, losses) in runs.items():
    axes[0].plot(trials, np.abs(weights[:, irrelevant]).sum(axis=1), label=name)
    axes[1].plot(trials, losses, label=name)
axes[0].set_ylabel("l1 norm of the irrelevant weights")
axes[1].set_ylabel("cumulative loss")
for ax in axes:
    ax.set_xlabel("trials")
    ax.grid(alpha=0.3)
axes[1].legend()
fig.tight_layout()
plt.show()
